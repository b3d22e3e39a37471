package plots

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/report"
)

// TestWritePanelsPerLever: two levers give two stacked panels per figure, each with its own
// title and legend (a lever's curves never share a panel with another's), in GiB on the axis;
// tick labels on a narrow axis stay distinct.
func TestWritePanelsPerLever(t *testing.T) {
	res := &report.SweepResult{Chain: "/x/chain.json", Budgets: []int64{1 << 30, 2 << 30}}
	for _, b := range res.Budgets {
		res.Points = append(res.Points,
			report.Point{Lever: "remat", Budget: b, BestBound: 1, BestBoundBy: "C_FL exact", Rows: []report.Row{
				{Strategy: "persistent", Feasible: true, Makespan: 1.005}, {Strategy: "revolve", Feasible: true, Makespan: 1.01}}},
			report.Point{Lever: "weight-offload", Budget: b, BestBound: 2, Rows: []report.Row{
				{Strategy: "l2l", Feasible: true, Makespan: 2.01}, {Strategy: "greedy", Feasible: false}}})
	}
	dir := t.TempDir()
	files, err := Write(res, dir)
	require.NoError(t, err)
	assert.Len(t, files, 4)
	svg, err := os.ReadFile(filepath.Join(dir, "ratio.svg"))
	require.NoError(t, err)
	s := string(svg)
	assert.Contains(t, s, "chain.json — remat: makespan / best certified lower bound")
	assert.Contains(t, s, "chain.json — weight-offload: makespan / best certified lower bound")
	assert.Equal(t, 2, strings.Count(s, "memory budget (GiB)"), "one x axis per panel")
	assert.Equal(t, 2, strings.Count(s, ">best lower bound<"), "one bound per panel")
	assert.NotContains(t, s, ">greedy<", "a strategy that never fits has no curve")

	ticks := distinctTicks{}.Ticks(1, 1.01)
	seen := map[string]bool{}
	for _, tk := range ticks {
		if tk.Label != "" {
			assert.False(t, seen[tk.Label], "label %q twice", tk.Label)
			seen[tk.Label] = true
		}
	}
	assert.GreaterOrEqual(t, len(seen), 2)
}
