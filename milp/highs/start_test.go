//go:build highs

package highs

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/milp"
)

// TestStart: a feasible start point reaches HiGHS (its log reports checking it) and the
// optimum is unchanged; a start of the wrong length is refused before any solve.
func TestStart(t *testing.T) {
	s, err := New()
	require.NoError(t, err)
	var log bytes.Buffer
	res, err := milp.Solve(context.Background(), s, knapsack(), milp.Params{Start: []float64{1, 0, 1}, Log: &log})
	require.NoError(t, err)
	assert.Equal(t, milp.Optimal, res.Status)
	assert.InDelta(t, 9, res.Objective, 1e-9)
	// HiGHS 1.15 checks a user solution before presolve and says so.
	assert.Contains(t, log.String(), "Assessing feasibility of MIP")
	_, err = milp.Solve(context.Background(), s, knapsack(), milp.Params{Start: []float64{1, 0}})
	assert.ErrorContains(t, err, "start point has 2 values for 3 columns")
}
