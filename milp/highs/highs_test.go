//go:build highs

package highs

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/model"
)

// knapsack: max 5a + 4b + 3c s.t. 2a + 3b + c ≤ 5, 4a + b + 2c ≤ 11, 3a + 4b + 2c ≤ 8, binaries.
// Optimum 9 at a = 1, b = 0, c = 1... (enumeration: a=1,c=1 → 8; a=1,b=1 → 9 with 2+3=5 ≤ 5,
// 4+1=5 ≤ 11, 3+4=7 ≤ 8).
func knapsack() *model.Model {
	m := model.New("knap")
	a, b, c := m.AddBinary("a"), m.AddBinary("b"), m.AddBinary("c")
	var e model.Expr
	m.AddLE("w1", *e.Add(a, 2).Add(b, 3).Add(c, 1), 5)
	e = model.Expr{}
	m.AddLE("w2", *e.Add(a, 4).Add(b, 1).Add(c, 2), 11)
	e = model.Expr{}
	m.AddLE("w3", *e.Add(a, 3).Add(b, 4).Add(c, 2), 8)
	e = model.Expr{}
	m.SetObjective(model.Maximize, *e.Add(a, 5).Add(b, 4).Add(c, 3))
	return m
}

func TestKnapsack(t *testing.T) {
	s, err := New()
	require.NoError(t, err)
	res, err := milp.Solve(context.Background(), s, knapsack(), milp.Params{})
	require.NoError(t, err)
	assert.Equal(t, milp.Optimal, res.Status)
	assert.InDelta(t, 9, res.Objective, 1e-9)
	assert.InDelta(t, 9, res.Bound, 1e-6)
	assert.Equal(t, []float64{1, 1, 0}, res.Values)
}

// TestStatusMapping walks every kHighsModelStatus of HiGHS 1.15 (0..17) and one past the end.
func TestStatusMapping(t *testing.T) {
	want := map[int]milp.Status{
		0: milp.NotSolved, 1: milp.SolverError, 2: milp.SolverError, 3: milp.SolverError,
		4: milp.SolverError, 5: milp.SolverError, 6: milp.Optimal, 7: milp.Optimal,
		8: milp.Infeasible, 9: milp.InfeasibleOrUnbounded, 10: milp.Unbounded,
		11: milp.IterationLimit, 12: milp.IterationLimit, 13: milp.TimeLimit,
		14: milp.IterationLimit, 15: milp.SolverError, 16: milp.IterationLimit,
		17: milp.Interrupted, 18: milp.SolverError,
	}
	for s, st := range want {
		assert.Equal(t, st, mapStatus(s), "HiGHS model status %d", s)
	}
}

func TestInfeasibleAndUnbounded(t *testing.T) {
	s, _ := New()
	m := model.New("inf")
	x := m.AddContinuous("x", 0, 1)
	var e model.Expr
	m.AddGE("c", *e.Add(x, 1), 2)
	m.SetObjective(model.Minimize, model.Expr{})
	res, err := milp.Solve(context.Background(), s, m, milp.Params{})
	require.NoError(t, err)
	assert.Equal(t, milp.Infeasible, res.Status)
	assert.False(t, res.HasSolution)

	m = model.New("unb")
	x = m.AddContinuous("x", 0, math.Inf(1))
	e = model.Expr{}
	m.SetObjective(model.Maximize, *e.Add(x, 1))
	res, err = milp.Solve(context.Background(), s, m, milp.Params{})
	require.NoError(t, err)
	assert.Contains(t, []milp.Status{milp.Unbounded, milp.InfeasibleOrUnbounded}, res.Status)
}

// TestTimeLimit: a hard equality knapsack with a tiny limit stops with TimeLimit and an honest gap.
func TestTimeLimit(t *testing.T) {
	s, _ := New()
	m := model.New("hard")
	var e, obj model.Expr
	for i := 0; i < 60; i++ {
		v := m.AddInteger("", 0, 10)
		e.Add(v, float64(1000+7*i*i%997))
		obj.Add(v, float64(1+i%13))
	}
	m.AddEq("eq", e, 123457)
	m.SetObjective(model.Minimize, obj)
	res, err := milp.Solve(context.Background(), s, m, milp.Params{TimeLimit: 50 * time.Millisecond})
	require.NoError(t, err)
	if res.Status != milp.Optimal {
		assert.Contains(t, []milp.Status{milp.TimeLimit, milp.Infeasible}, res.Status)
		if res.HasSolution {
			assert.LessOrEqual(t, res.Bound, res.Objective+1e-6)
		}
	}
}
