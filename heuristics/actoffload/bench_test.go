package actoffload

import (
	"math/rand/v2"
	"testing"

	"github.com/memsched/memsched/instances"
	act "github.com/memsched/memsched/instances/actoffload"
)

// bench1000 maps a random 1000-stage chain (sizes up to 64 MiB, times up to 5 ms) to Problem 1
// at 12 GB/s with M_GPU halfway between the smallest feasible memory and M_peak.
func bench1000(b *testing.B) *act.Problem {
	r := rand.New(rand.NewPCG(1000, 1))
	c := instances.Random(r, instances.RandomParams{Stages: 1000, MaxSize: 64 << 20, MaxTime: 5e-3,
		WithABar: true, WithOverheads: true})
	p, err := act.FromChain(c, 1, 12e9)
	if err != nil {
		b.Fatal(err)
	}
	p.MGPU = (p.MinMemory() + p.Peak()) / 2
	return p
}

// BenchmarkGreedy1000 is GREEDY (set, no-wait schedule, validation) on 1000 stages. Target
// (issue 12): < 20 ms.
func BenchmarkGreedy1000(b *testing.B) {
	p := bench1000(b)
	for b.Loop() {
		r, err := Greedy(p)
		if err != nil || !r.Feasible {
			b.Fatal(err)
		}
	}
}

// BenchmarkNoWait1000 is the no-wait scheduler alone on GREEDY's ordered set, 1000 stages.
func BenchmarkNoWait1000(b *testing.B) {
	p := bench1000(b)
	g, err := Greedy(p)
	if err != nil || !g.Feasible {
		b.Fatal(err)
	}
	order := OrderedTransfers(p, g.Offloaded)
	for b.Loop() {
		s := newSim(p)
		s.run(true)
		for _, t := range order {
			s.push(t)
		}
		s.finish()
		if !s.done() {
			b.Fatal("deadlock")
		}
	}
}
