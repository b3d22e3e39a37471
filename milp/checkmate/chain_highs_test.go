//go:build highs

package checkmate_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/checkmate"
	"github.com/memsched/memsched/verify"
	"github.com/memsched/memsched/verify/oracle"
)

// randomChain draws a chain for the oracle comparison with a zero loss gradient.
func randomChain(r *rand.Rand, abar, overheads bool) *instances.Chain {
	c := instances.Random(r, instances.RandomParams{Stages: 2 + r.IntN(5), MaxSize: 6, MaxTime: 5, Integer: true, WithABar: abar, WithOverheads: overheads})
	c.Stages[c.Len()-1].Delta = 0
	return c
}

// TestChainPlainEqualsFreeDeleteOracle: on 100 seeded random chains (≤ 6 stages + loss) with
// ā = a, at the 3 budgets from the smallest feasible up (where recomputation happens), Checkmate's optimum equals
// the free-delete oracle's (with and without overheads), is ≤ the default oracle's, and its
// schedule replays as a free-delete sequence.
func TestChainPlainEqualsFreeDeleteOracle(t *testing.T) {
	s := solver(t)
	r := rand.New(rand.NewPCG(11, 4))
	n := 100
	if testing.Short() {
		n = 10
	}
	solves := 0
	for it := 0; it < n; it++ {
		c := randomChain(r, false, it%2 == 1)
		lo, err := oracle.MinBudget(c)
		require.NoError(t, err)
		for b := lo; ; b++ {
			_, fd, okFD, err := oracle.Remat(c, b, verify.RematOptions{FreeDelete: true})
			require.NoError(t, err)
			_, nd, okND, err := oracle.Remat(c, b, verify.RematOptions{})
			require.NoError(t, err)
			sol, err := checkmate.SolveChain(context.Background(), s, c, b, milp.Params{})
			require.NoError(t, err)
			solves++
			if !okFD {
				assert.Equal(t, milp.Infeasible, sol.Status, "chain %d budget %d", it, b)
				continue
			}
			require.Equal(t, milp.Optimal, sol.Status, "chain %d budget %d", it, b)
			assert.InDelta(t, fd, sol.Makespan, 1e-9, "chain %d budget %d", it, b)
			if okND {
				assert.LessOrEqual(t, sol.Makespan, nd+1e-9)
			}
			if b >= lo+2 {
				break
			}
		}
	}
	t.Logf("%d chains, %d solves", n, solves)
}

// TestChainABarAboveOracle: with ā > a the graph keeps whole tapes, so its optimum is ≥ the
// free-delete oracle's (never below: that would be an invalid schedule).
func TestChainABarAboveOracle(t *testing.T) {
	s := solver(t)
	r := rand.New(rand.NewPCG(11, 5))
	above := 0
	for it := 0; it < 6; it++ {
		c := randomChain(r, true, true)
		lo, err := oracle.MinBudget(c)
		require.NoError(t, err)
		for b := lo; b < lo+10; b++ {
			_, fd, okFD, err := oracle.Remat(c, b, verify.RematOptions{FreeDelete: true})
			require.NoError(t, err)
			sol, err := checkmate.SolveChain(context.Background(), s, c, b, milp.Params{})
			require.NoError(t, err)
			if sol.Status != milp.Optimal {
				continue
			}
			require.True(t, okFD)
			assert.GreaterOrEqual(t, sol.Makespan, fd-1e-9)
			if sol.Makespan > fd+1e-9 {
				above++
			}
		}
	}
	t.Logf("graph optimum strictly above the oracle in %d cases", above)
}

// TestToyChain: the toy chain of 004 Table 2 at 90 MiB. The published optimum, 47.42 ms, is
// that of 004's model, where only F_∅ and B remove values; Checkmate's graph frees any output
// after its last use, which is the free-delete variant of SPEC §1, whose optimum the exhaustive
// oracle finds lower. The ILP equals the free-delete oracle and stays below 47.42 ms.
func TestToyChain(t *testing.T) {
	s := solver(t)
	c := instances.Toy()
	sol, err := checkmate.SolveChain(context.Background(), s, c, instances.ToyBudget, milp.Params{})
	require.NoError(t, err)
	require.Equal(t, milp.Optimal, sol.Status)
	t.Logf("toy 90 MiB: %.4f ms, peak %.2f MiB, %v", sol.Makespan*1e3, float64(sol.Peak)/(1<<20), sol.Sequence)
	_, fd, ok, err := oracle.Remat(c, instances.ToyBudget, verify.RematOptions{FreeDelete: true})
	require.NoError(t, err)
	require.True(t, ok)
	assert.InDelta(t, fd, sol.Makespan, 1e-9)
	_, nd, ok, err := oracle.Remat(c, instances.ToyBudget, verify.RematOptions{})
	require.NoError(t, err)
	require.True(t, ok)
	assert.InDelta(t, 47.42e-3, nd, 0.5e-5, "004 §3.2")
	assert.Less(t, sol.Makespan, nd)
}
