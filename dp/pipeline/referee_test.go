package pipeline

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	pl "github.com/memsched/memsched/instances/pipeline"
	vpl "github.com/memsched/memsched/verify/pipeline"
)

// checkAgainstReferee plans p and compares with verify/pipeline's exhaustive referee: the same
// feasibility, the same makespan (exact: integer instances), a proven optimum, a bound equal to
// it.
func checkAgainstReferee(t *testing.T, name string, p *pl.Problem, o Options) {
	t.Helper()
	ref, err := vpl.Exhaustive(p, vpl.RefereeOptions{Remat: o.Remat})
	require.NoError(t, err, name)
	res, err := Plan(p, o)
	require.NoError(t, err, name)
	require.True(t, res.Complete, name)
	require.Equal(t, ref.Feasible, res.Feasible, "%s: referee %v (%v), planner %v", name, ref.Feasible, ref.Plan, res.Plan)
	if !ref.Feasible {
		return
	}
	require.Equal(t, ref.Makespan, res.Makespan, "%s: referee %v, planner %v", name, ref.Plan, res.Plan)
	require.True(t, res.Optimal, name)
	require.Equal(t, res.Makespan, res.Bound, name)
}

// TestPlanStoreAllAgainstReferee: 500 random tiny instances (both schedules, β free or 1–4
// B/s, weights on half of them), at byte and GiB scale: the store-all planner's optimum is the
// referee's.
func TestPlanStoreAllAgainstReferee(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 1))
	feasible := 0
	for k := range 500 {
		p := pl.RandomTiny(r, k)
		checkAgainstReferee(t, "bytes", p, Options{})
		checkAgainstReferee(t, "GiB", p.Scaled(1<<30), Options{})
		if res, _ := Plan(p, Options{}); res.Feasible {
			feasible++
		}
	}
	require.Greater(t, feasible, 150, "the population must have feasible instances")
	require.Less(t, feasible, 480, "and infeasible ones")
}

// TestPlanRematAgainstReferee: 500 instances of the same population with recomputation inside the parts, the
// tables exact in bytes: the planner's optimum is the referee's (every persistent sequence of
// every part, replayed), at byte and GiB scale.
func TestPlanRematAgainstReferee(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 2))
	o := Options{Remat: true}
	o.Exact = true
	gain := 0
	for k := range 500 {
		p := pl.RandomTiny(r, k)
		checkAgainstReferee(t, "bytes", p, o)
		checkAgainstReferee(t, "GiB", p.Scaled(1<<30), o)
		a, _ := Plan(p, Options{})
		b, _ := Plan(p, o)
		if b.Feasible && (!a.Feasible || b.Makespan < a.Makespan) {
			gain++
		}
	}
	require.Greater(t, gain, 20, "recomputation must matter on part of the population")
}
