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
		if _, _, err := weightlb.Build(p); err != nil {
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

// BenchmarkGreedyBert144: Greedy on the Table 1 row with the most selected choices (BERT, 144
// layers, batch 16: Alg. 1 selects 227 choices, Alg. 2 tries 117 cut points, each validated).
func BenchmarkGreedyBert144(b *testing.B) {
	p := table1Row(b, "bert", 144, 16)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, err := heur.Greedy(p, true); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGreedyReserveBert144: GreedyReserve (four selections, each scheduled by Alg. 2) on
// the same row.
func BenchmarkGreedyReserveBert144(b *testing.B) {
	p := table1Row(b, "bert", 144, 16)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, err := heur.GreedyReserve(p, true); err != nil {
			b.Fatal(err)
		}
	}
}

func table1Row(b *testing.B, kind string, depth, batch int) *offload.Problem {
	for _, r := range zoo.Table1() {
		if r.Kind == kind && r.Depth == depth && r.Batch == batch {
			p, err := zoo.Table1Problem(r)
			if err != nil {
				b.Fatal(err)
			}
			return p
		}
	}
	b.Fatalf("no Table 1 row %s %d/%d", kind, depth, batch)
	return nil
}
