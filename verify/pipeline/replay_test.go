package pipeline

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/dp"
	pl "github.com/memsched/memsched/instances/pipeline"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
)

func seq(t *testing.T, text string) schedule.Sequence {
	t.Helper()
	s, err := schedule.ParseSequenceText(strings.NewReader(text))
	require.NoError(t, err)
	return s
}

// TestViolationNamed: SPEC §7's fifth case names GPU 0, the action and operation at the
// overflow, the bytes in use and the budget.
func TestViolationNamed(t *testing.T) {
	res, err := Replay(specProblem(2, 3, math.Inf(1)), schedule.NewContiguous([]int{2, 4}))
	require.NoError(t, err)
	v := res.Violation
	require.NotNil(t, v)
	assert.Equal(t, 0, v.GPU)
	assert.Equal(t, schedule.Action{Part: 0, MicroBatch: 1}, v.Action, "the second forward: one micro-batch held, the next one's F_all^2")
	assert.Equal(t, "Fall^2", v.OpText)
	assert.Equal(t, int64(4), v.InUse)
	assert.Equal(t, 2.0, v.Time, "after 0F0 (F_all^1, F_all^2: 2 s)")
	assert.Contains(t, v.Error(), "GPU 0")
}

// TestPlanErrors: a plan that is not well formed is refused with what is wrong.
func TestPlanErrors(t *testing.T) {
	p := specProblem(2, 100, math.Inf(1))
	for _, tc := range []struct {
		name string
		plan *schedule.Pipeline
		want string
	}{
		{"gap", &schedule.Pipeline{Parts: []schedule.Part{{First: 1, Last: 2}, {First: 4, Last: 4, GPU: 1}}}, "starts at stage 4, want 3"},
		{"short", &schedule.Pipeline{Parts: []schedule.Part{{First: 1, Last: 3}}}, "end at stage 3, want 4"},
		{"GPU out of range", &schedule.Pipeline{Parts: []schedule.Part{{First: 1, Last: 4, GPU: 2}}}, "GPU 2 is not in 0..1"},
		{"missing action", &schedule.Pipeline{Parts: []schedule.Part{{First: 1, Last: 4}},
			Actions: [][]schedule.Action{{{MicroBatch: 0}, {Backward: true, MicroBatch: 0}}}}, "missing"},
		{"backward first", &schedule.Pipeline{Parts: []schedule.Part{{First: 1, Last: 4}},
			Actions: [][]schedule.Action{{{Backward: true, MicroBatch: 0}}}}, "before its forward"},
		{"wrong GPU", &schedule.Pipeline{Parts: []schedule.Part{{First: 1, Last: 2}, {First: 3, Last: 4, GPU: 1}},
			Actions: [][]schedule.Action{{{Part: 1, MicroBatch: 0}}, {}}}, "is on GPU 1"},
		{"bad sequence", &schedule.Pipeline{Parts: []schedule.Part{{First: 1, Last: 2, Sequence: seq(t, "Fn^2 B^2")}, {First: 3, Last: 4, GPU: 1}}}, "input a^1 is not stored"},
		{"nothing sent", &schedule.Pipeline{Parts: []schedule.Part{{First: 1, Last: 2, Sequence: seq(t, "Fall^1 Fall^2 B^2 B^1")}, {First: 3, Last: 4, GPU: 1}}}, "δ^2 is not stored"},
	} {
		_, err := Replay(p, tc.plan)
		require.Error(t, err, tc.name)
		assert.Contains(t, err.Error(), tc.want, tc.name)
	}
}

// TestDeadlock: an order in which GPU 0 waits for a backward that needs its own later forward.
func TestDeadlock(t *testing.T) {
	p := specProblem(2, 100, math.Inf(1))
	p.MicroBatches = 2
	plan := schedule.NewContiguous([]int{2, 4})
	plan.Actions = [][]schedule.Action{
		{{Part: 0, MicroBatch: 0}, {Part: 0, Backward: true, MicroBatch: 1}, {Part: 0, MicroBatch: 1}, {Part: 0, Backward: true, MicroBatch: 0}},
		{{Part: 1, MicroBatch: 0}, {Part: 1, MicroBatch: 1}, {Part: 1, Backward: true, MicroBatch: 0}, {Part: 1, Backward: true, MicroBatch: 1}},
	}
	_, err := Replay(p, plan)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "before its forward")
	plan.Actions[0] = []schedule.Action{{Part: 0, MicroBatch: 0}, {Part: 0, Backward: true, MicroBatch: 0}, {Part: 0, MicroBatch: 1}, {Part: 0, Backward: true, MicroBatch: 1}}
	plan.Actions[1] = []schedule.Action{{Part: 1, MicroBatch: 1}, {Part: 1, MicroBatch: 0}, {Part: 1, Backward: true, MicroBatch: 0}, {Part: 1, Backward: true, MicroBatch: 1}}
	_, err = Replay(p, plan)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "deadlock")
}

// TestExplicitActionsEqualNamed: the named orders given as explicit action lists replay to the
// same makespan and peaks (the period is then not computed).
func TestExplicitActionsEqualNamed(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for k := range 100 {
		p := pl.RandomTiny(r, k)
		L := p.L()
		S := 1 + r.IntN(min(p.GPUs, L))
		cuts := make([]int, 0, S)
		for _, e := range r.Perm(L - 1)[:S-1] {
			cuts = append(cuts, e+1)
		}
		sortInts(cuts)
		cuts = append(cuts, L)
		plan := schedule.NewContiguous(cuts)
		a, err := Replay(p, plan)
		require.NoError(t, err)
		plan.Actions, err = pl.Actions(plan, p.Schedule, p.MicroBatches, p.GPUs)
		require.NoError(t, err)
		b, err := Replay(p, plan)
		require.NoError(t, err)
		assert.Equal(t, a.Makespan, b.Makespan)
		assert.Equal(t, a.Peak, b.Peak)
		assert.True(t, math.IsNaN(b.Period))
	}
}

