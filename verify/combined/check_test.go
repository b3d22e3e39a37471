package combined_test

import (
	"encoding/json"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify/combined"
)

func cop(k schedule.OpKind, l int, wait ...int) schedule.CombinedOp {
	return schedule.CombinedOp{Op: schedule.Op{Kind: k, Stage: l}, Wait: wait}
}

func ctr(k schedule.TransferKind, stage int, full bool, after int) schedule.CombinedTransfer {
	return schedule.CombinedTransfer{Kind: k, Tensor: schedule.Tensor{Stage: stage, Full: full}, After: after}
}

// caseA is SPEC §6 case A as an executable schedule: a^0 leaves during F_all^1 and comes back
// after B^2 (7 s, the fluid optimum).
func caseA() *schedule.Combined {
	return &schedule.Combined{
		Ops: []schedule.CombinedOp{cop(schedule.Fall, 1), cop(schedule.Fall, 2), cop(schedule.Fall, 3), cop(schedule.B, 3),
			cop(schedule.B, 2), cop(schedule.B, 1, 1)},
		Transfers: []schedule.CombinedTransfer{ctr(schedule.Offload, 0, false, -1), ctr(schedule.Prefetch, 0, false, 4)},
	}
}

// caseE is SPEC §6 case E: Off(a^0) F_ck^1 · Off(a^1) F_all^2 · F_all^3 · F_all^4 B^4 · B^3
// · B^2 · F_all^1 B^1, a^1 back after B^3 and a^0 right behind it on the link (11 s).
func caseE() *schedule.Combined {
	return &schedule.Combined{
		Ops: []schedule.CombinedOp{cop(schedule.Fck, 1), cop(schedule.Fall, 2), cop(schedule.Fall, 3), cop(schedule.Fall, 4),
			cop(schedule.B, 4), cop(schedule.B, 3), cop(schedule.B, 2, 2), cop(schedule.Fall, 1, 3), cop(schedule.B, 1)},
		Transfers: []schedule.CombinedTransfer{ctr(schedule.Offload, 0, false, -1), ctr(schedule.Offload, 1, false, 0),
			ctr(schedule.Prefetch, 1, false, 5), ctr(schedule.Prefetch, 0, false, 5)},
	}
}

// TestCheckSpecSchedules: the strict schedules of cases A and E meet their fluid optimum
// exactly (7 s and 11 s) with the peaks worked out by hand; the JSON form reads back.
func TestCheckSpecSchedules(t *testing.T) {
	r, err := combined.Check(chainAD(), 12, 1, caseA())
	require.NoError(t, err)
	assert.Zero(t, r.Exact.Cmp(big.NewRat(7, 1)), r.Exact.RatString())
	assert.Equal(t, int64(12), r.Peak) // B^2: ā^1, ā^2, δ^2, δ^1
	assert.Equal(t, []float64{0, 1, 2, 2, 2, 5}, r.OpStart)
	assert.Equal(t, []float64{0, 4}, r.TransferStart)
	assert.Equal(t, 1, r.Offloaded)

	s := caseE()
	r, err = combined.Check(chainE(), 12, 2, s)
	require.NoError(t, err)
	assert.Zero(t, r.Exact.Cmp(big.NewRat(11, 1)), r.Exact.RatString())
	assert.Equal(t, int64(12), r.Peak)
	assert.InDelta(t, 1.0, r.Idle, 1e-12)
	combined.Stamp(s, r)
	data, err := json.Marshal(s)
	require.NoError(t, err)
	var back schedule.Combined
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, *s, back)
	r2, err := combined.Check(chainE(), 12, 2, &back)
	require.NoError(t, err)
	assert.Equal(t, r.Makespan, r2.Makespan)
}

// TestCheckReleased: a prefetch that starts while the tensor's reader still runs (case A
// with β = 2: a^0 is copied in 0.5 s, F_all^1 reads it until 1 s).
func TestCheckReleased(t *testing.T) {
	s := caseA()
	s.Transfers[1].After = -1
	_, err := combined.Check(chainAD(), 12, 2, s)
	var v *combined.Violation
	require.ErrorAs(t, err, &v)
	assert.Equal(t, combined.RuleReleased, v.Rule, "%v", v)
	assert.Equal(t, 1, v.Transfer)
	assert.InDelta(t, 0.5, v.Time, 1e-12)
	s.Transfers[1].After = 0 // after F_all^1: valid, and a^0 comes back at once
	r, err := combined.Check(chainAD(), 13, 2, s)
	require.NoError(t, err)
	assert.InDelta(t, 6, r.Makespan, 1e-12)
}

