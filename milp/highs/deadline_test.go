//go:build highs

package highs

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances/zoo"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/combinedlb"
)

// TestDeadline: a deadline on the context bounds the solve whatever Params.TimeLimit says,
// and reaching it is TimeLimit (a budget spent), not Interrupted (a stop); a deadline already
// passed does not start HiGHS at all.
func TestDeadline(t *testing.T) {
	s, _ := New()
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	res, err := milp.Solve(ctx, s, marketSplit(), milp.Params{TimeLimit: time.Minute})
	require.NoError(t, err)
	assert.Equal(t, milp.TimeLimit, res.Status)
	// The market split runs for minutes; the deadline stops it (slack for a loaded machine).
	assert.Less(t, time.Since(t0), 5*time.Second)

	res, err = milp.Solve(ctx, s, knapsack(), milp.Params{})
	require.NoError(t, err)
	assert.Equal(t, milp.TimeLimit, res.Status, "the deadline has passed")

	// A cancelled context (Ctrl-C) is still Interrupted.
	cctx, ccancel := context.WithCancel(context.Background())
	ccancel()
	res, err = milp.Solve(cctx, s, knapsack(), milp.Params{})
	require.NoError(t, err)
	assert.Equal(t, milp.Interrupted, res.Status)
}

// TestAbandonPastDeadline: HiGHS reads its interrupt flag and its clock only between the steps
// of some phases — presolve passes, the MIP's setup after presolve — seconds each on a big
// model under load: the relaxation MILP of DenseNet-121 at 3 GiB (700 000 nonzeros) ran
// 24–35 s under `remat-offload --time-limit 10` (issue 29), and plain HiGHS given 8 s takes
// 11–15 s on a loaded machine. A solve under a deadline now ends by the deadline and its
// grace (abandonGrace) whatever phase HiGHS is in: abandoned (time-limit, nothing of the run's,
// Abandoned set) when HiGHS has not returned, its own time-limit result when it has. The
// abandoned run goes on until its next poll and frees its instance then; solves after it
// are unaffected.
func TestAbandonPastDeadline(t *testing.T) {
	if testing.Short() {
		t.Skip("seconds")
	}
	c, err := zoo.DenseNet(zoo.CNNConfig{Depth: 121, Image: 224, Batch: 32})
	require.NoError(t, err)
	f, err := combinedlb.Build(c, 3<<30, 12e9)
	require.NoError(t, err)
	s, _ := New()
	abandoned := 0
	for _, d := range []time.Duration{1500 * time.Millisecond, 2500 * time.Millisecond} {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		t0 := time.Now()
		res, err := milp.Solve(ctx, s, f.Model, milp.Params{})
		cancel()
		require.NoError(t, err)
		assert.Equal(t, milp.TimeLimit, res.Status)
		assert.Less(t, time.Since(t0), d+abandonGrace(d)+700*time.Millisecond, "deadline %s", d)
		if res.Abandoned {
			abandoned++
			assert.True(t, math.IsNaN(res.Bound))
			assert.False(t, res.HasSolution)
		}
	}
	t.Logf("%d of 2 solves abandoned", abandoned)
	res, err := milp.Solve(context.Background(), s, knapsack(), milp.Params{})
	require.NoError(t, err)
	assert.Equal(t, milp.Optimal, res.Status)
}
