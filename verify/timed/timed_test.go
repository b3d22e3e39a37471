package timed

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/schedule"
)

// tiny is L = 1 with |x| = 4, 4, 2 (times unit), β = 2 bytes/s·unit, M_GPU = 8 units: without
// offloading F_1 needs 10 units, so x_0 (2 s on the link) must go out and come back.
func tiny(unit int64) *actoffload.Problem {
	return &actoffload.Problem{
		X: []int64{4 * unit, 4 * unit, 2 * unit}, Y: []int64{0, 0, 0},
		UF: []float64{1, 1}, UB: []float64{1, 1}, ExF: []int64{0, 0}, ExB: []int64{0, 0},
		MGPU: 8 * unit, Beta: 2 * float64(unit),
	}
}

func ops(f0, f1, b1, b0 float64) []schedule.TimedOp {
	return []schedule.TimedOp{fop(0, f0), fop(1, f1), bop(1, b1), bop(0, b0)}
}

func fop(i int, t float64) schedule.TimedOp { return schedule.TimedOp{Index: i, Start: t} }
func bop(i int, t float64) schedule.TimedOp {
	return schedule.TimedOp{Backward: true, Index: i, Start: t}
}
func off(j int, t float64) schedule.ActTransfer {
	return schedule.ActTransfer{Kind: schedule.Offload, Index: j, Start: t}
}
func pre(j int, t float64) schedule.ActTransfer {
	return schedule.ActTransfer{Kind: schedule.Prefetch, Index: j, Start: t}
}

// valid is the best schedule of tiny: F_1 waits for x_0 to leave (t = 2), the prefetch waits
// for B_1 to free x_2 (t = 4, a free and an allocation at the same instant).
func valid() *schedule.Timed {
	return &schedule.Timed{Ops: ops(0, 2, 3, 6), Transfers: []schedule.ActTransfer{off(0, 0), pre(0, 4)}}
}

func TestCheckValid(t *testing.T) {
	for _, unit := range []int64{1, 1 << 30} {
		r, err := Check(tiny(unit), valid())
		require.NoError(t, err, "unit %d", unit)
		assert.Equal(t, 7.0, r.Makespan)
		assert.Equal(t, 8*unit, r.Peak)
		assert.Equal(t, 3.0, r.Idle)
		assert.Equal(t, 4.0, r.LinkBusy)
		assert.InDelta(t, 4.0/7, r.Utilisation, 1e-15)
		assert.Equal(t, 1, r.Offloaded)
		assert.Equal(t, 4*unit, r.OffloadedBytes)
	}
	// With enough memory nothing moves: makespan Σu, no idle, no link.
	p := tiny(1)
	p.MGPU = 10
	r, err := Check(p, &schedule.Timed{Ops: ops(0, 1, 2, 3)})
	require.NoError(t, err)
	assert.Equal(t, 4.0, r.Makespan)
	assert.Equal(t, 0.0, r.Idle)
	assert.Equal(t, int64(10), r.Peak)
}

