package actmilp_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/dp"
	heur "github.com/memsched/memsched/heuristics/actoffload"
	act "github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/milp/actmilp"
	"github.com/memsched/memsched/model/lpfile"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify/timed"
)

// schedules returns every validated schedule the heuristics and the exact search build for p.
func schedules(t testing.TB, p *act.Problem) map[string]*heur.Result {
	out := map[string]*heur.Result{}
	add := func(name string, r *heur.Result, err error) {
		require.NoError(t, err)
		if r.Feasible {
			out[name] = r
		}
	}
	r, err := heur.Greedy(p)
	add("greedy", r, err)
	r, err = heur.VDNN(p, heur.VDNNBoth)
	add("vdnn", r, err)
	r, err = dp.DynProg(p, dp.ActOptions{})
	add("dynprog", r, err)
	r, err = heur.Ordered(p, nil)
	add("none", r, err)
	r, _, err = heur.Exact(p, heur.ExactOptions{MaxNodes: 200_000})
	add("exact", r, err)
	// Local search over link orders: orders no rule shapes, equal sizes in any order (Clean
	// makes them canonical for the symmetry rows).
	if g := out["greedy"]; g != nil {
		r, err = heur.LocalSearch(p, g, heur.LocalOptions{Seed: 7, MaxEvals: 300})
		add("local", r, err)
	}
	return out
}

// The map from schedules to points on which the MILP's validity as a lower bound rests, tested
// without a solver: on 600 seeded instances (1–7 operations, byte and GiB scale), every
// validated schedule (GREEDY, VDNN, DYNPROG, no offloading, the exact search, a local search), cleaned of its
// useless transfers, is a point of the model built with any of them as Upper — with and
// without the valid inequalities — whose objective is its makespan, and the point re-times
// (Retime) into a validated schedule no longer than it. The fluid and whole-transfer windows
// hold for every such schedule: Head[k] ≤ s_k and s_k + Tail[k] ≤ makespan.
func TestEveryScheduleIsAPoint(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 2026))
	points, moved := 0, 0
	for it := 0; it < 600; it++ {
		unit := int64(1)
		if it%2 == 1 {
			unit = 1 << 30
		}
		p := act.Random(r, 1+r.IntN(7), unit)
		all := schedules(t, p)
		head, tail, ok := p.WholeWindows()
		if len(all) == 0 {
			continue
		}
		require.True(t, ok, "instance %d: a schedule validates but the windows say infeasible", it)
		var upper float64
		for _, s := range all {
			upper = math.Max(upper, s.Report.Makespan)
		}
		for _, plain := range []bool{false, true} {
			f, err := actmilp.Build(p, actmilp.Options{Upper: upper, Plain: plain})
			require.NoError(t, err)
			for name, s := range all {
				for k, op := range s.Schedule.Ops {
					tol := 1e-9 * math.Max(1, s.Report.Makespan)
					assert.LessOrEqual(t, head[k], op.Start+tol, "instance %d %s: head of operation %d", it, name, k)
					assert.LessOrEqual(t, op.Start+tail[k], s.Report.Makespan+tol, "instance %d %s: tail of operation %d", it, name, k)
				}
				c, err := f.Clean(s.Schedule)
				require.NoError(t, err, "instance %d %s", it, name)
				x, err := f.Point(c)
				require.NoError(t, err, "instance %d %s: %v on %+v", it, name, s.Schedule, p)
				points++
				if len(c.Transfers) > 0 {
					moved++
				}
				assert.InDelta(t, s.Report.Makespan, x[f.T]*f.Units.Time, 1e-9*math.Max(1, s.Report.Makespan))
				back, err := f.Retime(x)
				require.NoError(t, err, "instance %d %s", it, name)
				assert.LessOrEqual(t, back.Report.Makespan, s.Report.Makespan*(1+1e-9), "instance %d %s", it, name)
			}
		}
	}
	t.Logf("%d points, %d with transfers", points, moved)
	assert.Greater(t, moved, 500)
}

