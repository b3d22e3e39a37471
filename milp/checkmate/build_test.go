package checkmate_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/milp/checkmate"
)

// TestModelSize: the skip graph (n = 4, deps 0, 1, 1, 2) has n(n+1)/2 = 10 R, n(n−1)/2 = 6 S,
// 10 U and Σ_t Σ_{k<t} (|deps(k)|+1) = 1 + 3 + 5 = 9 FREE columns; the units comment is first.
func TestModelSize(t *testing.T) {
	f, err := checkmate.Build(skip(1<<20), 5<<20)
	require.NoError(t, err)
	require.NoError(t, f.Model.Validate())
	assert.Equal(t, 35, f.Model.NumVars())
	assert.Equal(t, "memsched units: memory=2097152 time=1", f.Model.Comments[0])
	lb, ub := f.Model.Bounds(f.R[2][2])
	assert.Equal(t, [2]float64{1, 1}, [2]float64{lb, ub}, "the frontier fixes R[t,t] = 1")
}

// TestBuildRejects: bad data is an error, not a panic.
func TestBuildRejects(t *testing.T) {
	_, err := checkmate.Build(&instances.Graph{}, 1)
	assert.ErrorContains(t, err, "at least one node")
	_, err = checkmate.Build(skip(1), -1)
	assert.ErrorContains(t, err, "negative")
}
