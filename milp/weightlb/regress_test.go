//go:build highs && lpsolve

package weightlb_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/instances/offload"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/highs"
	"github.com/memsched/memsched/milp/lpsolve"
	"github.com/memsched/memsched/milp/weightlb"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify/periodic"
)

// TestByteScaleRegressions: three byte-scale instances (issue 10) on which the bound built in
// MiB units was wrong. Each case says what it caught; each is checked with both backends, the
// guard's evidence included, and the MILP-guided schedule validates at or above the bound.
func TestByteScaleRegressions(t *testing.T) {
	cases := []struct {
		file, mem string
		beta      float64
		want      float64
		why       string
	}{
		{"testdata/a.json", "38", 4, 77, "HiGHS said infeasible in MiB units; greedy validates 77 = Σu"},
		{"testdata/b.json", "140", 1, 41, "HiGHS said optimal 40 in MiB units; cbc and lp_solve 41"},
		{"testdata/c.json", "28", 3, 69, "the bound came out 69.33 above the model's optimum 69"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			ch, err := instances.LoadChain(c.file)
			require.NoError(t, err)
			mem, err := instances.ParseSize(c.mem)
			require.NoError(t, err)
			p, err := offload.FromChain(ch, mem, c.beta)
			require.NoError(t, err)
			for _, newSolver := range []func() (milp.Solver, error){highs.New, lpsolve.New} {
				s, err := newSolver()
				require.NoError(t, err)
				cert, err := weightlb.LowerBound(context.Background(), p, weightlb.Options{Solvers: []milp.Solver{s}, Params: milp.Params{RelGap: 1e-9}})
				require.NoError(t, err)
				require.Equal(t, milp.Optimal, cert.MILP.Status, "%s: %s", s.Name(), c.why)
				require.Len(t, cert.MILP.Attempts, 1, "%s: believed at the first attempt", s.Name())
				assert.InDelta(t, c.want, cert.Value, 1e-6, "%s: %s", s.Name(), c.why)
				_, rep, err := weightlb.Guided(p, cert)
				require.NoError(t, err)
				assert.GreaterOrEqual(t, rep.Period, cert.Value-1e-9)
			}
		})
	}
}

// TestInputActivationCounts: the input a⁰ stays on the GPU all iteration, so it raises every
// operation's memory. With a⁰ = 0 the 5-layer instance below needs no offloading at M_GPU = 40;
// with a⁰ = 9 every operation needs 9 more bytes, weights must move and the bound grows — and a
// schedule valid without a⁰ (keep everything) overflows by exactly |a⁰|.
func TestInputActivationCounts(t *testing.T) {
	layers := []offload.Layer{{UF: 1, UB: 2, W: 6, A: 1}, {UF: 2, UB: 2, W: 5, A: 2}, {UF: 1, UB: 3, W: 7, A: 1}, {UF: 2, UB: 1, W: 4, A: 1}, {UF: 1, UB: 2, W: 5, A: 1}}
	s, err := highs.New()
	require.NoError(t, err)
	bound := func(a0 int64) float64 {
		p := &offload.Problem{Layers: layers, MGPU: 40, Beta: 1, A0: a0}
		cert, err := weightlb.LowerBound(context.Background(), p, weightlb.Options{Solvers: []milp.Solver{s}, Params: milp.Params{RelGap: 1e-9}})
		require.NoError(t, err)
		return cert.Value
	}
	sumU := 17.0
	assert.InDelta(t, sumU, bound(0), 1e-9, "27 B of weights + 6 B of activations + 7 B for B_3 fit in 40 B")
	assert.Greater(t, bound(9), sumU+0.5, "with a⁰ = 9 B weights must move and the link costs time")

	// Keep everything on the GPU: valid without a⁰, over M_GPU by the input with it.
	L := len(layers)
	keep := &schedule.Periodic{Period: sumU, OpStart: make([]float64, 2*L), Resident: make([]bool, L+1), CPUValid: make([]bool, L+1)}
	t0 := 0.0
	for j := 0; j < 2*L; j++ {
		keep.OpStart[j] = t0
		i, b := schedule.PeriodicOp(L, j)
		if b {
			t0 += layers[i-1].UB
		} else {
			t0 += layers[i-1].UF
		}
	}
	for i := 1; i <= L; i++ {
		keep.Resident[i] = true
	}
	rep, err := periodic.Validate(&offload.Problem{Layers: layers, MGPU: 40, Beta: 1}, keep)
	require.NoError(t, err)
	assert.Equal(t, int64(38), rep.Peak, "B_3: 27 B of weights, 7 more for its gradient, a¹…a³ = 4 B")
	_, err = periodic.Validate(&offload.Problem{Layers: layers, MGPU: 40, Beta: 1, A0: 9}, keep)
	require.ErrorContains(t, err, "memory 41 B exceeds M_GPU = 40 B", "F_4: 27 + a¹…a⁴ = 5 + a⁰ = 9")
}
