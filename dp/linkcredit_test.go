package dp_test

import (
	"errors"
	"fmt"
	"math"
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

// bruteLinkCredit is the link-credit relaxation over every 004 sequence (oracle.RematBudgeted
// with the credits of r: first runs of F^k in phase L+1, then each phase's), its least T found
// by bisection on [Σu, upper].
func bruteLinkCredit(t *testing.T, c *instances.Chain, budget int64, beta, upper float64, r dp.LinkCreditResult) float64 {
	sumU := c.ComputeTime()
	ok := func(T float64) bool {
		of := func(phase int, op schedule.Op, first bool) int64 {
			g := r.Credit[phase]
			switch {
			case first:
				g = r.First[op.Stage]
			case op.Kind == schedule.B && r.Back != nil:
				g = r.Back[op.Stage]
			}
			return int64(math.Floor(float64(budget) + beta*(T-sumU+g)))
		}
		_, v, feas, err := oracle.RematBudgeted(c, of, verify.RematOptions{})
		require.NoError(t, err)
		return feas && v <= T*(1+1e-12)
	}
	lo, hi := max(sumU, r.MinMakespan), upper
	if ok(lo) {
		return lo
	}
	for i := 0; i < 50; i++ {
		mid := (lo + hi) / 2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// TestLinkCreditAgainstReferees: on random tiny chains (byte and GiB scale) the link-credit
// bound, built on weakly persistent sequences, equals the same relaxation over every 004
// sequence (bisection on oracle.RematBudgeted, forwards run again in phase L+1 included: 004
// Lemma 4.4 with budgets that never decrease with time), and is at most the exact optimum of
// the strict combined model (oracle.Strict); so is its whole-tensor refinement, which is at
// least it. Thinned (LinkCreditOptions.Thin, from 10⁻⁴ to 1 of the optimum) each is at most
// its exact self.
func TestLinkCreditAgainstReferees(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 17))
	chains := 200
	if testing.Short() {
		chains = 60
	}
	var solved, aboveSumU, tight, wholeAbove, backAbove, deficitAbove int
	for k := 0; k < chains; k++ {
		c := instances.RandomTiny(r, k)
		sa, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
		require.NoError(t, err)
		lo := verify.MinBudget(c)
		budget := lo + r.Int64N(max(sa.Peak-lo, 0)+1)
		beta := float64(1 + r.IntN(4))
		name := fmt.Sprintf("chain %d (M = %d, β = %g)\n%s", k, budget, beta, describe(c))
		ref, err := oracle.Strict(c, budget, beta, oracle.StrictOptions{})
		require.NoError(t, err, name)
		if !ref.Feasible {
			continue
		}
		opt, _ := ref.Makespan.Float64()
		// The exhaustive search takes per-operation budgets: the bound without the deficit
		// (whose budgets depend on what the first pass holds) is checked against it, the bound
		// with it against the optimum.
		got, err := dp.LinkCredit(c, budget, beta, dp.LinkCreditOptions{Upper: opt, NoDeficit: true})
		require.NoError(t, err, name)
		brute := bruteLinkCredit(t, c, budget, beta, opt, got)
		require.InDelta(t, brute, got.Bound, 1e-9*opt+1e-12, name)
		require.LessOrEqual(t, got.Bound, opt*(1+1e-12), name)
		// Each backward against its own credit: at least the bound with the phases' running
		// maximum for every operation.
		def, err := dp.LinkCredit(c, budget, beta, dp.LinkCreditOptions{Upper: opt})
		require.NoError(t, err, name)
		require.LessOrEqual(t, def.Bound, opt*(1+1e-12), name)
		require.GreaterOrEqual(t, def.Bound, got.Bound*(1-1e-12), name)
		if def.Bound > got.Bound*(1+1e-9) {
			deficitAbove++
		}
		nb, err := dp.LinkCredit(c, budget, beta, dp.LinkCreditOptions{Upper: opt, NoBack: true, NoDeficit: true})
		require.NoError(t, err, name)
		require.Nil(t, nb.Back, name)
		require.LessOrEqual(t, nb.Bound, got.Bound*(1+1e-12), name)
		if got.Bound > nb.Bound*(1+1e-9) {
			backAbove++
		}
		whole, err := dp.LinkCredit(c, budget, beta, dp.LinkCreditOptions{Upper: opt, Whole: true})
		require.NoError(t, err, name)
		require.GreaterOrEqual(t, whole.Bound, got.Bound, name)
		require.LessOrEqual(t, whole.Bound, opt*(1+1e-12), name)
		if whole.Bound > got.Bound*(1+1e-9) {
			wholeAbove++
		}
		thin := opt * []float64{1e-4, 1e-2, 0.1, 1}[k%4]
		tf, err := dp.LinkCredit(c, budget, beta, dp.LinkCreditOptions{Upper: opt, Thin: thin})
		require.NoError(t, err, name)
		require.LessOrEqual(t, tf.Bound, got.Bound, name)
		tw, err := dp.LinkCredit(c, budget, beta, dp.LinkCreditOptions{Upper: opt, Thin: thin, Whole: true})
		require.NoError(t, err, name)
		require.LessOrEqual(t, tw.Bound, whole.Bound, name)
		require.GreaterOrEqual(t, tw.Bound, tf.Bound, name)
		if k%4 == 0 {
			g, err := dp.LinkCredit(c.Scaled(1<<30), budget<<30, beta*(1<<30), dp.LinkCreditOptions{Upper: opt})
			require.NoError(t, err, name)
			require.InDelta(t, got.Bound, g.Bound, 1e-9*opt, name)
		}
		solved++
		if got.Bound > c.ComputeTime()*(1+1e-9) {
			aboveSumU++
		}
		if got.Bound >= opt*(1-1e-9) {
			tight++
		}
	}
	t.Logf("%d chains solved: the bound above Σu on %d, at the optimum on %d; whole tensors raise it on %d; the backwards' own credits on %d; the deficit on %d", solved, aboveSumU, tight, wholeAbove, backAbove, deficitAbove)
}

// TestLinkCreditThinned: thinned (LinkCreditOptions.Thin) the link credit is at most the exact
// table's, fluid and with whole tensors, and within Thin per frontier read of it — on random
// chains of 6 to 30 stages (byte and GiB scale) at tight budgets and slow links, where it is
// above Σu (the tiny chains of TestLinkCreditAgainstReferees rarely are), from Thin = 10⁻⁵ to
// 10⁻¹ of Σu; pruned (LinkCreditOptions.Prune) one thinning above the thinned bound, the same
// bound. Mutated to keep a run's first makespan instead of its last, it fails.
func TestLinkCreditThinned(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 71))
	chains := 80
	if testing.Short() {
		chains = 30
	}
	var lower, above, pruned int
	worst := 0.0 // the largest loss, in units of Thin
	for k := 0; k < chains; k++ {
		maxSize := int64(1000)
		if k%2 == 1 {
			maxSize = 1 << 30
		}
		c := instances.Random(r, instances.RandomParams{Stages: 6 + r.IntN(25), MaxSize: maxSize, MaxTime: 0.01, WithABar: true, WithOverheads: true})
		sa, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
		require.NoError(t, err)
		lo := verify.MinBudget(c)
		budget := lo + (sa.Peak-lo)*int64(r.IntN(40))/100
		sumU := c.ComputeTime()
		beta := float64(sa.Peak) / sumU * (0.02 + 0.3*r.Float64()) // a few per cent of the peak per Σu
		name := fmt.Sprintf("chain %d (M = %d, β = %g)\n%s", k, budget, beta, describe(c))
		upper := 4 * sumU // above every sequence's makespan at a budget remat fits
		exact, err := dp.LinkCredit(c, budget, beta, dp.LinkCreditOptions{Upper: upper, Whole: true})
		require.NoError(t, err, name)
		if exact.Fluid > sumU*(1+1e-9) {
			above++
		}
		thin := sumU * []float64{1e-5, 1e-3, 1e-2, 1e-1}[k%4]
		got, err := dp.LinkCredit(c, budget, beta, dp.LinkCreditOptions{Upper: upper, Whole: true, Thin: thin})
		require.NoError(t, err, name)
		require.LessOrEqual(t, got.Fluid, exact.Fluid, name)
		// The exact threshold lies in [Bound, Bound + Gap] (the bisection's last bracket).
		require.LessOrEqual(t, got.Bound, exact.Bound+exact.Gap, name)
		require.GreaterOrEqual(t, got.Bound, got.Fluid, name)
		if got.Fluid < exact.Fluid*(1-1e-9) {
			lower++
			worst = max(worst, (exact.Fluid-got.Fluid)/thin)
		}
		// Pruned one thinning above the thinned bound (Prune; the tools take 64): below the
		// exact fluid bound at times, and then the pruning point is the fluid bound and the
		// whole-tensor bisection, whose credits never exceed the fluid ones, goes on from it
		// to the same bound as without pruning (within its 10⁻⁶). The pruned fluid bound
		// can be above the unpruned one (the turn's recomputation is reckoned at the table's
		// top, and grows as the top falls), never above the whole-tensor bound.
		prune := got.Fluid + thin
		pr, err := dp.LinkCredit(c, budget, beta, dp.LinkCreditOptions{Upper: upper, Whole: true, Prune: prune})
		require.NoError(t, err, name)
		require.GreaterOrEqual(t, pr.Fluid, min(exact.Fluid, prune)*(1-1e-12), name)
		require.LessOrEqual(t, pr.Fluid, exact.Bound+exact.Gap, name)
		require.InDelta(t, exact.Bound, pr.Bound, 2e-6*upper, "%s\nexact fluid %g bound %g probes %d gap %g; prune %g: fluid %g bound %g probes %d gap %g", name, exact.Fluid, exact.Bound, exact.Probes, exact.Gap, prune, pr.Fluid, pr.Bound, pr.Probes, pr.Gap)
		if prune < exact.Fluid*(1-1e-9) {
			pruned++
		}
	}
	t.Logf("%d chains: the exact fluid bound above Σu on %d, the thinned one lower on %d, by at most %.1f × Thin; pruned below it on %d", chains, above, lower, worst, pruned)
	require.Positive(t, pruned, "no pruning below the fluid bound: the test does not exercise it")
	require.Greater(t, above, chains/2, "the chains do not exercise the link credit")
	require.Positive(t, lower, "no thinning lowered the bound: the test does not exercise it")
}

