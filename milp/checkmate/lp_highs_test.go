//go:build highs

package checkmate_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/checkmate"
	"github.com/memsched/memsched/verify/graphsim"
)

// TestLPBoundAndRounding: on the hand DAGs and 20 random DAGs at every budget, the certified LP
// bound is ≤ the exhaustive optimum (and ≤ the solver's LP value), and the rounded schedule,
// when it fits, replays and is ≥ the optimum.
func TestLPBoundAndRounding(t *testing.T) {
	s := solver(t)
	var graphs []*instances.Graph
	for _, mk := range []func(int64) *instances.Graph{diamond, skip, branches, unet} {
		graphs = append(graphs, mk(1<<20))
	}
	r := rand.New(rand.NewPCG(5, 11))
	for len(graphs) < 24 {
		graphs = append(graphs, graphsim.RandomGraph(r, 3+r.IntN(5), 1<<20))
	}
	rounded, total := 0, 0
	for _, g := range graphs {
		for b := int64(0); b <= storeAllPeak(g); b += 1 << 20 {
			_, opt, ok := graphsim.Staged(g, b)
			a, _, err := checkmate.SolveLP(context.Background(), s, g, b, milp.Params{})
			require.NoError(t, err)
			if !ok {
				continue
			}
			total++
			require.Equal(t, milp.Optimal, a.LPStatus)
			assert.LessOrEqual(t, a.Bound, opt+1e-12, "%s at %d", g.Name, b)
			assert.LessOrEqual(t, a.Bound, a.LPValue+1e-12)
			assert.False(t, math.IsInf(a.Bound, 0), "HiGHS gives duals: the bound is finite")
			if a.Schedule != nil {
				rounded++
				res, err := graphsim.Replay(g, a.Schedule, b)
				require.NoError(t, err)
				assert.Equal(t, a.Cost, res.Cost)
				assert.GreaterOrEqual(t, a.Cost, opt-1e-12)
			} else {
				assert.Greater(t, a.RoundedPeak, b)
			}
		}
	}
	t.Logf("rounding fit the budget in %d of %d feasible cases", rounded, total)
	assert.Positive(t, rounded)
}
