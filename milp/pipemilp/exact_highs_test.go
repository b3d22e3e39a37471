//go:build highs

package pipemilp

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	dpl "github.com/memsched/memsched/dp/pipeline"
	"github.com/memsched/memsched/dp/pipepack"
	"github.com/memsched/memsched/instances"
	pl "github.com/memsched/memsched/instances/pipeline"
	"github.com/memsched/memsched/milp"
	_ "github.com/memsched/memsched/milp/highs"
	"github.com/memsched/memsched/schedule"
	vpl "github.com/memsched/memsched/verify/pipeline"
)

func highs(t testing.TB) []milp.Solver {
	s, err := milp.Lookup("highs")
	require.NoError(t, err)
	return []milp.Solver{s}
}

// TestContiguousSpec: SPEC §7's five hand-checked cases solved by HiGHS: 48, 30, 21, 32 and
// infeasible at M = 3 B, each plan replayed.
func TestContiguousSpec(t *testing.T) {
	for _, tc := range specCases {
		p := specProblem(tc.P, tc.M, tc.beta)
		sol, err := SolveContiguous(context.Background(), highs(t), p, ContiguousSolveOptions{})
		require.NoError(t, err)
		if math.IsInf(tc.want, 1) {
			assert.Equal(t, milp.Infeasible, sol.Status)
			assert.True(t, math.IsInf(sol.Bound, 1))
			assert.Nil(t, sol.Plan)
			continue
		}
		require.Equal(t, milp.Optimal, sol.Status, "P=%d", tc.P)
		assert.InDelta(t, tc.want, sol.Value, 1e-6)
		assert.InDelta(t, tc.want, sol.Bound, 1e-6)
		assert.Equal(t, tc.want, sol.Makespan)
		assert.True(t, sol.Feasible)
	}
}

// TestContiguousAgainstReferee: on 160 random tiny instances (byte and GiB scale, both
// schedules, links free or 1–4 B/s, weights on half), the store-all model solved by HiGHS has
// the exhaustive referee's optimum (verify/pipeline.Exhaustive), its incumbent replays to it,
// and it is infeasible exactly when the referee finds nothing; the relaxed (remat) model's
// bound is at most the referee's optimum with rotor's sequences.
func TestContiguousAgainstReferee(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 1))
	feasible, infeasible := 0, 0
	for k := range 160 {
		p := pl.RandomTiny(r, k)
		if k%2 == 1 {
			p = p.Scaled(1 << 30)
		}
		ref, err := vpl.Exhaustive(p, vpl.RefereeOptions{})
		require.NoError(t, err)
		o := ContiguousSolveOptions{}
		if k%3 == 0 && ref.Feasible {
			o.Start = ref.Plan.Cuts()
		}
		sol, err := SolveContiguous(context.Background(), highs(t), p, o)
		require.NoError(t, err, "draw %d", k)
		assert.Empty(t, sol.Rejected, "draw %d", k)
		if !ref.Feasible {
			infeasible++
			assert.Equal(t, milp.Infeasible, sol.Status, "draw %d", k)
			assert.True(t, math.IsInf(sol.Bound, 1), "draw %d", k)
			assert.Nil(t, sol.Plan, "draw %d", k)
		} else {
			feasible++
			require.Equal(t, milp.Optimal, sol.Status, "draw %d", k)
			assert.InEpsilon(t, ref.Makespan, sol.Value, 1e-6, "draw %d", k)
			assert.InEpsilon(t, ref.Makespan, sol.Bound, 1e-6, "draw %d", k)
			assert.InEpsilon(t, ref.Makespan, sol.Makespan, 1e-9, "draw %d", k)
			assert.True(t, sol.Feasible, "draw %d", k)
		}
		rr, err := vpl.Exhaustive(p, vpl.RefereeOptions{Remat: true})
		require.NoError(t, err)
		rel, err := SolveContiguous(context.Background(), highs(t), p, ContiguousSolveOptions{Remat: true})
		require.NoError(t, err)
		if rr.Feasible {
			require.NotEqual(t, milp.Infeasible, rel.Status, "draw %d: the relaxation is infeasible though a plan fits", k)
			assert.LessOrEqual(t, rel.Bound, rr.Makespan*(1+1e-9), "draw %d", k)
			if ref.Feasible {
				assert.LessOrEqual(t, rel.Bound, ref.Makespan*(1+1e-9), "draw %d", k)
			}
		}
		if rel.Plan != nil && rel.Feasible {
			assert.GreaterOrEqual(t, rel.Makespan, rr.Makespan*(1-1e-9), "draw %d", k)
		}
	}
	assert.Greater(t, feasible, 80)
	assert.Greater(t, infeasible, 10)
}

