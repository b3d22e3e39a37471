package rematoffload_test

import (
	"math/rand/v2"
	"testing"

	hact "github.com/memsched/memsched/heuristics/actoffload"
	"github.com/memsched/memsched/heuristics/rematoffload"
	"github.com/memsched/memsched/instances"
	act "github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/verify/combined"
)

// BenchmarkFromTimedCheckLong: 001's greedy schedule of a 20 001-stage random chain (about
// 40 000 transfers) written as a combined schedule and replayed by verify/combined, what
// certify's combined lever does with the act-offload lever's best. Both were quadratic in the
// transfers (16.4 s and 18.2 s; certify abandoned the replay past its share); then 0.51 s
// together on one shared core, 0.12–0.13 s since Check counts time in integer ticks.
func BenchmarkFromTimedCheckLong(b *testing.B) {
	c := instances.Random(rand.New(rand.NewPCG(1, 20001)), instances.RandomParams{Stages: 20001, MaxSize: 64 << 20, MaxTime: 1e-2, WithABar: true, WithOverheads: true})
	budget, beta := int64(2<<30), 12e9
	p, err := act.FromChain(c, budget, beta)
	if err != nil {
		b.Fatal(err)
	}
	g, err := hact.Greedy(p)
	if err != nil || g == nil || g.Schedule == nil {
		b.Fatalf("no greedy schedule: %v", err)
	}
	b.ReportMetric(float64(len(g.Schedule.Transfers)), "transfers")
	for b.Loop() {
		s, err := rematoffload.FromTimedShift(c, g.Schedule, beta, rematoffload.Mixed)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := combined.Check(c, budget, beta, s); err != nil {
			b.Fatal(err)
		}
	}
}
