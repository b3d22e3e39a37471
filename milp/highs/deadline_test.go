//go:build highs

package highs

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/milp"
)

// TestDeadline: a deadline on the context bounds the solve whatever Params.TimeLimit says,
// and reaching it is TimeLimit (a budget spent), not Interrupted (a stop); a deadline already
// passed does not start HiGHS at all.
func TestDeadline(t *testing.T) {
	s, _ := New()
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	res, err := milp.Solve(ctx, s, marketSplit(), milp.Params{TimeLimit: time.Minute})
	require.NoError(t, err)
	assert.Equal(t, milp.TimeLimit, res.Status)
	// The market split runs for minutes; the deadline stops it (slack for a loaded machine).
	assert.Less(t, time.Since(t0), 5*time.Second)

	res, err = milp.Solve(ctx, s, knapsack(), milp.Params{})
	require.NoError(t, err)
	assert.Equal(t, milp.TimeLimit, res.Status, "the deadline has passed")

	// A cancelled context (Ctrl-C) is still Interrupted.
	cctx, ccancel := context.WithCancel(context.Background())
	ccancel()
	res, err = milp.Solve(cctx, s, knapsack(), milp.Params{})
	require.NoError(t, err)
	assert.Equal(t, milp.Interrupted, res.Status)
}