// TestLinkCreditUpperAtSumU: a verified makespan at Σu may sum a few ulps below c.ComputeTime()
// (another order of the same terms): that is the bound, not ErrLinkCreditUpper (which made
// remat-offload exit 1 on a 150-stage chain where offload-then-remat met Σu). Clearly below
// Σu it is still an error: no schedule computes for less.
func TestLinkCreditUpperAtSumU(t *testing.T) {
	// MiB scale (the CLI's case) and byte scale alike: the case is one of times, not sizes.
	for _, sc := range []struct {
		maxSize, budget int64
		beta            float64
	}{{64 << 20, 1 << 30, 12e9}, {1024, 20000, 1e5}} {
		c := instances.Random(rand.New(rand.NewPCG(3, 150)), instances.RandomParams{Stages: 150, MaxSize: sc.maxSize, MaxTime: 0.01, WithABar: true, WithOverheads: true})
		sumU := c.ComputeTime()
		below := math.Nextafter(math.Nextafter(sumU, 0), 0)
		r, err := dp.LinkCredit(c, sc.budget, sc.beta, dp.LinkCreditOptions{Upper: below})
		require.NoError(t, err)
		require.Equal(t, below, r.Bound)
		_, err = dp.LinkCredit(c, sc.budget, sc.beta, dp.LinkCreditOptions{Upper: 0.99 * sumU})
		require.ErrorIs(t, err, dp.ErrLinkCreditUpper)
	}
	var err error

	// Past C_FL's stages the credit is out of scope, whatever the upper end: said first.
	long := instances.Random(rand.New(rand.NewPCG(3, 201)), instances.RandomParams{Stages: dp.MaxFloatingStages + 1, MaxSize: 64 << 20, MaxTime: 0.01})
	for _, upper := range []float64{math.Nextafter(long.ComputeTime(), 0), 2 * long.ComputeTime()} {
		_, err = dp.LinkCredit(long, 1<<30, 12e9, dp.LinkCreditOptions{Upper: upper})
		var se *dp.LinkCreditScopeError
		require.ErrorAs(t, err, &se)
		require.Equal(t, "its C_FL table takes at most 200 stages, the chain has 201", se.Reason())
	}
}

