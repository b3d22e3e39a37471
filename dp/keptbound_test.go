package dp_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/heuristics/checkpoint"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/instances/zoo"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
	"github.com/memsched/memsched/verify/oracle"
)

// keptChain is ResNet-50 (`gen zoo resnet --depth 50`) cut into 4 stages, the fifth's two
// empty ones and the loss, rounded to a tiny chain (lever/rematoffload's zooShaped, sizes in
// units of 1/40 of the largest ā, times of 1/20 of the largest group's backward): at 249 B and
// 1 B/s the optimum is 68 s, the link credit 67 s.
func keptChain() *instances.Chain {
	st := func(uf, ub float64, a, abar, d, of, ob int64) instances.Stage {
		return instances.Stage{UF: uf, UB: ub, A: a, ABar: abar, Delta: d, OF: of, OB: ob}
	}
	return &instances.Chain{Name: "resnet50, 6 stages", A0: 2, Delta0: 2, Stages: []instances.Stage{
		st(4, 8, 10, 128, 10, 20, 20), st(4, 9, 5, 58, 5, 10, 10), st(3, 6, 3, 29, 3, 10, 10),
		st(10, 20, 1, 52, 1, 5, 5), st(0, 0, 1, 1, 1, 1, 1), st(0, 0, 0, 1, 0, 0, 0)}}
}

// TestKeptActivationsTensors: where the link credit counts bytes the kept-activation bound
// counts tensors. On keptChain at 249 B, 1 B/s the link credit's best sequence stores ā^1
// (128 B) and ā^2 (58 B) and exceeds the budget by 3 B during B^4, which a^1 (10 B) could
// cover as bytes; no tensor it holds is both small enough to cross the link in time and not
// read by B^4, so keeping those ā costs idle or recomputation. The bound meets the exact
// optimum (68 s) at byte and GiB scale, where the link credit stays at 67 s.
func TestKeptActivationsTensors(t *testing.T) {
	for _, f := range []int64{1, 1 << 30} {
		c, M, beta := keptChain(), int64(249), 1.0
		if f != 1 {
			c, M, beta = c.Scaled(f), M*f, beta*float64(f)
		}
		ref, err := oracle.Strict(c, M, beta, oracle.StrictOptions{})
		require.NoError(t, err)
		opt, _ := ref.Makespan.Float64()
		require.Equal(t, 68.0, opt)
		lc, err := dp.LinkCredit(c, M, beta, dp.LinkCreditOptions{Upper: opt, Whole: true})
		require.NoError(t, err)
		require.InDelta(t, 67.0, lc.Bound, 1e-6)
		kb, err := dp.KeptActivations(c, M, beta, dp.KeptOptions{Upper: opt, Lower: lc.Bound})
		require.NoError(t, err)
		require.False(t, kb.Stopped)
		require.InDelta(t, 68.0, kb.Bound, 68e-9, "scale %d", f)
		require.LessOrEqual(t, kb.Bound, opt)
	}
}

// TestKeptActivationsAgainstReferee: on 100 random tiny chains, at byte and GiB scale, the
// bound is at most the exact optimum of every strict schedule (oracle.Strict) and at least
// Σu; lever/rematoffload's TestSoundness checks it on 300 points more (6000 with
// MEMSCHED_COMBINED_SOUNDNESS=1), real durations included.
func TestKeptActivationsAgainstReferee(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 4))
	points, tight := 0, 0
	for k := 0; k < 100; k++ {
		c := instances.RandomTiny(r, k)
		sa, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
		require.NoError(t, err)
		lo := verify.MinBudget(c)
		M := lo + r.Int64N(max(sa.Peak-lo, 0)+1)
		beta := float64(1 + r.IntN(4))
		for _, f := range []int64{1, 1 << 30} {
			cc, MM, bb := c, M, beta
			if f != 1 {
				cc, MM, bb = c.Scaled(f), M*f, beta*float64(f)
			}
			ref, err := oracle.Strict(cc, MM, bb, oracle.StrictOptions{})
			require.NoError(t, err)
			if !ref.Feasible {
				continue
			}
			opt, _ := ref.Makespan.Float64()
			kb, err := dp.KeptActivations(cc, MM, bb, dp.KeptOptions{Upper: opt})
			require.NoError(t, err, "chain %d ×%d (M = %d, β = %g)", k, f, MM, bb)
			// The optimum's own sequence, and one that keeps every stage, as hints: the same
			// bound (they order the search, nothing else).
			hinted, err := dp.KeptActivations(cc, MM, bb, dp.KeptOptions{Upper: opt, Hints: []schedule.Sequence{ref.Schedule.Sequence(), checkpoint.StoreAll(cc)}})
			require.NoError(t, err)
			require.Equal(t, kb.Bound, hinted.Bound, "chain %d ×%d: hints changed the bound", k, f)
			require.LessOrEqual(t, kb.Bound, opt*(1+1e-12), "chain %d ×%d (M = %d, β = %g)", k, f, MM, bb)
			require.GreaterOrEqual(t, kb.Bound, cc.ComputeTime()*(1-1e-12))
			points++
			if kb.Bound >= opt*(1-1e-9) {
				tight++
			}
		}
	}
	t.Logf("%d points, the bound at the optimum on %d", points, tight)
	require.Greater(t, tight, points/2)
}

