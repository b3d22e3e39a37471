//go:build highs

package checkmate_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/heuristics/checkpoint"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/checkmate"
	"github.com/memsched/memsched/verify"
	"github.com/memsched/memsched/verify/oracle"
)

// storeAllChainPeak is the peak of F_all^1 … F_all^{L+1} B^{L+1} … B^1.
func storeAllChainPeak(t testing.TB, c *instances.Chain) int64 {
	rep, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
	require.NoError(t, err)
	return rep.Peak
}

// chainBudgets returns k budgets spread evenly from lo to hi, both included.
func chainBudgets(lo, hi int64, k int) []int64 {
	if hi <= lo {
		return []int64{lo}
	}
	var out []int64
	for i := 0; i < k; i++ {
		b := lo + (hi-lo)*int64(i)/int64(k-1)
		if len(out) == 0 || b != out[len(out)-1] {
			out = append(out, b)
		}
	}
	return out
}

// exactChain draws the i-th chain of the sweep: 2–7 stages (loss included), ā ≥ a, overheads
// and δ drawn independently on every other chain, a loss gradient of any size; even chains in
// small integer bytes and times, odd ones in GiB (sizes up to 8 GiB, times up to 50 ms).
func exactChain(r *rand.Rand, i int) *instances.Chain {
	p := instances.RandomParams{Stages: 2 + r.IntN(6), WithABar: r.IntN(4) != 0, WithOverheads: r.IntN(2) == 0, WithDelta: r.IntN(2) == 0}
	if i%2 == 0 {
		p.MaxSize, p.MaxTime, p.Integer = 8, 5, true
	} else {
		p.MaxSize, p.MaxTime = 8<<30, 0.05
	}
	return instances.Random(r, p)
}

// TestChainExactEqualsOracle: on 100 seeded random chains (≤ 7 stages, byte and GiB scale) at 5
// budgets from verify.MinBudget to the store-all peak, the chain-exact optimum equals the
// exhaustive oracle of 004's model (verify/oracle, no deletes), its sequence replays within the
// budget, and the LP relaxation's safe bound (milp.LPBound) is ≤ the optimum. Under the smallest
// feasible budget the model is infeasible (one byte under at byte scale, 10 ppm under in GiB).
func TestChainExactEqualsOracle(t *testing.T) {
	s := solver(t)
	r := rand.New(rand.NewPCG(2026, 11))
	n := 100
	if testing.Short() {
		n = 20
	}
	solves, strictLP := 0, 0
	for it := 0; it < n; it++ {
		c := exactChain(r, it)
		lo := verify.MinBudget(c)
		under := lo - 1
		if it%2 == 1 {
			// A byte is below the solver's feasibility tolerance in GiB units (SPEC §5).
			under = lo - lo/100000
		}
		budgets := append([]int64{under}, chainBudgets(lo, storeAllChainPeak(t, c), 5)...)
		for _, b := range budgets {
			_, want, ok, err := oracle.Remat(c, b, verify.RematOptions{})
			require.NoError(t, err)
			sol, f, err := checkmate.SolveChainExact(context.Background(), s, c, b, milp.Params{}, nil)
			require.NoError(t, err, "chain %d budget %d", it, b)
			solves++
			if !ok {
				require.Equal(t, milp.Infeasible, sol.Status, "chain %d budget %d", it, b)
				continue
			}
			require.Equal(t, milp.Optimal, sol.Status, "chain %d budget %d", it, b)
			require.InDelta(t, want, sol.Makespan, 1e-9*math.Max(1, want), "chain %d budget %d: %v", it, b, sol.Sequence)
			assert.LessOrEqual(t, sol.Peak, b)
			lp, err := milp.LPBound(context.Background(), s, f.Model, milp.Params{})
			require.NoError(t, err)
			require.Equal(t, milp.Optimal, lp.Status)
			bound := lp.Bound * f.Units.Time
			assert.LessOrEqual(t, bound, sol.Makespan*(1+1e-12), "chain %d budget %d", it, b)
			if bound < sol.Makespan*(1-1e-9) {
				strictLP++
			}
		}
	}
	t.Logf("%d chains, %d solves; the LP bound is strictly below the optimum in %d", n, solves, strictLP)
}

// TestChainExactToy: 004 Table 2's toy chain at 90 MiB gives the published 47.42 ms (peak
// 86.75 MiB, §3.2), the plain Checkmate graph model's free-delete 42.78 ms being a different
// problem; the LP bound is below it.
func TestChainExactToy(t *testing.T) {
	s := solver(t)
	c := instances.Toy()
	sol, f, err := checkmate.SolveChainExact(context.Background(), s, c, instances.ToyBudget, milp.Params{}, nil)
	require.NoError(t, err)
	require.Equal(t, milp.Optimal, sol.Status)
	t.Logf("toy 90 MiB: %.4f ms, peak %.2f MiB, %v; %d rows, %d columns", sol.Makespan*1e3, float64(sol.Peak)/(1<<20), sol.Sequence, f.Model.NumRows(), f.Model.NumVars())
	assert.InDelta(t, 47.42e-3, sol.Makespan, 0.5e-5, "004 §3.2")
	assert.InDelta(t, 86.75, float64(sol.Peak)/(1<<20), 0.005)
	_, want, ok, err := oracle.Remat(c, instances.ToyBudget, verify.RematOptions{})
	require.NoError(t, err)
	require.True(t, ok)
	assert.InDelta(t, want, sol.Makespan, 1e-12)
	lp, err := milp.LPBound(context.Background(), s, f.Model, milp.Params{})
	require.NoError(t, err)
	t.Logf("LP bound %.4f ms", lp.Bound*f.Units.Time*1e3)
	assert.LessOrEqual(t, lp.Bound*f.Units.Time, sol.Makespan)
}