// tinyTransformer is a random chain shaped like `gen zoo gpt2` of 1 to 4 blocks: an embedding
// stage, blocks whose ā is many times their a, and a loss stage with a large ā and large
// overheads, integer durations and sizes of a few units.
func tinyTransformer(r *rand.Rand) *instances.Chain {
	blocks := 1 + r.IntN(4)
	c := &instances.Chain{Name: "tiny transformer", A0: 1, Delta0: 1}
	c.Stages = append(c.Stages, instances.Stage{UF: float64(r.IntN(2)), UB: float64(r.IntN(2)), A: 1, ABar: 1 + r.Int64N(2), Delta: 1})
	for range blocks {
		c.Stages = append(c.Stages, instances.Stage{UF: float64(1 + r.IntN(2)), UB: float64(2 + r.IntN(3)), A: 1, ABar: 4 + r.Int64N(9), Delta: 1, OF: r.Int64N(5), OB: r.Int64N(5)})
	}
	c.Stages = append(c.Stages, instances.Stage{UF: float64(2 + r.IntN(4)), UB: float64(4 + r.IntN(7)), ABar: 5 + r.Int64N(10), OF: r.Int64N(9), OB: r.Int64N(9)})
	return c
}

// TestLinkCreditTurnAgainstStrict: with the turn's recomputation (recompute.go) the link credit,
// fluid and with whole tensors, is at most the exact optimum of the strict combined model
// (oracle.Strict) on tiny transformer-shaped chains at tight budgets and slow links — where
// the turn holds most of the memory, as on the zoo's GPT-2 and BERT — at byte and GiB scale,
// and at least the bound without it (NoRecompute); it raises the bound on some of them, and proves
// the optimum on more. Mutated to count B^{L+1}'s input twice (base + a^L), it fails.
func TestLinkCreditTurnAgainstStrict(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 83))
	chains := 160
	if testing.Short() {
		chains = 50
	}
	var solved, raised, tightTurn, tightOld int
	for k := 0; k < chains; k++ {
		c := tinyTransformer(r)
		sa, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
		require.NoError(t, err)
		lo := verify.MinBudget(c)
		budget := lo + r.Int64N(max(sa.Peak-lo, 0)+1)
		beta := float64(1 + r.IntN(4))
		name := fmt.Sprintf("chain %d (M = %d, β = %g)\n%s", k, budget, beta, describe(c))
		ref, err := oracle.Strict(c, budget, beta, oracle.StrictOptions{})
		if errors.Is(err, oracle.ErrStrictLimit) {
			continue
		}
		require.NoError(t, err, name)
		if !ref.Feasible {
			continue
		}
		opt, _ := ref.Makespan.Float64()
		solved++
		for _, whole := range []bool{false, true} {
			got, err := dp.LinkCredit(c, budget, beta, dp.LinkCreditOptions{Upper: opt, Whole: whole})
			require.NoError(t, err, name)
			require.LessOrEqual(t, got.Bound, opt*(1+1e-12), "%s\nwhole %v: turn's recomputation %g", name, whole, got.TurnRecompute)
			old, err := dp.LinkCredit(c, budget, beta, dp.LinkCreditOptions{Upper: opt, Whole: whole, NoRecompute: true})
			require.NoError(t, err, name)
			require.GreaterOrEqual(t, got.Bound, old.Bound*(1-1e-9), name)
			g, err := dp.LinkCredit(c.Scaled(1<<30), budget<<30, beta*(1<<30), dp.LinkCreditOptions{Upper: opt, Whole: whole})
			require.NoError(t, err, name)
			// At GiB scale too; not always equal: β·ρ* rounds down to whole bytes, which at
			// byte scale can leave a byte of credit (21 against 21.2).
			require.LessOrEqual(t, g.Bound, opt*(1+1e-12), "%s\nGiB scale, whole %v", name, whole)
			if !whole {
				continue
			}
			if got.Bound > old.Bound*(1+1e-9) {
				raised++
			}
			if got.Bound >= opt*(1-1e-9) {
				tightTurn++
			}
			if old.Bound >= opt*(1-1e-9) {
				tightOld++
			}
		}
	}
	t.Logf("%d chains solved: the turn raises the bound on %d; at the optimum on %d (%d without it)", solved, raised, tightTurn, tightOld)
	require.Greater(t, solved, chains/2, "the exhaustive search solved too few chains")
	require.Positive(t, raised, "the turn never raised the bound: the test does not exercise it")
}

