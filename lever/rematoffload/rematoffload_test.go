package rematoffload_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/heuristics/checkpoint"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/lever/rematoffload"
	"github.com/memsched/memsched/verify"
)

// TestSpecCases: SPEC §6's five cases through the registry: pofo in exact mode finds the
// tabulated optimum and its strict schedule meets it (7, 6.5, 7, 8, 11 s); the other
// strategies find plans that validate, never below the optimum.
func TestSpecCases(t *testing.T) {
	for _, tc := range instances.SpecCombinedCases() {
		for _, st := range rematoffload.Strategies {
			out, err := st.Run(tc.Chain, tc.Budget, tc.Beta, rematoffload.Options{Exact: true, Slots: 100})
			require.NoError(t, err, "%s %s", tc.Name, st.Name)
			if !out.Feasible {
				assert.NotEqual(t, "pofo", st.Name, tc.Name)
				t.Logf("%s %s: no plan", tc.Name, st.Name)
				continue
			}
			if st.Direct() {
				// A schedule outside the class: at least the strict optimum, which equals the
				// class's here (oracle's TestStrictSpecCases).
				assert.GreaterOrEqual(t, out.Report.Exact.Cmp(tc.Combined), 0, "%s %s", tc.Name, st.Name)
				t.Logf("%s %s: strict %s (%s)", tc.Name, st.Name, out.Report.Exact.RatString(), out.Source)
				continue
			}
			assert.GreaterOrEqual(t, out.Fluid.Exact.Cmp(tc.Combined), 0, "%s %s", tc.Name, st.Name)
			assert.GreaterOrEqual(t, out.Report.Exact.Cmp(out.Fluid.Exact), 0)
			t.Logf("%s %s: fluid %s strict %s  %v", tc.Name, st.Name, out.Fluid.Exact.RatString(), out.Report.Exact.RatString(), out.Plan)
			if st.Name == "pofo" {
				assert.Zero(t, out.Fluid.Exact.Cmp(tc.Combined), tc.Name)
				assert.Zero(t, out.Report.Exact.Cmp(tc.Combined), tc.Name)
			}
		}
	}
}

// TestTooLargeNamesTheLever: a strategy whose C_MP table is above --max-memory is refused
// with the slots that fit and this lever's alternatives, not remat's (--algo sequential and
// store-all are not strategies of remat-offload).
func TestTooLargeNamesTheLever(t *testing.T) {
	c := instances.Random(rand.New(rand.NewPCG(7, 200)), instances.RandomParams{Stages: 200, MaxSize: 64 << 20, MaxTime: 5e-3, WithABar: true, WithOverheads: true})
	budget := 3 * verify.MinBudget(c)
	for _, name := range []string{"pofo", "offload-then-remat"} {
		st, ok := rematoffload.Lookup(name)
		require.True(t, ok)
		_, err := st.Run(c, budget, 12e9, rematoffload.Options{MaxMemory: 16 << 20})
		var tl *dp.TooLargeError
		require.ErrorAs(t, err, &tl, name)
		assert.Contains(t, err.Error(), "or fewer, another --algo of this lever, or raise --max-memory", name)
		assert.NotContains(t, err.Error(), "sequential", name)
	}
}

// TestSequenceOffloadSaysWhyNone: past C_FL's stage limit, without other strategies'
// sequences and without room for C_MP's table, sequence-offload still schedules the store-all
// sequence with transfers, down to remat's smallest budget and below it (every other tensor
// away); where even that fails, it says what each source lacked instead of "no plan fits"
// (which reads as a proof).
func TestSequenceOffloadSaysWhyNone(t *testing.T) {
	c := instances.Random(rand.New(rand.NewPCG(3, 201)), instances.RandomParams{Stages: dp.MaxFloatingStages + 1, MaxSize: 64 << 20, MaxTime: 5e-3, WithABar: true})
	st, ok := rematoffload.Lookup("sequence-offload")
	require.True(t, ok)
	for _, budget := range []int64{verify.MinBudget(c), verify.MinBudget(c) * 9 / 10} {
		out, err := st.Run(c, budget, 12e9, rematoffload.Options{MaxMemory: 1 << 10})
		require.NoError(t, err)
		require.True(t, out.Feasible, "%d B: %s", budget, out.Why)
		assert.Contains(t, out.Source, "the store-all sequence")
		assert.LessOrEqual(t, out.Report.Peak, budget)
	}
	out, err := st.Run(c, verify.MinBudget(c)/2, 12e9, rematoffload.Options{MaxMemory: 1 << 10})
	require.NoError(t, err)
	assert.False(t, out.Feasible)
	assert.Contains(t, out.Why, "no candidate sequence: no other strategy had a schedule")
	for _, lacked := range []string{"no transfers bring the store-all sequence within the budget", "no sequential checkpointing fits", "C_FL's tables stop at 200 stages", "C_MP's table"} {
		assert.Contains(t, out.Why, lacked, "and what its own sources lacked")
	}
}

