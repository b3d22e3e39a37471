package oracle_test

import (
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	hact "github.com/memsched/memsched/heuristics/actoffload"
	"github.com/memsched/memsched/heuristics/checkpoint"
	"github.com/memsched/memsched/instances"
	act "github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
	"github.com/memsched/memsched/verify/oracle"
)

// TestStrictSpecCases: SPEC §6's cases A–E: the global optimum over strict schedules is at
// most the class's (whose optimal plans re-time to strict schedules of the same makespans).
func TestStrictSpecCases(t *testing.T) {
	for _, tc := range instances.SpecCombinedCases() {
		r, err := oracle.Strict(tc.Chain, tc.Budget, tc.Beta, oracle.StrictOptions{})
		require.NoError(t, err, tc.Name)
		require.True(t, r.Feasible, tc.Name)
		assert.LessOrEqual(t, r.Makespan.Cmp(tc.Combined), 0, tc.Name)
		t.Logf("%s: strict optimum %s (class %s), %d configurations; %v", tc.Name, r.Makespan.RatString(), tc.Combined.RatString(), r.Nodes, r.Schedule.Ops)
		// Pruned by a makespan reached: the optimum is found at it, nothing below it.
		opt, _ := r.Makespan.Float64()
		at, err := oracle.Strict(tc.Chain, tc.Budget, tc.Beta, oracle.StrictOptions{Upper: opt})
		require.NoError(t, err)
		require.True(t, at.Feasible, tc.Name)
		assert.Zero(t, at.Makespan.Cmp(r.Makespan), tc.Name)
		below, err := oracle.Strict(tc.Chain, tc.Budget, tc.Beta, oracle.StrictOptions{Upper: opt * 0.99})
		require.NoError(t, err)
		assert.False(t, below.Feasible, tc.Name)
		assert.True(t, below.NoBetter, tc.Name)
	}
}

func describe(c *instances.Chain) string {
	out := fmt.Sprintf("a0=%d δ0=%d", c.A0, c.Delta0)
	for l, st := range c.Stages {
		out += fmt.Sprintf("\n  %d: uf=%g ub=%g a=%d ā=%d δ=%d of=%d ob=%d", l+1, st.UF, st.UB, st.A, st.ABar, st.Delta, st.OF, st.OB)
	}
	return out
}

// TestStrictOneLever: the referee with one lever switched off equals the exact optimum of that
// lever, on 300 random tiny chains (instances.RandomTiny, budgets from the smallest operation
// to the store-all peak, β 1–4 B/s), at byte scale and every fifth × 2^30:
//   - no offloading: 004's optimum by the exhaustive search of sequences (oracle.Remat);
//   - no recomputation: 001's optimum by the event search (heuristics/actoffload.EventSearch,
//     exhaustive over event sequences), on the same chain read as Problem 1 (the models agree
//     there: the loss stage's output and gradient are 0 in this population).
func TestStrictOneLever(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 1))
	chains := 300
	if testing.Short() {
		chains = 60
	}
	var remat, offl int
	for k := 0; k < chains; k++ {
		c := instances.RandomTiny(r, k)
		budget := randomBudget(t, r, c)
		beta := float64(1 + r.IntN(4))
		name := fmt.Sprintf("chain %d (M = %d, β = %g)\n%s", k, budget, beta, describe(c))
		for _, f := range []int64{1, 1 << 30} {
			if f > 1 && k%5 != 0 {
				continue // GiB scale on every fifth chain
			}
			cc, b, bb := c, budget, beta
			if f > 1 {
				cc, b, bb = c.Scaled(f), budget*f, beta*float64(f)
			}
			noOff, noRe := oneLever(t, cc, b, bb, name)
			if noOff.Feasible {
				remat++
			}
			if noRe.Feasible {
				offl++
			}
		}
	}
	t.Logf("%d chains (every fifth at GiB scale too): remat alone feasible on %d, offloading alone on %d", chains, remat, offl)
}

