package reduce_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/instances/reduce"
	"github.com/memsched/memsched/verify"
	"github.com/memsched/memsched/verify/oracle"
)

// TestRematTwoPartition: on yes-instances the optimal makespan (floating DP, exact) is exactly
// 4V + U_B, on no-instances it is larger; for small ones the exhaustive oracle agrees.
func TestRematTwoPartition(t *testing.T) {
	cases := [][]int64{
		{1, 1}, {1, 2, 3}, {3, 1, 1, 2, 2, 1}, {2, 2, 3, 5}, {5, 4, 3, 2, 1, 1},
		{1, 3}, {2, 4, 8}, {1, 1, 4}, {3, 3, 3, 5}, {6, 1, 1, 2},
	}
	r := rand.New(rand.NewPCG(4, 2))
	for len(cases) < 40 {
		n := 2 + r.IntN(6)
		xs := make([]int64, n)
		var sum int64
		for i := range xs {
			xs[i] = 1 + r.Int64N(9)
			sum += xs[i]
		}
		if sum%2 == 1 {
			xs[0]++
		}
		cases = append(cases, xs)
	}
	yes, no := 0, 0
	for _, xs := range cases {
		c, budget, target, err := reduce.RematTwoPartition(xs)
		require.NoError(t, err)
		res, err := dp.SolveFloating(c, budget, dp.Options{Exact: true})
		require.NoError(t, err)
		if !res.Feasible {
			// Some x_k > 1.5V: B^{2k-1} alone needs δ + ā = 2x_k > 3V. No partition exists.
			require.False(t, reduce.SubsetHalf(xs), "%v", xs)
			no++
			continue
		}
		if reduce.SubsetHalf(xs) {
			yes++
			assert.Equal(t, target, res.Makespan, "yes-instance %v", xs)
		} else {
			no++
			assert.Greater(t, res.Makespan, target, "no-instance %v", xs)
		}
		if c.Len() <= 10 {
			_, opt, ok, err := oracle.Remat(c, budget, verify.RematOptions{})
			require.NoError(t, err)
			require.True(t, ok)
			assert.Equal(t, opt, res.Makespan, "oracle on %v", xs)
		}
	}
	t.Logf("%d yes-instances, %d no-instances", yes, no)
	assert.Greater(t, yes, 5)
	assert.Greater(t, no, 5)
}

func TestRematTwoPartitionRejects(t *testing.T) {
	// The last two sum past 2^60 B (9V of sizes in the chain; the second wraps int64 unchecked).
	for _, xs := range [][]int64{nil, {1, 2}, {0, 2}, {-1, 3}, {1 << 58, 1 << 58}, {math.MaxInt64, math.MaxInt64 - 1, 3}} {
		_, _, _, err := reduce.RematTwoPartition(xs)
		assert.Error(t, err, "%v", xs)
	}
}