// No order of transfers can be assumed without loss (docs/act-offload.md): on the first
// instance every optimum offloads x_1 before x_0, on the second every optimum prefetches x_0
// before x_1 although both are away at once. The exact search finds 15 and 24; the best
// schedule with offloads by increasing index (resp. prefetches by decreasing index) is 16
// (resp. 27), found by trying every link sequence of that kind.
func TestNoOrderWithoutLoss(t *testing.T) {
	cases := []struct {
		p          *act.Problem
		want, with float64
		offFwd     bool
	}{
		{&act.Problem{X: []int64{1, 4, 5, 3}, Y: []int64{0, 0, 0, 0}, UF: []float64{0, 2, 1}, UB: []float64{2, 0, 3},
			ExF: []int64{0, 0, 0}, ExB: []int64{0, 2, 0}, MGPU: 11, Beta: 1}, 15, 16, true},
		{&act.Problem{X: []int64{4, 7, 8, 7, 1, 5}, Y: []int64{0, 0, 3, 2, 0, 0}, UF: []float64{3, 0, 3, 0, 3}, UB: []float64{1, 1, 3, 0, 3},
			ExF: []int64{0, 0, 2, 0, 0}, ExB: []int64{0, 2, 3, 1, 0}, MGPU: 28, Beta: 1}, 24, 27, false},
	}
	for _, c := range cases {
		e, st, err := heur.Exact(c.p, heur.ExactOptions{})
		require.NoError(t, err)
		require.Equal(t, heur.Optimal, st)
		assert.Equal(t, c.want, e.Makespan())
		best := math.Inf(1)
		var cand []int
		for j := 0; j < c.p.L(); j++ {
			cand = append(cand, j)
		}
		linkSequences(cand, func(seq []schedule.ActTransfer) {
			lastOff, lastPre := -1, 1<<30
			for _, tr := range seq {
				if tr.Kind == schedule.Offload {
					if c.offFwd && tr.Index < lastOff {
						return
					}
					lastOff = tr.Index
				} else {
					if !c.offFwd && tr.Index > lastPre {
						return
					}
					lastPre = tr.Index
				}
			}
			res, err := heur.NoWait(c.p, seq)
			require.NoError(t, err)
			best = math.Min(best, res.Makespan())
		})
		assert.Equal(t, c.with, best)
	}
}

// linkSequences calls f with every link sequence over cand (each chosen activation offloaded
// once and prefetched once later).
func linkSequences(cand []int, f func([]schedule.ActTransfer)) {
	state := make([]int, len(cand))
	var seq []schedule.ActTransfer
	var rec func()
	rec = func() {
		open := false
		for _, s := range state {
			open = open || s == 1
		}
		if !open {
			f(seq)
		}
		for x, j := range cand {
			kind := schedule.Offload
			switch state[x] {
			case 0:
			case 1:
				kind = schedule.Prefetch
			default:
				continue
			}
			state[x]++
			seq = append(seq, schedule.ActTransfer{Kind: kind, Index: j})
			rec()
			seq = seq[:len(seq)-1]
			state[x]--
		}
	}
	rec()
}

// The model is the same on every build (rows in a fixed order, not a map's): two builds of
// one instance write the same LP file.
func TestBuildDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for k := 0; k < 20; k++ {
		p := act.Random(r, 3+r.IntN(5), 1)
		var files []string
		for i := 0; i < 2; i++ {
			f, err := actmilp.Build(p, actmilp.Options{})
			if err != nil {
				break
			}
			var b strings.Builder
			require.NoError(t, lpfile.Write(&b, f.Model))
			files = append(files, b.String())
		}
		if len(files) == 2 {
			assert.Equal(t, files[0], files[1], "instance %d", k)
		}
	}
}

// Schedules that break the symmetry rows — two equal-size activations offloaded out of index
// order while both are away — are still points once Clean has exchanged their offloads' slots:
// made from the heuristics' schedules on 600 seeded instances (byte and GiB scale) by swapping
// the offloads of such a pair wherever the swapped schedule still validates.
func TestCleanMakesSymmetricSchedulesPoints(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 2026))
	swapped := 0
	for it := 0; it < 300; it++ {
		unit := int64(1)
		if it%2 == 1 {
			unit = 1 << 30
		}
		p := act.Random(r, 2+r.IntN(7), unit)
		all := schedules(t, p)
		if len(all) == 0 {
			continue
		}
		var upper float64
		for _, s := range all {
			upper = math.Max(upper, s.Report.Makespan)
		}
		f, err := actmilp.Build(p, actmilp.Options{Upper: upper})
		require.NoError(t, err)
		for name, s := range all {
			tr := s.Schedule.Transfers
			for a := range tr {
				for b := range tr {
					if tr[a].Kind != schedule.Offload || tr[b].Kind != schedule.Offload || tr[a].Index >= tr[b].Index ||
						p.X[tr[a].Index] != p.X[tr[b].Index] || !(tr[a].Start < tr[b].Start) {
						continue
					}
					// O(i) before O(j): give x_j the earlier slot.
					alt := &schedule.Timed{Ops: s.Schedule.Ops, Transfers: append([]schedule.ActTransfer(nil), tr...)}
					alt.Transfers[a].Index, alt.Transfers[b].Index = tr[b].Index, tr[a].Index
					if _, err := timed.Check(p, alt); err != nil {
						continue
					}
					swapped++
					c, err := f.Clean(alt)
					require.NoError(t, err, "instance %d %s", it, name)
					_, err = f.Point(c)
					require.NoError(t, err, "instance %d %s: %+v", it, name, alt)
				}
			}
		}
	}
	t.Logf("%d swapped schedules", swapped)
	assert.Greater(t, swapped, 30)
}