// enumerated is the least period and makespan bound over every allocation (pipepack.Enumerate)
// whose one-micro-batch memory fits M, computed from the chain and the validator alone: the
// memory by replaying the allocation with m = 1 (its peak does not depend on the order), the
// period by pipepack.Period, the makespan bound as max(one micro-batch's F, B and transfers,
// m·every link's load, max_g m·load_g + the F, B and transfers before g's first stage).
func enumerated(t *testing.T, p *pl.Problem) (period, makespan float64, n int) {
	period, makespan = math.Inf(1), math.Inf(1)
	L := p.L()
	c := p.Chain
	tl := func(l int) float64 {
		st := c.Stage(l)
		v := st.UF + st.UB
		if l == L {
			v += c.Stage(L+1).UF + c.Stage(L+1).UB
		}
		return v
	}
	one := *p
	one.MicroBatches, one.Schedule = 1, pl.GPipe
	m := float64(p.MicroBatches)
	pipepack.Enumerate(L, p.GPUs, func(gpu []int) bool {
		plan := pipepack.Alloc(gpu)
		rep, err := vpl.Replay(&one, plan)
		require.NoError(t, err)
		if !rep.Fits() {
			return true
		}
		n++
		per, err := pipepack.Period(p, plan)
		require.NoError(t, err)
		period = min(period, per)
		// The makespan bound.
		load := map[int]float64{}
		first := map[int]int{}
		links := map[[2]int]float64{}
		lat := 0.0
		for l := 1; l <= L; l++ {
			g := gpu[l-1]
			load[g] += tl(l)
			if _, ok := first[g]; !ok {
				first[g] = l
			}
			lat += tl(l)
			if l < L && gpu[l] != g {
				cf, cb := p.CutTimes(l)
				links[[2]int{g, gpu[l]}] += cf
				links[[2]int{gpu[l], g}] += cb
				lat += cf + cb
			}
		}
		v := lat
		for _, x := range links {
			v = max(v, m*x)
		}
		for g, s := range first {
			head := 0.0
			for l := 1; l < s; l++ {
				head += tl(l)
				if gpu[l] != gpu[l-1] {
					cf, cb := p.CutTimes(l)
					head += cf + cb
				}
			}
			v = max(v, m*load[g]+head)
		}
		makespan = min(makespan, v)
		return true
	})
	return period, makespan, n
}

// TestAllocationAgainstEnumeration: on 150 random tiny instances (byte and GiB scale, both
// schedules, links free or 1–4 B/s, weights on half, P ≤ 4, L ≤ 5), the allocation model
// solved by HiGHS — period and makespan objectives, every part storing everything — has the
// least value over every allocation, contiguous or not, whose one-micro-batch memory fits,
// enumerated and replayed (enumerated); it is infeasible exactly when none fits; its
// incumbent's allocation has that period.
func TestAllocationAgainstEnumeration(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 2))
	feasible, infeasible := 0, 0
	for k := range 150 {
		p := pl.RandomTiny(r, k)
		if k%2 == 1 {
			p = p.Scaled(1 << 30)
		}
		wantP, wantC, n := enumerated(t, p)
		for _, obj := range []Objective{Period, Makespan} {
			sol, err := SolveAllocation(context.Background(), highs(t), p, AllocationSolveOptions{Objective: obj})
			require.NoError(t, err, "draw %d", k)
			assert.Empty(t, sol.Rejected, "draw %d", k)
			want := wantP
			if obj == Makespan {
				want = wantC
			}
			if n == 0 {
				assert.Equal(t, milp.Infeasible, sol.Status, "draw %d %v", k, obj)
				continue
			}
			require.Equal(t, milp.Optimal, sol.Status, "draw %d %v", k, obj)
			assert.InDelta(t, want, sol.Value, 1e-6*max(1, want), "draw %d %v", k, obj)
			assert.InDelta(t, want, sol.Bound, 1e-6*max(1, want), "draw %d %v", k, obj)
			if obj == Period {
				assert.InDelta(t, want, sol.Period, 1e-9*max(1, want), "draw %d: the incumbent's period", k)
			}
			require.NotNil(t, sol.Plan)
		}
		if n == 0 {
			infeasible++
		} else {
			feasible++
		}
	}
	assert.Greater(t, feasible, 80)
	assert.Greater(t, infeasible, 5)
}