// TestStrictRealDurations: measured profiles' durations are float64 seconds that share no
// small tick (a GPT-2 block's forward, 0.07222110612382165 s, at 12 GB/s needs 2^56·5^9·3
// ticks a second), which the search refused ("no common tick below 2^52") on every real
// chain. On 40 random tiny chains with such durations — each time × 0.0722211… and a random
// factor, sizes × 2^30, β ≈ 12 GB/s — it runs, and with one lever switched off it equals the
// exact optimum of that lever, as in TestStrictOneLever; with both, it is at most either.
func TestStrictRealDurations(t *testing.T) {
	r := rand.New(rand.NewPCG(47, 3))
	chains := 40
	if testing.Short() {
		chains = 15
	}
	var both int
	for k := 0; k < chains; k++ {
		c, beta := instances.RealDurations(instances.RandomTiny(r, k).Scaled(1<<30), 1<<30, r)
		budget := randomBudget(t, r, c)
		beta *= float64(1 + r.IntN(4))
		name := fmt.Sprintf("chain %d (M = %d, β = %g)\n%s", k, budget, beta, describe(c))
		noOff, noRe := oneLever(t, c, budget, beta, name)
		all, err := oracle.Strict(c, budget, beta, oracle.StrictOptions{})
		require.NoError(t, err, name)
		require.Equal(t, noOff.Feasible || noRe.Feasible || all.Feasible, all.Feasible, name)
		if noOff.Feasible {
			assert.LessOrEqual(t, all.Makespan.Cmp(noOff.Makespan), 0, name)
		}
		if noRe.Feasible {
			assert.LessOrEqual(t, all.Makespan.Cmp(noRe.Makespan), 0, name)
		}
		if all.Feasible {
			both++
		}
	}
	t.Logf("%d chains with real durations: %d feasible", chains, both)
}

// TestStrictLimits: the caps say which one stopped the search. The toy chain's durations
// (float seconds) need fine ticks: MaxNodesFine applies there, not on SPEC §6's integer case
// A; MaxMemory stops it by its estimate of the memory queued (560 bytes a configuration).
func TestStrictLimits(t *testing.T) {
	toy := instances.Toy()
	var le *oracle.StrictLimitError
	_, err := oracle.Strict(toy, 80<<20, 1e9, oracle.StrictOptions{MaxNodesFine: 1000})
	require.ErrorAs(t, err, &le)
	assert.ErrorIs(t, err, oracle.ErrStrictLimit)
	assert.Equal(t, 1000, le.MaxNodes)
	assert.Zero(t, le.MaxMemory)
	_, err = oracle.Strict(toy, 80<<20, 1e9, oracle.StrictOptions{MaxMemory: 1 << 20})
	require.ErrorAs(t, err, &le)
	assert.Equal(t, int64(1<<20), le.MaxMemory)
	assert.Less(t, le.MaxNodes, (1<<20)/560, "settled configurations when the queue passed 1 MiB")
	assert.Contains(t, err.Error(), "memory limit")
	a := instances.SpecCombinedCases()[0]
	r, err := oracle.Strict(a.Chain, a.Budget, a.Beta, oracle.StrictOptions{MaxNodesFine: 1})
	require.NoError(t, err, "integer durations: MaxNodesFine does not apply")
	assert.Zero(t, r.Makespan.Cmp(big.NewRat(7, 1)), r.Makespan.RatString())
}

