package dp

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/verify"
)

// TestCutoffKeepsTheOptimum: on random chains, byte-scale and GiB-scale, a table pruned by a
// cutoff (the makespan of a verified sequence: the slotted C_MP's, or the optimum itself) gives
// the same value at its budget as the whole table — C_MP (sequence replayed), collapsed and
// C_FL (sequence replayed) — and holds fewer breakpoints.
func TestCutoffKeepsTheOptimum(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 5))
	fewer := 0
	for i := 0; i < 40; i++ {
		p := instances.RandomParams{Stages: 3 + r.IntN(14), MaxSize: 1 << 30, MaxTime: 5e-3,
			WithABar: true, WithOverheads: i%2 == 0, WithDelta: i%3 == 0}
		if i%4 == 0 {
			p.MaxSize, p.MaxTime, p.Integer, p.Stages = 9, 6, true, 2+r.IntN(6)
		}
		c := instances.Random(r, p)
		lo := verify.MinBudget(c)
		b := lo + r.Int64N(lo+1)
		full, err := NewPersistentExact(c, b, ExactOptions{})
		require.NoError(t, err)
		want, err := full.Solve(b)
		require.NoError(t, err)
		require.True(t, want.Feasible)
		fe, err := NewFloatingExact(c, b, ExactOptions{})
		require.NoError(t, err)
		opt, err := fe.Solve(b)
		require.NoError(t, err)
		col, err := NewCollapsedExact(c, b, ExactOptions{})
		require.NoError(t, err)
		lb, _ := col.Bound(b)
		ubs := []float64{want.Makespan}
		if sl, err := SolvePersistent(c, b, Options{Slots: 50}); err == nil && sl.Feasible {
			ubs = append(ubs, sl.Makespan)
		}
		for _, ub := range ubs {
			cut, err := NewPersistentExact(c, b, ExactOptions{Cutoff: ub})
			require.NoError(t, err)
			got, err := cut.Solve(b)
			require.NoError(t, err, "chain %d", i)
			require.True(t, got.Feasible)
			require.Equal(t, want.Makespan, got.Makespan, "chain %d cutoff %g", i, ub)
			if cut.Stats().Breakpoints < full.Stats().Breakpoints {
				fewer++
			}
			cc, err := NewCollapsedExact(c, b, ExactOptions{Cutoff: ub})
			require.NoError(t, err)
			v, ok := cc.Bound(b)
			require.True(t, ok)
			require.Equal(t, lb, v, "chain %d", i)
			fc, err := NewFloatingExact(c, b, ExactOptions{Cutoff: ub})
			require.NoError(t, err)
			fo, err := fc.Solve(b)
			require.NoError(t, err)
			require.Equal(t, opt.Makespan, fo.Makespan, "chain %d", i)
		}
	}
	require.Greater(t, fewer, 20, "the cutoff prunes")
}

// TestCollapsedGuards: C_FL collapsed stops on a closed Stop channel (built alone or from a C_MP
// table), and its fixed part — rows, δ minima, source tables — is refused above MaxMemory
// before anything is allocated.
func TestCollapsedGuards(t *testing.T) {
	c := benchChain(40)
	c.Stages[0].A, c.Stages[0].Delta = 1, 1 // a source at stage 1
	b := verify.MinBudget(c) * 2
	stop := make(chan struct{})
	close(stop)
	_, err := NewCollapsedExact(c, b, ExactOptions{Stop: stop})
	require.ErrorIs(t, err, ErrStopped)
	pe, err := NewPersistentExact(c, b, ExactOptions{})
	require.NoError(t, err)
	_, err = pe.Collapsed(ExactOptions{Stop: stop})
	require.ErrorIs(t, err, ErrStopped)
	fixed := persistentExactFixedBytes(c, collapsed)
	require.Greater(t, fixed, persistentExactFixedBytes(c, recCMP), "the δ minima and the source tables count")
	_, err = NewCollapsedExact(c, b, ExactOptions{MaxMemory: fixed - 1})
	var tl *TooLargeError
	require.ErrorAs(t, err, &tl)
	require.Contains(t, err.Error(), "exact C_FL collapsed on 40 stages")
	_, err = NewCollapsedExact(c, b, ExactOptions{MaxMemory: fixed + 1<<20})
	require.NoError(t, err)
}
