package report

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A bound above a verified row, or infeasibility where a row verified, never stands (SPEC §5);
// one at or under every verified row does.
func TestAddBound(t *testing.T) {
	lr := LeverReport{Rows: []Row{{Strategy: "greedy", Feasible: true, Verified: true, Makespan: 10}, {Strategy: "none"}}}
	assert.True(t, addBound(&lr, Bound{Name: "a", Value: 10}, "a"))
	assert.False(t, addBound(&lr, Bound{Name: "b", Value: 10.001}, "b: its bound"))
	assert.False(t, addBound(&lr, Bound{Name: "c", Infeasible: true}, "c"))
	assert.Len(t, lr.Bounds, 1)
	assert.Equal(t, []string{
		"b: its bound contradicts the verified greedy row (10 s): dropped",
		"c contradicts the verified greedy row (10 s): dropped",
	}, lr.Notes)
}
