//go:build highs

package checkmate_test

import (
	"context"
	"testing"
	"time"

	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/checkmate"
)

// BenchmarkHiGHS: solve time under a 60 s limit; status, replayed incumbent (s), bound (s) and
// gap are logged, the gap reported as a metric (+Inf: no incumbent).
func BenchmarkHiGHS(b *testing.B) {
	s := solver(b)
	for _, c := range benchCases {
		g, budget := c.make()
		b.Run(c.name, func(b *testing.B) {
			var sol *checkmate.Solution
			for b.Loop() {
				var err error
				sol, _, err = checkmate.Solve(context.Background(), s, g, budget, milp.Params{TimeLimit: 60 * time.Second})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.Logf("%s: status %v, incumbent %.6g s (replayed), bound %.6g s, gap %.3g", c.name, sol.Status, sol.Cost, sol.Bound, sol.Gap)
			b.ReportMetric(sol.Gap, "gap")
		})
	}
}

// BenchmarkHiGHSTimeLimit: the 100-stage chain under a 10 s limit: the status must not claim
// optimality without the solver's proof, and an incumbent (if any) is the replayed schedule.
func BenchmarkHiGHSTimeLimit(b *testing.B) {
	s := solver(b)
	g, budget := benchChainGraph(100)
	var sol *checkmate.Solution
	for b.Loop() {
		var err error
		sol, _, err = checkmate.Solve(context.Background(), s, g, budget, milp.Params{TimeLimit: 10 * time.Second})
		if err != nil {
			b.Fatal(err)
		}
	}
	if sol.Status == milp.Optimal && sol.Gap > 1e-4 {
		b.Fatalf("optimal with gap %g", sol.Gap)
	}
	b.Logf("chain100, 10 s: status %v, incumbent %.6g s (replayed), bound %.6g s, gap %.3g", sol.Status, sol.Cost, sol.Bound, sol.Gap)
	b.ReportMetric(sol.Gap, "gap")
}
