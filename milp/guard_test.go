package milp_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/ref"
	"github.com/memsched/memsched/model"
)

// script answers with the referee but overrides what it says when asked with (or without) the
// safe settings: "infeasible", "high" (a bound 10 above the truth) or "" (the truth).
type script struct {
	name        string
	plain, safe string
	calls       *int
}

func (s script) Name() string { return s.name }

func (s script) Solve(ctx context.Context, m *model.Model, p milp.Params) (*milp.Result, error) {
	*s.calls++
	r, err := ref.New()
	if err != nil {
		return nil, err
	}
	res, err := r.Solve(ctx, m, p)
	if err != nil {
		return nil, err
	}
	mode := s.plain
	if p.FeasTol == milp.SafeTol && p.NoPresolve {
		mode = s.safe
	}
	switch mode {
	case "infeasible":
		return &milp.Result{Status: milp.Infeasible, Bound: math.NaN(), Gap: math.Inf(1)}, nil
	case "high":
		res.Status, res.HasSolution, res.Values, res.Bound = milp.TimeLimit, false, nil, res.Objective+10
	}
	return res, nil
}

// minKnapsack: min −(5a + 4b + 3c), 2a + 3b + c ≤ 4, binaries: optimum −8 (a, c).
func minKnapsack() *model.Model {
	m := model.New("k")
	a, b, c := m.AddBinary("a"), m.AddBinary("b"), m.AddBinary("c")
	m.AddLE("w", *new(model.Expr).Add(a, 2).Add(b, 3).Add(c, 1), 4)
	m.SetObjective(model.Minimize, *new(model.Expr).Add(a, -5).Add(b, -4).Add(c, -3))
	return m
}

func TestSolveGuarded(t *testing.T) {
	verified := milp.Evidence{Value: -7, What: "b and c: weight 4, cost −7, checked by hand"}
	cases := []struct {
		name          string
		first, second script
		ev            milp.Evidence
		status        milp.Status
		attempts      int
		believedSafe  bool
		believedOther bool
	}{
		{"truth believed at once", script{name: "s1"}, script{name: "s2"}, verified, milp.Optimal, 1, false, false},
		{"infeasible claim re-solved safely", script{name: "s1", plain: "infeasible"}, script{name: "s2"}, verified, milp.Optimal, 2, true, false},
		{"bound above a verified cost goes to the other backend", script{name: "s1", plain: "high", safe: "high"}, script{name: "s2"}, verified, milp.Optimal, 3, false, true},
		{"contradiction everywhere is a solver error", script{name: "s1", plain: "infeasible", safe: "high"}, script{name: "s2", plain: "high", safe: "infeasible"}, verified, milp.SolverError, 4, false, false},
		{"without evidence the first answer stands", script{name: "s1", plain: "infeasible"}, script{name: "s2"}, milp.None(), milp.Infeasible, 1, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n1, n2 := 0, 0
			c.first.calls, c.second.calls = &n1, &n2
			g, err := milp.SolveGuarded(context.Background(), []milp.Solver{c.first, c.second}, minKnapsack(), milp.Params{}, c.ev)
			require.NoError(t, err)
			assert.Equal(t, c.status, g.Status)
			assert.Len(t, g.Attempts, c.attempts)
			if c.status == milp.Optimal {
				assert.InDelta(t, -8, g.Objective, 1e-9)
				last := g.Attempts[len(g.Attempts)-1]
				assert.Equal(t, c.believedSafe, last.Safe)
				assert.Equal(t, c.believedOther, last.Solver == "s2")
			}
			if c.status == milp.SolverError {
				assert.False(t, g.HasSolution)
				assert.True(t, math.IsNaN(g.Bound), "no bound may survive a contradiction")
				assert.Contains(t, g.Contradiction, "claims infeasible while a verified solution of cost -7 exists")
				assert.Contains(t, g.Contradiction, "above a verified solution")
			}
		})
	}
}
