package pipeline

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/dp"
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

// balancedScan is Balanced's O(S·L²) scan, the definition Balanced's crossing search must
// equal: every first-part end e from i, the earliest strictly better kept.
func balancedScan(p *pl.Problem) []int {
	L := p.L()
	S := min(p.GPUs, L)
	t := prefixTimes(p)
	w := func(s, e int) float64 {
		if e == L {
			return t[L+1] - t[s-1]
		}
		return t[e] - t[s-1]
	}
	D := make([][]float64, S+1)
	arg := make([][]int, S+1)
	for g := 1; g <= S; g++ {
		D[g], arg[g] = make([]float64, L+2), make([]int, L+2)
		for i := 1; i <= L; i++ {
			D[g][i] = math.Inf(1)
			if g == 1 {
				D[g][i], arg[g][i] = w(i, L), L
				continue
			}
			for e := i; e <= L-g+1; e++ {
				if v := max(w(i, e), D[g-1][e+1]); v < D[g][i] {
					D[g][i], arg[g][i] = v, e
				}
			}
		}
	}
	cuts := make([]int, 0, S)
	for i, g := 1, S; g >= 1; g-- {
		e := arg[g][i]
		cuts = append(cuts, e)
		i = e + 1
	}
	return cuts
}

// TestBalancedMatchesScan: the crossing search gives the scan's cuts, ties included, on 2000
// random chains of 1–40 stages: half with small integer times (many ties, zero-time stages),
// half with float times at the millisecond scale, on 1–12 GPUs.
func TestBalancedMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 31))
	for n := 0; n < 2000; n++ {
		L := 1 + rng.IntN(40)
		c := &instances.Chain{}
		for l := 0; l < L; l++ {
			var uf, ub float64
			if n%2 == 0 {
				uf, ub = float64(rng.IntN(3)), float64(rng.IntN(4))
			} else {
				uf, ub = 1e-3*rng.Float64(), 2e-3*rng.Float64()
			}
			c.Stages = append(c.Stages, instances.Stage{UF: uf, UB: ub, A: 1, ABar: 1})
		}
		c.Stages = append(c.Stages, instances.Stage{Name: "loss", UF: float64(rng.IntN(2)), UB: float64(rng.IntN(2))})
		p := &pl.Problem{Chain: c, GPUs: 1 + rng.IntN(12), Memory: 100, Bandwidth: math.Inf(1), MicroBatches: 4}
		require.Equal(t, balancedScan(p), Balanced(p), "chain %d: L = %d, P = %d", n, L, p.GPUs)
	}
}

// TestPipeDreamUntil: unstopped it is PipeDream; a stop ends it with ErrStopped, never with
// the split of a half-filled table.
func TestPipeDreamUntil(t *testing.T) {
	p := &pl.Problem{Chain: chain(3, 3, 3, 3, 1, 1, 1, 1), GPUs: 3, Memory: 100, Bandwidth: math.Inf(1), MicroBatches: 4}
	cuts, err := PipeDreamUntil(p, &dp.Poll{})
	require.NoError(t, err)
	assert.Equal(t, PipeDream(p), cuts)
	stop := make(chan struct{})
	close(stop)
	cuts, err = PipeDreamUntil(p, &dp.Poll{Stop: stop})
	assert.ErrorIs(t, err, ErrStopped)
	assert.Nil(t, cuts)
}
