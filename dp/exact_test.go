package dp

import (
	"math/rand/v2"
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/heuristics/checkpoint"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/verify"
	"github.com/memsched/memsched/verify/oracle"
)

// TestExactEqualsOracle: on seeded random integer chains (L+1 ≤ 7), the exact floating
// frontier equals the exhaustive optimum at every budget from the smallest feasible one to
// +14, and the exact persistent one equals C_MP with 1-byte slots; every sequence replays
// (inside Solve) within its budget.
func TestExactEqualsOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(2026, 14))
	pairs := 0
	for i := 0; i < 60; i++ {
		c := instances.Random(r, instances.RandomParams{Stages: 2 + r.IntN(6), MaxSize: 7, MaxTime: 6, Integer: true,
			WithABar: i%2 == 0, WithOverheads: i%3 != 0, WithDelta: i%5 == 0})
		lo := verify.MinBudget(c)
		top := lo + 14
		fe, err := NewFloatingExact(c, top, ExactOptions{})
		require.NoError(t, err)
		pe, err := NewPersistentExact(c, top, ExactOptions{})
		require.NoError(t, err)
		ps, err := NewPersistent(c, top, Options{Exact: true})
		require.NoError(t, err)
		for b := lo - 1; b <= top; b++ {
			_, opt, ok, err := oracle.Remat(c, b, verify.RematOptions{})
			require.NoError(t, err)
			fl, err := fe.Solve(b)
			require.NoError(t, err)
			require.Equal(t, ok, fl.Feasible, "chain %d budget %d\n%s", i, b, dump(c))
			if ok {
				require.InDelta(t, opt, fl.Makespan, 1e-9, "chain %d budget %d\n%s", i, b, dump(c))
				require.LessOrEqual(t, fl.Peak, b)
			}
			pg, err := pe.Solve(b)
			require.NoError(t, err)
			want, err := ps.Solve(b)
			require.NoError(t, err)
			require.Equal(t, want.Feasible, pg.Feasible, "chain %d budget %d", i, b)
			if want.Feasible {
				require.InDelta(t, want.Makespan, pg.Makespan, 1e-12, "chain %d budget %d", i, b)
			}
			pairs++
		}
	}
	t.Logf("%d (chain, budget) pairs", pairs)
}

// TestExactFrontierMatchesSlots: on GiB-scale random chains the exact frontier lies inside the
// slotted bracket at every budget (rounded-down C_FL ≤ exact ≤ rounded-up C_FL), the exact
// persistent frontier is at most the slotted one, and every frontier point replays.
func TestExactFrontierMatchesSlots(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 14))
	for i := 0; i < 12; i++ {
		c := instances.Random(r, instances.RandomParams{Stages: 3 + r.IntN(14), MaxSize: 1 << 30, MaxTime: 5e-3,
			WithABar: true, WithOverheads: i%2 == 0, WithDelta: i%3 == 0})
		top := verify.MinBudget(c) * 3
		fe, err := NewFloatingExact(c, top, ExactOptions{})
		require.NoError(t, err)
		pe, err := NewPersistentExact(c, top, ExactOptions{})
		require.NoError(t, err)
		pts := fe.Frontier()
		require.NotEmpty(t, pts)
		for k := 1; k < len(pts); k++ {
			require.Greater(t, pts[k].Budget, pts[k-1].Budget)
			require.Less(t, pts[k].Makespan, pts[k-1].Makespan)
		}
		for _, pt := range pts {
			res, err := fe.Solve(pt.Budget)
			require.NoError(t, err)
			require.True(t, res.Feasible)
			require.InDelta(t, pt.Makespan, res.Makespan, 1e-12)
			below, err := fe.Solve(pt.Budget - 1)
			require.NoError(t, err)
			require.True(t, !below.Feasible || below.Makespan > pt.Makespan+1e-12, "a breakpoint is the least budget of its makespan: %v %v %v", pt, below.Makespan, below.Makespan-pt.Makespan)
		}
		for k := 0; k < 8; k++ {
			b := verify.MinBudget(c) + r.Int64N(top-verify.MinBudget(c))
			ex, err := fe.Solve(b)
			require.NoError(t, err)
			lb, feasible, err := FloatingLowerBound(c, b, Options{Slots: 200})
			require.NoError(t, err)
			require.Equal(t, feasible, ex.Feasible)
			up, err := SolveFloating(c, b, Options{Slots: 200})
			require.NoError(t, err)
			if ex.Feasible {
				require.LessOrEqual(t, lb, ex.Makespan+1e-12)
				if up.Feasible {
					require.LessOrEqual(t, ex.Makespan, up.Makespan+1e-12)
				}
			}
			pg, err := pe.Solve(b)
			require.NoError(t, err)
			ps, err := SolvePersistent(c, b, Options{Slots: 200})
			require.NoError(t, err)
			if ps.Feasible {
				require.True(t, pg.Feasible)
				require.LessOrEqual(t, pg.Makespan, ps.Makespan+1e-12)
			}
			if pg.Feasible && ex.Feasible {
				require.LessOrEqual(t, ex.Makespan, pg.Makespan+1e-12)
			}
		}
	}
}

