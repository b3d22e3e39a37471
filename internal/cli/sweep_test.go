package cli

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/report"
)

// TestSweepToy: 4 budgets from the smallest feasible one (86109062 B) to the store-all peak
// (112187147 B); at the smallest the exhaustive optimum is 56.17 ms, at the peak store-all
// fits with ratio 1 at 37.38 ms; CSV, JSON and the four plot files are written.
func TestSweepToy(t *testing.T) {
	dir := t.TempDir()
	code, out, stderr := run(t, "sweep", "--from", "86109062", "--to", "112187147", "--steps", "4", "-o", dir, "--json")
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stderr, "no progress bar when stderr is not a terminal")
	var res report.SweepResult
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.Len(t, res.Points, 4)
	assert.InDelta(t, 0.05617, res.Points[0].BestBound, 1e-12, "smallest feasible budget")
	last := res.Points[3]
	assert.InDelta(t, 0.03738, last.BestBound, 1e-12)
	for _, r := range last.Rows {
		if r.Strategy == "store-all" {
			assert.True(t, r.Feasible)
			assert.InDelta(t, 1, r.Ratio, 1e-12)
		}
	}
	for i, p := range res.Points {
		if i > 0 {
			assert.Greater(t, p.Budget, res.Points[i-1].Budget)
			assert.LessOrEqual(t, p.BestBound, res.Points[i-1].BestBound)
		}
		for _, r := range p.Rows {
			if r.Feasible {
				assert.GreaterOrEqual(t, r.Ratio, 1-1e-12, "%s at %d", r.Strategy, p.Budget)
				assert.True(t, r.Verified)
			}
		}
	}
	assert.NotEmpty(t, res.Frontiers["persistent"], "the frontier of the one table")
	for _, f := range []string{"sweep.csv", "sweep.json", "ratio.svg", "ratio.png", "throughput.svg", "throughput.png"} {
		st, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err, f)
		assert.Greater(t, st.Size(), int64(100), f)
	}
	// The plots: axes with units, a legend naming every strategy and the bound.
	for _, name := range []string{"ratio.svg", "throughput.svg"} {
		svg, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		for _, want := range []string{"memory budget (MiB)", "lower bound", "persistent", "floating", "revolve", "sequential", "store-all"} {
			assert.Contains(t, string(svg), want, name)
		}
	}
	svg, _ := os.ReadFile(filepath.Join(dir, "ratio.svg"))
	assert.Contains(t, string(svg), "ratio to bound (1 = proven optimal)")
	svg, _ = os.ReadFile(filepath.Join(dir, "throughput.svg"))
	assert.Contains(t, string(svg), "throughput (iterations/s)")
	f, err := os.Open(filepath.Join(dir, "sweep.csv"))
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	assert.Equal(t, csvHeader, rows[0])
	assert.Len(t, rows, 1+4*5, "one row per budget and strategy")
}

// TestSweepWeights: the weight lever sweeps with a bandwidth, bounded by Σu.
func TestSweepWeights(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r18.json")
	code, _, stderr := run(t, "gen", "zoo", "resnet", "--depth", "18", "--batch", "8", "-o", path)
	require.Equal(t, 0, code, stderr)
	code, out, stderr := run(t, "sweep", "--chain", path, "--from", "300MiB", "--to", "1GiB", "--steps", "3",
		"--lever", "weight-offload", "--bandwidth", "12GB/s", "-o", dir, "--json", "--no-plots")
	require.Equal(t, 0, code, stderr)
	var res report.SweepResult
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.Len(t, res.Points, 3)
	for _, p := range res.Points {
		assert.Equal(t, "weight-offload", p.Lever)
		assert.Equal(t, "Σu", p.BestBoundBy)
	}
}

// TestPrintSweepColumns: a strategy only some budgets have (the exhaustive search's row,
// where it ended with a schedule: the toy chain's combined lever at 95 MiB but not at 75 or
// 85 MiB) gets a column of its own, "·" where it did not run; its ratio had been printed
// past the last column, under no header.
func TestPrintSweepColumns(t *testing.T) {
	row := func(name string, ratio float64) report.Row {
		return report.Row{Strategy: name, Feasible: ratio > 0, Ratio: ratio}
	}
	res := &report.SweepResult{Chain: "toy", Stages: 7, Points: []report.Point{
		{Lever: "remat-offload", Budget: 75 << 20, BestBound: 0.045, BestBoundBy: "b", Rows: []report.Row{row("pofo", 2.3), row("seq", 0)}},
		{Lever: "remat-offload", Budget: 95 << 20, BestBound: 0.041, BestBoundBy: "b", Rows: []report.Row{row("pofo", 1), row("seq", 1.25), row("exhaustive", 1)}},
	}}
	var out bytes.Buffer
	printSweep(res, &IO{Out: &out, ErrOut: &out})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 6, out.String())
	assert.Equal(t, []string{"budget", "best", "bound", "by", "pofo", "seq", "exhaustive"}, strings.Fields(lines[3]))
	assert.Equal(t, []string{"75.00", "MiB", "45.00", "ms", "b", "2.300", "-", "·"}, strings.Fields(lines[4]))
	assert.Equal(t, []string{"95.00", "MiB", "41.00", "ms", "b", "1.000", "1.250", "1.000"}, strings.Fields(lines[5]))
}
