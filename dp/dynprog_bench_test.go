package dp

import (
	"math/rand/v2"
	"testing"

	"github.com/memsched/memsched/instances"
	act "github.com/memsched/memsched/instances/actoffload"
)

// actBench maps a random ResNet-like chain (sizes up to 64 MiB, times up to 5 ms) to Problem 1
// at 12 GB/s, with M_GPU halfway between the smallest feasible memory and M_peak.
func actBench(b *testing.B, stages int) *act.Problem {
	r := rand.New(rand.NewPCG(150, 1))
	c := instances.Random(r, instances.RandomParams{Stages: stages, MaxSize: 64 << 20, MaxTime: 5e-3,
		WithABar: true, WithOverheads: true})
	p, err := act.FromChain(c, 1, 12e9)
	if err != nil {
		b.Fatal(err)
	}
	p.MGPU = (p.MinMemory() + p.Peak()) / 2
	return p
}

// BenchmarkDynProg150 is DYNPROG (heuristic, S = 500) on a 150-stage chain. Target (issue 12):
// < 1 s.
func BenchmarkDynProg150(b *testing.B) {
	p := actBench(b, 150)
	for b.Loop() {
		r, err := DynProg(p, ActOptions{})
		if err != nil || !r.Feasible {
			b.Fatal(err)
		}
	}
}

// BenchmarkInterruptibleBound150 is the rounded-down DYNPROG bound on the same chain.
func BenchmarkInterruptibleBound150(b *testing.B) {
	p := actBench(b, 150)
	for b.Loop() {
		if _, err := InterruptibleBound(p, ActOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
