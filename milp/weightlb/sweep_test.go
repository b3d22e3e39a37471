package weightlb_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	heur "github.com/memsched/memsched/heuristics/offload"
	"github.com/memsched/memsched/instances/offload"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/weightlb"
)

// sweep checks, on n random instances, that the MILP's bound never exceeds the period of any
// validated schedule — L2L, Greedy, Greedy*, and the exhaustive search over selections for
// L ≤ 5 (SPEC §3: a bound above a valid schedule is a bug, never noise).
func sweep(t *testing.T, s milp.Solver, n, maxL int, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 9))
	for k := 0; k < n; k++ {
		p := offload.Random(r, 1+r.IntN(maxL))
		_, l2l, err := heur.L2L(p)
		require.NoError(t, err)
		m, _, err := weightlb.Build(p, 1)
		require.NoError(t, err)
		res, err := milp.Solve(context.Background(), s, m, milp.Params{})
		require.NoError(t, err)
		require.Equal(t, milp.Optimal, res.Status, "instance %d", k)
		periods := map[string]float64{"l2l": l2l.Period}
		if _, _, g, err := heur.Greedy(p, true); err == nil {
			periods["greedy"] = g.Period
		}
		if _, _, g, err := heur.Greedy(p, false); err == nil {
			periods["greedy*"] = g.Period
		}
		if p.L() <= 5 {
			_, ex, err := heur.Exhaustive(p)
			require.NoError(t, err)
			periods["exhaustive"] = ex.Period
		}
		for name, period := range periods {
			require.LessOrEqual(t, res.Objective, period+1e-6, "instance %d: bound %g above %s's valid period %g\n%+v", k, res.Objective, name, period, p)
		}
		var sumU float64
		for _, l := range p.Layers {
			sumU += l.UF + l.UB
		}
		require.GreaterOrEqual(t, res.Objective, sumU-1e-6)
	}
}
