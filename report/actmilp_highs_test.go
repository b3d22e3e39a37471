//go:build highs

package report

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/dp"
	heur "github.com/memsched/memsched/heuristics/actoffload"
	act "github.com/memsched/memsched/instances/actoffload"
	_ "github.com/memsched/memsched/milp/highs"
)

// TestCertifyActMILP: on the first five seeded random instances (act.Random, 5–7 operations,
// GiB scale) where the relaxations (Prop. 3, fractional, interruptible, the staircase, the peak split) stay below the exact
// search's optimum, certify's MILP proves that optimum within its time limit — the bound row
// says MILP, optimal, gap 0, exact — and the lever is optimal by it; its MILP-guided row is
// verified at the optimum. The event search, which proves these first, is left out here so that
// the MILP's path runs (TestCertifyActEvents covers it).
func TestCertifyActMILP(t *testing.T) {
	skipActEventSearch = true
	defer func() { skipActEventSearch = false }()
	forActGaps(t, certifyActMILP)
}

// TestCertifyActEvents: on the same instances, certify's event search proves the optimum before
// the MILP runs — an exact bound of kind exhaustive search at the optimum, the lever optimal by
// it, and no MILP bound (nothing left to certify).
func TestCertifyActEvents(t *testing.T) {
	forActGaps(t, func(t *testing.T, p *act.Problem, target float64) {
		in := Input{Chain: p.ToChain("a3"), Budget: p.MGPU, Bandwidth: p.Beta, TimeLimit: 30 * time.Second, Solver: "highs"}
		lr, err := ActOffload{}.Run(context.Background(), in)
		require.NoError(t, err)
		Summarize(&lr)
		var ev *Bound
		for i, b := range lr.Bounds {
			assert.NotEqual(t, MILP, b.Kind, "the MILP ran after the optimum was proven")
			if b.Kind == Exhaustive && b.Exact {
				ev = &lr.Bounds[i]
			}
		}
		require.NotNil(t, ev, "bounds %+v", lr.Bounds)
		assert.InDelta(t, target, ev.Value, 1e-9*target)
		assert.Equal(t, ev.Name, lr.BestBoundBy)
		assert.True(t, lr.Optimal)
	})
}

// forActGaps calls f on the first five seeded random instances (act.Random, 5–7 operations,
// GiB scale) where the relaxations stay below the exact search's optimum, with that optimum.
func forActGaps(t *testing.T, f func(*testing.T, *act.Problem, float64)) {
	r := rand.New(rand.NewPCG(3, 7))
	for found := 0; found < 5; {
		p := act.Random(r, 5+r.IntN(3), 1<<30)
		e, st, err := heur.Exact(p, heur.ExactOptions{})
		require.NoError(t, err)
		bounds, _, err := ActBounds(p, true, dp.ActOptions{})
		require.NoError(t, err)
		lb := 0.0
		for _, b := range bounds {
			lb = math.Max(lb, b.Value)
		}
		if st == heur.Optimal && e.Feasible {
			if b, _ := ActStaircase(p, e.Makespan(), false, nil); b != nil {
				lb = math.Max(lb, b.Value) // with every backward pass, as certify runs it
			}
		}
		if sp, err := p.Split(act.SplitOptions{}); err == nil {
			lb = math.Max(lb, sp.Bound) // the split strategy's bound, as certify runs it
		}
		if st != heur.Optimal || !e.Feasible || lb >= e.Makespan()*(1-1e-6) {
			continue
		}
		found++
		f(t, p, e.Makespan())
	}
}

func certifyActMILP(t *testing.T, p *act.Problem, target float64) {
	t.Helper()
	in := Input{Chain: p.ToChain("a3"), Budget: p.MGPU, Bandwidth: p.Beta, TimeLimit: 30 * time.Second, Solver: "highs"}
	lr, err := ActOffload{}.Run(context.Background(), in)
	require.NoError(t, err)
	Summarize(&lr)
	var milpBound *Bound
	for i, b := range lr.Bounds {
		if b.Kind == MILP {
			milpBound = &lr.Bounds[i]
		} else {
			assert.Less(t, b.Value, target*(1-1e-6), "%s alone would certify it", b.Name)
		}
	}
	require.NotNil(t, milpBound, "notes: %v, bounds %+v, rows %+v", lr.Notes, lr.Bounds, lr.Rows)
	assert.Equal(t, "optimal", milpBound.Status)
	assert.True(t, milpBound.Exact)
	assert.InDelta(t, target, milpBound.Value, 1e-6*target)
	assert.Equal(t, milpBound.Name, lr.BestBoundBy)
	assert.True(t, lr.Optimal)
	var row *Row
	for i, r := range lr.Rows {
		if r.Strategy == "milp" {
			row = &lr.Rows[i]
		}
	}
	require.NotNil(t, row)
	assert.True(t, row.Verified)
	assert.InDelta(t, target, row.Makespan, 1e-9*target)
}
