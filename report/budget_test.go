package report

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/verify"
)

// TestShareTime: each lever still to run gets an equal share of the time left, as its
// context's deadline and as its Input.TimeLimit; without a deadline nothing changes.
func TestShareTime(t *testing.T) {
	in := Input{TimeLimit: time.Hour}
	ctx, lin, cancel := ShareTime(context.Background(), in, 3)
	cancel()
	assert.Equal(t, time.Hour, lin.TimeLimit)
	_, ok := ctx.Deadline()
	assert.False(t, ok)

	parent, pcancel := context.WithTimeout(context.Background(), 9*time.Second)
	defer pcancel()
	ctx, lin, cancel = ShareTime(parent, in, 3)
	defer cancel()
	dl, ok := ctx.Deadline()
	require.True(t, ok)
	assert.InDelta(t, 3, time.Until(dl).Seconds(), 0.5)
	assert.InDelta(t, 3, lin.TimeLimit.Seconds(), 0.5)
}

// TestCertifyTimeShares: certify reports each lever's share of the time limit and the time it
// took; the shares add up to the limit (time left over passes to the next lever), and every
// lever ends with its share (a DP table stops at the end of it, with a note).
func TestCertifyTimeShares(t *testing.T) {
	in := Input{Chain: instances.DefaultChain(), Budget: 90 << 20, Bandwidth: 12e9, TimeLimit: 30 * time.Second}
	rep, err := Certify(context.Background(), in, DefaultLevers())
	require.NoError(t, err)
	var first float64
	// The toy chain has no weights: three levers run (remat, act-offload, remat-offload).
	for i, name := range []string{"remat", "act-offload"} {
		lr := rep.Levers[name]
		require.Empty(t, lr.Skipped)
		assert.Positive(t, lr.TimeBudget, name)
		assert.LessOrEqual(t, lr.Seconds, lr.TimeBudget, name)
		if i == 0 {
			first = lr.TimeBudget
			assert.InDelta(t, 10, first, 0.5, "three levers run: a third each")
		} else {
			assert.GreaterOrEqual(t, lr.TimeBudget, (30-rep.Levers["remat"].Seconds)/2-0.5, "remat's leftover passes on")
		}
	}

	// A chain whose C_MP table takes far longer than its share: the row says it stopped, the
	// certification still ends near the limit with the table-free bounds.
	r := rand.New(rand.NewPCG(1, 1))
	c := instances.Random(r, instances.RandomParams{Stages: 400, MaxSize: 64 << 20, MaxTime: 5e-3, WithABar: true, WithOverheads: true})
	in = Input{Chain: c, Budget: 3 * verify.MinBudget(c), MaxMemory: 256 << 20, TimeLimit: 300 * time.Millisecond}
	start := time.Now()
	rep, err = Certify(context.Background(), in, map[string]Lever{"remat": Remat{}})
	require.NoError(t, err)
	t.Logf("400 stages, 256 MiB, 0.3 s limit: %v", time.Since(start))
	lr := rep.Levers["remat"]
	for _, row := range lr.Rows {
		if row.Strategy != "persistent" && row.Strategy != "revolve" {
			continue
		}
		// The full table is above its share of --max-memory: it is built again with fewer
		// slots, which either stops at the end of the share or, on an idle machine, ends in
		// time; then its schedule is a verified row. Either way the note says why.
		t.Logf("%s: %s", row.Strategy, row.Note)
		assert.Contains(t, row.Note, "--max-memory", row.Strategy)
		if !strings.Contains(row.Note, "time share") {
			assert.True(t, row.Verified, "%s: %s", row.Strategy, row.Note)
			assert.Positive(t, row.Makespan, row.Strategy)
		}
	}
	assert.NotEmpty(t, lr.Bounds, "the table-free bounds stand")
}
