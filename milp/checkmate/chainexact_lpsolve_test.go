//go:build lpsolve

package checkmate_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/checkmate"
	"github.com/memsched/memsched/milp/lpsolve"
	"github.com/memsched/memsched/schedule"
)

// TestChainExactLpsolveNotTrusted: lp_solve 5.5 calls 39.78 (model units, 77.70 ms) optimal on
// the toy chain at 90 MiB where the optimum is 24.279 (47.42 ms: HiGHS, cbc and the exhaustive
// search). Its claim is not passed on: status solver-error, the bound falls back to
// Σ(u_f+u_b) = 37.38 ms, the note says why; its incumbent, if kept, is replayed, and with
// C_MP's start the result is never worse than 47.42 ms.
func TestChainExactLpsolveNotTrusted(t *testing.T) {
	s, err := lpsolve.New()
	require.NoError(t, err)
	c := instances.Toy()
	cmp, err := dp.SolvePersistent(c, instances.ToyBudget, dp.Options{})
	require.NoError(t, err)
	for _, withStart := range []bool{false, true} {
		var start schedule.Sequence
		if withStart {
			start = cmp.Sequence
		}
		sol, _, err := checkmate.SolveChainExact(context.Background(), s, c, instances.ToyBudget, milp.Params{}, start)
		require.NoError(t, err)
		assert.Equal(t, milp.SolverError, sol.Status)
		assert.NotEmpty(t, sol.BoundNote)
		assert.InDelta(t, 0.03738, sol.Bound, 1e-12, "Σ(u_f+u_b), not lp_solve's claim")
		require.NotNil(t, sol.Sequence)
		assert.GreaterOrEqual(t, sol.Makespan, 0.04742-1e-12)
		if withStart {
			assert.InDelta(t, 0.04742, sol.Makespan, 1e-12, "C_MP's start is optimal here")
		}
	}
}
