package combined_test

import (
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
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

// TestTurnCounterexample: SPEC §6 says the fluid makespan of a plan is at most the strict
// makespan of any schedule of it. Not at the turn: on this chain (found by the property test of
// lever/rematoffload) the plan Off(a^0) F_all^1 · Off(ā^1) F_all^2 · Off(ā^2) F_all^3 ·
// F_all^4 has fluid makespan 13 s — the fluid model idles after F_all^5 until ā^2 has left —
// while a strict schedule runs B^5 (2 s) beside that offload and ends at 12 s. Without the
// turn's idle (FluidFreeTurn) the fluid value is at most the strict one.
func TestTurnCounterexample(t *testing.T) {
	c := &instances.Chain{Name: "turn", A0: 5, Delta0: 3, Stages: []instances.Stage{
		{UF: 1, UB: 1, A: 3, ABar: 6, Delta: 5, OF: 1, OB: 0},
		{UF: 0, UB: 2, A: 5, ABar: 5, Delta: 3, OF: 0, OB: 1},
		{UF: 1, UB: 0, A: 6, ABar: 6, Delta: 5, OF: 1, OB: 1},
		{UF: 1, UB: 0, A: 6, ABar: 6, Delta: 5, OF: 3, OB: 4},
		{UF: 0, UB: 2, A: 0, ABar: 0, Delta: 0, OF: 5, OB: 1},
	}}
	p := &schedule.CombinedPlan{Segments: []schedule.CombinedSegment{
		{Start: 1, End: 1, All: true, Offload: true}, {Start: 2, End: 2, All: true, Offload: true},
		{Start: 3, End: 3, All: true, Offload: true}, {Start: 4, End: 4, All: true}}}
	f, err := combined.Fluid(c, 29, 3, p)
	require.NoError(t, err)
	assert.Zero(t, f.Exact.Cmp(big.NewRat(13, 1)), f.Exact.RatString())
	ft, err := combined.FluidFreeTurn(c, 29, 3, p)
	require.NoError(t, err)
	s := &schedule.Combined{
		Ops: []schedule.CombinedOp{cop(schedule.Fall, 1), cop(schedule.Fall, 2), cop(schedule.Fall, 3), cop(schedule.Fall, 4),
			cop(schedule.Fall, 5), cop(schedule.B, 5), cop(schedule.B, 4, 2), cop(schedule.B, 3, 3), cop(schedule.B, 2, 4), cop(schedule.B, 1, 5)},
		Transfers: []schedule.CombinedTransfer{ctr(schedule.Offload, 0, false, -1), ctr(schedule.Offload, 1, true, 0),
			ctr(schedule.Offload, 2, true, 1), ctr(schedule.Prefetch, 2, true, 6), ctr(schedule.Prefetch, 1, true, 1), ctr(schedule.Prefetch, 0, false, 0)},
	}
	r, err := combined.Check(c, 29, 3, s)
	require.NoError(t, err)
	assert.Zero(t, r.Exact.Cmp(big.NewRat(12, 1)), r.Exact.RatString())
	assert.Equal(t, []float64{0, 1, 1, 2, 3, 3}, r.OpStart[:6]) // B^5 runs at 3 while ā^2 is still leaving
	assert.LessOrEqual(t, ft.Exact.Cmp(r.Exact), 0, "free turn %s", ft.Exact.RatString())
}
