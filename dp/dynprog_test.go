package dp

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	hact "github.com/memsched/memsched/heuristics/actoffload"
	act "github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/instances/reduce"
)

// 001 Thm 3 in exact mode: the interruptible bound is exactly T = 2 when the values split into
// two halves, and above 2 when they do not (then every feasible set moves V+1 bytes or more,
// 2(V+1)/V > 2).
func TestInterruptibleTwoPartition(t *testing.T) {
	cases := []struct {
		us  []int64
		yes bool
	}{
		{[]int64{3, 1, 1, 2, 2, 1}, true},
		{[]int64{1, 1}, true},
		{[]int64{5, 3, 2}, true},
		{[]int64{7, 3, 2, 1, 1}, true},
		{[]int64{4, 4, 3, 3, 2}, true},
		{[]int64{3, 5, 1, 9, 2, 2}, true},
		{[]int64{2, 4}, false},
		{[]int64{5, 1, 1, 1}, false},
		{[]int64{6, 2, 2}, false},
		{[]int64{10, 3, 3, 2}, false},
		{[]int64{9, 1, 1, 1, 1, 1}, false},
		{[]int64{8, 2, 2, 2}, false},
	}
	for _, c := range cases {
		for _, unit := range []int64{1, 1 << 30} {
			us := make([]int64, len(c.us))
			for i, u := range c.us {
				us[i] = u * unit
			}
			p, target, err := reduce.ActTwoPartition(us)
			require.NoError(t, err)
			lb, err := InterruptibleBound(p, ActOptions{Exact: true})
			require.NoError(t, err)
			if c.yes {
				assert.InDelta(t, target, lb, 1e-12, "%v", c.us)
			} else {
				assert.Greater(t, lb, target+1e-9, "%v", c.us)
			}
			r, err := DynProg(p, ActOptions{Exact: true})
			require.NoError(t, err)
			require.True(t, r.Feasible, "%v", c.us)
			assert.GreaterOrEqual(t, r.Report.Makespan, lb*(1-1e-12))
		}
	}
}

// On 300 seeded small instances: Fractional ≤ interruptible bound (exact mode) ≤ the exact
// optimum ≤ DYNPROG, and the slotted bound (S = 500 and S = 7) ≤ the exact optimum.
func TestDynProgBoundsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 3))
	stronger, tight := 0, 0
	for it := 0; it < 300; it++ {
		unit := int64(1)
		if it%2 == 1 {
			unit = 1 << 30
		}
		p := act.Random(r, 1+r.IntN(5), unit)
		e, st, err := hact.Exact(p, hact.ExactOptions{})
		require.NoError(t, err)
		require.Equal(t, hact.Optimal, st)
		opt := e.Makespan()
		lb, err := InterruptibleBound(p, ActOptions{Exact: true})
		require.NoError(t, err)
		assert.LessOrEqual(t, lb, opt*(1+1e-9), "instance %d %+v", it, p)
		assert.LessOrEqual(t, p.Fractional(), lb*(1+1e-9), "instance %d", it)
		if lb > p.Fractional()*(1+1e-9) {
			stronger++
		}
		if lb >= opt*(1-1e-9) {
			tight++
		}
		for _, s := range []int{500, 7} {
			b, err := InterruptibleBound(p, ActOptions{Slots: s})
			require.NoError(t, err)
			assert.LessOrEqual(t, b, opt*(1+1e-9), "instance %d, %d slots", it, s)
		}
		d, err := DynProg(p, ActOptions{Exact: true})
		require.NoError(t, err)
		if !math.IsInf(opt, 1) {
			assert.True(t, d.Feasible, "instance %d", it)
		}
		assert.GreaterOrEqual(t, d.Makespan(), opt*(1-1e-12))
	}
	t.Logf("interruptible bound above the fractional one on %d instances, equal to the optimum on %d", stronger, tight)
	assert.Greater(t, stronger, 10)
}
