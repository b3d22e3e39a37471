package pipepack

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
	pl "github.com/memsched/memsched/instances/pipeline"
	"github.com/memsched/memsched/schedule"
	vpl "github.com/memsched/memsched/verify/pipeline"
)

// specChain is SPEC §7's hand-checked chain: L = 4, u_f = 1, u_b = 2, ω_a^0 = 0, ω_a = ω_ā = 1,
// ω_δ = 0, w = 0, no overheads.
func specChain() *instances.Chain {
	c := &instances.Chain{}
	for range 4 {
		c.Stages = append(c.Stages, instances.Stage{UF: 1, UB: 2, A: 1, ABar: 1})
	}
	c.Stages = append(c.Stages, instances.Stage{})
	return c
}

// objective is Pack's objective of an allocation, computed from the validator's figures: the
// largest GPU load Σ(F+B) and the largest single transfer of a cut.
func objective(t *testing.T, p *pl.Problem, plan *schedule.Pipeline) float64 {
	fs, err := figures(p, plan)
	require.NoError(t, err)
	load := map[int]float64{}
	v := 0.0
	for _, f := range fs {
		load[f.gpu] += f.f + f.b
		v = max(v, f.cut[0], f.cut[1])
	}
	for _, x := range load {
		v = max(v, x)
	}
	return v
}

// bruteForce returns the least objective over every allocation on ≤ P GPUs whose memory bound
// fits (the validator's figures), +Inf when none fits.
func bruteForce(t *testing.T, p *pl.Problem, minParts, maxParts int) float64 {
	best := math.Inf(1)
	Enumerate(p.L(), p.GPUs, func(gpu []int) bool {
		plan := Alloc(gpu)
		if len(plan.Parts) < minParts || len(plan.Parts) > maxParts {
			return true
		}
		mb, err := MemoryBound(p, plan)
		require.NoError(t, err)
		for _, v := range mb {
			if v > p.Memory {
				return true
			}
		}
		best = min(best, objective(t, p, plan))
		return true
	})
	return best
}

// TestEnumerateCounts: the allocations of L stages on ≤ P GPUs are Σ_k S(L, k).
func TestEnumerateCounts(t *testing.T) {
	for _, tc := range []struct{ L, P, want int }{{1, 1, 1}, {3, 2, 4}, {4, 4, 15}, {5, 2, 16}, {8, 8, 4140}, {6, 3, 122}} {
		n := 0
		Enumerate(tc.L, tc.P, func([]int) bool { n++; return true })
		assert.Equal(t, tc.want, n, "L=%d P=%d", tc.L, tc.P)
	}
}

// TestPackSpec: SPEC §7's chain with free links and no memory limit: two GPUs, 18 s of work,
// period 9 with stages {1, 4} and {2, 3}… but every split of four 3 s stages on 2 GPUs gives 6:
// the period is Σ/P = 6; on 3 GPUs it is 6 too (two stages together somewhere), on 4 GPUs 3.
// At M = 3 B with m = 4 under 1F1B a GPU holding two parts needs more.
func TestPackSpec(t *testing.T) {
	for _, tc := range []struct {
		P    int
		want float64
	}{{1, 12}, {2, 6}, {3, 6}, {4, 3}} {
		p := &pl.Problem{Chain: specChain(), GPUs: tc.P, Memory: 1 << 20, Bandwidth: math.Inf(1), MicroBatches: 4}
		r, err := Pack(p, Options{})
		require.NoError(t, err)
		require.True(t, r.Feasible)
		assert.True(t, r.Optimal)
		assert.Equal(t, tc.want, r.Objective, "P=%d", tc.P)
		assert.Equal(t, tc.want, r.Period, "P=%d", tc.P)
		assert.True(t, r.Replay.Fits())
	}
}

// TestPackAgainstBruteForce: on 400 random tiny instances (byte and GiB scale, both schedules,
// weights on half, links free or 1–4 B/s; on two draws in three the parts bounded: exactly k,
// or at most k) Pack's objective equals the least over every allocation whose memory bound fits, computed from the validator's figures; its plan replays
// within M, its peaks under the bound, its period at least the objective (equal with free
// links).
func TestPackAgainstBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 7))
	feasible := 0
	for k := range 400 {
		p := pl.RandomTiny(r, k)
		if k%3 == 2 {
			p = p.Scaled(1 << 30)
		}
		// Every third draw bounds the parts: exactly k, or at most k.
		lo, hi := 1, p.L()
		switch k % 3 {
		case 1:
			lo = 1 + r.IntN(p.L())
			hi = lo
		case 2:
			hi = 1 + r.IntN(p.L())
		}
		want := bruteForce(t, p, lo, hi)
		res, err := Pack(p, Options{MinParts: lo, MaxParts: hi})
		require.NoError(t, err, "draw %d", k)
		require.True(t, res.Optimal, "draw %d", k)
		if math.IsInf(want, 1) {
			assert.False(t, res.Feasible, "draw %d: nothing fits, Pack found %v", k, res.Plan)
			continue
		}
		require.True(t, res.Feasible, "draw %d: brute force %g, Pack nothing", k, want)
		feasible++
		assert.InDelta(t, want, res.Objective, 1e-9*max(1, want), "draw %d", k)
		assert.InDelta(t, objective(t, p, res.Plan), res.Objective, 1e-9*max(1, want), "draw %d", k)
		assert.GreaterOrEqual(t, res.Period, res.Objective*(1-1e-12), "draw %d", k)
		if math.IsInf(p.Bandwidth, 1) {
			assert.Equal(t, res.Objective, res.Period, "draw %d", k)
		}
		assert.True(t, res.Replay.Fits(), "draw %d", k)
		mb, err := MemoryBound(p, res.Plan)
		require.NoError(t, err)
		for g, v := range mb {
			assert.LessOrEqual(t, res.Replay.Peak[g], v, "draw %d GPU %d", k, g)
		}
	}
	assert.Greater(t, feasible, 150)
}

