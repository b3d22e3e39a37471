package graphsim

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
)

// skip is x1 → x2 → x3 → y with a skip connection x1 → y; sizes 2, 2, 2, 1 and unit costs.
// Hand-checked: storing everything peaks at 6 (x1, x2, x3 while computing x3) and costs 4; with
// 5 bytes x1 must be dropped and recomputed for y (cost 5); with 4 bytes y cannot run (x3, x1
// and y make 5).
func skip(unit int64) *instances.Graph {
	return &instances.Graph{Name: "skip", Nodes: []instances.Node{
		{Name: "x1", Cost: 1, Size: 2 * unit},
		{Name: "x2", Cost: 1, Size: 2 * unit, Deps: []int{0}},
		{Name: "x3", Cost: 1, Size: 2 * unit, Deps: []int{1}},
		{Name: "y", Cost: 1, Size: unit, Deps: []int{2, 0}},
	}}
}

func TestReplaySkipByHand(t *testing.T) {
	g := skip(1)
	storeAll := &schedule.GraphSchedule{Stages: []schedule.GraphStage{
		{Compute: []int{0}}, {Keep: []int{0}, Compute: []int{1}}, {Keep: []int{0, 1}, Compute: []int{2}}, {Keep: []int{0, 2}, Compute: []int{3}},
	}}
	r, err := Replay(g, storeAll, 6)
	require.NoError(t, err)
	assert.Equal(t, Result{Cost: 4, Peak: 6, Computations: 4}, r)
	_, err = Replay(g, storeAll, 5)
	assert.ErrorContains(t, err, "computing x3 needs 6 bytes")

	recompute := &schedule.GraphSchedule{Stages: []schedule.GraphStage{
		{Compute: []int{0}}, {Keep: []int{0}, Compute: []int{1}}, {Keep: []int{1}, Compute: []int{2}}, {Keep: []int{2}, Compute: []int{0, 3}},
	}}
	r, err = Replay(g, recompute, 5)
	require.NoError(t, err)
	assert.Equal(t, Result{Cost: 5, Peak: 5, Computations: 5}, r)
}

// TestReplayRejects: one case per rule of Replay.
func TestReplayRejects(t *testing.T) {
	g := skip(1)
	cases := []struct {
		name   string
		stages []schedule.GraphStage
		want   string
	}{
		{"missing input", []schedule.GraphStage{{Compute: []int{0}}, {Compute: []int{1}}}, "without its input x1"},
		{"keep what is gone", []schedule.GraphStage{{Compute: []int{0}}, {Keep: []int{0}, Compute: []int{1}}, {Keep: []int{1, 2}, Compute: []int{2}}}, "stage 2 keeps x3, which was not present"},
		{"twice in a stage", []schedule.GraphStage{{Compute: []int{0, 0}}}, "out of order or twice"},
		{"recompute present", []schedule.GraphStage{{Compute: []int{0}}, {Keep: []int{0}, Compute: []int{0}}}, "while its output is present"},
		{"never computed", []schedule.GraphStage{{Compute: []int{0}}}, "never computed"},
		{"stage 0 keeps", []schedule.GraphStage{{Keep: []int{0}, Compute: []int{0}}}, "not present at the end of stage -1"},
		{"out of range", []schedule.GraphStage{{Compute: []int{7}}}, "out of range"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Replay(g, &schedule.GraphSchedule{Stages: c.stages}, 100)
			assert.ErrorContains(t, err, c.want)
		})
	}
}

// TestStagedSkipByHand: the exhaustive searches find the hand-checked optima, in bytes and in
// GiB (the same graph scaled by 2^30).
func TestStagedSkipByHand(t *testing.T) {
	for _, unit := range []int64{1, 1 << 30} {
		g := skip(unit)
		for _, c := range []struct {
			budget int64
			cost   float64
			ok     bool
		}{{6, 4, true}, {5, 5, true}, {4, math.Inf(1), false}} {
			_, cost, ok := Staged(g, c.budget*unit)
			assert.Equal(t, c.ok, ok, "budget %d", c.budget)
			assert.Equal(t, c.cost, cost, "budget %d", c.budget)
			u, ok := Unstaged(g, c.budget*unit)
			assert.Equal(t, c.ok, ok)
			assert.Equal(t, c.cost, u)
		}
	}
}

// TestStagedAboveUnstaged: on random DAGs the staged optimum (Checkmate's schedule space) is
// never below the free-order optimum, both find a schedule at the same smallest budgets where
// recomputation is not needed, and the staged schedule replays to its cost.
func TestStagedAboveUnstaged(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 1))
	for it := 0; it < 40; it++ {
		g := RandomGraph(r, 2+r.IntN(5), 1)
		for b := int64(1); b <= 40; b++ {
			s, cs, ok := Staged(g, b)
			cu, oku := Unstaged(g, b)
			if ok {
				require.True(t, oku)
				assert.LessOrEqual(t, cu, cs+1e-9)
				res, err := Replay(g, s, b)
				require.NoError(t, err)
				assert.Equal(t, cs, res.Cost)
			}
		}
	}
}
