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

// randomProblem draws a small instance whose M_GPU leaves L2L room (two layers' weights and an
// offload buffer beside the largest operation) but not always room for every weight.
func randomProblem(r *rand.Rand, L int) *offload.Problem {
	p := &offload.Problem{Beta: float64(1 + r.IntN(6))}
	var maxW, maxOp, sumW int64
	for i := 0; i < L; i++ {
		l := offload.Layer{UF: float64(1 + r.IntN(4)), UB: float64(1 + r.IntN(6)), W: int64(1 + r.IntN(9)), A: int64(r.IntN(4))}
		p.Layers = append(p.Layers, l)
		maxW = max(maxW, l.W)
		sumW += l.W
	}
	for i := 1; i <= L; i++ {
		maxOp = max(maxOp, p.OpMemory(i, true))
	}
	lo := maxOp + 3*maxW
	p.MGPU = lo + r.Int64N(sumW+1)
	return p
}

// sweep checks, on n random instances, that the MILP's bound never exceeds the period of any
// validated schedule — L2L, Greedy, Greedy*, and the exhaustive search over selections for
// L ≤ 5 (SPEC §3: a bound above a valid schedule is a bug, never noise).
func sweep(t *testing.T, s milp.Solver, n, maxL int, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 9))
	for k := 0; k < n; k++ {
		p := randomProblem(r, 1+r.IntN(maxL))
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