// oneLever checks the search with one lever switched off against that lever's exact optimum
// on c at budget and beta: without transfers 004's (oracle.Remat, the exhaustive search of
// sequences), without recomputation 001's (the event search, exhaustive over event
// sequences, on c read as Problem 1); it returns the two searches.
func oneLever(t *testing.T, c *instances.Chain, budget int64, beta float64, name string) (noOff, noRe *oracle.StrictResult) {
	t.Helper()
	_, want, ok, err := oracle.Remat(c, budget, verify.RematOptions{})
	require.NoError(t, err)
	noOff, err = oracle.Strict(c, budget, beta, oracle.StrictOptions{NoOffload: true})
	require.NoError(t, err, name)
	require.Equal(t, ok, noOff.Feasible, name)
	if ok {
		g, _ := noOff.Makespan.Float64()
		require.InDelta(t, want, g, 1e-9*want, name)
	}
	p, err := act.FromChain(c, budget, beta)
	require.NoError(t, err)
	ev, err := hact.EventSearch(p, hact.EventOptions{})
	require.NoError(t, err)
	require.True(t, ev.Complete)
	noRe, err = oracle.Strict(c, budget, beta, oracle.StrictOptions{NoRecompute: true})
	require.NoError(t, err, name)
	require.Equal(t, ev.Best != nil, noRe.Feasible, name)
	if noRe.Feasible {
		g, _ := noRe.Makespan.Float64()
		require.InDelta(t, ev.Best.Report.Makespan, g, 1e-9*g, name)
	}
	return noOff, noRe
}

// TestStrictNoIdleRoundTrip: a tensor back from a prefetch that no operation has read is not
// offloaded again. verify/combined.Check reads such a round trip as one offload whose readers
// run on to the tensor's next use, so its prefetch would start before its release: on this
// transformer-shaped chain (an embedding stage, three blocks, a loss stage) the search used to
// call "optimal" a schedule that moves a^0 off and back three times with nothing reading it,
// and failed validating it. Now it ends with a schedule Check accepts, no slower than the
// search without transfers (oracle.Remat) and no faster than Σu.
func TestStrictNoIdleRoundTrip(t *testing.T) {
	c := &instances.Chain{A0: 1, Delta0: 1, Stages: []instances.Stage{
		{UF: 1, UB: 0, A: 1, ABar: 1, Delta: 1},
		{UF: 2, UB: 3, A: 1, ABar: 7, Delta: 1, OB: 3},
		{UF: 2, UB: 3, A: 1, ABar: 8, Delta: 1, OF: 2, OB: 1},
		{UF: 2, UB: 4, A: 1, ABar: 4, Delta: 1, OB: 1},
		{UF: 5, UB: 5, ABar: 11, OF: 5, OB: 3},
	}}
	for _, beta := range []float64{2.5, 3} {
		r, err := oracle.Strict(c, 18, beta, oracle.StrictOptions{})
		require.NoError(t, err, "β = %g", beta)
		require.True(t, r.Feasible)
		got, _ := r.Makespan.Float64()
		require.GreaterOrEqual(t, got, c.ComputeTime())
		_, remat, feasible, err := oracle.Remat(c, 18, verify.RematOptions{})
		require.NoError(t, err)
		if feasible {
			require.LessOrEqual(t, got, remat*(1+1e-12))
		}
		for j, tr := range r.Schedule.Transfers {
			if j > 0 && tr.Kind == schedule.Offload {
				prev := r.Schedule.Transfers[j-1]
				if prev.Tensor == tr.Tensor && prev.Kind == schedule.Prefetch {
					waited := false
					for _, op := range r.Schedule.Ops {
						waited = waited || slices.Contains(op.Wait, j-1)
					}
					require.True(t, waited, "β = %g: transfer %d prefetches %v, %d offloads it again, and no operation waits for the prefetch", beta, j-1, tr.Tensor, j)
				}
			}
		}
	}
}