// TestCheckViolations: each fault is named with its rule, at the right place and time.
func TestCheckViolations(t *testing.T) {
	type fault struct {
		name   string
		edit   func(s *schedule.Combined)
		budget int64
		rule   combined.Rule
		op, tr int
		time   float64
	}
	for _, f := range []fault{
		{"a^1 prefetched during B^3 overflows", func(s *schedule.Combined) { s.Transfers[2].After = 4 }, 12, combined.RuleMemory, -1, 2, 3},
		{"one byte less", func(s *schedule.Combined) {}, 11, combined.RuleMemory, 5, -1, 3},
		// Without the wait, B^2 reads a^1 before its prefetch is waited for: a^1 is still in
		// use, so it never leaves, and memory overflows at B^3.
		{"B^2 does not wait for a^1", func(s *schedule.Combined) { s.Ops[6].Wait = nil }, 12, combined.RuleMemory, 5, -1, 3},
		{"offload of a tensor not computed yet", func(s *schedule.Combined) {
			s.Transfers[0], s.Transfers[1] = s.Transfers[1], s.Transfers[0]
			s.Transfers[0].After = -1
		}, 12, combined.RuleTransfer, -1, 0, 0},
		{"deadlock", func(s *schedule.Combined) { s.Ops[0].Wait = []int{2} }, 12, combined.RuleDeadlock, 0, -1, 0},
		{"wait index out of range", func(s *schedule.Combined) { s.Ops[3].Wait = []int{9} }, 12, combined.RuleIndex, 3, -1, 0},
		{"wait index -1", func(s *schedule.Combined) { s.Ops[3].Wait = []int{-1} }, 12, combined.RuleIndex, 3, -1, 0},
		{"after index out of range", func(s *schedule.Combined) { s.Transfers[0].After = 9 }, 12, combined.RuleIndex, -1, 0, 0},
		{"tensor that does not exist", func(s *schedule.Combined) { s.Transfers[0].Tensor = schedule.Tensor{Stage: 0, Full: true} }, 12, combined.RuleTransfer, -1, 0, 0},
		{"invalid operation", func(s *schedule.Combined) { s.Ops[1].Stage = 3 }, 12, combined.RuleOp, 1, -1, 1},
		{"ends before δ^0", func(s *schedule.Combined) { s.Ops = s.Ops[:8] }, 12, combined.RuleOp, -1, -1, 9},
		{"prefetch of a tensor on the GPU", func(s *schedule.Combined) {
			s.Transfers = s.Transfers[1:]
			s.Transfers[2].Tensor = schedule.Tensor{Stage: 2, Full: true}
			s.Ops[6].Wait, s.Ops[7].Wait = []int{1}, nil
		}, 14, combined.RuleTransfer, -1, 2, 6},
	} {
		s := caseE()
		f.edit(s)
		_, err := combined.Check(chainE(), f.budget, 2, s)
		var v *combined.Violation
		require.ErrorAs(t, err, &v, f.name)
		assert.Equal(t, f.rule, v.Rule, "%s: %v", f.name, v)
		assert.Equal(t, f.op, v.Op, "%s: %v", f.name, v)
		assert.Equal(t, f.tr, v.Transfer, "%s: %v", f.name, v)
		assert.InDelta(t, f.time, v.Time, 1e-12, "%s: %v", f.name, v)
		// Indices are written as in the file, 0-based (issue 29: the index -1 was reported as
		// "transfer 0, not in 1..4").
		if msg, ok := map[string]string{
			"B^2 does not wait for a^1": "a^1 is copied out but held until operation 6 (B^2)",
			"wait index out of range":   "waits for transfer 9, not in 0..3",
			"wait index -1":             "waits for transfer -1, not in 0..3",
			"after index out of range":  "after operation 9, not in -1..8 (-1: none)",
		}[f.name]; ok {
			assert.Contains(t, v.Msg, msg, f.name)
		}
	}
}