// TestLinkCreditBackwardsAndDeficit: ResNet-101 (224², batch 32) at 10 % of the way from
// remat's smallest budget to the store-all peak, 12 GB/s — issue 31's widest zoo bracket,
// 216.279 ms (pofo) against 209.757 ms. There the credit's best sequence held ā^1 … ā^9
// through B^9 … B^3, whose own windows (B^ℓ ends after everything but B^{ℓ−1} … B^1) cannot
// bring back what the running maximum of the phases' credits let them keep away: with each
// backward against its own credit the bound rises by more than 1.5 ms, fluid and with whole
// tensors (NoBack gives the bound before). Its next best sequences store nothing but a^0
// before a^1 … a^4, so that the link has little to send before 17.8 ms: the link's deficit
// raises the bound by more than 0.5 ms more (NoDeficit leaves it out).
func TestLinkCreditBackwardsAndDeficit(t *testing.T) {
	c, err := zoo.ResNet(zoo.CNNConfig{Depth: 101, Image: 224, Batch: 32})
	require.NoError(t, err)
	const budget, beta, upper = 1168257843, 12e9, 0.216279
	bound := func(o dp.LinkCreditOptions) dp.LinkCreditResult {
		o.Upper, o.Whole = upper, true
		r, err := dp.LinkCredit(c, budget, beta, o)
		require.NoError(t, err)
		return r
	}
	before := bound(dp.LinkCreditOptions{NoBack: true, NoDeficit: true})
	own := bound(dp.LinkCreditOptions{NoDeficit: true})
	all := bound(dp.LinkCreditOptions{})
	t.Logf("fluid %.4f ms (%.4f before), with whole tensors %.4f ms (%.4f before), with the deficit %.4f ms (%d tables)",
		own.Fluid*1e3, before.Fluid*1e3, own.Bound*1e3, before.Bound*1e3, all.Bound*1e3, all.DeficitProbes)
	require.Greater(t, own.Fluid, before.Fluid+1.5e-3)
	require.Greater(t, own.Bound, before.Bound+1.5e-3)
	require.Greater(t, all.Bound, own.Bound+0.5e-3)
	require.Less(t, all.Bound, upper)
	// Within --max-memory: at 3 MiB the plain tables fit (1.36 MiB of headers, 9 K breakpoints)
	// but not the deficit's 16 levels beside them; it stops as a time share does, and the
	// whole-tensor bound stands.
	tight := bound(dp.LinkCreditOptions{Exact: dp.ExactOptions{MaxMemory: 3 << 20}})
	require.InDelta(t, own.Bound, tight.Bound, 1e-12*upper)
	for l := 1; l <= c.Len(); l++ {
		require.LessOrEqual(t, own.Back[l], own.Credit[l], "B^%d's own credit above its phase's", l)
	}
}

