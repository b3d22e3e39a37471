package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/milp"
)

// TestPipelineNonContiguous: SPEC §7's fourth case (2 GPUs, 1 B/s, m = 4, 1F1B) — the
// contiguous optimum is 32 s, the packing DP's interleaved plan (stages 1, 3 on GPU 0 and 2, 4
// on GPU 1, run by per-rank action lists) replays at 29 s; its JSON carries each part's GPU and
// the action lists, verify replays it at 29 s from the report, and with HiGHS the MILPs'
// bounds hold their scopes: 32 s for contiguous allocations, 28 s for every allocation.
func TestPipelineNonContiguous(t *testing.T) {
	chain := specChainFile(t)
	code, out, stderr := run(t, "pipeline", "--chain", chain, "--gpus", "2", "--mem", "1TiB", "--bandwidth", "1B/s", "--micro-batches", "4", "--remat", "none", "--json")
	require.Equal(t, 0, code, stderr)
	var rep PipelineReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	byAlgo := map[string]PipelineResult{}
	for _, r := range rep.Results {
		byAlgo[r.Algo] = r
	}
	pk := byAlgo["packing"]
	require.True(t, pk.Feasible)
	assert.Equal(t, 29.0, *pk.Makespan)
	assert.Equal(t, [][2]int{{1, 1}, {2, 2}, {3, 3}, {4, 4}}, pk.Stages)
	assert.Equal(t, []int{0, 1, 0, 1}, pk.GPUs)
	require.Len(t, pk.Actions, 2)
	assert.Len(t, pk.Actions[0], 16) // 2 parts × 4 micro-batches × F and B
	assert.Equal(t, 6.0, *pk.AllocationPeriod)
	assert.Equal(t, []int{4, 3, 2, 1}, pk.InFlight)
	assert.Equal(t, "packing", rep.Best)
	ex := byAlgo["exact"]
	assert.Nil(t, ex.GPUs)
	assert.Nil(t, ex.Actions)
	plan := filepath.Join(t.TempDir(), "plan.json")
	require.NoError(t, os.WriteFile(plan, []byte(out), 0o644))
	code, vout, stderr := run(t, "verify", "--problem", "pipeline", "--chain", chain, "--schedule", plan, "--json")
	require.Equal(t, 0, code, stderr)
	var v PipelineVerifyReport
	require.NoError(t, json.Unmarshal([]byte(vout), &v))
	assert.True(t, v.Valid)
	assert.Equal(t, 29.0, v.Makespan)
	code, vout, _ = run(t, "verify", "--problem", "pipeline", "--chain", chain, "--schedule", plan, "--mem", "4")
	assert.Equal(t, 1, code, "the interleaved plan needs 8 B on a GPU")
	assert.Contains(t, vout, "memory overflow")
	if _, err := milp.Lookup("highs"); err != nil {
		return
	}
	bounds := map[string]PipelineBound{}
	for _, b := range rep.LowerBounds {
		bounds[b.Name] = b
	}
	c, a := bounds["contiguous MILP"], bounds["allocation MILP"]
	require.NotNil(t, c.Value)
	require.NotNil(t, a.Value)
	assert.InDelta(t, 32, *c.Value, 1e-6)
	assert.True(t, strings.HasPrefix(c.Scope, "contiguous allocations"), c.Scope)
	assert.InDelta(t, 28, *a.Value, 1e-6)
	assert.Contains(t, a.Scope, "every allocation on 2 GPUs, contiguous or not")
	assert.Contains(t, a.CertifiedBy, "optimum")
	assert.InDelta(t, 29.0/28, *pk.RatioToBound, 1e-9)
	assert.InDelta(t, 1, *ex.RatioToBound, 1e-9)
}

// TestGenPipelineReductions: gen writes SPEC §7's hardness instances with the flags to run
// them (--json: GPUs, memory, target period), and `pipeline --algo packing` decides them:
// allocation period 15 = V on a yes-instance, 16 on a no-instance (both proven optimal).
func TestGenPipelineReductions(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		gen    string
		values string
		want   float64
	}{{"pipeline-3partition", "4,5,6,4,5,6", 15}, {"pipeline-3partition", "4,4,4,4,4,10", 16}, {"pipeline-2partition", "3,1,1,2,2,1", 5}, {"pipeline-2partition", "2,4,6,10", 12}} {
		path := filepath.Join(dir, tc.gen+tc.values+".json")
		code, out, stderr := run(t, "gen", "reduce", tc.gen, "--values", tc.values, "-o", path, "--json")
		require.Equal(t, 0, code, stderr)
		var g GenReport
		require.NoError(t, json.Unmarshal([]byte(out), &g))
		assert.Equal(t, 2, g.GPUs)
		assert.Equal(t, 1, g.MicroBatches)
		code, out, stderr = run(t, "pipeline", "--chain", path, "--gpus", "2", "--mem", itoa(g.Mem)+"B", "--bandwidth", "inf",
			"--micro-batches", "1", "--remat", "none", "--algo", "packing", "--json")
		require.Equal(t, 0, code, stderr)
		var rep PipelineReport
		require.NoError(t, json.Unmarshal([]byte(out), &rep))
		r := rep.Results[0]
		require.True(t, r.Feasible)
		per := r.Period
		if r.AllocationPeriod != nil {
			per = r.AllocationPeriod
		}
		require.NotNil(t, per)
		assert.Equal(t, tc.want, *per, "%s %s", tc.gen, tc.values)
		assert.Contains(t, r.Note, "optimal for its memory model")
	}
}

// TestExportPipeline: export --problem pipeline writes both models with their units line, and
// --json says what it wrote.
func TestExportPipeline(t *testing.T) {
	chain := specChainFile(t)
	dir := t.TempDir()
	for _, extra := range [][]string{{"--remat", "none"}, {}, {"--model", "allocation", "--objective", "period"}, {"--model", "allocation", "--remat", "none"}} {
		out := filepath.Join(dir, strings.Join(extra, "")+".lp")
		args := append([]string{"export", "--problem", "pipeline", "--chain", chain, "--gpus", "2", "--mem", "1MiB", "--bandwidth", "1B/s",
			"--micro-batches", "4", "--format", "lp", "-o", out, "--json"}, extra...)
		code, stdout, stderr := run(t, args...)
		require.Equal(t, 0, code, "%v: %s", args, stderr)
		var rep ExportReport
		require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
		assert.Equal(t, "pipeline", rep.Problem)
		m, err := readModel(out)
		require.NoError(t, err)
		assert.Equal(t, m.NumVars(), rep.Variables)
		assert.Equal(t, m.NumRows(), rep.Rows)
	}
}

func itoa(x int64) string {
	b, _ := json.Marshal(x)
	return string(b)
}
