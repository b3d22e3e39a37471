package combined_test

import (
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify/combined"
	"github.com/memsched/memsched/verify/oracle"
)

// TestSpecCasesFluid: SPEC §6's five hand-checked cases, exactly. The plan each row describes
// has the tabulated fluid makespan, and the exhaustive search of the class finds that optimum
// — and, with offloading or recomputation switched off, the remat-only (C_MP) and
// offload-only columns (infeasible where the table says so).
func TestSpecCasesFluid(t *testing.T) {
	for _, sc := range specCases() {
		r, err := combined.Fluid(sc.chain, sc.budget, sc.beta, sc.plan)
		require.NoError(t, err, sc.name)
		require.True(t, r.Feasible, "%s: %s", sc.name, r.Reason)
		assert.Zero(t, r.Exact.Cmp(sc.combined), "%s: plan %v has fluid makespan %s, SPEC %s", sc.name, sc.plan, r.Exact.RatString(), sc.combined.RatString())
		for _, col := range []struct {
			what string
			opt  oracle.CombinedOptions
			want *big.Rat
		}{{"combined", oracle.CombinedOptions{}, sc.combined}, {"remat only", oracle.CombinedOptions{NoOffload: true}, sc.remat},
			{"offload only", oracle.CombinedOptions{NoRecompute: true}, sc.offload}} {
			p, v, ok, err := oracle.Combined(sc.chain, sc.budget, sc.beta, col.opt)
			require.NoError(t, err)
			if col.want == nil {
				assert.False(t, ok, "%s %s: want infeasible, got %v = %s", sc.name, col.what, p, v)
				continue
			}
			require.True(t, ok, "%s %s", sc.name, col.what)
			assert.Zero(t, v.Cmp(col.want), "%s %s: %s (plan %v), want %s", sc.name, col.what, v.RatString(), p, col.want.RatString())
		}
	}
}

// TestFluidRejectsBadPlans: plans that are not of the class are errors naming the fault.
func TestFluidRejectsBadPlans(t *testing.T) {
	c := chainAD()
	for _, tc := range []struct {
		plan *schedule.CombinedPlan
		want string
	}{
		{&schedule.CombinedPlan{Segments: []schedule.CombinedSegment{{Start: 1, End: 1, All: true}}}, "segments end at stage 1"},
		{&schedule.CombinedPlan{Segments: []schedule.CombinedSegment{{Start: 2, End: 2, All: true}}}, "starts at stage 2"},
		{&schedule.CombinedPlan{Segments: []schedule.CombinedSegment{{Start: 1, End: 2, All: true}}}, "F_all segment has one stage"},
		{&schedule.CombinedPlan{Segments: []schedule.CombinedSegment{{Start: 1, End: 2}}}, "no backward sequence"},
		{&schedule.CombinedPlan{Segments: []schedule.CombinedSegment{{Start: 1, End: 2, Backward: schedule.Sequence{fall(1), fall(2), bop(2)}}}}, "ends with B^2, want B^1"},
		{&schedule.CombinedPlan{Segments: []schedule.CombinedSegment{{Start: 1, End: 1, Backward: schedule.Sequence{fall(1), bop(1)}}, {Start: 2, End: 2, Backward: schedule.Sequence{fall(1), bop(1)}}}}, "outside stages 2..2"},
	} {
		_, err := combined.Fluid(c, 100, 1, tc.plan)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
	}
}

// TestFluidRationalLink: with times divided by 3 and β multiplied by 3 the link moves the same
// bytes during each operation, but β·u is no longer a whole number in binary floating point:
// the rational path gives every case's makespan divided by 3 (to rounding of u/3).
func TestFluidRationalLink(t *testing.T) {
	for _, sc := range specCases() {
		c := sc.chain.Clone()
		for i := range c.Stages {
			c.Stages[i].UF /= 3
			c.Stages[i].UB /= 3
		}
		r, err := combined.Fluid(c, sc.budget, 3*sc.beta, sc.plan)
		require.NoError(t, err)
		require.True(t, r.Feasible, sc.name)
		want, _ := sc.combined.Float64()
		assert.InDelta(t, want/3, r.Makespan, 1e-12, sc.name)
	}
}
