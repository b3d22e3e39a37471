//go:build highs

package checkmate_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/memsched/memsched/dp"
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

// BenchmarkChainExactHiGHS: the chain-exact model of benchChainGraph's chains, started from
// C_MP's sequence, under a 60 s limit; status, replayed makespan, bound and gap are logged.
func BenchmarkChainExactHiGHS(b *testing.B) {
	s := solver(b)
	for _, stages := range []int{20, 50, 100} {
		c := benchChain(stages)
		_, budget := benchChainGraph(stages)
		cmp, err := dp.SolvePersistent(c, budget, dp.Options{})
		if err != nil || !cmp.Feasible {
			b.Fatal("C_MP", err)
		}
		b.Run(fmt.Sprint("chain", stages), func(b *testing.B) {
			var sol *checkmate.ChainExactSolution
			for b.Loop() {
				var err error
				sol, _, err = checkmate.SolveChainExact(context.Background(), s, c, budget, milp.Params{TimeLimit: 60 * time.Second}, cmp.Sequence)
				if err != nil {
					b.Fatal(err)
				}
			}
			b.Logf("chain%d: status %v, makespan %.6g s (replayed, from start: %v), C_MP %.6g s, bound %.6g s, gap %.3g",
				stages, sol.Status, sol.Makespan, sol.FromStart, cmp.Makespan, sol.Bound, sol.Gap)
			b.ReportMetric(sol.Gap, "gap")
		})
	}
}
