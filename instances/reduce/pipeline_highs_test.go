//go:build highs

package reduce

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/dp/pipepack"
	pl "github.com/memsched/memsched/instances/pipeline"
	"github.com/memsched/memsched/milp"
	_ "github.com/memsched/memsched/milp/highs"
	"github.com/memsched/memsched/milp/pipemilp"
)

// TestPipelinePartitionDecidedByMILP: the allocation MILP (period objective, 003's ILP)
// solved by HiGHS decides all 96 instances of the corpus: its proven optimum is V on every
// yes-instance (its incumbent's allocation has period V, replayed) and at least V+1 on every
// no-instance — the certified bound for any allocation exceeds V, so no order reaches it.
func TestPipelinePartitionDecidedByMILP(t *testing.T) {
	s, err := milp.Lookup("highs")
	require.NoError(t, err)
	yes3, no3, yes2, no2 := pipelineCorpus(t)
	for _, tc := range []struct {
		name string
		set  [][]int64
		yes  bool
		make func([]int64, int) (*pl.Problem, float64, error)
	}{{"3-partition yes", yes3, true, PipelineThreePartition}, {"3-partition no", no3, false, PipelineThreePartition},
		{"2-partition yes", yes2, true, PipelineTwoPartition}, {"2-partition no", no2, false, PipelineTwoPartition}} {
		for i, us := range tc.set {
			p, v, err := tc.make(us, 4)
			require.NoError(t, err)
			sol, err := pipemilp.SolveAllocation(context.Background(), []milp.Solver{s}, p, pipemilp.AllocationSolveOptions{Objective: pipemilp.Period})
			require.NoError(t, err)
			require.Equal(t, milp.Optimal, sol.Status, "%s %d", tc.name, i)
			require.NotNil(t, sol.Plan)
			if tc.yes {
				assert.InDelta(t, v, sol.Bound, 1e-6*v, "%s %d %v", tc.name, i, us)
				assert.Equal(t, v, sol.Period, "%s %d", tc.name, i)
				continue
			}
			assert.GreaterOrEqual(t, sol.Bound, (v+1)*(1-1e-9), "%s %d %v: bound %g", tc.name, i, us, sol.Bound)
			per, err := pipepack.Period(p, sol.Plan)
			require.NoError(t, err)
			assert.GreaterOrEqual(t, per, v+1)
		}
	}
}
