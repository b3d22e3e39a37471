package pipeline

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
	pl "github.com/memsched/memsched/instances/pipeline"
	"github.com/memsched/memsched/schedule"
	vpl "github.com/memsched/memsched/verify/pipeline"
)

// chain returns a chain of stages with the given u_f + u_b (u_f = t/3, u_b = 2t/3), ω_a = ω_ā =
// 1, ω_δ = 0, plus a zero loss stage.
func chain(ts ...float64) *instances.Chain {
	c := &instances.Chain{}
	for _, t := range ts {
		c.Stages = append(c.Stages, instances.Stage{UF: t / 3, UB: 2 * t / 3, A: 1, ABar: 1})
	}
	c.Stages = append(c.Stages, instances.Stage{Name: "loss"})
	return c
}

func TestUniform(t *testing.T) {
	p := &pl.Problem{Chain: chain(1, 1, 1, 1, 1, 1, 1), GPUs: 3, Memory: 100, Bandwidth: math.Inf(1), MicroBatches: 4}
	assert.Equal(t, []int{3, 5, 7}, Uniform(p), "7 layers on 3 GPUs: 3, 2, 2 (numpy.array_split)")
	p.GPUs = 9
	assert.Equal(t, []int{1, 2, 3, 4, 5, 6, 7}, Uniform(p), "more GPUs than layers: one layer each")
}

func TestBalanced(t *testing.T) {
	p := &pl.Problem{Chain: chain(6, 1, 1, 1, 1, 1, 1), GPUs: 2, Memory: 100, Bandwidth: math.Inf(1), MicroBatches: 4}
	assert.Equal(t, []int{1, 7}, Balanced(p), "the heavy first layer alone, the six others together: largest 6")
	p.GPUs = 3
	assert.Equal(t, []int{1, 4, 7}, Balanced(p))
}

// TestPipeDreamT10 is research/pipeline.md's T10: SPEC §7's chain (t = 3 per layer, ω_a = 1,
// w = 0) on 2 GPUs of 3 B. PipeDream's count, (Σω_a + Σw)·(N−1−s), lets [1–2] [3–4] through
// (GPU 0: 2 B × 1 copy, GPU 1 unchecked) for a stage time of 6, but under SPEC §7 GPU 0 holds
// two micro-batches of its input-free 2 B: 4 B — PipeDream's plan does not fit.
func TestPipeDreamT10(t *testing.T) {
	p := &pl.Problem{Chain: chain(3, 3, 3, 3), GPUs: 2, Memory: 3, Bandwidth: math.Inf(1), MicroBatches: 4}
	p.Chain.A0 = 0
	cuts := PipeDream(p)
	require.Equal(t, []int{2, 4}, cuts)
	res, err := vpl.Replay(p, schedule.NewContiguous(cuts))
	require.NoError(t, err)
	require.False(t, res.Fits())
	assert.Equal(t, 0, res.Violation.GPU)
	assert.Equal(t, int64(4), res.Violation.InUse)
	// At 1 B its check still passes [1] [2–4]: the first stage stashes one copy of 1 B and
	// the last stage is never checked, though it needs its input and three ā (4 B).
	p.Memory = 1
	assert.Equal(t, []int{1, 4}, PipeDream(p))
}

// TestPipeDreamFewerMachines: with use_fewer_machines PipeDream keeps a prefix on fewer GPUs
// when more are not faster: one heavy layer and a light tail take 2 GPUs of 4.
func TestPipeDreamFewerMachines(t *testing.T) {
	p := &pl.Problem{Chain: chain(10, 1, 1), GPUs: 4, Memory: 100, Bandwidth: math.Inf(1), MicroBatches: 4}
	cuts := PipeDream(p)
	require.NotNil(t, cuts)
	assert.Equal(t, 3, cuts[len(cuts)-1])
	assert.Equal(t, 1, cuts[0], "the heavy layer alone")
}
