package actoffload

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// subsetWindows is WholeWindows computed the slow way, as its doc states it: per tight
// operation, every subset of the activations whose window holds it, offloaded (resp.
// prefetched, in reversed time) whole in index order from their releases.
func subsetWindows(p *Problem) (head, tail []float64, ok bool) {
	head, tail, ok = p.FluidWindows()
	if !ok {
		return nil, nil, false
	}
	n := p.L() + 1
	need := func(k int) int64 {
		if k < n {
			return p.MemF(k) - p.MGPU
		}
		return p.MemB(2*n-1-k) - p.MGPU
	}
	u := func(k int) float64 {
		if k < n {
			return p.UF[k]
		}
		return p.UB[2*n-1-k]
	}
	// best is the least completion of a subset of x_j, j ≤ 2n−2−k and j < k, of volume ≥ need.
	best := func(k int, rel func(int) float64) (float64, bool) {
		var items []int
		for j := 0; j < n; j++ {
			if p.X[j] > 0 && k >= j+1 && k <= 2*n-2-j {
				items = append(items, j)
			}
		}
		c, found := math.Inf(1), false
		for mask := 1; mask < 1<<len(items); mask++ {
			var v int64
			t := 0.0
			for b, j := range items {
				if mask&(1<<b) != 0 {
					v += p.X[j]
					t = math.Max(t, rel(j)) + float64(p.X[j])/p.Beta
				}
			}
			if v >= need(k) {
				c, found = math.Min(c, t), true
			}
		}
		return c, found
	}
	for k := 0; k < 2*n; k++ {
		if k > 0 {
			head[k] = math.Max(head[k], head[k-1]+u(k-1))
		}
		if need(k) > 0 {
			c, found := best(k, func(j int) float64 {
				if j == 0 {
					return 0
				}
				return head[j-1] + u(j-1)
			})
			if !found {
				return nil, nil, false
			}
			head[k] = math.Max(head[k], c)
		}
	}
	for k := 2*n - 1; k >= 0; k-- {
		if k < 2*n-1 {
			tail[k] = math.Max(tail[k], tail[k+1]+u(k))
		}
		if need(k) > 0 {
			c, found := best(k, func(j int) float64 { return tail[2*n-1-j] })
			if !found {
				return nil, nil, false
			}
			tail[k] = math.Max(tail[k], u(k)+c)
		}
	}
	for k := 1; k < 2*n; k++ {
		head[k] = math.Max(head[k], head[k-1]+u(k-1))
	}
	return head, tail, true
}

// The frontier of WholeWindows (one per prefix, grown by one activation at a time) gives the
// windows that enumerating every subset per operation gives, on 3000 seeded instances of 1–10
// operations at byte and GiB scale.
func TestWholeWindowsAgainstSubsets(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 23))
	tight := 0
	for it := 0; it < 3000; it++ {
		unit := int64(1)
		if it%2 == 1 {
			unit = 1 << 30
		}
		p := Random(r, 1+r.IntN(10), unit)
		h, tl, ok := p.WholeWindows()
		h2, tl2, ok2 := subsetWindows(p)
		require.Equal(t, ok2, ok, "instance %d: %+v", it, p)
		for k := range h {
			tol := 1e-12 * math.Max(1, h2[k]+tl2[k])
			assert.InDelta(t, h2[k], h[k], tol, "instance %d: head of operation %d", it, k)
			assert.InDelta(t, tl2[k], tl[k], tol, "instance %d: tail of operation %d", it, k)
		}
		if ok && p.WholeTransfers() > p.Fractional()*(1+1e-9) {
			tight++
		}
	}
	assert.Greater(t, tight, 500, "instances where whole transfers bound above the fluid relaxation")
}

// Past maxWindowStates the frontier merges neighbours optimistically: still a lower bound on
// every subset's completion, and exact below the cap.
func TestFrontierMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	f := newFrontier()
	type item struct {
		size     int64
		rel, dur float64
	}
	var items []item
	// 2^24 distinct volumes: past the cap several times.
	for len(items) < 24 {
		// Released at once, durations proportional to sizes: every distinct volume is on the
		// frontier, which doubles with each item until the cap.
		size := 1 + r.Int64N(1<<40)
		it := item{size, 0, float64(size) / 1e9}
		items = append(items, it)
		f.add(it.size, it.rel, it.dur)
	}
	require.LessOrEqual(t, len(f.v), maxWindowStates)
	require.Greater(t, len(f.v), maxWindowStates/4)
	// Random subsets: the frontier's answer for their volume is never later than they end.
	for s := 0; s < 2000; s++ {
		var v int64
		c := 0.0
		for _, it := range items {
			if r.IntN(2) == 0 {
				v += it.size
				c = math.Max(c, it.rel) + it.dur
			}
		}
		if v == 0 {
			continue
		}
		got, ok := f.min(v)
		require.True(t, ok)
		assert.LessOrEqual(t, got, c)
	}
}

// Staircase's guards: at or under the windows' bound it returns that bound; past its caps it
// says so (ok false) and returns the windows' bound; stopped (here before it starts: the
// windows themselves stop, WholeWindowsUntil) it says so with no bound (NaN); on an instance
// without a schedule it says +Inf like the windows.
func TestStaircaseLimits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	checked := 0
	for it := 0; it < 400 && checked < 20; it++ {
		p := Random(r, 4+r.IntN(6), int64(1)<<(30*(it%2)))
		whole := p.WholeTransfers()
		if math.IsInf(whole, 1) || whole <= p.Fractional() {
			continue
		}
		checked++
		b, ok := p.Staircase(StaircaseOptions{Upper: whole})
		assert.True(t, ok)
		assert.Equal(t, whole, b)
		b, ok = p.Staircase(StaircaseOptions{Upper: 2 * whole, MaxStates: 1})
		assert.False(t, ok)
		assert.Equal(t, whole, b)
		b, ok = p.Staircase(StaircaseOptions{Upper: 2 * whole, MaxWork: 1})
		assert.False(t, ok)
		assert.Equal(t, whole, b)
		stop := make(chan struct{})
		close(stop)
		b, ok = p.Staircase(StaircaseOptions{Upper: 2 * whole, Stop: stop})
		assert.False(t, ok)
		assert.True(t, math.IsNaN(b), b)
		_, _, _, err := p.WholeWindowsUntil(stop)
		assert.ErrorIs(t, err, ErrStopped)
		b, ok = p.Staircase(StaircaseOptions{Upper: 2 * whole})
		assert.True(t, ok)
		assert.GreaterOrEqual(t, b, whole)
		assert.Less(t, b, 2*whole)
	}
	require.Equal(t, 20, checked)
	p := Random(r, 3, 1)
	p.MGPU = p.MinMemory() - 1
	if p.MGPU > 0 {
		b, ok := p.Staircase(StaircaseOptions{Upper: 1})
		assert.True(t, ok)
		assert.True(t, math.IsInf(b, 1))
	}
}
