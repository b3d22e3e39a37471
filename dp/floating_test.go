package dp

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/verify"
	"github.com/memsched/memsched/verify/oracle"
)

func TestToy90Floating(t *testing.T) {
	res, err := SolveFloating(instances.Toy(), instances.ToyBudget, Options{})
	require.NoError(t, err)
	require.True(t, res.Feasible)
	assert.InDelta(t, 47.42e-3, res.Makespan, 1e-12)
	assert.InDelta(t, 86.75, float64(res.Peak)/mib, 0.005)
}

// TestFig4Floating is 004 Fig. 4: the floating DP finds the non-persistent optimum 2n+2.
func TestFig4Floating(t *testing.T) {
	for n := 4; n <= 8; n++ {
		c, err := instances.Fig4(n)
		require.NoError(t, err)
		res, err := SolveFloating(c, instances.Fig4Budget, Options{Exact: true})
		require.NoError(t, err)
		require.True(t, res.Feasible)
		assert.Equal(t, float64(2*n+2), res.Makespan, "n=%d: %v", n, res.Sequence)
	}
}

// TestFloatingEqualsOracle: on ≥ 200 seeded random chains with L ≤ 6 and integer data, in
// exact mode, for budgets from the smallest feasible one upward, floating = exhaustive and
// persistent ≥ exhaustive; every DP sequence replays (inside Solve) within the budget.
func TestFloatingEqualsOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(2026, 11))
	chains, pairs, persistentWorse := 0, 0, 0
	for i := 0; i < 220; i++ {
		c := instances.Random(r, instances.RandomParams{Stages: 2 + r.IntN(6), MaxSize: 7, MaxTime: 6, Integer: true,
			WithABar: i%2 == 0, WithOverheads: i%3 != 0, WithDelta: i%5 == 0})
		min := verify.MinBudget(c)
		top := min + 14
		f, err := NewFloating(c, top, Options{Exact: true})
		require.NoError(t, err)
		p, err := NewPersistent(c, top, Options{Exact: true})
		require.NoError(t, err)
		chains++
		for b := min; b <= top; b++ {
			_, opt, ok, err := oracle.Remat(c, b, verify.RematOptions{})
			require.NoError(t, err)
			require.True(t, ok)
			fl, err := f.Solve(b)
			require.NoError(t, err)
			require.True(t, fl.Feasible, "floating infeasible: chain %d budget %d\n%s", i, b, dump(c))
			require.InDelta(t, opt, fl.Makespan, 1e-9, "floating ≠ exhaustive: chain %d budget %d\n%s", i, b, dump(c))
			require.LessOrEqual(t, fl.Peak, b)
			ps, err := p.Solve(b)
			require.NoError(t, err)
			if ps.Feasible {
				require.GreaterOrEqual(t, ps.Makespan, opt-1e-9)
				if ps.Makespan > opt+1e-9 {
					persistentWorse++
				}
			}
			pairs++
		}
	}
	t.Logf("%d chains, %d budgets: floating = exhaustive on all; persistent > exhaustive on %d", chains, pairs, persistentWorse)
}

func dump(c *instances.Chain) string {
	s := fmt.Sprintf("a0=%d d0=%d\n", c.A0, c.Delta0)
	for i, st := range c.Stages {
		s += fmt.Sprintf("  %d: %+v\n", i+1, st)
	}
	return s
}

// TestFloatingLowerBound: with sizes rounded down the optimum never exceeds the exhaustive one
// (a certified lower bound) and never exceeds the rounded-up DP's feasible makespan; in exact
// mode it equals the optimum.
func TestFloatingLowerBound(t *testing.T) {
	r := rand.New(rand.NewPCG(77, 1))
	tight := 0
	for i := 0; i < 150; i++ {
		c := instances.Random(r, instances.RandomParams{Stages: 2 + r.IntN(5), MaxSize: 1000, MaxTime: 5, Integer: true,
			WithABar: true, WithOverheads: i%2 == 0, WithDelta: i%3 == 0})
		b := verify.MinBudget(c) + r.Int64N(2000)
		_, opt, ok, err := oracle.Remat(c, b, verify.RematOptions{})
		require.NoError(t, err)
		require.True(t, ok)
		slots := 3 + r.IntN(60)
		lb, feasible, err := FloatingLowerBound(c, b, Options{Slots: slots})
		require.NoError(t, err)
		require.True(t, feasible, "a feasible instance stays feasible in the relaxation")
		require.LessOrEqual(t, lb, opt+1e-9, "chain %d, %d slots", i, slots)
		up, err := SolveFloating(c, b, Options{Slots: slots})
		require.NoError(t, err)
		if up.Feasible {
			require.LessOrEqual(t, lb, up.Makespan+1e-9)
		}
		if lb >= opt-1e-9 {
			tight++
		}
		exact, _, err := FloatingLowerBound(c, b, Options{Exact: true})
		require.NoError(t, err)
		require.InDelta(t, opt, exact, 1e-9)
	}
	t.Logf("150 chains: the slot lower bound equals the optimum on %d", tight)
}
