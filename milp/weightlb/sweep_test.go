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
// validated schedule — L2L, Greedy, Greedy*, GreedyReserve, and the exhaustive search over
// selections for L ≤ 5 (SPEC §3: a bound above a valid schedule is a bug, never noise) — and
// never falls below Σu. Every other instance has its memory cut to between the largest
// operation and offload.Random's (which leaves room for L2L), so that weights must move and the
// bound exceeds Σu on some of them.
func sweep(t *testing.T, s milp.Solver, n, maxL int, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 9))
	aboveSum, schedules, worst := 0, 0, 1.0
	for k := 0; k < n; k++ {
		p := offload.Random(r, 1+r.IntN(maxL))
		if k%2 == 1 {
			var maxOp int64
			for i := 1; i <= p.L(); i++ {
				maxOp = max(maxOp, p.OpMemory(i, true))
			}
			p.MGPU = maxOp + r.Int64N(p.MGPU-maxOp)
		}
		m, v, err := weightlb.Build(p)
		require.NoError(t, err)
		res, err := milp.Solve(context.Background(), s, m, milp.Params{})
		require.NoError(t, err)
		require.Equal(t, milp.Optimal, res.Status, "instance %d", k)
		bound := res.Objective * v.Units.Time
		periods := map[string]float64{}
		if _, l2l, err := heur.L2L(p); err == nil {
			periods["l2l"] = l2l.Period
		} else {
			require.Equal(t, 1, k%2, "L2L fits offload.Random's memory: %v", err)
		}
		if _, _, g, err := heur.Greedy(p, true); err == nil {
			periods["greedy"] = g.Period
		}
		if _, _, g, err := heur.Greedy(p, false); err == nil {
			periods["greedy*"] = g.Period
		}
		if _, _, g, err := heur.GreedyReserve(p, true); err == nil {
			periods["greedy+reserve"] = g.Period
		}
		if p.L() <= 5 {
			_, ex, err := heur.Exhaustive(p)
			require.NoError(t, err, "some selection schedules: the largest operation fits")
			periods["exhaustive"] = ex.Period
		}
		best := 0.0
		for name, period := range periods {
			require.LessOrEqual(t, bound, period+1e-6, "instance %d: bound %g above %s's valid period %g\n%+v", k, bound, name, period, p)
			if best == 0 || period < best {
				best = period
			}
			schedules++
		}
		var sumU float64
		for _, l := range p.Layers {
			sumU += l.UF + l.UB
		}
		require.GreaterOrEqual(t, bound, sumU-1e-6)
		if bound > sumU+1e-6 {
			aboveSum++
		}
		if best > 0 {
			worst = max(worst, best/bound)
		}
	}
	t.Logf("%d instances, %d validated schedules compared: bound > Σu on %d; best schedule / bound ≤ %.4f", n, schedules, aboveSum, worst)
}
