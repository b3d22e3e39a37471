//go:build highs

package weightlb_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances/reduce"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/highs"
	"github.com/memsched/memsched/milp/weightlb"
	"github.com/memsched/memsched/verify/periodic"
)

// TestBoundBelowSchedulesHiGHS: on 200 random instances with L ≤ 5, the MILP bound (solved to
// optimality by HiGHS) never exceeds the validated L2L period and never falls below Σu.
func TestBoundBelowSchedulesHiGHS(t *testing.T) {
	s, err := highs.New()
	require.NoError(t, err)
	sweep(t, s, 200, 5, 2)
}

// TestThreePartitionBound: on 002 Thm 1's yes-instances the bound equals the certificate's
// period 2m (= Σu, no idle), and the certificate validates with that period.
func TestThreePartitionBound(t *testing.T) {
	s, err := highs.New()
	require.NoError(t, err)
	for _, tp := range []struct {
		xs     []int64
		groups [][]int
	}{
		{[]int64{4, 5, 6, 4, 5, 6}, [][]int{{0, 1, 2}, {3, 4, 5}}},
		{[]int64{5, 6, 9, 6, 7, 7, 8, 6, 6}, [][]int{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}}},
	} {
		p, cert, err := reduce.WeightsThreePartition(tp.xs, tp.groups)
		require.NoError(t, err)
		rep, err := periodic.Validate(p, cert)
		require.NoError(t, err)
		m, _, err := weightlb.Build(p, 1)
		require.NoError(t, err)
		res, err := milp.Solve(context.Background(), s, m, milp.Params{})
		require.NoError(t, err)
		require.Equal(t, milp.Optimal, res.Status)
		assert.InDelta(t, rep.Period, res.Objective, 1e-6, "m=%d", len(tp.xs)/3)
	}
}
