package verify_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/heuristics/checkpoint"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
)

const mib = 1 << 20

func ops(spec ...any) schedule.Sequence {
	var s schedule.Sequence
	for i := 0; i < len(spec); i += 2 {
		s = append(s, schedule.Op{Kind: spec[i].(schedule.OpKind), Stage: spec[i+1].(int)})
	}
	return s
}

var (
	fall = schedule.Fall
	fck  = schedule.Fck
	fn   = schedule.Fn
	bw   = schedule.B
)

// Toy is 004 §3.2: store-all takes 37.38 ms and peaks at 107 MiB at B^5.
func TestToyStoreAll(t *testing.T) {
	c := instances.Toy()
	res, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
	require.NoError(t, err)
	assert.InDelta(t, 37.38e-3, res.Makespan, 1e-12)
	// 79.35 MiB of data + o_b^5 = 27.64 MiB = 106.99 MiB, which 004 rounds to "107MB".
	assert.InDelta(t, 106.99, float64(res.Peak)/mib, 0.005)
	assert.Equal(t, schedule.Op{Kind: bw, Stage: 5}, checkpoint.StoreAll(c)[res.PeakOp])
}

// Toy90 is the sequence printed in 004 §3.2 for M = 90 MiB: 47.42 ms, peak 86.75 MiB at B^5.
func TestToyPublishedSequence(t *testing.T) {
	c := instances.Toy()
	seq := ops(fck, 1, fn, 2, fn, 3, fall, 4, fall, 5, fall, 6, fall, 7, bw, 7, bw, 6, bw, 5, bw, 4,
		fck, 1, fn, 2, fall, 3, bw, 3, fall, 1, fall, 2, bw, 2, bw, 1)
	res, err := verify.Remat(c, seq, verify.RematOptions{})
	require.NoError(t, err)
	assert.InDelta(t, 47.42e-3, res.Makespan, 1e-12)
	assert.InDelta(t, 86.75, float64(res.Peak)/mib, 0.005)
	assert.LessOrEqual(t, res.Peak, int64(instances.ToyBudget))
	assert.Equal(t, schedule.Op{Kind: bw, Stage: 5}, seq[res.PeakOp])
}

// TestInvalidSequences: one case per rule of verify.RematState.Apply, each naming the first
// bad operation.
func TestInvalidSequences(t *testing.T) {
	c, err := instances.Fig4(4) // 7 stages
	require.NoError(t, err)
	cases := []struct {
		name   string
		seq    schedule.Sequence
		index  int
		reason string
	}{
		{"stage out of range", ops(fck, 9), 0, "out of range"},
		{"stage zero", ops(fck, 0), 0, "out of range"},
		{"missing input", ops(fck, 2), 0, "a^1 is not stored"},
		{"F_∅ from ā", ops(fall, 1, fn, 2), 1, "needs a plain a^1"},
		{"recompute stored a", ops(fck, 1, fck, 1), 1, "already stored"},
		{"recompute stored ā", ops(fall, 1, fall, 1), 1, "already stored"},
		{"B without δ", ops(fall, 1, bw, 1), 1, "δ^1 is not stored"},
		{"B without ā", ops(fck, 1, fck, 2, fck, 3, fck, 4, fck, 5, fck, 6, fck, 7, bw, 7), 7, "ā^7 is not stored"},
		{"F_∅ over a stored ā", ops(fck, 1, fn, 2, fn, 3, fn, 4, fn, 5, fall, 6, fn, 6), 6, "ā^6 is already stored"},
		{"lost input", ops(fck, 1, fn, 2, fn, 3, fn, 4, fn, 5, fn, 6, fall, 7, bw, 7, fall, 6), 8, "a^5 is not stored"},
		{"unfinished", ops(fall, 1), 1, "ends before δ^0"},
		{"forward beyond gradient", append(checkpoint.StoreAll(c)[:14:14], schedule.Op{Kind: fck, Stage: 1}), 14, "already complete"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := verify.Remat(c, tc.seq, verify.RematOptions{})
			var ie *verify.InvalidOpError
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, tc.index, ie.Index, err.Error())
			assert.Contains(t, ie.Reason, tc.reason)
		})
	}
}