// TestStrictPartialBound: a search stopped by its node cap, its memory cap or Stop still
// proves a bound — the priority of the next configuration to settle — and it is a lower bound:
// on 120 random tiny chains (byte scale, every fifth at GiB scale, every third with real
// durations), stopped at a quarter of the configurations the whole search settles, it is at
// most the optimum and at least Σu (the first configuration's estimate), and above Σu on
// some; with Upper below the optimum it is at most Upper. On the toy chain at 80 MiB, 1 GB/s
// (no rematerialization sequence fits) it passes the link credit's 43.62 ms at 512 Ki
// configurations and stays below the best schedule found, 66.78 ms.
func TestStrictPartialBound(t *testing.T) {
	r := rand.New(rand.NewPCG(59, 7))
	chains := 120
	if testing.Short() {
		chains = 40
	}
	var points, above int
	for k := 0; k < chains; k++ {
		c := instances.RandomTiny(r, k)
		beta := float64(1 + r.IntN(4))
		switch {
		case k%3 == 0:
			c, beta = instances.RealDurations(c.Scaled(1<<30), 1<<30, r)
		case k%5 == 0:
			c, beta = c.Scaled(1<<30), beta*(1<<30)
		}
		budget := randomBudget(t, r, c)
		name := fmt.Sprintf("chain %d (M = %d, β = %g)\n%s", k, budget, beta, describe(c))
		all, err := oracle.Strict(c, budget, beta, oracle.StrictOptions{})
		require.NoError(t, err, name)
		if !all.Feasible || all.Nodes < 8 {
			continue
		}
		opt, _ := all.Makespan.Float64()
		var le *oracle.StrictLimitError
		_, err = oracle.Strict(c, budget, beta, oracle.StrictOptions{MaxNodes: all.Nodes / 4, MaxNodesFine: all.Nodes / 4})
		require.ErrorAs(t, err, &le, name)
		points++
		require.LessOrEqual(t, le.Bound, opt, name)
		require.GreaterOrEqual(t, le.Bound, c.ComputeTime()*(1-1e-12), name)
		if le.Bound > c.ComputeTime()*(1+1e-9) {
			above++
		}
		_, err = oracle.Strict(c, budget, beta, oracle.StrictOptions{MaxNodes: all.Nodes / 4, MaxNodesFine: all.Nodes / 4, Upper: opt * 0.999})
		if errors.As(err, &le) {
			require.LessOrEqual(t, le.Bound, opt*0.999, name)
		} else {
			require.NoError(t, err, name)
		}
	}
	t.Logf("%d points stopped at a quarter of their configurations: the bound above Σu on %d", points, above)
	require.Greater(t, points, chains/4)
	require.Greater(t, above, points/10, "the bound should rise above the first configuration's estimate")

	toy := instances.Toy()
	var le *oracle.StrictLimitError
	_, err := oracle.Strict(toy, 80<<20, 1e9, oracle.StrictOptions{Upper: 0.06678, MaxNodesFine: oracle.ToolStrictNodesFine})
	require.ErrorAs(t, err, &le)
	assert.Greater(t, le.Bound, 0.04362, "the link credit's bound")
	assert.Less(t, le.Bound, 0.06678)
	t.Logf("toy chain at 80 MiB, 1 GB/s: %.3f ms after %d configurations", le.Bound*1e3, le.MaxNodes)

	stop := make(chan struct{})
	close(stop)
	var se *oracle.StrictStoppedError
	_, err = oracle.Strict(toy, 80<<20, 1e9, oracle.StrictOptions{Stop: stop})
	require.ErrorAs(t, err, &se)
	assert.ErrorIs(t, err, oracle.ErrStrictStopped)
	assert.Equal(t, 1024, se.Nodes)
	assert.GreaterOrEqual(t, se.Bound, toy.ComputeTime()*(1-1e-12))
	assert.LessOrEqual(t, se.Bound, le.Bound)
}

// randomBudget draws a budget from c's smallest operation's to its store-all peak.
func randomBudget(t *testing.T, r *rand.Rand, c *instances.Chain) int64 {
	t.Helper()
	sa, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
	require.NoError(t, err)
	lo := verify.MinBudget(c)
	return lo + r.Int64N(max(sa.Peak-lo, 0)+1)
}
