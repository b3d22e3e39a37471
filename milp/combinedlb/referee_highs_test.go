//go:build highs

package combinedlb_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/heuristics/checkpoint"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/combinedlb"
	"github.com/memsched/memsched/verify"
	"github.com/memsched/memsched/verify/oracle"
)

// TestBelowTheExactOptimum: the relaxation MILP's bound against the exact optimum of the strict
// combined model (oracle.Strict, the exhaustive search), not only against the schedules the
// strategies find (TestBelowEverySchedule): on random tiny chains at byte scale, at GiB scale
// and with real durations (each × 0.0722211… and a random factor, β about 12 GB/s: float
// seconds without a coarse tick), it is at most the optimum, and "infeasible" only where
// nothing fits. 40 chains (120 points); MEMSCHED_COMBINEDLB_FULL=1: 300 (900 points, about
// two minutes: never above, at the optimum on 676).
func TestBelowTheExactOptimum(t *testing.T) {
	chains := 40
	if os.Getenv("MEMSCHED_COMBINEDLB_FULL") == "1" {
		chains = 300
	} else if testing.Short() {
		chains = 10
	}
	r := rand.New(rand.NewPCG(29, 2026))
	s := highs(t)
	var pts, tight int
	for k := 0; k < chains; k++ {
		c := instances.RandomTiny(r, k)
		sa, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
		require.NoError(t, err)
		lo := verify.MinBudget(c)
		budget := lo + r.Int64N(max(1, sa.Peak-lo+1))
		beta := float64(1 + r.IntN(4))
		for v := 0; v < 3; v++ {
			cc, b, bb := c, budget, beta
			if v > 0 {
				cc, b, bb = c.Scaled(1<<30), budget<<30, beta*(1<<30)
			}
			if v == 2 {
				cc, bb = instances.RealDurations(cc, bb, rand.New(rand.NewPCG(uint64(k), 7)))
			}
			name := fmt.Sprintf("chain %d v%d (M = %d, β = %g): %+v", k, v, b, bb, cc)
			ref, err := oracle.Strict(cc, b, bb, oracle.StrictOptions{})
			require.NoError(t, err, name)
			lb, err := combinedlb.Solve(context.Background(), s, cc, b, bb, milp.Params{}, math.NaN(), 0)
			require.NoError(t, err, name)
			require.Equal(t, milp.Optimal, lb.Status, name)
			if math.IsInf(lb.Value, 1) {
				require.False(t, ref.Feasible, "%s: the relaxation is infeasible, the optimum %s", name, ref.Makespan.RatString())
			}
			if !ref.Feasible {
				continue
			}
			pts++
			opt, _ := ref.Makespan.Float64()
			if lb.Value > opt*(1+1e-9) {
				t.Errorf("%s: relaxation %.12g above the optimum %.12g", name, lb.Value, opt)
			}
			if lb.Value >= opt*(1-1e-9) {
				tight++
			}
		}
	}
	t.Logf("%d chains at three scales: %d feasible points, the relaxation at the optimum on %d", chains, pts, tight)
}