// TestExactCap: a cap below the frontier sizes stops the fill with a *BreakpointError (the
// caller then falls back to slots) instead of returning a silently truncated table.
func TestExactCap(t *testing.T) {
	c := benchChain(30)
	_, err := NewPersistentExact(c, verify.MinBudget(c)*3, ExactOptions{MaxBreakpoints: 2})
	var be *BreakpointError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, 2, be.Cap)
	assert.Greater(t, be.Count, 2)
	_, err = NewFloatingExact(c, verify.MinBudget(c)*3, ExactOptions{MaxTotal: 100})
	require.ErrorAs(t, err, &be)
	assert.True(t, be.Total)
}

// TestExactToy: 004 §3.2 at 90 MiB in bytes: 47.42 ms.
func TestExactToy(t *testing.T) {
	c := instances.Toy()
	for _, solve := range []func() (Result, error){
		func() (Result, error) {
			p, err := NewPersistentExact(c, instances.ToyBudget, ExactOptions{})
			require.NoError(t, err)
			return p.Solve(instances.ToyBudget)
		},
		func() (Result, error) {
			f, err := NewFloatingExact(c, instances.ToyBudget, ExactOptions{})
			require.NoError(t, err)
			return f.Solve(instances.ToyBudget)
		},
	} {
		res, err := solve()
		require.NoError(t, err)
		require.True(t, res.Feasible)
		assert.InDelta(t, 47.42e-3, res.Makespan, 1e-12)
	}
}

// TestExactParallelMatchesSequential: the wavefront over several cores builds exactly the rows
// of one core (run under -race to check the synchronization).
func TestExactParallelMatchesSequential(t *testing.T) {
	c := benchChain(60)
	budget := verify.MinBudget(c) * 2
	prev := runtime.GOMAXPROCS(1)
	seq, err := NewPersistentExact(c, budget, ExactOptions{})
	runtime.GOMAXPROCS(max(prev, 4))
	require.NoError(t, err)
	par, err := NewPersistentExact(c, budget, ExactOptions{})
	runtime.GOMAXPROCS(prev)
	require.NoError(t, err)
	require.Equal(t, len(seq.rows), len(par.rows))
	for i := range seq.rows {
		require.Equal(t, seq.rows[i], par.rows[i], "row %d", i)
	}
	assert.Equal(t, seq.Stats(), par.Stats())
}

// TestExactInsideBracketResNet50: on a zoo chain (ResNet-50 224/32, 19 stages, GiB sizes) the
// exact C_FL optimum lies in the 500-slot bracket at 6 budgets from the smallest feasible one
// to the store-all peak, and at the store-all peak it is the store-all makespan.
func TestExactInsideBracketResNet50(t *testing.T) {
	c, peak := zooResNet(t, 50)
	lo := verify.MinBudget(c)
	f, err := NewFloatingExact(c, peak, ExactOptions{})
	require.NoError(t, err)
	for k := 0; k <= 5; k++ {
		b := lo + (peak-lo)*int64(k)/5
		ex, err := f.Solve(b)
		require.NoError(t, err)
		require.True(t, ex.Feasible, "budget %d", b)
		lb, _, err := FloatingLowerBound(c, b, Options{Slots: 500})
		require.NoError(t, err)
		up, err := SolveFloating(c, b, Options{Slots: 500})
		require.NoError(t, err)
		assert.LessOrEqual(t, lb, ex.Makespan+1e-12, "budget %d", b)
		if up.Feasible {
			assert.LessOrEqual(t, ex.Makespan, up.Makespan+1e-12, "budget %d", b)
		}
	}
	all, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
	require.NoError(t, err)
	top, err := f.Solve(peak)
	require.NoError(t, err)
	assert.InDelta(t, all.Makespan, top.Makespan, 1e-12)
}