// TestBoundsBelowVerifiedPlans: on 80 random tiny instances at byte and GiB scale, every
// bound of the models is at most every verified plan of its scope: the contiguous store-all
// bound below every contiguous store-all plan (the referee's optimum), the relaxed contiguous
// bound below every contiguous plan with rotor's sequences (the referee's and dp/pipeline's),
// the allocation bounds (makespan, period; store-all and relaxed) below 30 random allocations
// run with dp/pipepack's orders and pipepack.Pack's plan — whatever fits, replayed.
func TestBoundsBelowVerifiedPlans(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 3))
	checked := 0
	for k := range 80 {
		p := pl.RandomTiny(r, k)
		if k%2 == 0 {
			p = p.Scaled(1 << 30)
		}
		ctx := context.Background()
		cs, err := SolveContiguous(ctx, highs(t), p, ContiguousSolveOptions{})
		require.NoError(t, err)
		cr, err := SolveContiguous(ctx, highs(t), p, ContiguousSolveOptions{Remat: true})
		require.NoError(t, err)
		var bounds [4]float64 // allocation: makespan store-all, relaxed; period store-all, relaxed
		for i, o := range []AllocationSolveOptions{{Objective: Makespan}, {Objective: Makespan, Remat: true}, {Objective: Period}, {Objective: Period, Remat: true}} {
			s, err := SolveAllocation(ctx, highs(t), p, o)
			require.NoError(t, err)
			bounds[i] = s.Bound
			if s.Status != milp.Infeasible {
				require.Equal(t, milp.Optimal, s.Status, "draw %d %+v", k, o)
			}
		}
		check := func(what string, plan *schedule.Pipeline, rep *vpl.Result, contiguous, recompute bool) {
			if !rep.Fits() {
				return
			}
			checked++
			ms := rep.Makespan
			per, err := pipepack.Period(p, plan)
			require.NoError(t, err)
			tol := 1 + 1e-9
			if contiguous && !recompute {
				assert.LessOrEqual(t, cs.Bound, ms*tol, "draw %d %s: contiguous bound", k, what)
			}
			if contiguous {
				assert.LessOrEqual(t, cr.Bound, ms*tol, "draw %d %s: relaxed contiguous bound", k, what)
			}
			if !recompute {
				assert.LessOrEqual(t, bounds[0], ms*tol, "draw %d %s: allocation makespan bound", k, what)
				assert.LessOrEqual(t, bounds[2], per*tol, "draw %d %s: allocation period bound", k, what)
			}
			assert.LessOrEqual(t, bounds[1], ms*tol, "draw %d %s: relaxed allocation makespan bound", k, what)
			assert.LessOrEqual(t, bounds[3], per*tol, "draw %d %s: relaxed allocation period bound", k, what)
		}
		if ref, err := vpl.Exhaustive(p, vpl.RefereeOptions{}); err == nil && ref.Feasible {
			rep, err := vpl.Replay(p, ref.Plan)
			require.NoError(t, err)
			check("referee", ref.Plan, rep, true, false)
		}
		if rr, err := vpl.Exhaustive(p, vpl.RefereeOptions{Remat: true}); err == nil && rr.Feasible {
			rep, err := vpl.Replay(p, rr.Plan)
			require.NoError(t, err)
			check("remat referee", rr.Plan, rep, true, true)
		}
		if ex, err := dpl.Plan(p, dpl.Options{Remat: true}); err == nil && ex.Feasible {
			check("dp/pipeline", ex.Plan, ex.Replay, true, true)
		}
		if pk, err := pipepack.Pack(p, pipepack.Options{}); err == nil && pk.Feasible {
			check("pack", pk.Plan, pk.Replay, pk.Plan.Contiguous(), false)
		}
		for range 30 {
			gpu := make([]int, p.L())
			for i := range gpu {
				gpu[i] = r.IntN(p.GPUs)
			}
			out, rep, err := pipepack.Execute(p, pipepack.Alloc(gpu))
			require.NoError(t, err)
			check("random allocation", out, rep, out.Contiguous(), false)
		}
	}
	assert.Greater(t, checked, 300)
}

// TestAllocationBeatsContiguousOnSpec: on SPEC §7's chain with 2 GPUs the allocation model's
// bound for any allocation is 27 s, below the contiguous optimum 30 s, and its incumbent —
// stages 1, 3 on one GPU, 2, 4 on the other — runs in merged 1F1B at 28 s, replayed.
func TestAllocationBeatsContiguousOnSpec(t *testing.T) {
	p := specProblem(2, 1<<20, math.Inf(1))
	sol, err := SolveAllocation(context.Background(), highs(t), p, AllocationSolveOptions{Objective: Makespan})
	require.NoError(t, err)
	require.Equal(t, milp.Optimal, sol.Status)
	assert.InDelta(t, 27, sol.Bound, 1e-6)
	require.NotNil(t, sol.Plan)
	assert.Equal(t, "[1–1]@0 [2–2]@1 [3–3]@0 [4–4]@1", sol.Plan.String())
	assert.Equal(t, 28.0, sol.Makespan)
	assert.True(t, sol.Feasible)
	_ = instances.MaxBytes
}
