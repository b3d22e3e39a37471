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
	_ "github.com/memsched/memsched/milp/highs"
	"github.com/memsched/memsched/verify/graphsim"
)

func solver(t testing.TB) milp.Solver {
	s, err := milp.Lookup("")
	require.NoError(t, err)
	return s
}

// storeAllPeak is the peak of computing every node once in order and freeing at last use.
func storeAllPeak(g *instances.Graph) int64 {
	var total int64 = g.Fixed
	for _, n := range g.Nodes {
		total += n.Size + n.Temp
	}
	return total
}

// sweep compares the MILP with the exhaustive staged optimum at every budget from 0 to the sum
// of all sizes, in steps of unit bytes.
func sweep(t *testing.T, s milp.Solver, g *instances.Graph, unit int64) (feasible int) {
	for b := int64(0); b <= storeAllPeak(g); b += unit {
		_, want, ok := graphsim.Staged(g, b)
		sol, _, err := checkmate.Solve(context.Background(), s, g, b, milp.Params{})
		require.NoError(t, err, "%s at %d", g.Name, b)
		if !ok {
			assert.Equal(t, milp.Infeasible, sol.Status, "%s at %d: exhaustive finds nothing", g.Name, b)
			continue
		}
		feasible++
		require.Equal(t, milp.Optimal, sol.Status, "%s at %d", g.Name, b)
		assert.InDelta(t, want, sol.Cost, 1e-9, "%s at %d", g.Name, b)
		assert.LessOrEqual(t, sol.Peak, b)
		assert.LessOrEqual(t, sol.Bound, sol.Cost+1e-9)
	}
	return feasible
}

// TestHandDAGs: diamond, skip connection, two branches joining and a U-Net-like graph, in bytes
// and in GiB; the MILP's optimum equals the exhaustive staged search at every budget.
func TestHandDAGs(t *testing.T) {
	s := solver(t)
	for _, mk := range []func(int64) *instances.Graph{diamond, skip, branches, unet} {
		for _, unit := range []int64{1, 1 << 30} {
			g := mk(unit)
			t.Run(g.Name, func(t *testing.T) {
				assert.Positive(t, sweep(t, s, g, unit))
			})
		}
	}
}

// TestHandOptima: the hand-checked optima of graphs_test.go, in MiB; the exhaustive staged
// search agrees.
func TestHandOptima(t *testing.T) {
	s := solver(t)
	for _, c := range handOptima {
		g := c.g(1 << 20)
		sol, _, err := checkmate.Solve(context.Background(), s, g, c.budget<<20, milp.Params{})
		require.NoError(t, err, c.reason)
		_, ex, _ := graphsim.Staged(g, c.budget<<20)
		assert.Equal(t, c.cost, ex, c.reason)
		if math.IsInf(c.cost, 1) {
			assert.Equal(t, milp.Infeasible, sol.Status, c.reason)
			continue
		}
		assert.Equal(t, milp.Optimal, sol.Status, c.reason)
		assert.Equal(t, c.cost, sol.Cost, c.reason)
	}
}

// TestRandomDAGs: 30 random DAGs of 3–7 nodes with transient memory, every budget.
func TestRandomDAGs(t *testing.T) {
	s := solver(t)
	r := rand.New(rand.NewPCG(2020, 11))
	n := 30
	if testing.Short() {
		n = 8
	}
	for it := 0; it < n; it++ {
		g := graphsim.RandomGraph(r, 3+r.IntN(5), 1)
		sweep(t, s, g, 1)
	}
}
