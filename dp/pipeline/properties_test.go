package pipeline

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/dp"
	pl "github.com/memsched/memsched/instances/pipeline"
	vpl "github.com/memsched/memsched/verify/pipeline"
)

// optimum is the planner's proven optimum (+Inf when nothing fits).
func optimum(t *testing.T, p *pl.Problem, o Options) float64 {
	t.Helper()
	res, err := Plan(p, o)
	require.NoError(t, err)
	require.True(t, res.Complete)
	if !res.Feasible {
		return math.Inf(1)
	}
	require.True(t, res.Optimal)
	return res.Makespan
}

// TestMonotone: SPEC §7's properties on 300 random tiny instances (both schedules, with and
// without recomputation, byte and GiB scale): the optimum does not increase with M, with β, or
// with P (S ≤ P is allowed), and it does not change with the scale.
func TestMonotone(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 4))
	for k := range 300 {
		p := pl.RandomTiny(r, k)
		o := Options{Remat: k%2 == 0}
		base := optimum(t, p, o)
		require.Equal(t, base, optimum(t, p.Scaled(1<<30), o), "%d: GiB scale", k)
		q := *p
		q.Memory = p.Memory + 1 + int64(r.IntN(8))
		require.LessOrEqual(t, optimum(t, &q, o), base, "%d: more memory", k)
		q = *p
		if math.IsInf(p.Bandwidth, 1) {
			q.Bandwidth = 1
			require.GreaterOrEqual(t, optimum(t, &q, o), base, "%d: slower links", k)
		} else {
			q.Bandwidth = 2 * p.Bandwidth
			require.LessOrEqual(t, optimum(t, &q, o), base, "%d: faster links", k)
		}
		q = *p
		q.GPUs = p.GPUs + 1
		require.LessOrEqual(t, optimum(t, &q, o), base, "%d: more GPUs", k)
	}
}

// TestStoreAllMemory: storing everything fits at StoreAllMemory and not a byte below, against
// the exhaustive referee (300 tiny instances).
func TestStoreAllMemory(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 5))
	for k := range 300 {
		p := pl.RandomTiny(r, k)
		q := *p
		m, err := StoreAllMemory(p, Options{})
		require.NoError(t, err)
		q.Memory = m
		ref, err := vpl.Exhaustive(&q, vpl.RefereeOptions{})
		require.NoError(t, err)
		require.True(t, ref.Feasible, "%d", k)
		if q.Memory > 1 {
			q.Memory--
			ref, err = vpl.Exhaustive(&q, vpl.RefereeOptions{})
			require.NoError(t, err)
			require.False(t, ref.Feasible, "%d: fits below", k)
		}
	}
}

// TestOneGPUPlan: the planner on one GPU under 1F1B is §1's optimum times m — storing
// everything (m·Σ(u_f + u_b) when it fits) and with rotor's persistent class (m × the exact
// C_MP optimum in M − Σw; the loss gradient is 0, so §1's and §7's counts agree).
func TestOneGPUPlan(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 9))
	checked := 0
	for k := range 300 {
		p := pl.RandomTiny(r, k)
		p.GPUs, p.Schedule = 1, pl.OneFOneB
		var w int64
		for _, st := range p.Chain.Stages {
			w += st.W
		}
		got := optimum(t, p, Options{Remat: true})
		want := math.Inf(1)
		if p.Memory-w >= p.Chain.A0 {
			ref, err := dp.SolvePersistent(p.Chain, p.Memory-w, dp.Options{Exact: true})
			require.NoError(t, err)
			if ref.Feasible {
				want = float64(p.MicroBatches) * ref.Makespan
				checked++
			}
		}
		require.Equal(t, want, got, "%d", k)
	}
	require.Greater(t, checked, 50)
}
