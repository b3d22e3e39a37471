package pipeline

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/instances"
	pl "github.com/memsched/memsched/instances/pipeline"
	vpl "github.com/memsched/memsched/verify/pipeline"
)

// TestFillDrainBound: the fill-and-drain bound (by prefix sums, no table) and the work bound a
// stopped planner falls back to are at most the referee's optimum with recomputation — the
// best verified plan — on 300 random tiny instances at byte and GiB scale; a stop before it
// starts is ErrStopped, not a bound.
func TestFillDrainBound(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 7))
	checked := 0
	for k := range 300 {
		p := pl.RandomTiny(r, k)
		for _, q := range []*pl.Problem{p, p.Scaled(1 << 30)} {
			fd, err := FillDrainBound(q, Options{})
			require.NoError(t, err, "%d", k)
			ref, err := vpl.Exhaustive(q, vpl.RefereeOptions{Remat: true})
			require.NoError(t, err, "%d", k)
			if !ref.Feasible {
				continue
			}
			checked++
			require.LessOrEqual(t, fd, ref.Makespan*(1+1e-12), "%d: fill-drain above the optimum %v", k, ref.Plan)
			require.LessOrEqual(t, workBound(q, min(q.GPUs, q.L())), fd*(1+1e-12), "%d: work/P above fill-drain", k)
		}
	}
	assert.Greater(t, checked, 200)
	stop := make(chan struct{})
	close(stop)
	_, err := FillDrainBound(pl.RandomTiny(r, 1), Options{Stop: stop})
	assert.ErrorIs(t, err, ErrStopped)
}

// TestSumDurations: the prefix sums give every part's Σu_f and Σu_b (the loss stage on the
// last part) as StoreAllCosts sums them, to rounding, on float-time chains.
func TestSumDurations(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 8))
	for k := range 100 {
		c := instances.Random(r, instances.RandomParams{Stages: 2 + k%15, MaxSize: 1000, MaxTime: 7})
		p := &pl.Problem{Chain: c}
		d := newSumDurations(p)
		for s := 1; s <= p.L(); s++ {
			for e := s; e <= p.L(); e++ {
				f, b := d.at(s, e, 1)
				pc := pl.StoreAllCosts(c, s, e)
				require.InDelta(t, pc.F, f, 1e-12*math.Max(1, pc.F), "%d [%d, %d]", k, s, e)
				require.InDelta(t, pc.B, b, 1e-12*math.Max(1, pc.B), "%d [%d, %d]", k, s, e)
			}
		}
	}
}

// TestFillDrainBoundsOnePass: the one-pass layers give, for every GPU count S, the value of
// fillDrainBound's own S-layer DP bit for bit (their durations do not depend on the in-flight
// count), on 200 random chains of up to 40 stages with float times and transfers.
func TestFillDrainBoundsOnePass(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 9))
	for k := range 200 {
		c := instances.Random(r, instances.RandomParams{Stages: 2 + k%40, MaxSize: 1 << 20, MaxTime: 3})
		p := &pl.Problem{Chain: c, GPUs: 1 + k%9, MicroBatches: 1 + k%7, Memory: instances.MaxBytes, Bandwidth: 1e6 * float64(1+k%5)}
		if k%4 == 0 {
			p.Bandwidth = math.Inf(1)
		}
		maxS := min(p.GPUs, p.L())
		d := newSumDurations(p)
		got, err := fillDrainBounds(p, d, maxS, &dp.Poll{})
		require.NoError(t, err)
		for S := 1; S <= maxS; S++ {
			require.Equal(t, fillDrainBound(p, d, S), got[S], "%d: S = %d", k, S)
		}
	}
}
