//go:build highs

package combinedlb_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	hact "github.com/memsched/memsched/heuristics/actoffload"
	"github.com/memsched/memsched/heuristics/checkpoint"
	"github.com/memsched/memsched/instances"
	act "github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/lever/rematoffload"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/combinedlb"
	"github.com/memsched/memsched/verify"
	"github.com/memsched/memsched/verify/oracle"
)

// TestBelowEverySchedule: on random tiny chains (150; 500 with MEMSCHED_COMBINEDLB_FULL=1,
// about a minute) (tinyChain) at a budget drawn between the
// largest single operation and the store-all peak and β ∈ [1, 4] B/s, the relaxation MILP
// solved by HiGHS is optimal and its bound is
//   - ≤ the strict makespan of every schedule the combined lever's strategies build (pofo in
//     bytes, remat-then-offload, offload-then-remat), each validated by verify/combined;
//   - ≤ the rematerialization optimum (the exhaustive oracle of 004's model) and so ≤ C_MP;
//   - ≤ the activation-offloading optimum (001's Problem 1 by the exact search);
//   - "infeasible" only where none of them has a schedule;
//   - the same at GiB scale (sizes × 2³⁰, β × 2³⁰);
//
// and it is counted against Σ(u_f+u_b) where the store-all sequence does not fit.
func TestBelowEverySchedule(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 2026))
	chains := 150
	if os.Getenv("MEMSCHED_COMBINEDLB_FULL") == "1" {
		chains = 500
	} else if testing.Short() {
		chains = 40
	}
	var above, forced, compared, infeasible int
	var gain float64
	s := highs(t)
	for k := 0; k < chains; k++ {
		c := instances.RandomTiny(r, k)
		sa, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
		require.NoError(t, err)
		peak := sa.Peak
		lo := verify.MinBudget(c)
		budget := lo + r.Int64N(max(1, peak-lo+1))
		beta := float64(1 + r.IntN(4))
		name := fmt.Sprintf("chain %d (M = %d, β = %g): %+v", k, budget, beta, c)
		verified := math.Inf(1)
		for _, st := range rematoffload.Strategies {
			out, err := st.Run(c, budget, beta, rematoffload.Options{Exact: true, Slots: 64})
			require.NoError(t, err, "%s %s", name, st.Name)
			if out.Feasible {
				verified = math.Min(verified, out.Report.Makespan)
				compared++
			}
		}
		_, remat, rematOK, err := oracle.Remat(c, budget, verify.RematOptions{})
		require.NoError(t, err)
		if rematOK {
			verified = math.Min(verified, remat)
		}
		if p, err := act.FromChain(c, budget, beta); err == nil {
			if e, st, err := hact.Exact(p, hact.ExactOptions{}); err == nil && st == hact.Optimal && e.Feasible {
				verified = math.Min(verified, e.Makespan())
			}
		}
		b, err := combinedlb.Solve(context.Background(), s, c, budget, beta, milp.Params{}, math.NaN(), 0)
		require.NoError(t, err, name)
		require.Equal(t, milp.Optimal, b.Status, name)
		if math.IsInf(b.Value, 1) {
			infeasible++
			assert.True(t, math.IsInf(verified, 1), "%s: relaxation infeasible, a schedule of %v validates", name, verified)
			continue
		}
		if !math.IsInf(verified, 1) {
			assert.LessOrEqual(t, b.Value, verified*(1+1e-9), "%s: bound above a verified schedule", name)
		}
		big, err := combinedlb.Solve(context.Background(), s, c.Scaled(1<<30), budget<<30, beta*(1<<30), milp.Params{}, math.NaN(), 0)
		require.NoError(t, err)
		assert.InDelta(t, b.Value, big.Value, 1e-7*math.Max(1, b.Value), "%s: GiB scale", name)
		if budget < peak {
			forced++
			if b.Value > b.SumU*(1+1e-9) {
				above++
				gain += b.Value/b.SumU - 1
			}
		}
	}
	t.Logf("%d chains, %d strategy schedules compared, %d infeasible; where store-all does not fit (%d), the bound is above Σu on %d (mean +%.1f %%)",
		chains, compared, infeasible, forced, above, 100*gain/math.Max(1, float64(above)))
	assert.Greater(t, above, forced/4)
}
