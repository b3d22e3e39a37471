package oracle_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
	"github.com/memsched/memsched/verify/oracle"
)

// TestToy90 is 004 §3.2: with 90 MiB the optimum is 47.42 ms.
func TestToy90(t *testing.T) {
	c := instances.Toy()
	seq, ms, ok, err := oracle.Remat(c, instances.ToyBudget, verify.RematOptions{})
	require.NoError(t, err)
	require.True(t, ok)
	assert.InDelta(t, 47.42e-3, ms, 1e-12)
	res, err := verify.Remat(c, seq, verify.RematOptions{})
	require.NoError(t, err)
	assert.InDelta(t, ms, res.Makespan, 1e-15)
	assert.LessOrEqual(t, res.Peak, int64(instances.ToyBudget))
	t.Logf("toy 90 MiB: %v (peak %.2f MiB)", seq, float64(res.Peak)/(1<<20))
}

// TestFig4 is 004 Fig. 4: with M = 15 the optimum is 2n+2.
func TestFig4(t *testing.T) {
	for n := 4; n <= 8; n++ {
		c, err := instances.Fig4(n)
		require.NoError(t, err)
		seq, ms, ok, err := oracle.Remat(c, instances.Fig4Budget, verify.RematOptions{})
		require.NoError(t, err)
		require.True(t, ok, "n=%d", n)
		assert.Equal(t, float64(2*n+2), ms, "n=%d: %v", n, seq)
	}
}

// TestMinBudgetClosedForm checks verify.MinBudget against bisection on the oracle's
// feasibility on random chains with overheads, ā > a and independent δ.
func TestMinBudgetClosedForm(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	n := 120
	if testing.Short() {
		n = 30
	}
	for i := 0; i < n; i++ {
		c := instances.Random(r, instances.RandomParams{Stages: 1 + r.IntN(6), MaxSize: 12, MaxTime: 3, Integer: true,
			WithABar: i%2 == 0, WithOverheads: i%3 != 0, WithDelta: i%4 == 0})
		want, err := oracle.MinBudget(c)
		require.NoError(t, err)
		require.Equal(t, want, verify.MinBudget(c), "chain %d: %+v", i, c)
	}
}

// TestAgainstEnumeration compares the oracle with a brute-force enumeration of every
// sequence of up to 10 operations on 2- and 3-stage chains.
func TestAgainstEnumeration(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	for i := 0; i < 40; i++ {
		c := instances.Random(r, instances.RandomParams{Stages: 2 + r.IntN(2), MaxSize: 6, MaxTime: 4, Integer: true,
			WithABar: true, WithOverheads: i%2 == 0})
		min := verify.MinBudget(c)
		for _, budget := range []int64{min - 1, min, min + 3, 1 << 20} {
			_, want, wantOK, err := oracle.Remat(c, budget, verify.RematOptions{})
			require.NoError(t, err)
			got, gotOK := enumerate(c, budget, 10)
			require.Equal(t, wantOK, gotOK, "chain %d budget %d", i, budget)
			if gotOK {
				assert.Equal(t, want, got, "chain %d budget %d", i, budget)
			}
		}
	}
}

func enumerate(c *instances.Chain, budget int64, depth int) (float64, bool) {
	best, found := 0.0, false
	var all []schedule.Op
	for l := 1; l <= c.Len(); l++ {
		for _, k := range []schedule.OpKind{schedule.Fall, schedule.Fck, schedule.Fn, schedule.B} {
			all = append(all, schedule.Op{Kind: k, Stage: l})
		}
	}
	var rec func(s verify.RematState, cost float64, d int)
	rec = func(s verify.RematState, cost float64, d int) {
		if s.T == 0 {
			if !found || cost < best {
				best, found = cost, true
			}
			return
		}
		if d == 0 {
			return
		}
		for _, op := range all {
			next := verify.RematState{Acts: append([]verify.Act(nil), s.Acts...), T: s.T}
			mem, dur, err := next.Apply(c, op)
			if err == nil && mem <= budget {
				rec(next, cost+dur, d-1)
			}
		}
	}
	if s := verify.InitialState(c); s.Memory(c) <= budget {
		rec(s, 0, depth)
	}
	return best, found
}

// TestFreeDelete compares SPEC §1's free-delete variant with 004's model on random chains: it is
// never slower nor needs more memory, every sequence replays under the variant (and is rejected
// without it when it deletes), and the cases where it helps are counted (docs/remat-model.md).
func TestFreeDelete(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 34))
	pairs, faster, lessMemory := 0, 0, 0
	n := 80
	if testing.Short() {
		n = 20
	}
	for i := 0; i < n; i++ {
		c := instances.Random(r, instances.RandomParams{Stages: 2 + r.IntN(4), MaxSize: 8, MaxTime: 5, Integer: true,
			WithABar: true, WithOverheads: i%2 == 0, WithDelta: i%3 == 0})
		fd := verify.RematOptions{FreeDelete: true}
		minStd := verify.MinBudget(c)
		minFree, err := minBudgetWith(c, fd)
		require.NoError(t, err)
		require.LessOrEqual(t, minFree, minStd)
		if minFree < minStd {
			lessMemory++
		}
		for b := minStd; b <= minStd+8; b += 2 {
			_, std, ok, err := oracle.Remat(c, b, verify.RematOptions{})
			require.NoError(t, err)
			require.True(t, ok)
			seq, free, ok, err := oracle.Remat(c, b, fd)
			require.NoError(t, err)
			require.True(t, ok)
			require.LessOrEqual(t, free, std+1e-12)
			res, err := verify.Remat(c, seq, fd)
			require.NoError(t, err)
			assert.Equal(t, free, res.Makespan)
			assert.LessOrEqual(t, res.Peak, b)
			if free < std-1e-12 {
				faster++
				_, err := verify.Remat(c, seq, verify.RematOptions{})
				var ie *verify.InvalidOpError
				assert.ErrorAs(t, err, &ie, "a faster sequence must use Del")
			}
			pairs++
		}
	}
	t.Logf("%d chains: smaller minimal budget with free delete on %d; %d (chain, budget) pairs, faster on %d", n, lessMemory, pairs, faster)
}

func minBudgetWith(c *instances.Chain, opt verify.RematOptions) (int64, error) {
	lo, hi := int64(0), verify.MinBudget(c)
	for lo+1 < hi {
		mid := lo + (hi-lo)/2
		_, _, ok, err := oracle.Remat(c, mid, opt)
		if err != nil {
			return 0, err
		}
		if ok {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}
