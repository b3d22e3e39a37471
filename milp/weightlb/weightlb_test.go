package weightlb_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances/offload"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/ref"
	"github.com/memsched/memsched/milp/weightlb"
)

// TestTinyBounds solves tiny instances with the pure-Go referee: with enough memory the bound is
// Σu (no idle); with memory for one layer's weights only, transfers must leave idle time.
func TestTinyBounds(t *testing.T) {
	layers := []offload.Layer{{UF: 1, UB: 2, W: 4, A: 1}, {UF: 1, UB: 2, W: 4, A: 1}}
	sum := 6.0
	s, _ := ref.New()
	roomy := &offload.Problem{Layers: layers, MGPU: 100, Beta: 4}
	m, v, err := weightlb.Build(roomy)
	require.NoError(t, err)
	res, err := milp.Solve(context.Background(), s, m, milp.Params{})
	require.NoError(t, err)
	require.Equal(t, milp.Optimal, res.Status)
	assert.InDelta(t, sum, res.Objective*v.Units.Time, 1e-6)

	// M_GPU = 12: B_i needs 2·4 + 2 = 10 with its own weights, so the other layer's 4 bytes
	// cannot all stay: w must move, and moving 4 B at 4 B/s takes time.
	tight := &offload.Problem{Layers: layers, MGPU: 12, Beta: 4}
	m, v, err = weightlb.Build(tight)
	require.NoError(t, err)
	res, err = milp.Solve(context.Background(), s, m, milp.Params{})
	require.NoError(t, err)
	require.Equal(t, milp.Optimal, res.Status)
	assert.GreaterOrEqual(t, res.Objective*v.Units.Time, sum-1e-9)
	t.Logf("tight bound %.4g (Σu = %g)", res.Objective*v.Units.Time, sum)

	// Too little memory for B_1 alone: infeasible.
	tiny := &offload.Problem{Layers: layers, MGPU: 9, Beta: 4}
	m, _, err = weightlb.Build(tiny)
	require.NoError(t, err)
	res, err = milp.Solve(context.Background(), s, m, milp.Params{})
	require.NoError(t, err)
	assert.Equal(t, milp.Infeasible, res.Status)
}

// TestBoundBelowSchedulesRef: a small sweep with the pure-Go referee (L ≤ 2); the 200-instance sweep
// runs with HiGHS (highs_test.go).
func TestBoundBelowSchedulesRef(t *testing.T) {
	s, _ := ref.New()
	n := 8
	if testing.Short() {
		n = 3
	}
	sweep(t, s, n, 2, 1)
}
