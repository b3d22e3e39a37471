package pipeline

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
	pl "github.com/memsched/memsched/instances/pipeline"
	"github.com/memsched/memsched/schedule"
)

// specChain is SPEC §7's hand-checked chain: L = 4, u_f = 1, u_b = 2, ω_a^0 = 0,
// ω_a = ω_ā = 1 for stages 1–4, ω_δ = 0, w = 0, no overheads, a zero-cost loss stage.
func specChain() *instances.Chain {
	c := &instances.Chain{Name: "spec7"}
	for range 4 {
		c.Stages = append(c.Stages, instances.Stage{UF: 1, UB: 2, A: 1, ABar: 1})
	}
	c.Stages = append(c.Stages, instances.Stage{Name: "loss"})
	return c
}

func specProblem(P int, M int64, beta float64) *pl.Problem {
	return &pl.Problem{Chain: specChain(), GPUs: P, Memory: M, Bandwidth: beta, MicroBatches: 4, Schedule: pl.OneFOneB}
}

// TestSpecCases checks SPEC §7's five hand-checked cases: the replay of the stated allocation
// gives the stated makespan, and the exhaustive referee finds no better one (or none at all).
func TestSpecCases(t *testing.T) {
	inf := math.Inf(1)
	const big = 1 << 40
	cases := []struct {
		name     string
		P        int
		M        int64
		beta     float64
		cuts     []int
		makespan float64 // 0: infeasible
	}{
		{"one GPU", 1, big, inf, []int{4}, 48},
		{"two GPUs, (m+S−1)·6", 2, big, inf, []int{2, 4}, 30},
		{"four GPUs, (m+S−1)·3", 4, big, inf, []int{1, 2, 3, 4}, 21},
		{"two GPUs, 1 B/s links", 2, big, 1, []int{2, 4}, 32},
		{"two GPUs, 3 B: infeasible", 2, 3, inf, []int{2, 4}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := specProblem(tc.P, tc.M, tc.beta)
			res, err := Replay(p, schedule.NewContiguous(tc.cuts))
			require.NoError(t, err)
			ref, err := Exhaustive(p, RefereeOptions{Remat: false})
			require.NoError(t, err)
			if tc.makespan == 0 {
				assert.False(t, res.Fits())
				assert.Equal(t, int64(4), res.Peak[0], "GPU 0 holds 2 micro-batches × 2 B")
				assert.False(t, ref.Feasible, "every allocation needs 4 B on some GPU")
				return
			}
			require.True(t, res.Fits(), "%v", res.Violation)
			assert.Equal(t, tc.makespan, res.Makespan)
			require.True(t, ref.Feasible)
			assert.Equal(t, tc.makespan, ref.Makespan, "best allocation %v", ref.Plan)
		})
	}
}

// TestSpecPeriods: the hand-checked chain's periods. Balanced stages without transfers run one
// micro-batch per stage time; with 1 B/s the forward link (1 s per micro-batch) is below the
// stage time 6, but the round trip of GPU 0 (6+6+1 over 2 micro-batches) is 6.5.
func TestSpecPeriods(t *testing.T) {
	inf := math.Inf(1)
	for _, tc := range []struct {
		name   string
		p      *pl.Problem
		cuts   []int
		period float64
		exact  string
	}{
		{"one GPU", specProblem(1, 1<<40, inf), []int{4}, 12, "12"},
		{"two GPUs", specProblem(2, 1<<40, inf), []int{2, 4}, 6, "6"},
		{"four GPUs", specProblem(4, 1<<40, inf), []int{1, 2, 3, 4}, 3, "3"},
		{"two GPUs, 1 B/s", specProblem(2, 1<<40, 1), []int{2, 4}, 6.5, "13/2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Replay(tc.p, schedule.NewContiguous(tc.cuts))
			require.NoError(t, err)
			assert.Equal(t, tc.period, res.Period)
			assert.Equal(t, tc.exact, res.PeriodExact)
		})
	}
}

// TestSpecGPipe: GPipe on the hand-checked chain holds all m micro-batches: GPU 0 of
// [1–2] [3–4] peaks at 4·2 B (1F1B: 2·2 B), GPU 1 at 4·3 B (1F1B: 3 B); the makespan is the same 30 here (balanced, no
// transfers), and the period is λ_F + λ_B = 2 + 4.
func TestSpecGPipe(t *testing.T) {
	p := specProblem(2, 1<<40, math.Inf(1))
	p.Schedule = pl.GPipe
	res, err := Replay(p, schedule.NewContiguous([]int{2, 4}))
	require.NoError(t, err)
	assert.Equal(t, []int64{8, 12}, res.Peak, "4 micro-batches × 2 B; × (a^2 + ā^3 + ā^4)")
	assert.Equal(t, 30.0, res.Makespan)
	assert.Equal(t, 6.0, res.Period)
	p.Schedule = pl.OneFOneB
	res, err = Replay(p, schedule.NewContiguous([]int{2, 4}))
	require.NoError(t, err)
	assert.Equal(t, []int64{4, 3}, res.Peak, "GPU 1 holds its input a^2 and ā^3, ā^4 of one micro-batch")
}
