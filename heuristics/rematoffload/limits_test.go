package rematoffload_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/dp"
	heur "github.com/memsched/memsched/heuristics/rematoffload"
	"github.com/memsched/memsched/instances"
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
