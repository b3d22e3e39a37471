package pipemilp

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	dpl "github.com/memsched/memsched/dp/pipeline"
	"github.com/memsched/memsched/instances"
	pl "github.com/memsched/memsched/instances/pipeline"
	"github.com/memsched/memsched/schedule"
	vpl "github.com/memsched/memsched/verify/pipeline"
)

// specProblem is SPEC §7's hand-checked chain (L = 4, u_f = 1, u_b = 2, ω_a^0 = 0,
// ω_a = ω_ā = 1, ω_δ = 0, w = 0, no overheads, m = 4, 1F1B).
func specProblem(P int, M int64, beta float64) *pl.Problem {
	c := &instances.Chain{}
	for range 4 {
		c.Stages = append(c.Stages, instances.Stage{UF: 1, UB: 2, A: 1, ABar: 1})
	}
	c.Stages = append(c.Stages, instances.Stage{})
	return &pl.Problem{Chain: c, GPUs: P, Memory: M, Bandwidth: beta, MicroBatches: 4}
}

// allCuts calls visit with every contiguous allocation of L stages on at most J parts.
func allCuts(L, J int, visit func(cuts []int)) {
	var rec func(first int, cuts []int)
	rec = func(first int, cuts []int) {
		if len(cuts) == J {
			return
		}
		for e := first; e <= L; e++ {
			c := append(cuts, e)
			if e == L {
				visit(append([]int(nil), c...))
				continue
			}
			rec(e+1, c)
		}
	}
	rec(1, nil)
}

// TestContiguousPointIsTheReplay: on 200 random tiny instances (byte and GiB scale, both
// schedules, links free or 1–4 B/s, weights on half) and every contiguous allocation, the
// store-all model's point of the allocation has C = the makespan verify/pipeline replays, and
// it satisfies the model's rows exactly when the replay fits M; the relaxed (remat) model's
// point is feasible whenever the allocation fits with rotor's sequences (dp/pipeline.Evaluate),
// with C at most that plan's makespan.
func TestContiguousPointIsTheReplay(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 3))
	checked, fits := 0, 0
	for k := range 200 {
		p := pl.RandomTiny(r, k)
		if k%2 == 1 {
			p = p.Scaled(1 << 30)
		}
		f, err := BuildContiguous(p, ContiguousOptions{})
		require.NoError(t, err)
		require.NoError(t, f.Model.Validate())
		g, err := BuildContiguous(p, ContiguousOptions{Remat: true})
		require.NoError(t, err)
		allCuts(p.L(), f.J, func(cuts []int) {
			x, err := f.Point(cuts)
			require.NoError(t, err, "draw %d cuts %v", k, cuts)
			back, err := f.Cuts(x)
			require.NoError(t, err)
			assert.Equal(t, cuts, back)
			rep, err := vpl.Replay(p, schedule.NewContiguous(cuts))
			require.NoError(t, err)
			assert.InDelta(t, rep.Makespan, f.Makespan(x), 1e-9*max(1, rep.Makespan), "draw %d cuts %v", k, cuts)
			ok := f.Model.Check(x).Feasible(1e-9)
			assert.Equal(t, rep.Fits(), ok, "draw %d cuts %v: replay fits %v, model point feasible %v (%v)", k, cuts, rep.Fits(), ok, f.Model.Check(x).Err(1e-9))
			checked++
			if rep.Fits() {
				fits++
			}
			ev, err := dpl.Evaluate(p, cuts, dpl.Options{Remat: true})
			require.NoError(t, err)
			if ev.Feasible {
				y, err := g.Point(cuts)
				require.NoError(t, err)
				assert.NoError(t, g.Model.Check(y).Err(1e-9), "draw %d cuts %v: the relaxation cuts off a plan that fits", k, cuts)
				assert.LessOrEqual(t, g.Makespan(y), ev.Makespan*(1+1e-9), "draw %d cuts %v", k, cuts)
			}
		})
	}
	assert.Greater(t, checked, 600)
	assert.Greater(t, fits, 200)
	assert.Less(t, fits, checked)
}

// TestContiguousSpecCases: SPEC §7's five hand-checked cases through the model's points: the
// best feasible point over all allocations is 48, 30, 21, 32, and none at M = 3 B.
func TestContiguousSpecCases(t *testing.T) {
	inf := math.Inf(1)
	for _, tc := range specCases {
		p := specProblem(tc.P, tc.M, tc.beta)
		f, err := BuildContiguous(p, ContiguousOptions{})
		require.NoError(t, err)
		best := inf
		allCuts(p.L(), f.J, func(cuts []int) {
			x, err := f.Point(cuts)
			require.NoError(t, err)
			if f.Model.Check(x).Feasible(1e-9) {
				best = min(best, f.Makespan(x))
			}
		})
		assert.Equal(t, tc.want, best, "P=%d M=%d β=%g", tc.P, tc.M, tc.beta)
	}
}

// TestMalformedRefused: an invalid problem is refused naming its field, a model over the
// memory cap with a *TooLargeError before it is built, cuts that are not an allocation by
// Point.
func TestMalformedRefused(t *testing.T) {
	p := specProblem(2, 1<<20, math.Inf(1))
	bad := *p
	bad.MicroBatches = 0
	_, err := BuildContiguous(&bad, ContiguousOptions{})
	assert.ErrorContains(t, err, "micro_batches = 0")
	_, err = BuildAllocation(&bad, AllocationOptions{})
	assert.ErrorContains(t, err, "micro_batches = 0")
	bad = *p
	bad.Bandwidth = 0
	_, err = BuildContiguous(&bad, ContiguousOptions{})
	assert.ErrorContains(t, err, "bandwidth = 0")
	_, err = BuildContiguous(p, ContiguousOptions{MaxMemory: 1024})
	assert.True(t, IsTooLarge(err), "%v", err)
	assert.ErrorContains(t, err, "memory limit")
	_, err = BuildAllocation(p, AllocationOptions{MaxMemory: 1024})
	assert.True(t, IsTooLarge(err), "%v", err)
	f, err := BuildContiguous(p, ContiguousOptions{})
	require.NoError(t, err)
	for _, cuts := range [][]int{nil, {1, 2, 4}, {3}, {2, 2, 4}, {5}} {
		_, err := f.Point(cuts)
		assert.Error(t, err, "%v", cuts)
	}
}

// specCases are SPEC §7's five hand-checked cases: P GPUs of M bytes, links of β B/s, and the
// optimal makespan (+Inf: nothing fits).
var specCases = []struct {
	P    int
	M    int64
	beta float64
	want float64
}{{1, 1 << 20, math.Inf(1), 48}, {2, 1 << 20, math.Inf(1), 30}, {4, 1 << 20, math.Inf(1), 21}, {2, 1 << 20, 1, 32}, {2, 3, math.Inf(1), math.Inf(1)}}
