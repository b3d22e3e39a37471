package remat_test

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/heuristics/checkpoint"
	"github.com/memsched/memsched/instances"
	leverremat "github.com/memsched/memsched/lever/remat"
	"github.com/memsched/memsched/verify"
)

// TestStrategies: on the toy chain at 90 MiB (004 Table 2) every strategy replays, the exact
// tables and the exhaustive search give the published optimum 47.42 ms, store-all does not fit
// (peak 107 MiB) nor does checkpoint_sequential (it does at 107 MiB), the slotted and exact C_MP agree within the slots' rounding, and the search
// refuses a chain beyond its reach with a *LimitError.
func TestStrategies(t *testing.T) {
	c := instances.Toy()
	budget := int64(90) << 20
	assert.Equal(t, []string{"persistent", "floating", "revolve", "sequential", "store-all"}, leverremat.Names(leverremat.InCertify))
	got := map[string]leverremat.Outcome{}
	for _, st := range leverremat.Strategies {
		for _, exact := range []bool{false, true} {
			if exact && !st.HasTable() {
				continue
			}
			out, err := st.Run(c, budget, leverremat.Options{Exact: exact})
			require.NoError(t, err, st.Name)
			assert.Equal(t, exact, out.Exact, st.Name)
			switch st.Name {
			case "store-all":
				assert.False(t, out.Feasible)
				assert.InDelta(t, 107<<20, out.Peak, 1<<14)
				continue
			case "sequential":
				// checkpoint_sequential stores each segment's whole tape: nothing fits 90 MiB.
				assert.False(t, out.Feasible)
				assert.False(t, out.Verified)
				continue
			}
			require.True(t, out.Feasible, st.Name)
			require.True(t, out.Verified, st.Name)
			assert.LessOrEqual(t, out.Peak, budget, st.Name)
			if exact {
				assert.Equal(t, int64(1), out.SlotSize)
				got[st.Name+" exact"] = out
			} else {
				got[st.Name] = out
			}
		}
	}
	assert.InDelta(t, 47.42e-3, got["floating exact"].Makespan, 1e-6)
	assert.InDelta(t, 47.42e-3, got["exhaustive"].Makespan, 1e-6)
	assert.InDelta(t, 47.42e-3, got["persistent exact"].Makespan, 1e-6)
	assert.GreaterOrEqual(t, got["persistent"].Makespan, got["persistent exact"].Makespan-1e-12)
	// Under 100 stages the coarse strategy groups nothing: C_MP on the chain itself.
	assert.Equal(t, got["persistent"].Makespan, got["coarse"].Makespan)
	seq, _ := leverremat.Lookup("sequential")
	out, err := seq.Run(c, 107<<20, leverremat.Options{})
	require.NoError(t, err)
	require.True(t, out.Feasible)
	assert.Positive(t, out.Segments)

	long := &instances.Chain{Name: "long", A0: 1, Delta0: 1}
	for l := 0; l < 40; l++ {
		long.Stages = append(long.Stages, instances.Stage{Name: "s", UF: 1, UB: 1, A: 1, ABar: 1, Delta: 1})
	}
	st, ok := leverremat.Lookup("exhaustive")
	require.True(t, ok)
	_, err = st.Run(long, 100, leverremat.Options{})
	var le *leverremat.LimitError
	require.True(t, errors.As(err, &le), "%v", err)
	assert.Equal(t, 40, le.Stages)
}

// TestCoarseOnALongChain: on 2001 stages at a 40th of the store-all peak, where sequential
// checkpointing does not fit and C_MP on the whole chain does not end in seconds, the coarse
// strategy (C_MP on grouped stages, expanded) has a verified sequence within its budget, not
// faster than Σu, in a few seconds; stopped at once, it says so.
func TestCoarseOnALongChain(t *testing.T) {
	c := instances.Random(rand.New(rand.NewPCG(1, 2001)), instances.RandomParams{Stages: 2001, MaxSize: 64 << 20, MaxTime: 1e-2, WithABar: true, WithOverheads: true})
	sa, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
	require.NoError(t, err)
	budget := sa.Peak / 40
	_, fits, err := checkpoint.BestSequential(c, budget)
	require.NoError(t, err)
	require.False(t, fits, "sequential checkpointing does not fit a 40th of the peak")
	st, ok := leverremat.Lookup("coarse")
	require.True(t, ok)
	start := time.Now()
	out, err := st.Run(c, budget, leverremat.Options{DP: dp.Options{Slots: 100, MaxMemory: 512 << 20}})
	require.NoError(t, err)
	require.True(t, out.Feasible)
	require.True(t, out.Verified)
	assert.LessOrEqual(t, out.Peak, budget)
	assert.GreaterOrEqual(t, out.Makespan, c.ComputeTime()*(1-1e-12))
	t.Logf("%.3f s (Σu %.3f s) at %d B in %v", out.Makespan, c.ComputeTime(), budget, time.Since(start))

	// With a memory limit below every grouping's table at 100 slots, each gets the slots
	// that fit (a TooLargeError on the first grouping before).
	small, err := st.Run(c, budget, leverremat.Options{DP: dp.Options{Slots: 100, MaxMemory: 1 << 20}})
	require.NoError(t, err)
	require.True(t, small.Feasible)
	assert.LessOrEqual(t, small.Peak, budget)

	stop := make(chan struct{})
	close(stop)
	_, err = st.Run(c, budget, leverremat.Options{DP: dp.Options{Stop: stop}})
	assert.ErrorIs(t, err, dp.ErrStopped)
}