// TestSequenceOffloadAloneStartsFromCMP: run alone (remat-offload --algo sequence-offload),
// nothing else gives it a sequence; it takes C_MP's with slots. Before, past C_FL's stage
// limit it had none at all, and on `gen random --seed 3 --stages 150` at 3 GiB it spent the
// whole --time-limit (60 s) on C_FL's exact table and found nothing; now Σu there, proven.
func TestSequenceOffloadAloneStartsFromCMP(t *testing.T) {
	c := instances.Random(rand.New(rand.NewPCG(3, 201)), instances.RandomParams{Stages: dp.MaxFloatingStages + 1, MaxSize: 64 << 20, MaxTime: 5e-3, WithABar: true})
	budget := 3 * verify.MinBudget(c)
	st, ok := rematoffload.Lookup("sequence-offload")
	require.True(t, ok)
	out, err := st.Run(c, budget, 12e9, rematoffload.Options{})
	require.NoError(t, err)
	require.True(t, out.Feasible, out.Why)
	assert.Contains(t, out.Source, "C_MP's sequence with 500 slots")
	cmp, err := dp.SolvePersistent(c, budget, dp.Options{})
	require.NoError(t, err)
	require.True(t, cmp.Feasible)
	// Checked by Run (verify/combined); no slower than the sequence it starts from.
	assert.LessOrEqual(t, out.Report.Makespan, cmp.Makespan*(1+1e-12))
	assert.LessOrEqual(t, out.Report.Peak, budget)
}

// TestSequenceOffloadAloneOnALongChain: past a few hundred stages C_MP's table (O(L³)) does
// not end within a short limit — 2001 stages took more than 40 s even with the slots cut to
// what --max-memory allows, and sequence-offload alone had no schedule. The store-all sequence
// covered by transfers and the best sequential checkpointing come first now (both near
// linear): there is a validated schedule no slower than sequential checkpointing, within the
// deadline (6.21 s against its 7.10 s; Σu 5.05 s).
func TestSequenceOffloadAloneOnALongChain(t *testing.T) {
	c := instances.Random(rand.New(rand.NewPCG(3, 1001)), instances.RandomParams{Stages: 1001, MaxSize: 64 << 20, MaxTime: 5e-3, WithABar: true})
	sa, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
	require.NoError(t, err)
	budget := sa.Peak / 4
	sq, ok, err := checkpoint.BestSequential(c, budget)
	require.NoError(t, err)
	require.True(t, ok, "sequential checkpointing fits a quarter of the store-all peak")
	st, ok := rematoffload.Lookup("sequence-offload")
	require.True(t, ok)
	start := time.Now()
	out, err := st.Run(c, budget, 12e9, rematoffload.Options{Deadline: start.Add(3 * time.Second)})
	require.NoError(t, err)
	require.True(t, out.Feasible, out.Why)
	assert.LessOrEqual(t, out.Report.Makespan, sq.Makespan*(1+1e-12))
	assert.LessOrEqual(t, out.Report.Peak, budget)
	t.Logf("%s: %.4f s (sequential %.4f s, Σu %.4f s) in %v", out.Source, out.Report.Makespan, sq.Makespan, c.ComputeTime(), time.Since(start))
}