// TestActionsWithinMemoryBound: merged 1F1B and looped GPipe on 300 random allocations (each
// stage on a random GPU): the replay never deadlocks, every part's in-flight count stays at
// its warm-up, so every GPU's peak is at most MemoryBound; a contiguous plan gets the named
// order.
func TestActionsWithinMemoryBound(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for k := range 300 {
		p := pl.RandomTiny(r, k)
		p.Memory = instances.MaxBytes
		gpu := make([]int, p.L())
		for i := range gpu {
			gpu[i] = r.IntN(p.GPUs)
		}
		plan := Alloc(gpu)
		as, err := Actions(p, plan)
		require.NoError(t, err)
		if plan.Contiguous() || p.Schedule == pl.GPipe {
			assert.Nil(t, as)
		}
		out, rep, err := Execute(p, plan)
		require.NoError(t, err, "draw %d plan %v", k, plan)
		mb, err := MemoryBound(p, out)
		require.NoError(t, err)
		for g, v := range mb {
			assert.LessOrEqual(t, rep.Peak[g], v, "draw %d GPU %d plan %v", k, g, plan)
		}
		per, err := Period(p, plan)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, rep.Makespan, float64(p.MicroBatches)*per*(1-1e-9)-1e-9, "draw %d: makespan below m·period", k)
	}
}

// TestModuloReachesThePeriod: with free links, the modulo order of period T = Period replays
// to a makespan in [m·T, latency + (m−1)·T] on 200 random allocations with m = 24: the period
// of any allocation is reached.
func TestModuloReachesThePeriod(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 9))
	for k := range 200 {
		p := pl.RandomTiny(r, k)
		p.Bandwidth, p.Memory, p.MicroBatches = math.Inf(1), instances.MaxBytes, 24
		gpu := make([]int, p.L())
		for i := range gpu {
			gpu[i] = r.IntN(p.GPUs)
		}
		plan := Alloc(gpu)
		T, err := Period(p, plan)
		require.NoError(t, err)
		if T == 0 {
			continue
		}
		as, err := Modulo(p, plan, T)
		require.NoError(t, err)
		pl2 := plan.Clone()
		pl2.Actions = as
		rep, err := vpl.Replay(p, pl2)
		require.NoError(t, err, "draw %d", k)
		lat, err := ModuloLatency(p, plan, T)
		require.NoError(t, err)
		m := float64(p.MicroBatches)
		assert.GreaterOrEqual(t, rep.Makespan, m*T*(1-1e-12), "draw %d", k)
		assert.LessOrEqual(t, rep.Makespan, lat+(m-1)*T+1e-9, "draw %d", k)
	}
	_, err := Modulo(&pl.Problem{Chain: specChain(), GPUs: 1, Memory: 10, Bandwidth: math.Inf(1), MicroBatches: 1}, Alloc([]int{0, 0, 0, 0}), 5)
	assert.ErrorContains(t, err, "above the period")
}

// TestPackStops: a node cap returns the best plan so far, not proven optimal, and says so.
func TestPackStops(t *testing.T) {
	c := &instances.Chain{}
	for i := range 14 {
		c.Stages = append(c.Stages, instances.Stage{UF: float64(1 + i%5), UB: float64(2 + i%3), A: 1, ABar: 1, Delta: 1})
	}
	c.Stages = append(c.Stages, instances.Stage{})
	p := &pl.Problem{Chain: c, GPUs: 5, Memory: 1 << 20, Bandwidth: math.Inf(1), MicroBatches: 8}
	res, err := Pack(p, Options{MaxNodes: 20})
	require.NoError(t, err)
	assert.False(t, res.Optimal)
	assert.Contains(t, res.Note, "not proven optimal")
	if res.Feasible {
		assert.True(t, res.Replay.Fits())
	}
}

// TestPackRefuses: an invalid problem, and more parts required than allowed.
func TestPackRefuses(t *testing.T) {
	p := &pl.Problem{Chain: specChain(), GPUs: 0, Memory: 10, Bandwidth: math.Inf(1), MicroBatches: 1}
	_, err := Pack(p, Options{})
	assert.ErrorContains(t, err, "gpus = 0")
	p.GPUs = 2
	_, err = Pack(p, Options{MinParts: 3, MaxParts: 2})
	assert.ErrorContains(t, err, "at least 3 parts, at most 2")
	_, err = Modulo(p, Alloc([]int{0, 1, 0, 1}), 0)
	assert.ErrorContains(t, err, "positive")
	_, err = Period(p, &schedule.Pipeline{Parts: []schedule.Part{{First: 1, Last: 2}}})
	assert.ErrorContains(t, err, "parts end at stage 2")
}