func TestCheckRejects(t *testing.T) {
	tr := func(ts ...schedule.ActTransfer) []schedule.ActTransfer { return ts }
	cases := []struct {
		name string
		s    schedule.Timed
		rule Rule
		at   float64
	}{
		{"one operation missing", schedule.Timed{Ops: ops(0, 2, 3, 6)[:3]}, RuleOps, 0},
		{"backward before forward",
			schedule.Timed{Ops: []schedule.TimedOp{bop(0, 0), fop(1, 2), bop(1, 3), fop(0, 6)}}, RuleOps, 0},
		{"B_0 before B_1",
			schedule.Timed{Ops: []schedule.TimedOp{fop(0, 0), fop(1, 2), bop(0, 3), bop(1, 6)}}, RuleOps, 3},
		{"negative start", schedule.Timed{Ops: ops(-1, 2, 3, 6)}, RuleOps, -1},
		{"F_1 overlaps F_0", schedule.Timed{Ops: ops(0, 0.5, 3, 6), Transfers: tr(off(0, 0), pre(0, 4))}, RuleSequential, 0.5},
		{"B_0 overlaps B_1", schedule.Timed{Ops: ops(0, 2, 3, 3.5), Transfers: tr(off(0, 0), pre(0, 4))}, RuleSequential, 3.5},
		{"no offloading: F_1 needs 10 > 8", schedule.Timed{Ops: ops(0, 1, 2, 3)}, RuleMemory, 1},
		{"F_1 starts before x_0 has left", schedule.Timed{Ops: ops(0, 1.5, 3, 6), Transfers: tr(off(0, 0), pre(0, 4))}, RuleMemory, 1.5},
		{"prefetch reserves while x_2 is still there", schedule.Timed{Ops: ops(0, 2, 3, 6), Transfers: tr(off(0, 0), pre(0, 3))}, RuleMemory, 3},
		{"prefetch before the offload ended", schedule.Timed{Ops: ops(0, 2, 3, 6), Transfers: tr(off(0, 0), pre(0, 1.5))}, RuleReleased, 1.5},
		{"prefetch ends after B_0 starts", schedule.Timed{Ops: ops(0, 2, 3, 6), Transfers: tr(off(0, 0), pre(0, 5))}, RuleBack, 7},
		{"offload never prefetched", schedule.Timed{Ops: ops(0, 2, 3, 6), Transfers: tr(off(0, 0))}, RuleTransfer, 0},
		{"prefetch without offload", schedule.Timed{Ops: ops(0, 2, 3, 6), Transfers: tr(pre(0, 4))}, RuleTransfer, 0},
		{"offloaded twice", schedule.Timed{Ops: ops(0, 2, 3, 6), Transfers: tr(off(0, 0), off(0, 2), pre(0, 4))}, RuleTransfer, 2},
		{"x_{L+1} is not transferable", schedule.Timed{Ops: ops(0, 2, 3, 6), Transfers: tr(off(2, 2), pre(2, 3))}, RuleTransfer, 2},
		{"unknown kind", schedule.Timed{Ops: ops(0, 2, 3, 6), Transfers: tr(schedule.ActTransfer{Kind: schedule.Upload})}, RuleTransfer, 0},
		{"offload of x_1 before F_0 produced it", schedule.Timed{Ops: ops(0, 2, 3, 6), Transfers: tr(off(0, 0), off(1, 0.5), pre(1, 3), pre(0, 4))}, RuleProduced, 0.5},
		{"two transfers at once",
			schedule.Timed{Ops: ops(0, 2, 10, 20), Transfers: tr(off(0, 0), off(1, 1), pre(1, 5), pre(0, 12))}, RuleLink, 1},
	}
	for _, c := range cases {
		for _, unit := range []int64{1, 1 << 30} {
			_, err := Check(tiny(unit), &c.s)
			var v *Violation
			if !assert.True(t, errors.As(err, &v), "%s: want a violation, got %v", c.name, err) {
				continue
			}
			assert.Equal(t, c.rule, v.Rule, "%s: %v", c.name, v)
			assert.Equal(t, c.at, v.Time, "%s: %v", c.name, v)
		}
	}
}

// A bad problem is an error, not a violation.
func TestCheckBadProblem(t *testing.T) {
	p := tiny(1)
	p.Beta = 0
	_, err := Check(p, valid())
	var v *Violation
	require.Error(t, err)
	assert.False(t, errors.As(err, &v))
}

// Offloading x_0 and x_1 sequentially, prefetching in decreasing order: the link is busy 8 s.
func TestCheckTwoTransfers(t *testing.T) {
	p := tiny(1)
	s := &schedule.Timed{Ops: ops(0, 2, 10, 20), Transfers: []schedule.ActTransfer{off(0, 0), off(1, 2), pre(1, 5), pre(0, 12)}}
	r, err := Check(p, s)
	require.NoError(t, err)
	assert.Equal(t, 21.0, r.Makespan)
	assert.Equal(t, 8.0, r.LinkBusy)
	assert.Equal(t, 2, r.Offloaded)
	// The peak is F_0's x_0 + x_1; F_1 runs with x_1 + x_2 = 6 once x_0 has left at 2.
	assert.Equal(t, int64(8), r.Peak)
}
