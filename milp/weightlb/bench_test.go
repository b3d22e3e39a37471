package weightlb_test

import (
	"testing"

	heur "github.com/memsched/memsched/heuristics/offload"
	"github.com/memsched/memsched/instances/offload"
	"github.com/memsched/memsched/instances/zoo"
	"github.com/memsched/memsched/milp/weightlb"
)

// gpt144 is a 144-block GPT-2 (hidden 3072, 24 heads, batch 16, fp16, V100 profile) with M_GPU
// = 16 GiB, the largest setting of 002 Table 1.
func gpt144(b *testing.B) *offload.Problem {
	c, err := zoo.Transformer(zoo.TransformerConfig{Kind: "gpt2", Hidden: 3072, Heads: 24, Layers: 144, SeqLen: 1024, Batch: 16, DType: "fp16"})
	if err != nil {
		b.Fatal(err)
	}
	p, err := offload.FromChain(c, 16<<30, 12e9)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkBuild144: the lower-bound MILP for 146 layers (target < 1 s, issue 5).
func BenchmarkBuild144(b *testing.B) {
	p := gpt144(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := weightlb.Build(p, 1<<20); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGreedy144: selection and scheduling, validation included (target < 1 s; 002 reports
// under a minute for 128 layers).
func BenchmarkGreedy144(b *testing.B) {
	p := gpt144(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, err := heur.Greedy(p, true); err != nil {
			b.Fatal(err)
		}
	}
}
