package dp_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/heuristics/checkpoint"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/verify"
	"github.com/memsched/memsched/verify/oracle"
)

// bruteLinkCredit is the link-credit relaxation over every 004 sequence (oracle.RematPhased
// with the phase budgets), its least T found by bisection on [Σu, upper].
func bruteLinkCredit(t *testing.T, c *instances.Chain, budget int64, beta, upper float64, credit []float64) float64 {
	sumU := c.ComputeTime()
	ok := func(T float64) bool {
		b := make([]int64, c.Len()+1)
		for l := 1; l <= c.Len(); l++ {
			b[l] = int64(math.Floor(float64(budget) + beta*(T-sumU+credit[l])))
		}
		_, v, feas, err := oracle.RematPhased(c, b, verify.RematOptions{})
		require.NoError(t, err)
		return feas && v <= T*(1+1e-12)
	}
	lo, hi := sumU, upper
	if ok(lo) {
		return lo
	}
	for i := 0; i < 50; i++ {
		mid := (lo + hi) / 2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// TestLinkCreditAgainstReferees: on random tiny chains (byte and GiB scale) the link-credit
// bound, built on weakly persistent sequences, equals the same relaxation over every 004
// sequence (bisection on oracle.RematPhased: 004 Lemma 4.4 with budgets that never decrease
// with time), and is at most the exact optimum of the strict combined model (oracle.Strict).
func TestLinkCreditAgainstReferees(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 17))
	chains := 400
	if testing.Short() {
		chains = 80
	}
	var solved, aboveSumU, tight int
	for k := 0; k < chains; k++ {
		c := instances.RandomTiny(r, k)
		sa, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
		require.NoError(t, err)
		lo := verify.MinBudget(c)
		budget := lo + r.Int64N(max(sa.Peak-lo, 0)+1)
		beta := float64(1 + r.IntN(4))
		name := fmt.Sprintf("chain %d (M = %d, β = %g)\n%s", k, budget, beta, describe(c))
		ref, err := oracle.Strict(c, budget, beta, oracle.StrictOptions{})
		require.NoError(t, err, name)
		if !ref.Feasible {
			continue
		}
		opt, _ := ref.Makespan.Float64()
		got, err := dp.LinkCredit(c, budget, beta, dp.LinkCreditOptions{Upper: opt})
		require.NoError(t, err, name)
		brute := bruteLinkCredit(t, c, budget, beta, opt, got.Credit)
		require.InDelta(t, brute, got.Bound, 1e-9*opt+1e-12, name)
		require.LessOrEqual(t, got.Bound, opt*(1+1e-12), name)
		if k%4 == 0 {
			g, err := dp.LinkCredit(c.Scaled(1<<30), budget<<30, beta*(1<<30), dp.LinkCreditOptions{Upper: opt})
			require.NoError(t, err, name)
			require.InDelta(t, got.Bound, g.Bound, 1e-9*opt, name)
		}
		solved++
		if got.Bound > c.ComputeTime()*(1+1e-9) {
			aboveSumU++
		}
		if got.Bound >= opt*(1-1e-9) {
			tight++
		}
	}
	t.Logf("%d chains solved: the bound above Σu on %d, at the optimum on %d", solved, aboveSumU, tight)
}
