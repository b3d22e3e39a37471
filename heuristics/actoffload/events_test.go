package actoffload

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	act "github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/instances/reduce"
	"github.com/memsched/memsched/instances/zoo"
)

// EventSearch against the no-wait branch and bound (itself checked against plain enumeration of
// link orders) on 600 seeded instances of 1–9 operations, byte and GiB scale: both complete, the
// same optimum, EventSearch's schedule validated at it, above the fractional relaxation; with a
// gap g its bound is within [OPT/(1+g), OPT].
func TestEventSearchAgainstExact(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 7))
	moved, infeasible, whole := 0, 0, 0
	for it := 0; it < 600; it++ {
		unit := int64(1)
		if it%2 == 1 {
			unit = 1 << 30
		}
		p := act.Random(r, 1+r.IntN(9), unit)
		ex, st, err := Exact(p, ExactOptions{})
		require.NoError(t, err)
		require.Equal(t, Optimal, st)
		ev, err := EventSearch(p, EventOptions{})
		require.NoError(t, err)
		require.True(t, ev.Complete, "instance %d", it)
		opt := ex.Makespan()
		if math.IsInf(opt, 1) {
			infeasible++
			assert.True(t, math.IsInf(ev.Bound, 1), "instance %d: no-wait search finds nothing, events %v", it, ev.Bound)
			assert.Nil(t, ev.Best)
			continue
		}
		if len(ex.Offloaded) > 0 {
			moved++
		}
		require.NotNil(t, ev.Best, "instance %d", it)
		assert.InDelta(t, opt, ev.Bound, 1e-9*math.Max(1, opt), "instance %d: %+v", it, p)
		assert.InDelta(t, ev.Bound, ev.Best.Report.Makespan, 1e-9*math.Max(1, opt), "instance %d", it)
		assert.LessOrEqual(t, p.Fractional(), ev.Bound*(1+1e-12), "instance %d", it)
		w := p.WholeTransfers()
		assert.LessOrEqual(t, w, ev.Bound*(1+1e-12), "instance %d: whole-transfer windows above the optimum: %+v", it, p)
		if w > p.Fractional()*(1+1e-9) {
			whole++
		}
		// With a 10 % gap and the optimum as incumbent: complete, a bound within the gap.
		g, err := EventSearch(p, EventOptions{Incumbent: opt, Gap: 0.1})
		require.NoError(t, err)
		require.True(t, g.Complete)
		assert.LessOrEqual(t, g.Bound, opt*(1+1e-12), "instance %d", it)
		assert.GreaterOrEqual(t, g.Bound, opt/1.1*(1-1e-11), "instance %d", it)
	}
	t.Logf("%d instances move activations, %d have no schedule, whole-transfer windows above the fluid bound on %d", moved, infeasible, whole)
	assert.Greater(t, moved, 300)
	assert.Greater(t, whole, 100)
}

// An incumbent at the optimum: nothing shorter exists, so the search completes without a
// schedule and proves the incumbent a bound; just below it, it finds the optimum again.
func TestEventSearchIncumbent(t *testing.T) {
	p, target, err := reduce.ActThreePartition([]int64{6, 7, 6, 7, 6, 8})
	require.NoError(t, err)
	ev, err := EventSearch(p, EventOptions{Incumbent: target})
	require.NoError(t, err)
	require.True(t, ev.Complete)
	assert.Nil(t, ev.Best)
	assert.InDelta(t, target, ev.Bound, 1e-9)
	ev, err = EventSearch(p, EventOptions{Incumbent: target * 1.01})
	require.NoError(t, err)
	require.True(t, ev.Complete)
	require.NotNil(t, ev.Best)
	assert.InDelta(t, target, ev.Best.Report.Makespan, 1e-9, "Thm 1's yes-instance: offloads in the order of the partition")
	assert.InDelta(t, target, ev.Bound, 1e-9)
}

// Stopped by the node limit or the deadline, the search certifies nothing.
func TestEventSearchStops(t *testing.T) {
	c, err := zoo.InceptionV3(zoo.CNNConfig{Image: 224, Batch: 32})
	require.NoError(t, err)
	p, err := act.FromChain(c, 1, 12e9)
	require.NoError(t, err)
	p.MGPU = p.MinMemory() + (p.Peak()-p.MinMemory())/10
	ev, err := EventSearch(p, EventOptions{MaxNodes: 1000})
	require.NoError(t, err)
	assert.False(t, ev.Complete)
	assert.Zero(t, ev.Bound)
	stop := make(chan struct{})
	close(stop)
	ev, err = EventSearch(p, EventOptions{Stop: stop})
	require.NoError(t, err)
	assert.False(t, ev.Complete, "past its deadline after 1024 nodes")
	assert.Zero(t, ev.Bound)
}

