package rematoffload_test

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/dp"
	heur "github.com/memsched/memsched/heuristics/rematoffload"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify/combined"
)

// TestStrategyLimits: under a memory cap RematThenOffload's table at a larger budget uses
// fewer slots and still returns a plan that fits, under a cap no table fits it refuses with a
// *dp.TooLargeError (never allocates past it); with a deadline already passed both heuristics
// stop their tables with dp.ErrStopped instead of running on.
func TestStrategyLimits(t *testing.T) {
	c := instances.Toy()
	budget, beta := int64(80<<20), 1e9
	full, err := heur.RematThenOffload(c, budget, beta, heur.Options{})
	require.NoError(t, err)
	require.NotNil(t, full)

	small := dp.PersistentBytes(c.Len(), dp.DefaultSlots)
	p, err := heur.RematThenOffload(c, budget, beta, heur.Options{MaxMemory: small})
	require.NoError(t, err)
	require.NotNil(t, p)
	f, err := combined.Fluid(c, budget, beta, p)
	require.NoError(t, err)
	assert.True(t, f.Feasible)

	_, err = heur.RematThenOffload(c, budget, beta, heur.Options{MaxMemory: 1})
	var tl *dp.TooLargeError
	assert.ErrorAs(t, err, &tl)

	past := heur.Options{Deadline: time.Now().Add(-time.Second)}
	_, err = heur.RematThenOffload(c, budget, beta, past)
	assert.ErrorIs(t, err, dp.ErrStopped)
	_, err = heur.OffloadThenRemat(c, budget, beta, past)
	assert.ErrorIs(t, err, dp.ErrStopped)
}

// TestStrategiesStopInTime: past the deadline the heuristics stop inside their improvement
// loops too, not only in their tables (issue 29: remat-offload --algo all on a random
// 401-stage chain at 1 GiB ran 101 s under --time-limit 5, remat-then-offload 76 s of it in
// its greedy offloading, each try a replay of the chain). With small tables (filled in a
// fraction of a second), a 1.5 s deadline ends each within a second after it (or sooner,
// finished): with the best plan so far and ErrPartial (a plan the fluid model accepts), or
// dp.ErrStopped before a plan fitted.
func TestStrategiesStopInTime(t *testing.T) {
	if testing.Short() {
		t.Skip("seconds")
	}
	c := instances.Random(rand.New(rand.NewPCG(1, 2)), instances.RandomParams{Stages: 401, MaxSize: 64 << 20, MaxTime: 0.01, WithABar: true, WithOverheads: true})
	for _, budget := range []int64{1 << 30, 4 << 30} {
		beta := 12e9
		for name, f := range map[string]func(*instances.Chain, int64, float64, heur.Options) (*schedule.CombinedPlan, error){
			"remat-then-offload": heur.RematThenOffload, "offload-then-remat": heur.OffloadThenRemat} {
			o := heur.Options{Slots: 64, MaxMemory: dp.PersistentBytes(c.Len(), 128), Deadline: time.Now().Add(1500 * time.Millisecond)}
			p, err := f(c, budget, beta, o)
			assert.Less(t, time.Since(o.Deadline), time.Second, "%s at %d B", name, budget)
			switch {
			case err == nil || errors.Is(err, heur.ErrPartial):
				if p == nil {
					require.NoError(t, err, name) // finished, no plan fits
					continue
				}
				fl, ferr := combined.Fluid(c, budget, beta, p)
				require.NoError(t, ferr, name)
				assert.True(t, fl.Feasible, name)
				t.Logf("%s at %d B: a plan (%v)", name, budget, err)
			default:
				assert.ErrorIs(t, err, dp.ErrStopped, name)
				assert.True(t, p == nil, name)
			}
		}
	}
}