// TestFloatingExactParallelMatchesSequential: C_FL's cells on several cores build exactly the
// frontiers of one core, whole and pruned by a cutoff (run under -race for the
// synchronization).
func TestFloatingExactParallelMatchesSequential(t *testing.T) {
	c := benchChain(24)
	budget := verify.MinBudget(c) * 2
	cut := 0.0
	for range 2 {
		prev := runtime.GOMAXPROCS(1)
		seq, err := NewFloatingExact(c, budget, ExactOptions{Cutoff: cut})
		runtime.GOMAXPROCS(max(prev, 4))
		require.NoError(t, err)
		par, err := NewFloatingExact(c, budget, ExactOptions{Cutoff: cut})
		runtime.GOMAXPROCS(prev)
		require.NoError(t, err)
		require.Equal(t, seq.g, par.g)
		require.Equal(t, seq.h, par.h)
		assert.Equal(t, seq.Stats(), par.Stats())
		res, err := par.Solve(budget)
		require.NoError(t, err)
		require.True(t, res.Feasible)
		if cut == 0 {
			cut = res.Makespan * 1.001
		}
	}
}

// TestFloatingExactOracleLonger checks the premise on which certify calls C_FL exact (and C_FL
// collapsed, below it) bounds of the model's optimum — 004 Lemma 4.4 with memsched's
// re-derived recurrence — on longer chains than the suite's (8 to 10 stages, where the
// exhaustive search takes seconds per budget): exact C_FL equals the exhaustive optimum and
// C_FL collapsed is at most it. Minutes: run with MEMSCHED_LONG_ORACLE=1 (docs/dp.md,
// "Verification").
func TestFloatingExactOracleLonger(t *testing.T) {
	if os.Getenv("MEMSCHED_LONG_ORACLE") == "" {
		t.Skip("set MEMSCHED_LONG_ORACLE=1 (minutes)")
	}
	r := rand.New(rand.NewPCG(2026, 23))
	pairs, persistent := 0, 0
	for i := 0; i < 60; i++ {
		c := instances.Random(r, instances.RandomParams{Stages: 8 + r.IntN(3), MaxSize: 7, MaxTime: 6, Integer: true,
			WithABar: i%2 == 0, WithOverheads: i%3 != 0, WithDelta: i%5 == 0})
		lo := verify.MinBudget(c)
		top := lo + 8
		fe, err := NewFloatingExact(c, top, ExactOptions{})
		require.NoError(t, err)
		col, err := NewCollapsedExact(c, top, ExactOptions{})
		require.NoError(t, err)
		pe, err := NewPersistentExact(c, top, ExactOptions{})
		require.NoError(t, err)
		for b := lo; b <= top; b += 2 {
			_, opt, ok, err := oracle.Remat(c, b, verify.RematOptions{})
			require.NoError(t, err)
			require.True(t, ok)
			fl, err := fe.Solve(b)
			require.NoError(t, err)
			require.True(t, fl.Feasible)
			require.InDelta(t, opt, fl.Makespan, 1e-9, "chain %d budget %d\n%s", i, b, dump(c))
			lb, _ := col.Bound(b)
			require.LessOrEqual(t, lb, opt+1e-9, "chain %d budget %d", i, b)
			if pg, err := pe.Solve(b); err == nil && pg.Feasible && pg.Makespan <= opt+1e-9 {
				persistent++
			}
			pairs++
		}
	}
	t.Logf("%d (chain, budget) pairs on 8–10 stages: exact C_FL = exhaustive on all, collapsed ≤ on all; C_MP optimal on %d", pairs, persistent)
}
