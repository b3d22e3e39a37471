//go:build highs

package weightlb_test

import (
	"context"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/highs"
	"github.com/memsched/memsched/milp/weightlb"
)

// TestGuidedVersusHeuristics (issue 10): on 200 random instances, the MILP-guided schedule (the
// bound's incumbent selection through Alg. 2) is validated and never below the bound; the test
// reports how often it beats the best heuristic and the median best-schedule / bound ratio
// without and with it.
func TestGuidedVersusHeuristics(t *testing.T) {
	s, err := highs.New()
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(200, 10))
	var before, after []float64
	beats, ties, guided := 0, 0, 0
	for k := 0; k < 200; k++ {
		p := propertyInstance(r, k)
		cert, err := weightlb.LowerBound(context.Background(), p, weightlb.Options{Solvers: []milp.Solver{s}, Params: milp.Params{RelGap: 1e-9}})
		require.NoError(t, err)
		_, _, best, ok := weightlb.BestSchedule(p)
		require.True(t, ok || cert.Infeasible, "instance %d", k)
		if !ok {
			continue
		}
		b := best.Period
		before = append(before, b/cert.Value)
		if _, g, err := weightlb.Guided(p, cert); err == nil {
			guided++
			require.GreaterOrEqual(t, g.Period, cert.Value*(1-1e-9), "instance %d", k)
			switch {
			case g.Period < b*(1-1e-9):
				beats++
				b = g.Period
			case g.Period <= b*(1+1e-9):
				ties++
			}
		}
		after = append(after, b/cert.Value)
	}
	med := func(x []float64) float64 { sort.Float64s(x); return x[len(x)/2] }
	mx := func(x []float64) float64 { sort.Float64s(x); return x[len(x)-1] }
	var hb, ha []float64 // instances where the heuristics leave a gap
	for i := range before {
		if before[i] > 1+1e-9 {
			hb, ha = append(hb, before[i]), append(ha, after[i])
		}
	}
	t.Logf("%d instances: MILP-guided schedule on %d, strictly better than every heuristic on %d, tied on %d; best/bound median %.4f → %.4f, max %.4f → %.4f; on the %d instances with a gap: median %.4f → %.4f",
		len(before), guided, beats, ties, med(before), med(after), mx(before), mx(after), len(hb), med(hb), med(ha))
}
