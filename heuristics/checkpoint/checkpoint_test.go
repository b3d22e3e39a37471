package checkpoint

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/verify"
	"github.com/memsched/memsched/verify/oracle"
)

// TestSequentialReplays: every segment count gives a valid sequence whose makespan is
// Σ(u_f+u_b) plus one recomputation of every stage outside the last segment, never below the
// exhaustive optimum at its own peak.
func TestSequentialReplays(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	for i := 0; i < 60; i++ {
		c := instances.Random(r, instances.RandomParams{Stages: 1 + r.IntN(7), MaxSize: 9, MaxTime: 5, Integer: true,
			WithABar: true, WithOverheads: i%2 == 0})
		sum := 0.0
		for _, s := range c.Stages {
			sum += s.UF + s.UB
		}
		for k := 1; k <= c.Len(); k++ {
			seq, err := Sequential(c, k)
			require.NoError(t, err)
			res, err := verify.Remat(c, seq, verify.RematOptions{})
			require.NoError(t, err, "chain %d, %d segments: %v", i, k, seq)
			size := c.Len() / k
			re := 0.0
			for l := 1; l <= (k-1)*size; l++ {
				re += c.Stage(l).UF
			}
			assert.InDelta(t, sum+re, res.Makespan, 1e-9)
			_, opt, ok, err := oracle.Remat(c, res.Peak, verify.RematOptions{})
			require.NoError(t, err)
			require.True(t, ok)
			assert.GreaterOrEqual(t, res.Makespan, opt-1e-9)
		}
		_, err := Sequential(c, c.Len()+1)
		assert.Error(t, err)
	}
}

// TestBestSequentialToy: on the toy chain no segment count fits 90 MiB (the best, 2 segments,
// peaks at 91.66 MiB), while rotor's optimum there is 47.42 ms; with 92 MiB two segments run in
// 43.62 ms.
func TestBestSequentialToy(t *testing.T) {
	c := instances.Toy()
	_, ok, err := BestSequential(c, instances.ToyBudget)
	require.NoError(t, err)
	assert.False(t, ok)
	best, ok, err := BestSequential(c, 92<<20)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, 2, best.Segments)
	assert.InDelta(t, 43.62e-3, best.Makespan, 1e-12)
	assert.InDelta(t, 91.66, float64(best.Peak)/(1<<20), 0.005)
}
