package milptest

import (
	"context"
	"math"
	"testing"

	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/model"
)

// RunSafeBound checks milp.LPBound with a backend that reports duals, on every problem of
// Problems with an optimum: the safe bound of the LP relaxation never lies on the wrong side
// of the known optimum (an LP's own optimum, a MILP's integer optimum, which its relaxation
// bounds), and for LPs it is within relTol of the solver's value — directed rounding only
// costs a few ulps on these well-scaled problems.
func RunSafeBound(t *testing.T, newSolver func() (milp.Solver, error), relTol float64) {
	t.Helper()
	for _, p := range Problems() {
		if p.Status != milp.Optimal {
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			s, err := newSolver()
			if err != nil {
				t.Fatalf("new solver: %v", err)
			}
			m := p.Build()
			r, err := milp.LPBound(context.Background(), s, m, milp.Params{})
			if err != nil {
				t.Fatalf("LPBound: %v", err)
			}
			if r.Status != milp.Optimal {
				t.Fatalf("LP relaxation status %v", r.Status)
			}
			sense, _, _ := m.Objective()
			if sense == model.Minimize && r.Bound > p.Objective {
				t.Fatalf("safe lower bound %.17g above the optimum %.17g", r.Bound, p.Objective)
			}
			if sense == model.Maximize && r.Bound < p.Objective {
				t.Fatalf("safe upper bound %.17g below the optimum %.17g", r.Bound, p.Objective)
			}
			if math.IsInf(r.Bound, 0) {
				// Allowed only where an unbounded column's exact reduced cost has the wrong
				// sign; never on a model whose columns are all bounded.
				for j := 0; j < m.NumVars(); j++ {
					if lb, ub := m.Bounds(model.Var(j)); math.IsInf(lb, 0) || math.IsInf(ub, 0) {
						t.Skipf("bound %v: an unbounded column's duals prove nothing (LP value %g)", r.Bound, r.SolverValue)
					}
				}
				t.Fatalf("bound %v on a model whose columns are all bounded", r.Bound)
			}
			if !p.Integer {
				if d := math.Abs(r.Bound - r.SolverValue); d > relTol*math.Max(1, math.Abs(r.SolverValue)) {
					t.Fatalf("safe bound %.17g vs solver's LP value %.17g: off by %.3g", r.Bound, r.SolverValue, d)
				}
			}
		})
	}
}
