package pipeline

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	pl "github.com/memsched/memsched/instances/pipeline"
)

// TestBoundsBelowEveryPlan: on 300 random tiny instances (both classes), every strategy's plan
// replays, the exact one is at most every contiguous plan's, and every bound is at most every
// feasible plan of its scope (SPEC §5: nothing printed stands against what verify accepted).
func TestBoundsBelowEveryPlan(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 3))
	for k := range 300 {
		p := pl.RandomTiny(r, k)
		o := Options{Remat: k%2 == 0}
		var outs []*Outcome
		for _, st := range Strategies {
			out, err := st.Run(p, o)
			require.NoError(t, err, "%d %s", k, st.Name)
			outs = append(outs, out)
		}
		exact := outs[0]
		require.True(t, exact.Complete)
		bounds, _ := Bounds(p, o, exact)
		for _, out := range outs {
			bounds = append(bounds, StrategyBounds(out)...)
		}
		for _, out := range outs[1:] {
			// Non-contiguous plans (packing, milp-alloc) may beat the contiguous optimum.
			if out.Feasible && out.Plan.Contiguous() && (out.Plan.Actions == nil) {
				require.True(t, exact.Feasible, "%d: %s fits, exact does not", k, out.Name)
				require.LessOrEqual(t, exact.Makespan, out.Makespan, "%d: exact above %s", k, out.Name)
			}
		}
		for _, b := range bounds {
			for _, out := range outs {
				if out.Feasible && (!b.ContiguousOnly() || out.Plan.Contiguous()) {
					require.LessOrEqual(t, b.Value, out.Makespan*(1+1e-12), "%d: bound %s above %s's plan", k, b.Name, out.Name)
				}
			}
		}
	}
}

// TestRunAll: the outcomes come in the order asked for, each the strategy's own (the same plan
// and makespan as run alone: without a deadline nothing is stopped), and an unknown name is an
// error before anything runs.
func TestRunAll(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 4))
	names := []string{"pipedream", "exact", "uniform", "balanced"}
	for k := range 40 {
		p := pl.RandomTiny(r, k)
		o := Options{Remat: k%2 == 0}
		outs, err := RunAll(p, names, o)
		require.NoError(t, err)
		require.Len(t, outs, len(names))
		for i, n := range names {
			require.Equal(t, n, outs[i].Name)
			st, _ := Lookup(n)
			alone, err := st.Run(p, o)
			require.NoError(t, err)
			require.Equal(t, alone.Feasible, outs[i].Feasible, "%d %s", k, n)
			if alone.Feasible {
				require.Equal(t, alone.Makespan, outs[i].Makespan, "%d %s", k, n)
				require.Equal(t, alone.Plan.Cuts(), outs[i].Plan.Cuts(), "%d %s", k, n)
			}
			require.Equal(t, alone.Why(), outs[i].Why(), "%d %s", k, n)
		}
	}
	_, err := RunAll(pl.RandomTiny(r, 0), []string{"uniform", "nope"}, Options{})
	require.ErrorContains(t, err, `unknown strategy "nope"`)
}
