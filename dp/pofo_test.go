package dp_test

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/instances/zoo"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
	"github.com/memsched/memsched/verify/oracle"
)

// TestCombinedSpecCases: SPEC §6's five cases, exactly: the DP in bytes with the exact inner
// minimization finds the tabulated combined optimum, and with offloading or recomputation
// switched off the remat-only and offload-only columns (infeasible where the table says so);
// the restricted inner minimization meets the same values here.
func TestCombinedSpecCases(t *testing.T) {
	for _, tc := range instances.SpecCombinedCases() {
		for _, col := range []struct {
			opt  dp.CombinedOptions
			want *big.Rat
		}{
			{dp.CombinedOptions{Exact: true}, tc.Combined},
			{dp.CombinedOptions{Exact: true, Inner: dp.InnerRestricted}, tc.Combined},
			{dp.CombinedOptions{Exact: true, NoOffload: true}, tc.Remat},
			{dp.CombinedOptions{Exact: true, NoRecompute: true}, tc.Offload},
		} {
			r, err := dp.Combined(tc.Chain, tc.Budget, tc.Beta, col.opt)
			require.NoError(t, err)
			if col.want == nil {
				assert.False(t, r.Feasible, "%s %+v: %v", tc.Name, col.opt, r.Plan)
				continue
			}
			require.True(t, r.Feasible, "%s %+v", tc.Name, col.opt)
			assert.Zero(t, r.Fluid.Exact.Cmp(col.want), "%s %+v: %s (%v)", tc.Name, col.opt, r.Fluid.Exact.RatString(), r.Plan)
			assert.InDelta(t, r.Value, r.Fluid.Makespan, 1e-12)
			assert.Equal(t, col.opt.Inner != dp.InnerRestricted, r.Exact(), "%s", tc.Name)
		}
	}
	// Case C needs no transfer: among equal makespans the DP keeps every input.
	r, err := dp.Combined(instances.SpecCombinedAD(), 11, 8, dp.CombinedOptions{Exact: true})
	require.NoError(t, err)
	assert.Zero(t, r.Plan.Offloaded(), "%v", r.Plan)
}

// storeAllPeak is the peak of F_all^1 … F_all^{L+1} B^{L+1} … B^1.
func storeAllPeak(c *instances.Chain) int64 {
	p := &schedule.CombinedPlan{}
	for l := 1; l < c.Len(); l++ {
		p.Segments = append(p.Segments, schedule.CombinedSegment{Start: l, End: l, All: true})
	}
	seq := p.Ops(c.Len())
	var peak int64
	s := verify.InitialState(c)
	for _, op := range seq {
		m, _, err := s.Apply(c, op)
		if err != nil {
			panic(err)
		}
		peak = max(peak, m)
	}
	return peak
}

