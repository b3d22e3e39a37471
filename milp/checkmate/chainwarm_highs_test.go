//go:build highs

package checkmate_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/checkmate"
	"github.com/memsched/memsched/verify"
)

// warmChain is a 100-stage chain in GiB (ā > a, overheads, δ independent) and a budget 30 %
// of the way from the smallest feasible one to the store-all peak, where C_MP recomputes much.
func warmChain(t testing.TB, stages int) (*instances.Chain, int64) {
	r := rand.New(rand.NewPCG(100, 11))
	c := instances.Random(r, instances.RandomParams{Stages: stages, MaxSize: 1 << 30, MaxTime: 0.01, WithABar: true, WithOverheads: true, WithDelta: true})
	lo := verify.MinBudget(c)
	return c, lo + 3*(storeAllChainPeak(t, c)-lo)/10
}

// TestChainWarmStart: on a 100-stage chain under a 3 s limit, the solve started from rotor's
// C_MP sequence returns a verified incumbent no worse than C_MP, with status time-limit or
// optimal (never optimal with a gap) and a bound ≤ the incumbent; without the start the same
// solve (1 s) is reported as it is (typically no incumbent). Heavy: skipped with -short.
func TestChainWarmStart(t *testing.T) {
	if testing.Short() {
		t.Skip("100-stage MILP solves")
	}
	s := solver(t)
	c, b := warmChain(t, 100)
	cmp, err := dp.SolvePersistent(c, b, dp.Options{})
	require.NoError(t, err)
	require.True(t, cmp.Feasible)
	p := milp.Params{TimeLimit: 3 * time.Second}
	start := time.Now()
	sol, f, err := checkmate.SolveChainExact(context.Background(), s, c, b, p, cmp.Sequence)
	require.NoError(t, err)
	t.Logf("100 stages, budget %d: %d rows, %d cols, %d nnz; %v in %v: incumbent %.6f ms (from start: %v), C_MP %.6f ms, bound %.6f ms, gap %.3g%%, note %q",
		b, f.Model.NumRows(), f.Model.NumVars(), f.Model.NumNonzeros(), sol.Status, time.Since(start), sol.Makespan*1e3, sol.FromStart, cmp.Makespan*1e3, sol.Bound*1e3, sol.Gap*100, sol.StartNote)
	assert.Empty(t, sol.StartNote)
	assert.Contains(t, []milp.Status{milp.TimeLimit, milp.Optimal}, sol.Status)
	require.NotNil(t, sol.Sequence)
	rep, err := verify.Remat(c, sol.Sequence, verify.RematOptions{})
	require.NoError(t, err)
	assert.LessOrEqual(t, rep.Peak, b)
	assert.Equal(t, rep.Makespan, sol.Makespan)
	assert.LessOrEqual(t, sol.Makespan, cmp.Makespan*(1+1e-12))
	assert.LessOrEqual(t, sol.Bound, sol.Makespan)
	if sol.Status == milp.Optimal {
		assert.LessOrEqual(t, sol.Gap, 1e-4)
	} else {
		assert.False(t, math.IsNaN(sol.Gap))
	}

	cold, _, err := checkmate.SolveChainExact(context.Background(), s, c, b, milp.Params{TimeLimit: time.Second}, nil)
	require.NoError(t, err)
	t.Logf("without the start: %v, incumbent %.6f ms, bound %.6f ms", cold.Status, cold.Makespan*1e3, cold.Bound*1e3)
	if cold.Sequence != nil {
		_, err := verify.Remat(c, cold.Sequence, verify.RematOptions{})
		require.NoError(t, err)
	}
}
