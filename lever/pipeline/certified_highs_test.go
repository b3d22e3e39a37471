//go:build highs

package pipeline

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	pl "github.com/memsched/memsched/instances/pipeline"
	_ "github.com/memsched/memsched/milp/highs"
)

// TestStrategiesWithMILPs: with HiGHS compiled in, on 60 random tiny instances (byte and GiB
// scale, both classes), the MILP strategies run and certify their bounds: the contiguous
// MILP storing everything has the exact planner's optimum (and, relaxed for recomputation, a
// bound at most it), the allocation MILP's bound for every allocation is at most every plan —
// contiguous or packing's non-contiguous ones — and every contiguous-only bound is at most
// every contiguous plan.
func TestStrategiesWithMILPs(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 11))
	milps := 0
	for k := range 60 {
		p := pl.RandomTiny(r, k)
		if k%3 == 1 {
			p = p.Scaled(1 << 30)
		}
		o := Options{Remat: k%2 == 0}
		outs := map[string]*Outcome{}
		var bounds []Bound
		for _, st := range Strategies {
			out, err := st.Run(p, o)
			require.NoError(t, err, "%d %s", k, st.Name)
			outs[st.Name] = out
			bounds = append(bounds, StrategyBounds(out)...)
		}
		more, _ := Bounds(p, o, outs["exact"])
		bounds = append(bounds, more...)
		ex, mc := outs["exact"], outs["milp"]
		require.True(t, ex.Complete)
		if !o.Remat {
			require.Equal(t, ex.Feasible, mc.Feasible, "%d: exact %v, milp %v (%s)", k, ex.Feasible, mc.Feasible, mc.Note)
			if ex.Feasible {
				assert.InEpsilon(t, ex.Makespan, mc.Makespan, 1e-9, "%d", k)
				assert.InEpsilon(t, ex.Makespan, mc.Bound, 1e-6, "%d", k)
			} else {
				assert.True(t, math.IsInf(mc.Bound, 1), "%d", k)
			}
		}
		for _, name := range []string{"milp", "milp-alloc"} {
			bs := StrategyBounds(outs[name]) // already read: nothing left
			assert.Empty(t, bs)
		}
		n := 0
		for _, b := range bounds {
			if b.Name == "contiguous MILP" || b.Name == "allocation MILP" {
				n++
			}
			for name, out := range outs {
				if out.Feasible && (!b.ContiguousOnly() || out.Plan.Contiguous()) {
					assert.LessOrEqual(t, b.Value, out.Makespan*(1+1e-9), "%d: bound %s (%s) above %s's plan %v", k, b.Name, b.Scope, name, out.Plan)
				}
			}
		}
		assert.Equal(t, 2, n, "%d: the two MILP bounds", k)
		milps += n
	}
	assert.Equal(t, 120, milps)
}