// minCombinedBudget is the smallest budget at which the combined class has a plan (the exact
// DP; feasibility is monotone in the budget), at most peak.
func minCombinedBudget(t *testing.T, c *instances.Chain, beta float64, peak int64) int64 {
	lo, hi := int64(0), peak
	for lo < hi {
		mid := (lo + hi) / 2
		r, err := dp.Combined(c, mid, beta, dp.CombinedOptions{Exact: true, Inner: dp.InnerRestricted})
		require.NoError(t, err)
		if r.Feasible {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

func ratOf(x float64) *big.Rat { return new(big.Rat).SetFloat64(x) }

// TestCombinedEqualsReferee: on 500 random tiny chains, each at one budget between the smallest
// the class fits in and the store-all peak (one chain in ten just below the smallest) and one
// bandwidth in [1, 4] B/s:
//   - the exact DP (bytes, exact inner minimization) equals the exhaustive search of the class,
//     exactly (rationals), and so does its plan's fluid makespan;
//   - with offloading disabled it equals C_MP in exact mode (dp.PersistentExact) and the
//     search without offloading; with recomputation disabled the search without recomputation;
//   - the combined optimum is at most both;
//   - it is non-increasing in the budget (+1 B) and in the bandwidth (×2);
//   - the restricted inner minimization is never below the exact one;
//   - without the turn's idle (FreeTurn, every other chain) the DP equals its search, and is
//     at most the optimum with it;
//   - with 4 or 16 slots the DP's plan is never better than the optimum, and its value bounds
//     its plan's fluid makespan in bytes from above;
//   - the same chains at GiB scale (sizes and bandwidth × 2^30) give the same makespans.
func TestCombinedEqualsReferee(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 2021))
	chains := 500
	if testing.Short() {
		chains = 100
	}
	feasible, restrictedWorse, beatsBoth := 0, 0, 0
	for k := 0; k < chains; k++ {
		c := instances.RandomTiny(r, k)
		peak := storeAllPeak(c)
		beta := float64(1 + r.IntN(4))
		lo := minCombinedBudget(t, c, beta, peak)
		budget := lo + r.Int64N(peak-lo+1)
		if k%10 == 0 {
			budget = lo - 1 // infeasible: every search must agree
		}
		name := fmt.Sprintf("chain %d (M = %d, β = %g)\n%s", k, budget, beta, describe(c))
		ex, err := dp.Combined(c, budget, beta, dp.CombinedOptions{Exact: true})
		require.NoError(t, err, name)
		_, ref, ok, err := oracle.Combined(c, budget, beta, oracle.CombinedOptions{})
		require.NoError(t, err)
		require.Equal(t, ok, ex.Feasible, name)
		noOff, err := dp.Combined(c, budget, beta, dp.CombinedOptions{Exact: true, NoOffload: true})
		require.NoError(t, err)
		pe, err := dp.NewPersistentExact(c, budget, dp.ExactOptions{})
		require.NoError(t, err)
		cmp, err := pe.Solve(budget)
		require.NoError(t, err)
		require.Equal(t, cmp.Feasible, noOff.Feasible, name)
		if cmp.Feasible {
			require.InDelta(t, cmp.Makespan, noOff.Fluid.Makespan, 1e-9, name)
		}
		_, refNoOff, okNoOff, err := oracle.Combined(c, budget, beta, oracle.CombinedOptions{NoOffload: true})
		require.NoError(t, err)
		require.Equal(t, okNoOff, cmp.Feasible, name)
		noRe, err := dp.Combined(c, budget, beta, dp.CombinedOptions{Exact: true, NoRecompute: true})
		require.NoError(t, err)
		_, refNoRe, okNoRe, err := oracle.Combined(c, budget, beta, oracle.CombinedOptions{NoRecompute: true})
		require.NoError(t, err)
		require.Equal(t, okNoRe, noRe.Feasible, name)
		if okNoRe {
			require.Zero(t, refNoRe.Cmp(noRe.Fluid.Exact), "%s: no recompute %s, search %s", name, noRe.Fluid.Exact.RatString(), refNoRe.RatString())
		}
		if !ok {
			require.False(t, okNoOff || okNoRe, name)
			continue
		}
		feasible++
		require.Zero(t, ref.Cmp(ex.Fluid.Exact), "%s: DP %s (%v), search %s", name, ex.Fluid.Exact.RatString(), ex.Plan, ref.RatString())
		require.InDelta(t, ex.Value, ex.Fluid.Makespan, 1e-9*ex.Value, name)
		if okNoOff {
			require.LessOrEqual(t, ref.Cmp(refNoOff), 0, name)
			require.Zero(t, refNoOff.Cmp(ratOf(cmp.Makespan)), "%s: C_MP %g, search without offloading %s", name, cmp.Makespan, refNoOff.RatString())
		}
		if okNoRe {
			require.LessOrEqual(t, ref.Cmp(refNoRe), 0, name)
		}
		if okNoOff && okNoRe && ref.Cmp(refNoOff) < 0 && ref.Cmp(refNoRe) < 0 {
			beatsBoth++
		}
		// The relaxation without the turn's idle: the DP equals its search too.
		if k%2 == 0 {
			ft, err := dp.Combined(c, budget, beta, dp.CombinedOptions{Exact: true, FreeTurn: true})
			require.NoError(t, err)
			_, refFT, okFT, err := oracle.Combined(c, budget, beta, oracle.CombinedOptions{FreeTurn: true})
			require.NoError(t, err)
			require.True(t, okFT && ft.Feasible, name)
			require.Zero(t, refFT.Cmp(ft.Fluid.Exact), "%s: free turn: DP %s, search %s", name, ft.Fluid.Exact.RatString(), refFT.RatString())
			require.LessOrEqual(t, refFT.Cmp(ref), 0, name)
		}
		// Monotone in M and β.
		more, err := dp.Combined(c, budget+1, beta, dp.CombinedOptions{Exact: true})
		require.NoError(t, err)
		require.True(t, more.Feasible, name)
		require.LessOrEqual(t, more.Fluid.Exact.Cmp(ex.Fluid.Exact), 0, "%s: budget +1 gives %s", name, more.Fluid.Exact.RatString())
		faster, err := dp.Combined(c, budget, 2*beta, dp.CombinedOptions{Exact: true})
		require.NoError(t, err)
		require.True(t, faster.Feasible, name)
		require.LessOrEqual(t, faster.Fluid.Exact.Cmp(ex.Fluid.Exact), 0, "%s: 2β gives %s", name, faster.Fluid.Exact.RatString())
		// The restriction is an upper bound.
		rs, err := dp.Combined(c, budget, beta, dp.CombinedOptions{Exact: true, Inner: dp.InnerRestricted})
		require.NoError(t, err)
		if rs.Feasible {
			require.GreaterOrEqual(t, rs.Fluid.Exact.Cmp(ex.Fluid.Exact), 0, name)
			if rs.Fluid.Exact.Cmp(ex.Fluid.Exact) > 0 {
				restrictedWorse++
			}
		} else {
			restrictedWorse++
		}
		// Slots: sizes rounded up, the link rounded down: a plan whose fluid makespan in bytes
		// is at most the DP's value (checked inside Combined) and at least the optimum.
		for _, slots := range []int{4, 16} {
			sl, err := dp.Combined(c, budget, beta, dp.CombinedOptions{Slots: slots})
			require.NoError(t, err, name)
			if sl.Feasible {
				require.GreaterOrEqual(t, sl.Fluid.Exact.Cmp(ex.Fluid.Exact), 0, name)
				require.GreaterOrEqual(t, sl.Value, sl.Fluid.Makespan*(1-1e-12), name)
			}
		}
		// GiB scale: the same makespan.
		const gib = 1 << 30
		big, err := dp.Combined(c.Scaled(gib), budget*gib, beta*gib, dp.CombinedOptions{Exact: true})
		require.NoError(t, err)
		require.True(t, big.Feasible, name)
		require.Zero(t, big.Fluid.Exact.Cmp(ex.Fluid.Exact), "%s: GiB scale %s", name, big.Fluid.Exact.RatString())
	}
	t.Logf("%d chains, %d feasible; combined below both levers alone on %d; restricted inner above the exact one on %d",
		chains, feasible, beatsBoth, restrictedWorse)
	assert.GreaterOrEqual(t, feasible, chains*8/10)
	assert.Positive(t, beatsBoth)
}

// describe writes a chain's arrays for failure messages.
func describe(c *instances.Chain) string {
	out := fmt.Sprintf("a0=%d δ0=%d", c.A0, c.Delta0)
	for l, st := range c.Stages {
		out += fmt.Sprintf("\n  %d: uf=%g ub=%g a=%d ā=%d δ=%d of=%d ob=%d", l+1, st.UF, st.UB, st.A, st.ABar, st.Delta, st.OF, st.OB)
	}
	return out
}

// TestCombinedDeadline: a deadline that has passed stops the search with ErrDeadline.
func TestCombinedDeadline(t *testing.T) {
	c, err := zoo.ResNet(zoo.CNNConfig{Depth: 18, Image: 224, Batch: 32})
	require.NoError(t, err)
	budget := verify.MinBudget(c) * 2
	_, err = dp.Combined(c, budget, 12e9, dp.CombinedOptions{Slots: 100, Deadline: time.Now().Add(-time.Second)})
	require.ErrorIs(t, err, dp.ErrDeadline)
	r, err := dp.Combined(c, budget, 12e9, dp.CombinedOptions{Slots: 100, Deadline: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	require.True(t, r.Feasible)
}

// TestCombinedIncumbent: on the full link grid an incumbent at the DP's value changes no
// value, one just below it gives NoBetter (150 random tiny chains at byte and GiB scale, 8 and
// 64 slots); on coarse link grids an incumbent at the unpruned search's value is reached (300
// chains, three grids); ResNet-18 at 60 slots with the 240-slot plan's fluid makespan.
func TestCombinedIncumbent(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 2021))
	n := 150
	if testing.Short() {
		n = 40
	}
	for k := 0; k < n; k++ {
		c := instances.RandomTiny(r, k)
		peak := storeAllPeak(c)
		beta := float64(1 + r.IntN(4))
		budget := peak/2 + r.Int64N(peak-peak/2+1)
		for _, f := range []int64{1, 1 << 30} {
			cc := c.Scaled(f)
			for _, slots := range []int{8, 64} {
				plain, err := dp.Combined(cc, budget*f, beta*float64(f), dp.CombinedOptions{Slots: slots})
				require.NoError(t, err)
				if !plain.Feasible {
					continue
				}
				at, err := dp.Combined(cc, budget*f, beta*float64(f), dp.CombinedOptions{Slots: slots, Incumbent: plain.Value * (1 + 1e-9)})
				require.NoError(t, err)
				require.True(t, at.Feasible, "chain %d", k)
				require.InDelta(t, plain.Value, at.Value, 1e-9*plain.Value, "chain %d ×%d, %d slots\n%s", k, f, slots, describe(c))
				require.LessOrEqual(t, at.States, plain.States)
				below, err := dp.Combined(cc, budget*f, beta*float64(f), dp.CombinedOptions{Slots: slots, Incumbent: plain.Value * (1 - 1e-6)})
				require.NoError(t, err)
				require.False(t, below.Feasible, "chain %d", k)
				require.True(t, below.NoBetter, "chain %d", k)
			}
		}
	}
	// A coarse link grid: with the incumbent at the value of the search without any bound,
	// the bounds still let that value through (a state whose queue P, rounded up, exceeds
	// what the GPU holds was once called infeasible: 24 of these 810 runs lost their value).
	r = rand.New(rand.NewPCG(7, 2021))
	runs := 0
	for k := 0; k < 2*n; k++ {
		c := instances.RandomTiny(r, k)
		peak := storeAllPeak(c)
		beta := float64(1 + r.IntN(4))
		budget := peak/2 + r.Int64N(peak-peak/2+1)
		for _, f := range []int64{1, 1 << 30} {
			cc := c.Scaled(f)
			for _, opt := range []dp.CombinedOptions{{Slots: 64, LinkSlots: 4}, {Slots: 64, LinkSlots: 16}, {Slots: 32, LinkSlots: 8}} {
				dp.SetPofoNoBounds(true)
				without, err := dp.Combined(cc, budget*f, beta*float64(f), opt)
				dp.SetPofoNoBounds(false)
				require.NoError(t, err)
				if !without.Feasible {
					continue
				}
				opt.Incumbent = without.Value * (1 + 1e-9)
				with, err := dp.Combined(cc, budget*f, beta*float64(f), opt)
				require.NoError(t, err)
				require.True(t, with.Feasible, "chain %d ×%d %+v\n%s", k, f, opt, describe(c))
				require.InDelta(t, without.Value, with.Value, 1e-9*without.Value, "chain %d ×%d %+v", k, f, opt)
				runs++
			}
		}
	}
	require.Greater(t, runs, n)
	r18, err := zoo.ResNet(zoo.CNNConfig{Depth: 18, Image: 224, Batch: 32})
	require.NoError(t, err)
	budget := verify.MinBudget(r18) + (storeAllPeak(r18)-verify.MinBudget(r18))/3
	fine, err := dp.Combined(r18, budget, 12e9, dp.CombinedOptions{Slots: 240})
	require.NoError(t, err)
	require.True(t, fine.Feasible)
	plain, err := dp.Combined(r18, budget, 12e9, dp.CombinedOptions{Slots: 60})
	require.NoError(t, err)
	with, err := dp.Combined(r18, budget, 12e9, dp.CombinedOptions{Slots: 60, Incumbent: fine.Fluid.Makespan})
	require.NoError(t, err)
	if plain.Value < fine.Fluid.Makespan {
		require.InDelta(t, plain.Value, with.Value, 1e-9*plain.Value)
	} else {
		require.True(t, with.NoBetter)
	}
	t.Logf("ResNet-18 at %s, 60 slots: %.3f ms, %d states; with the 240-slot plan's %.3f ms as the incumbent: %d states", instances.FormatSize(budget), plain.Value*1e3, plain.States, fine.Fluid.Makespan*1e3, with.States)
}

// TestCombinedBoundsLoseNothing: with slots (where the incumbent, the virtual-memory bound
// and the link bound prune), the DP's value equals the search without any of them on 150
// random tiny chains at byte and GiB scale, 8 and 64 slots — a bound that cut the optimum
// would show here.
func TestCombinedBoundsLoseNothing(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 2021))
	n := 150
	if testing.Short() {
		n = 40
	}
	for k := 0; k < n; k++ {
		c := instances.RandomTiny(r, k)
		peak := storeAllPeak(c)
		beta := float64(1 + r.IntN(4))
		budget := peak/2 + r.Int64N(peak-peak/2+1)
		for _, f := range []int64{1, 1 << 30} {
			cc := c.Scaled(f)
			for _, slots := range []int{8, 64} {
				opt := dp.CombinedOptions{Slots: slots}
				with, err := dp.Combined(cc, budget*f, beta*float64(f), opt)
				require.NoError(t, err)
				dp.SetPofoNoBounds(true)
				without, err := dp.Combined(cc, budget*f, beta*float64(f), opt)
				dp.SetPofoNoBounds(false)
				require.NoError(t, err)
				require.Equal(t, without.Feasible, with.Feasible, "chain %d", k)
				if with.Feasible {
					require.InDelta(t, without.Value, with.Value, 1e-9*without.Value, "chain %d ×%d, %d slots\n%s", k, f, slots, describe(c))
				}
			}
		}
	}
	if testing.Short() {
		return
	}
	// Real profiles: ResNet-18 and a 4-block GPT-2 at four budgets each, 12 GB/s, 60 slots.
	r18, err := zoo.ResNet(zoo.CNNConfig{Depth: 18, Image: 224, Batch: 32})
	require.NoError(t, err)
	gpt, err := zoo.Transformer(zoo.TransformerConfig{Kind: "gpt2", Hidden: 768, Heads: 12, Layers: 4, SeqLen: 512, Batch: 8})
	require.NoError(t, err)
	for _, c := range []*instances.Chain{r18, gpt} {
		peak := storeAllPeak(c)
		lo := verify.MinBudget(c)
		for k := 0; k < 4; k++ {
			budget := lo/2 + (peak-lo/2)*int64(k)/4
			opt := dp.CombinedOptions{Slots: 60}
			with, err := dp.Combined(c, budget, 12e9, opt)
			require.NoError(t, err)
			dp.SetPofoNoBounds(true)
			without, err := dp.Combined(c, budget, 12e9, opt)
			dp.SetPofoNoBounds(false)
			require.NoError(t, err)
			require.Equal(t, without.Feasible, with.Feasible, "%s at %d", c.Name, budget)
			if with.Feasible {
				require.InDelta(t, without.Value, with.Value, 1e-9*without.Value, "%s at %d", c.Name, budget)
				t.Logf("%s at %s: %.3f ms, %d states with the bounds, %d without", c.Name, instances.FormatSize(budget), with.Value*1e3, with.States, without.States)
			}
		}
	}
}
