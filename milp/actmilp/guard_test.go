package actmilp_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
	act "github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/instances/zoo"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/actmilp"
)

// guardProblem is a problem whose model has transfers to order: a 12-block GPT-2 halfway
// between its smallest budget and its peak, 12 GB/s.
func guardProblem(t *testing.T) *act.Problem {
	t.Helper()
	c, err := zoo.Transformer(zoo.TransformerConfig{Kind: "gpt2", Layers: 12, Hidden: 256, Heads: 4, SeqLen: 128, Batch: 4})
	require.NoError(t, err)
	p0, err := act.FromChain(c, 1, 12e9)
	require.NoError(t, err)
	p, err := act.FromChain(c, (p0.MinMemory()+p0.Peak())/2, 12e9)
	require.NoError(t, err)
	return p
}

// TestBuildMemoryCap: a model that passes Options.MaxMemory stops with a *TooLargeError
// naming its size and the cap, at most one phase's growth past it; without the cap (or with a
// large one) the same problem builds.
func TestBuildMemoryCap(t *testing.T) {
	p := guardProblem(t)
	full, err := actmilp.Build(p, actmilp.Options{})
	require.NoError(t, err)
	nnz := full.Model.NumNonzeros()
	require.Greater(t, nnz, 1000)

	capBytes := milp.ModelBytes(nnz / 4)
	_, err = actmilp.Build(p, actmilp.Options{MaxMemory: capBytes})
	var tl *actmilp.TooLargeError
	require.ErrorAs(t, err, &tl)
	assert.Equal(t, capBytes, tl.Limit)
	assert.Greater(t, tl.Bytes, capBytes)
	assert.Less(t, tl.Nonzeros, nnz, "stopped before the whole model was built")
	assert.Equal(t, p.L()+1, tl.Operations)
	assert.Contains(t, err.Error(), instances.FormatSize(capBytes)+" (--max-memory)")

	_, err = actmilp.Build(p, actmilp.Options{MaxMemory: milp.ModelBytes(nnz)})
	assert.NoError(t, err, "a cap the whole model fits under")
}

// TestBuildStop: a closed Stop channel stops Build with ErrStopped, and Solve under a context
// that is already done returns the start schedule with status time-limit and no bound —
// not an error, and never a bound it did not prove.
func TestBuildStop(t *testing.T) {
	p := guardProblem(t)
	stop := make(chan struct{})
	close(stop)
	_, err := actmilp.Build(p, actmilp.Options{Stop: stop})
	assert.True(t, errors.Is(err, actmilp.ErrStopped), "%v", err)

	start, name, err := actmilp.BestHeuristic(p)
	require.NoError(t, err)
	require.True(t, start.Feasible)
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	<-ctx.Done()
	sol, err := actmilp.Solve(ctx, nil, p, actmilp.SolveOptions{Start: start, StartName: name})
	require.NoError(t, err)
	assert.Equal(t, milp.TimeLimit, sol.Status)
	assert.True(t, sol.Best == start)
	assert.True(t, math.IsNaN(sol.Bound), "no bound: %v", sol.Bound)
	assert.Contains(t, sol.Note, "stopped while building the model")
}
