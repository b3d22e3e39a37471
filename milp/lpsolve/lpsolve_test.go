//go:build lpsolve

package lpsolve

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/model"
)

// TestBoundsAreOurs: lp_solve's columns default to [0, ∞); a free variable and a negative
// lower bound must reach it as given. min x + y with x free, x ≥ −5 by a row, y ∈ [−3, 4]: −8.
func TestBoundsAreOurs(t *testing.T) {
	s, _ := New()
	m := model.New("bounds")
	x := m.AddContinuous("x", math.Inf(-1), math.Inf(1))
	y := m.AddContinuous("y", -3, 4)
	var row, obj model.Expr
	m.AddGE("xlo", *row.Add(x, 1), -5)
	m.SetObjective(model.Minimize, *obj.Add(x, 1).Add(y, 1))
	res, err := milp.Solve(context.Background(), s, m, milp.Params{})
	require.NoError(t, err)
	require.Equal(t, milp.Optimal, res.Status)
	assert.InDelta(t, -8, res.Objective, 1e-9)
	assert.InDelta(t, -5, res.Values[x], 1e-9)
	assert.InDelta(t, -3, res.Values[y], 1e-9)
}

// TestTimeLimit: Σ 2x_i = 41 over 40 binaries has a feasible relaxation and no integer point
// (parity); branch and bound cannot finish, so a 1 s limit stops it with TimeLimit, no claimed
// bound (golp exposes none), within a few seconds.
func TestTimeLimit(t *testing.T) {
	s, _ := New()
	m := model.New("parity")
	var e, obj model.Expr
	for i := 0; i < 40; i++ {
		v := m.AddBinary("")
		e.Add(v, 2)
		obj.Add(v, float64(1+i%7))
	}
	m.AddEq("odd", e, 41)
	m.SetObjective(model.Minimize, obj)
	start := time.Now()
	res, err := milp.Solve(context.Background(), s, m, milp.Params{TimeLimit: time.Second})
	require.NoError(t, err)
	wall := time.Since(start)
	t.Logf("status %v after %v", res.Status, wall)
	if res.Status == milp.Infeasible {
		t.Skip("this lp_solve proves the parity argument; the limit was not reached")
	}
	assert.Equal(t, milp.TimeLimit, res.Status)
	assert.False(t, res.HasSolution)
	assert.True(t, math.IsInf(res.Bound, -1), "no bound is claimed: %v", res.Bound)
	assert.Less(t, wall, 5*time.Second)
}

// TestCancelledBeforeSolve: a context cancelled before the call is honoured (golp has no abort
// hook during the solve).
func TestCancelledBeforeSolve(t *testing.T) {
	s, _ := New()
	m := model.New("c")
	x := m.AddContinuous("x", 0, 1)
	var obj model.Expr
	m.SetObjective(model.Minimize, *obj.Add(x, 1))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := s.Solve(ctx, m, milp.Params{})
	require.NoError(t, err)
	assert.Equal(t, milp.Interrupted, res.Status)
}

// TestStartIgnored: golp has no MIP start; a start point is ignored, said so in the log, and
// the solve is unchanged.
func TestStartIgnored(t *testing.T) {
	s, _ := New()
	m := model.New("start")
	x := m.AddBinary("x")
	var obj model.Expr
	m.SetObjective(model.Maximize, *obj.Add(x, 2))
	var log strings.Builder
	res, err := milp.Solve(context.Background(), s, m, milp.Params{Start: []float64{0}, Log: &log})
	require.NoError(t, err)
	assert.Equal(t, milp.Optimal, res.Status)
	assert.InDelta(t, 2, res.Objective, 1e-9)
	assert.Contains(t, log.String(), "start point is ignored")
}