// TestLinkCreditTightBackward: a backward's own window can be exactly what the link needs.
// TestSoundness' chain 832 at GiB scale with real durations (two of them zero): the optimal
// schedule keeps ā^1 (3 GiB) away through B^3 and brings it back in T − Σu exactly, so B^3's
// own budget at the table's top, ⌊M + β·(T − Σu)⌋, came out a byte short of it in floats and
// the credit refused the optimum as an upper end (ErrLinkCreditUpper). With the top rounded
// up the bound is the optimum (the phases' running maximum gave Σu).
func TestLinkCreditTightBackward(t *testing.T) {
	const G = int64(1) << 30
	c := &instances.Chain{Name: "chain 832 of TestSoundness", A0: 5 * G, Delta0: 5 * G, Stages: []instances.Stage{
		{UF: 0.15012052355912828, A: 2 * G, ABar: 3 * G, Delta: 2 * G, OF: 6 * G, OB: 6 * G},
		{A: 2 * G, ABar: 5 * G, Delta: 2 * G, OF: 4 * G, OB: 5 * G},
		{UF: 0.0762882751954926, UB: 0.1476068928167031, A: 3 * G, ABar: 5 * G, Delta: 3 * G, OF: 6 * G, OB: 6 * G},
		{UF: 0.1506283628170779, UB: 0.15901286692110994, OF: 3 * G, OB: 5 * G},
	}}
	const budget, beta = 24696061952, 5.946969696969697e+10
	ref, err := oracle.Strict(c, budget, beta, oracle.StrictOptions{})
	require.NoError(t, err)
	require.True(t, ref.Feasible)
	opt, _ := ref.Makespan.Float64()
	for _, whole := range []bool{false, true} {
		r, err := dp.LinkCredit(c, budget, beta, dp.LinkCreditOptions{Upper: opt, Whole: whole})
		require.NoError(t, err, "whole tensors %v", whole)
		require.LessOrEqual(t, r.Bound, opt*(1+1e-12))
		require.InDelta(t, opt, r.Bound, 1e-9*opt, "whole tensors %v: B^3's own credit proves the optimum", whole)
	}
}
