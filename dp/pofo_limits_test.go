package dp_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/instances/zoo"
)

// TestCombinedLimits: the combined DP keeps its deadline and memory limit wherever its time
// goes (issue 29). In bytes on ResNet-101 at 1800 MiB and 12 GB/s the exact inner table is
// filled for the whole chain before the first level: it took 35–46 s and 5 GB before the
// deadline was first read (remat-offload --slots exact --time-limit 5). Now a 0.5 s deadline
// ends it within a second or two (ErrDeadline), a 64 MiB limit ends it as it grows (a
// *TooLargeError saying how far it got), and RequireExactLink answers at once where β·u is not
// a whole number of bytes (the class bound's case, which used to search first and discard
// the result after). With slots, the C_MP table of the restricted inner minimization is
// stopped by the deadline while it is filled (a 401-stage chain at 1 GiB: 2500 slots, tens
// of seconds).
func TestCombinedLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("seconds")
	}
	r101, err := zoo.ResNet(zoo.CNNConfig{Depth: 101, Image: 224, Batch: 32})
	require.NoError(t, err)
	budget, beta := int64(1800<<20), 12e9

	start := time.Now()
	_, err = dp.Combined(r101, budget, beta, dp.CombinedOptions{Exact: true, Deadline: start.Add(500 * time.Millisecond)})
	assert.ErrorIs(t, err, dp.ErrDeadline)
	assert.Less(t, time.Since(start), 3*time.Second)

	start = time.Now()
	_, err = dp.Combined(r101, budget, beta, dp.CombinedOptions{Exact: true, MaxMemory: 64 << 20})
	var tl *dp.TooLargeError
	require.ErrorAs(t, err, &tl)
	assert.True(t, tl.AtLeast)
	assert.Contains(t, err.Error(), "took more than 64.00 MiB as it grew")
	assert.Less(t, time.Since(start), 20*time.Second)

	start = time.Now()
	r, err := dp.Combined(r101, budget, beta, dp.CombinedOptions{Exact: true, Inner: dp.InnerExact, FreeTurn: true, RequireExactLink: true})
	require.NoError(t, err)
	assert.False(t, r.ExactLink)
	assert.False(t, r.Feasible)
	assert.Less(t, time.Since(start), time.Second)

	// The table's 1.6 GB are allocated (and zeroed) at once before its first row: seconds on a
	// loaded machine, hence the margin; filling it took tens of seconds more.
	c := instances.Random(rand.New(rand.NewPCG(1, 2)), instances.RandomParams{Stages: 401, MaxSize: 64 << 20, MaxTime: 0.01, WithABar: true, WithOverheads: true})
	start = time.Now()
	_, err = dp.Combined(c, 1<<30, beta, dp.CombinedOptions{Deadline: start.Add(500 * time.Millisecond)})
	assert.ErrorIs(t, err, dp.ErrDeadline)
	assert.Less(t, time.Since(start), 8*time.Second)
}