// Inception v3 (224×224, batch 32, V100) at 12 GB/s, 10/25/50 % of the way from the smallest
// feasible memory to M_peak: the points of issue 21's table where the exact MILP stopped at
// 6–11 % gaps after 30 s. The search proves the no-wait branch and bound's schedules optimal.
func TestEventSearchInceptionV3(t *testing.T) {
	c, err := zoo.InceptionV3(zoo.CNNConfig{Image: 224, Batch: 32})
	require.NoError(t, err)
	p, err := act.FromChain(c, 1, 12e9)
	require.NoError(t, err)
	lo, hi := p.MinMemory(), p.Peak()
	for _, pct := range []int64{10, 25, 50} {
		p.MGPU = lo + (hi-lo)*pct/100
		ex, _, err := Exact(p, ExactOptions{MaxNodes: 2_000_000})
		require.NoError(t, err)
		require.True(t, ex.Feasible)
		ev, err := EventSearch(p, EventOptions{Incumbent: ex.Makespan()})
		require.NoError(t, err)
		require.True(t, ev.Complete, "%d %%", pct)
		assert.InDelta(t, ex.Makespan(), ev.Bound, 1e-9*ex.Makespan(), "%d %%", pct)
		assert.Greater(t, ev.Bound, p.Fractional()*1.05, "%d %%: well above the fluid bound", pct)
		t.Logf("%d %%: optimum %.2f ms (fractional %.2f ms), %d nodes, %d states", pct, ev.Bound*1e3, p.Fractional()*1e3, ev.Nodes, ev.States)
	}
}

// equalSizesInstance is instance number it of the population the staircase and the split are
// refereed on: act.Random with 1..maxOps operations, byte scale for even it and GiB scale for
// odd; for it mod 4 ≥ 2, sizes in {1, 2, 3}·unit (many activations share a size, the case the
// equal-size arguments rest on), real-valued times and M_GPU redrawn.
func equalSizesInstance(r *rand.Rand, it, maxOps int) *act.Problem {
	unit := int64(1)
	if it%2 == 1 {
		unit = 1 << 30
	}
	p := act.Random(r, 1+r.IntN(maxOps), unit)
	if it%4 >= 2 {
		for i := range p.X {
			if p.X[i] > 0 {
				p.X[i] = unit * int64(1+r.IntN(3))
			}
		}
		for i := range p.UF {
			p.UF[i], p.UB[i] = 3*r.Float64(), 3*r.Float64()
		}
		lo, hi := p.MinMemory(), p.Peak()
		p.MGPU = max(1, lo+(hi-lo)*int64(r.IntN(5))/4)
	}
	return p
}

// The staircase of the whole-transfer windows (instances/actoffload.Staircase) never exceeds
// the optimum the event search proves, on 1500 seeded instances of 1–12 operations at byte and
// GiB scale — half of them with sizes in {1, 2, 3}·unit and real-valued times, where many
// activations share a size (the case its equal-size argument rests on) — and it is above the
// windows' own bound, and equal to the optimum, on many of them. The tails it raises, given to
// the event search as node bounds, leave its optimum unchanged.
func TestStaircaseAgainstEventSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(78, 6))
	complete, above, closes, fewer := 0, 0, 0, 0
	for it := 0; it < 1500; it++ {
		p := equalSizesInstance(r, it, 12)
		ev, err := EventSearch(p, EventOptions{MaxNodes: 1_000_000})
		require.NoError(t, err)
		if !ev.Complete || math.IsInf(ev.Bound, 1) {
			continue
		}
		complete++
		opt, whole := ev.Bound, p.WholeTransfers()
		// The tails the staircase raised, as the event search's node bounds: the same optimum.
		tails, _, ok := p.StaircaseTails(act.StaircaseOptions{Upper: opt * 1.5})
		require.True(t, ok)
		ev2, err := EventSearch(p, EventOptions{MaxNodes: 1_000_000, Tail: tails})
		require.NoError(t, err)
		require.True(t, ev2.Complete, "instance %d", it)
		assert.InDelta(t, opt, ev2.Bound, 1e-9*math.Max(1, opt), "instance %d: with the staircase's tails: %+v", it, p)
		if ev2.Nodes < ev.Nodes {
			fewer++
		}
		for _, upper := range []float64{opt * 1.5, opt} {
			b, ok := p.Staircase(act.StaircaseOptions{Upper: upper})
			require.True(t, ok)
			assert.LessOrEqual(t, b, opt*(1+1e-12), "instance %d: staircase above the optimum: %+v", it, p)
			assert.GreaterOrEqual(t, b, whole, "instance %d", it)
			if upper > opt {
				if b > whole*(1+1e-9) {
					above++
				}
				if opt > whole*(1+1e-9) && b >= opt*(1-1e-6) {
					closes++
				}
			}
		}
	}
	t.Logf("%d instances solved, the staircase above the windows on %d, at the optimum where they were not on %d; its tails cut the event search's nodes on %d", complete, above, closes, fewer)
	assert.Greater(t, complete, 1400)
	assert.Greater(t, above, 30)
	assert.Greater(t, closes, 20)
}
