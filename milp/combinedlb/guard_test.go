package combinedlb_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/combinedlb"
)

// TestBuildLimits: the model stops growing at Limits.MaxMemory with a *TooLargeError naming
// its size and the cap (before the whole model is built), a closed Limits.Stop stops it with
// ErrStopped, and Solve under a context already done answers status time-limit with the
// global bound Σ(u_f+u_b) — never a bound it did not prove, never an error.
func TestBuildLimits(t *testing.T) {
	c := instances.DefaultChain()
	budget := int64(80 << 20)
	full, err := combinedlb.Build(c, budget, 1e9)
	require.NoError(t, err)
	nnz := full.Model.NumNonzeros()
	require.Greater(t, nnz, 100)

	capBytes := milp.ModelBytes(nnz / 3)
	_, err = combinedlb.BuildWithin(c, budget, 1e9, combinedlb.Limits{MaxMemory: capBytes})
	var tl *combinedlb.TooLargeError
	require.ErrorAs(t, err, &tl)
	assert.Equal(t, capBytes, tl.Limit)
	assert.Greater(t, tl.Bytes, capBytes)
	assert.Less(t, tl.Nonzeros, nnz)
	assert.Equal(t, c.Len(), tl.Stages)
	assert.Contains(t, err.Error(), instances.FormatSize(capBytes)+" (--max-memory)")
	_, err = combinedlb.BuildWithin(c, budget, 1e9, combinedlb.Limits{MaxMemory: milp.ModelBytes(nnz)})
	assert.NoError(t, err)

	stop := make(chan struct{})
	close(stop)
	_, err = combinedlb.BuildWithin(c, budget, 1e9, combinedlb.Limits{Stop: stop})
	assert.True(t, errors.Is(err, combinedlb.ErrStopped), "%v", err)

	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	<-ctx.Done()
	b, err := combinedlb.Solve(ctx, nil, c, budget, 1e9, milp.Params{}, math.NaN(), 0)
	require.NoError(t, err)
	assert.Equal(t, milp.TimeLimit, b.Status)
	assert.Equal(t, c.ComputeTime(), b.Value)
	assert.Nil(t, b.Guarded)
}
