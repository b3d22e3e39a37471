//go:build highs && lpsolve

package weightlb_test

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	heur "github.com/memsched/memsched/heuristics/offload"
	"github.com/memsched/memsched/instances/offload"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/highs"
	"github.com/memsched/memsched/milp/lpsolve"
	"github.com/memsched/memsched/milp/milptest"
	"github.com/memsched/memsched/milp/weightlb"
	"github.com/memsched/memsched/model/mpsfile"
)

// scaled returns p with every size multiplied by mem and every time by tm (β scaled so that
// transfer times scale by tm too): the same instance in other units, whose optimum is the
// original's times tm.
func scaled(p *offload.Problem, mem int64, tm float64) *offload.Problem {
	q := &offload.Problem{MGPU: p.MGPU * mem, Beta: p.Beta * float64(mem) / tm, A0: p.A0 * mem}
	for _, l := range p.Layers {
		q.Layers = append(q.Layers, offload.Layer{UF: l.UF * tm, UB: l.UB * tm, W: l.W * mem, A: l.A * mem})
	}
	return q
}

// propertyInstance draws instance k: L ≤ 6 layers, a⁰ > 0 on odd k, M_GPU from just the largest
// operation (tight) up to every weight kept (ample).
func propertyInstance(r *rand.Rand, k int) *offload.Problem {
	p := offload.Random(r, 1+r.IntN(6))
	if k%2 == 1 {
		p.A0 = int64(1 + r.IntN(4))
	}
	var maxOp, sumW int64
	for i := 1; i <= p.L(); i++ {
		maxOp = max(maxOp, p.OpMemory(i, true))
		sumW += p.Layer(i).W
	}
	p.MGPU = maxOp + r.Int64N(sumW+1)
	return p
}

// TestBoundProperty (issue 10): on seeded random instances at byte scale and at GiB scale
// (sizes × 3·2³⁰ — not a power of two — times in milliseconds), HiGHS's bound equals lp_solve's
// within 1e-6 relative and equals the byte-scale bound times the time factor; it is at least
// max(Σu, forced prefetch / β), at most every validated schedule (L2L, Greedy, Greedy*,
// Greedy+reserve, Alg. 2 on the MILP's own selection, exhaustive selections for L ≤ 3); and no
// solver says "infeasible" when a schedule validates. A sample is also solved by cbc from the
// exported MPS. Every answer here is a raw solver answer (milp.Solve, no guard): the guard must
// have nothing to catch on well-scaled models.
func TestBoundProperty(t *testing.T) {
	n, cbcEvery := 2000, 20
	if testing.Short() {
		n, cbcEvery = 150, 15
	}
	_, cbcErr := exec.LookPath("cbc")
	hs, err := highs.New()
	require.NoError(t, err)
	ls, err := lpsolve.New()
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(10, 2026))
	ctx := context.Background()
	params := milp.Params{RelGap: 1e-9}
	solve := func(s milp.Solver, p *offload.Problem) (float64, milp.Status) {
		m, v, err := weightlb.Build(p)
		require.NoError(t, err)
		res, err := milp.Solve(ctx, s, m, params)
		require.NoError(t, err)
		if res.Status != milp.Optimal {
			return math.NaN(), res.Status
		}
		return res.Bound * v.Units.Time, res.Status
	}
	var schedules, above, a0, cbcRuns, noSchedule int
	for k := 0; k < n; k++ {
		base := propertyInstance(r, k)
		if base.A0 > 0 {
			a0++
		}
		sumU, forced, _ := weightlb.TrivialBounds(base)
		periods := map[string]float64{}
		if _, l2l, err := heur.L2L(base); err == nil {
			periods["l2l"] = l2l.Period
		}
		for _, d := range []bool{true, false} {
			if _, _, g, err := heur.Greedy(base, d); err == nil {
				periods["greedy"+strconv.FormatBool(d)] = g.Period
			}
		}
		if _, _, g, err := heur.GreedyReserve(base, true); err == nil {
			periods["reserve"] = g.Period
		}
		if base.L() <= 3 {
			if _, ex, err := heur.Exhaustive(base); err == nil {
				periods["exhaustive"] = ex.Period
			}
		}
		hb, hst := solve(hs, base)
		lb, lst := solve(ls, base)
		if len(periods) > 0 {
			require.Equal(t, milp.Optimal, hst, "instance %d: HiGHS %v while a schedule validates\n%+v", k, hst, base)
			require.Equal(t, milp.Optimal, lst, "instance %d: lp_solve %v while a schedule validates\n%+v", k, lst, base)
		} else {
			noSchedule++
			if hst != milp.Optimal {
				continue
			}
		}
		require.InEpsilon(t, hb, lb, 1e-6, "instance %d: HiGHS %v, lp_solve %v\n%+v", k, hb, lb, base)
		require.GreaterOrEqual(t, hb, math.Max(sumU, forced)*(1-1e-9), "instance %d", k)
		if hb > sumU*(1+1e-9) {
			above++
		}
		// The MILP's own selection, scheduled by Alg. 2, is one more validated schedule.
		cert, err := weightlb.LowerBound(ctx, base, weightlb.Options{Solvers: []milp.Solver{hs}, Params: params})
		require.NoError(t, err)
		require.Len(t, cert.MILP.Attempts, 1, "instance %d: the guard had to re-solve: %+v", k, cert.MILP.Attempts)
		if _, g, err := weightlb.Guided(base, cert); err == nil {
			periods["milp-guided"] = g.Period
		}
		for name, period := range periods {
			require.LessOrEqual(t, hb, period*(1+1e-9), "instance %d: bound %v above %s's validated period %v\n%+v", k, hb, name, period, base)
			schedules++
		}
		// GiB scale, times in ms: the same bound, scaled.
		big := scaled(base, 3<<30, 1e-3)
		gb, gst := solve(hs, big)
		require.Equal(t, milp.Optimal, gst, "instance %d at GiB scale", k)
		require.InEpsilon(t, hb*1e-3, gb, 1e-6, "instance %d: byte scale %v s, GiB scale %v ms", k, hb, gb*1e3)
		lgb, lgst := solve(ls, big)
		require.Equal(t, milp.Optimal, lgst, "instance %d at GiB scale (lp_solve)", k)
		require.InEpsilon(t, gb, lgb, 1e-6, "instance %d at GiB scale: HiGHS %v, lp_solve %v", k, gb, lgb)
		if cbcErr == nil && k%cbcEvery == 0 {
			m, v, err := weightlb.Build(big)
			require.NoError(t, err)
			path := filepath.Join(t.TempDir(), "lb.mps")
			f, err := os.Create(path)
			require.NoError(t, err)
			require.NoError(t, mpsfile.Write(f, m))
			require.NoError(t, f.Close())
			got, ok := milptest.RunExternal(t, "cbc", path, false, "-ratio", "1e-9")
			require.True(t, ok, "instance %d: cbc found no optimum", k)
			require.InEpsilon(t, gb, got*v.Units.Time, 1e-6, "instance %d: cbc on the exported MPS", k)
			cbcRuns++
		}
	}
	t.Logf("%d instances (%d with a⁰ > 0, %d without any validated schedule), %d validated schedules compared, bound > Σu on %d, cbc on %d exported files: HiGHS = lp_solve = GiB-scale HiGHS = cbc, bound ≤ every schedule, ≥ max(Σu, forced/β), no false infeasible",
		n, a0, noSchedule, schedules, above, cbcRuns)
}