// TestKeptActivationsLimits: bad input is an error naming the value; Stop and the node cap
// end the search with the bound proven so far (Lower), never more; an upper end below Σu is
// no schedule's.
func TestKeptActivationsLimits(t *testing.T) {
	c := keptChain()
	for _, tc := range []struct {
		beta float64
		o    dp.KeptOptions
		want string
	}{
		{0, dp.KeptOptions{Upper: 68}, "bandwidth 0"},
		{1, dp.KeptOptions{Upper: -1}, "upper bound -1"},
		{1, dp.KeptOptions{Upper: 68, Lower: -1}, "lower bound -1"},
	} {
		_, err := dp.KeptActivations(c, 249, tc.beta, tc.o)
		require.ErrorContains(t, err, tc.want)
	}
	_, err := dp.KeptActivations(c, 249, 1, dp.KeptOptions{Upper: 40}) // Σu = 64
	require.ErrorIs(t, err, dp.ErrKeptUpper)
	stop := make(chan struct{})
	close(stop)
	for _, o := range []dp.KeptOptions{{Upper: 68, Lower: 65, MaxNodes: 3}, {Upper: 68, Lower: 65, Stop: stop}} {
		r, err := dp.KeptActivations(c, 249, 1, o)
		require.NoError(t, err)
		require.True(t, r.Stopped)
		require.Equal(t, 65.0, r.Bound)
	}
	zero := &instances.Chain{A0: 1, Stages: []instances.Stage{{A: 1, ABar: 1}, {}}}
	r, err := dp.KeptActivations(zero, 3, 1, dp.KeptOptions{Upper: 0})
	require.NoError(t, err, "a chain that takes no time")
	require.Zero(t, r.Bound)
	r, err = dp.KeptActivations(c, 249, 1, dp.KeptOptions{Upper: 68, Lower: 68})
	require.NoError(t, err)
	require.Equal(t, 68.0, r.Bound)
	require.Zero(t, r.Probes, "nothing to prove below the upper end")
}

// TestKeptActivationsDeepChain: on ResNet-101 (36 stages, `gen zoo` defaults) at a quarter of
// the way from the smallest budget to the store-all peak, 12 GB/s, below remat's persistent
// schedule (no transfers: a schedule of the combined model, its sequence the hint), the search
// ends within 256 K nodes over its bisection's probes: each choice is cut where a later second
// run closes an earlier operation's window, not at the leaves.
func TestKeptActivationsDeepChain(t *testing.T) {
	c, err := zoo.ResNet(zoo.CNNConfig{Depth: 101, Image: 224, Batch: 32})
	require.NoError(t, err)
	all, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
	require.NoError(t, err)
	lo := verify.MinBudget(c)
	M := lo + (all.Peak-lo)/4
	rm, err := dp.SolvePersistent(c, M, dp.Options{Slots: 500})
	require.NoError(t, err)
	require.True(t, rm.Feasible)
	kb, err := dp.KeptActivations(c, M, 12e9, dp.KeptOptions{Upper: rm.Makespan, MaxNodes: 256 << 10, Hints: []schedule.Sequence{rm.Sequence}})
	require.NoError(t, err)
	require.False(t, kb.Stopped, "%d probes, %d nodes", kb.Probes, kb.Nodes)
	require.Greater(t, kb.Bound, c.ComputeTime()*1.05)
	require.Less(t, kb.Bound, rm.Makespan)
	t.Logf("bound %.3f ms below remat's %.3f ms: %d probes, %d nodes", kb.Bound*1e3, rm.Makespan*1e3, kb.Probes, kb.Nodes)
}