func sortInts(xs []int) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j] < xs[j-1]; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}

// TestLoopedPlacement: a non-contiguous allocation — stages 1 and 3 on GPU 0, 2 and 4 on
// GPU 1 (PyTorch's looped placement), GPipe's looped breadth-first order, free links — on
// SPEC §7's chain with m = 2, every part 1 s per forward and 2 s per backward, by hand (parts
// 0-based, as PyTorch writes actions):
//
//	GPU 0: 0F0 [0,1] 0F1 [1,2] 2F0 [2,3] 2F1 [3,4]   2B0 [7,9] 2B1 [9,11]  0B0 [11,13] 0B1 [13,15]
//	GPU 1: 1F0 [1,2] 1F1 [2,3] 3F0 [3,4] 3F1 [4,5]   3B0 [5,7] 3B1 [7,9]   1B0 [9,11]  1B1 [11,13]
//
// so the makespan is 15; GPU 0 peaks during 2B0 at ā^1 of both micro-batches (2 B) and a^2 +
// ā^3 of both (4 B).
func TestLoopedPlacement(t *testing.T) {
	p := specProblem(2, 100, math.Inf(1))
	p.MicroBatches = 2
	p.Schedule = pl.GPipe
	plan := &schedule.Pipeline{Parts: []schedule.Part{{First: 1, Last: 1, GPU: 0}, {First: 2, Last: 2, GPU: 1}, {First: 3, Last: 3, GPU: 0}, {First: 4, Last: 4, GPU: 1}}}
	res, err := Replay(p, plan)
	require.NoError(t, err)
	assert.Equal(t, 15.0, res.Makespan)
	assert.True(t, math.IsNaN(res.Period))
	assert.Equal(t, int64(6), res.Peak[0])
	assert.Equal(t, []Timed{{schedule.Action{Part: 2, Backward: true}, 7, 9}}, res.Timeline[0][4:5])
}

// TestOneGPUIsSection1TimesM: on one GPU under 1F1B (one micro-batch in flight) the pipeline is
// §1's model: m times its makespan, and its peak plus Σw — for store-all and for a persistent
// sequence from rotor's table (which counts the loss gradient δ^{L+1} from the start; SPEC §7
// from the backward: equal here, δ^{L+1} = 0).
func TestOneGPUIsSection1TimesM(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for k := range 200 {
		p := pl.RandomTiny(r, k)
		p.GPUs, p.Schedule = 1, pl.OneFOneB
		c := p.Chain
		var w int64
		for _, st := range c.Stages {
			w += st.W
		}
		budget := max(c.A0, p.Memory-w)
		ref, err := dp.SolvePersistent(c, budget, dp.Options{Exact: true})
		require.NoError(t, err)
		if !ref.Feasible {
			continue
		}
		plan := &schedule.Pipeline{Parts: []schedule.Part{{First: 1, Last: p.L(), Sequence: ref.Sequence}}}
		res, err := Replay(p, plan)
		require.NoError(t, err)
		assert.Equal(t, float64(p.MicroBatches)*ref.Makespan, res.Makespan, "%d", k)
		assert.Equal(t, ref.Peak+w, res.Peak[0], "%d", k)
		sa, err := verify.Remat(c, storeAll(1, p.L()+1), verify.RematOptions{})
		require.NoError(t, err)
		plan.Parts[0].Sequence = nil
		res, err = Replay(p, plan)
		require.NoError(t, err)
		assert.Equal(t, float64(p.MicroBatches)*sa.Makespan, res.Makespan)
		assert.Equal(t, sa.Peak+w, res.Peak[0])
	}
}

// TestGPipeHoldsMore: on every GPU of every allocation, GPipe's peak is at least 1F1B's (it
// holds m micro-batches where 1F1B holds min(m, S−k)), with and without recomputation; and the
// period is at most makespan/m for large m and within 1 % of it at m = 400.
func TestGPipeHoldsMore(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	for k := range 200 {
		p := pl.RandomTiny(r, k)
		L := p.L()
		cuts := []int{}
		for e := 1; e < L; e++ {
			if r.IntN(2) == 0 && len(cuts)+1 < p.GPUs {
				cuts = append(cuts, e)
			}
		}
		cuts = append(cuts, L)
		plan := schedule.NewContiguous(cuts)
		if k%2 == 0 {
			for i := range plan.Parts {
				seqs := PersistentSequences(plan.Parts[i].First, plan.Parts[i].Last+1)
				plan.Parts[i].Sequence = seqs[r.IntN(len(seqs))]
			}
		}
		p.Schedule = pl.GPipe
		g, err := Replay(p, plan)
		require.NoError(t, err)
		p.Schedule = pl.OneFOneB
		o, err := Replay(p, plan)
		require.NoError(t, err)
		for i := range plan.Parts {
			assert.GreaterOrEqual(t, g.Peak[i], o.Peak[i], "%d GPU %d", k, i)
		}
		for _, s := range pl.Schedules {
			p.Schedule = s
			p.MicroBatches = 400
			res, err := Replay(p, plan)
			require.NoError(t, err)
			per := res.Makespan / 400
			assert.LessOrEqual(t, res.Period, per*(1+1e-12), "%d %v", k, s)
			assert.InEpsilon(t, per, res.Period+1e-300, 0.01+1e-9, "%d %v: makespan/m %g, period %g", k, s, per, res.Period)
		}
	}
}
