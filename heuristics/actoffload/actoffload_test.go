package actoffload

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	act "github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/instances/reduce"
	"github.com/memsched/memsched/schedule"
)

// tiny is the instance of verify/timed's tests: x_0 must go (2 s each way) and its prefetch
// waits for B_1 to free x_2; the best schedule has makespan 7.
func tiny(unit int64) *act.Problem {
	return &act.Problem{
		X: []int64{4 * unit, 4 * unit, 2 * unit}, Y: []int64{0, 0, 0},
		UF: []float64{1, 1}, UB: []float64{1, 1}, ExF: []int64{0, 0}, ExB: []int64{0, 0},
		MGPU: 8 * unit, Beta: 2 * float64(unit),
	}
}

func TestNoWaitTiny(t *testing.T) {
	for _, unit := range []int64{1, 1 << 30} {
		p := tiny(unit)
		r, err := Greedy(p)
		require.NoError(t, err)
		require.True(t, r.Feasible)
		assert.Equal(t, 7.0, r.Report.Makespan)
		assert.Equal(t, []int{0}, r.Offloaded)
		assert.Equal(t, "[F0@0 F1@2 B1@3 B0@6]", formatOps(r.Schedule.Ops))
		e, st, err := Exact(p, ExactOptions{})
		require.NoError(t, err)
		assert.Equal(t, Optimal, st)
		assert.Equal(t, 7.0, e.Report.Makespan, "exhaustive: offloading x_1 instead costs more")
		v, err := VDNN(p, VDNNBoth)
		require.NoError(t, err)
		assert.Equal(t, 7.0, v.Report.Makespan)
	}
}

func formatOps(ops []schedule.TimedOp) string {
	s := "["
	for i, o := range ops {
		if i > 0 {
			s += " "
		}
		s += o.String()
	}
	return s + "]"
}

func TestNoWaitOrders(t *testing.T) {
	p := tiny(1)
	off := func(j int) schedule.ActTransfer { return schedule.ActTransfer{Kind: schedule.Offload, Index: j} }
	pre := func(j int) schedule.ActTransfer { return schedule.ActTransfer{Kind: schedule.Prefetch, Index: j} }
	cases := []struct {
		name     string
		order    []schedule.ActTransfer
		bad      bool
		feasible bool
		makespan float64
	}{
		{"nothing moves: F_1 never fits", nil, false, false, 0},
		{"x_0 out and back", []schedule.ActTransfer{off(0), pre(0)}, false, true, 7},
		// x_1 leaves at 3 (offload from 1 to 3); F_1 needs x_0 + x_1 + x_2 = 10 before that.
		{"x_1 alone cannot make room for F_1", []schedule.ActTransfer{off(1), pre(1)}, false, false, 0},
		{"both, decreasing prefetch", []schedule.ActTransfer{off(0), off(1), pre(1), pre(0)}, false, true, 10},
		{"prefetch before offload", []schedule.ActTransfer{pre(0), off(0)}, true, false, 0},
		{"never prefetched", []schedule.ActTransfer{off(0)}, true, false, 0},
		{"x_2 is not transferable", []schedule.ActTransfer{off(2), pre(2)}, true, false, 0},
	}
	for _, c := range cases {
		r, err := NoWait(p, c.order)
		if c.bad {
			assert.Error(t, err, c.name)
			continue
		}
		require.NoError(t, err, c.name)
		assert.Equal(t, c.feasible, r.Feasible, c.name)
		if c.feasible {
			assert.Equal(t, c.makespan, r.Report.Makespan, c.name)
		}
	}
}

// Thm 1's point: on the yes-instance [6,7,6,7,6,8] (m = 2, V = 20) the triples are {6,6,8} and
// {7,7,6}; offloading in index order sends 6+7+6 = 19 < V during F_6, so the ordered schedules
// (GREEDY, VDNN) miss 2m = 4, while the search over orders reaches it.
func TestExactThreePartitionOrder(t *testing.T) {
	p, target, err := reduce.ActThreePartition([]int64{6, 7, 6, 7, 6, 8})
	require.NoError(t, err)
	require.Equal(t, 4.0, target)
	g, err := Greedy(p)
	require.NoError(t, err)
	require.True(t, g.Feasible)
	assert.Greater(t, g.Report.Makespan, target)
	all := []int{0, 1, 2, 3, 4, 5}
	o, err := Ordered(p, all)
	require.NoError(t, err)
	require.True(t, o.Feasible)
	assert.Greater(t, o.Report.Makespan, target, "index order is no partition")
	e, st, err := Exact(p, ExactOptions{})
	require.NoError(t, err)
	assert.Equal(t, Optimal, st)
	require.True(t, e.Feasible)
	assert.InDelta(t, target, e.Report.Makespan, 1e-12)
	assert.Equal(t, all, e.Offloaded)
}
