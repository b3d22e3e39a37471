package zoo

import (
	"fmt"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/instances/offload"
)

// Table1Row is one row of 002 §7.1, Table 1 (V100, 12 GB/s each way): the network, its depth,
// the batch size and the published durations in milliseconds (Σ_j u_j, ILP bound, Greedy,
// L2L, Greedy*).
type Table1Row struct {
	Kind                             string // "gpt2" or "bert"
	Depth, Batch                     int
	SumU, ILP, Greedy, L2L, GreedySt float64 // ms, as printed
}

// Table1 returns the 15 rows of 002 Table 1, as printed.
func Table1() []Table1Row {
	return []Table1Row{
		{"gpt2", 74, 64, 47421, 47421, 47493, 52707, 47493},
		{"gpt2", 56, 64, 35553, 35553, 35625, 39542, 35625},
		{"gpt2", 38, 64, 23694, 23694, 23838, 26387, 23838},
		{"gpt2", 74, 32, 23697, 23697, 23769, 28983, 23769},
		{"gpt2", 56, 32, 17762, 17762, 17834, 21751, 17834},
		{"gpt2", 38, 32, 11840, 11840, 11948, 14533, 11948},
		{"gpt2", 74, 16, 11612, 11612, 11684, 16898, 11715},
		{"gpt2", 56, 16, 8697, 8697, 8769, 12686, 8800},
		{"gpt2", 38, 16, 5794, 5794, 5902, 8487, 5934},
		{"bert", 144, 64, 34486, 34486, 34499, 38379, 34499},
		{"bert", 96, 64, 22965, 22965, 22978, 25577, 22978},
		{"bert", 144, 32, 17443, 17443, 17483, 21336, 17483},
		{"bert", 96, 32, 11617, 11617, 11657, 14230, 11657},
		{"bert", 144, 16, 9090, 9090, 9183, 12983, 9215},
		{"bert", 96, 16, 6058, 6058, 6085, 8670, 6085},
	}
}

// Table1 setting (002 §7): hidden 3072, 24 heads, V100 with 16 GB, 12 GB/s each way. 002 does
// not print the sequence length, the precision or M_GPU. memsched assumes fp32 (with fp16 the
// 38-layer GPT-2's 8.6 GB of weights would fit a 16 GB V100 and nothing would be offloaded,
// while 002 offloads in every row) and sequence length 100, which gives 4·s·b·h = 19.7 MB of
// checkpointed block output per layer at batch 16 (002 §7: "about 20MB"). The recomputed
// intermediates are then 0.36–1.4 GB per block (002: "1GB to 2GB" at batch 16); they only
// lower M_GPU. These are assumptions, documented in docs/weight-offload.md.
const (
	Table1Hidden    = 3072
	Table1Heads     = 24
	Table1SeqLen    = 100
	Table1DType     = "fp32"
	Table1Device    = int64(16e9) // V100 16 GB
	Table1Bandwidth = 12e9        // bytes/s, each direction
)

// Table1Chain builds the chain of a Table 1 row: Depth−2 transformer blocks plus the embedding
// and the output stage (both carry weights, so 002's model sees Depth layers — 38/56/74 =
// 36/54/72 blocks + 2, matching 002 §7's "36 to 144 layers"), with every duration scaled by
// one factor so that Σ_ℓ (u_f^ℓ + u_b^ℓ) equals the row's Σ_j u_j (ms → s). Only the ratios of
// the zoo's analytic times are kept; the absolute level comes from 002's measurements.
func Table1Chain(r Table1Row) (*instances.Chain, error) {
	if r.Depth < 3 || r.SumU <= 0 {
		return nil, fmt.Errorf("zoo: table 1 row %s depth %d, Σu %g ms: need depth ≥ 3 and Σu > 0", r.Kind, r.Depth, r.SumU)
	}
	c, err := Transformer(TransformerConfig{Kind: r.Kind, Hidden: Table1Hidden, Heads: Table1Heads,
		Layers: r.Depth - 2, SeqLen: Table1SeqLen, Batch: r.Batch, DType: Table1DType, Device: "v100"})
	if err != nil {
		return nil, err
	}
	var sum float64
	for _, s := range c.Stages {
		sum += s.UF + s.UB
	}
	f := r.SumU / 1000 / sum
	for i := range c.Stages {
		c.Stages[i].UF *= f
		c.Stages[i].UB *= f
	}
	return c, nil
}

// Table1Problem is the weight-offloading problem of a Table 1 row: Table1Chain mapped by
// offload.FromChain with M_GPU = 16 GB − the largest recomputed transient (offload.
// TransientMemory, 002 §7: "M_GPU used for simulation is smaller than 16GB and depends on the
// batch size") and β = 12 GB/s.
func Table1Problem(r Table1Row) (*offload.Problem, error) {
	c, err := Table1Chain(r)
	if err != nil {
		return nil, err
	}
	return offload.FromChain(c, Table1Device-offload.TransientMemory(c), Table1Bandwidth)
}
