package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
	leverpl "github.com/memsched/memsched/lever/pipeline"
)

// specChainFile writes SPEC §7's hand-checked chain (L = 4, u_f = 1, u_b = 2, ω_a = ω_ā = 1,
// ω_a^0 = 0, ω_δ = 0) and returns its path.
func specChainFile(t *testing.T) string {
	t.Helper()
	c := &instances.Chain{Name: "spec7"}
	for range 4 {
		c.Stages = append(c.Stages, instances.Stage{UF: 1, UB: 2, A: 1, ABar: 1})
	}
	c.Stages = append(c.Stages, instances.Stage{Name: "loss"})
	path := filepath.Join(t.TempDir(), "spec7.json")
	require.NoError(t, instances.SaveChain(path, c))
	return path
}

// TestPipelineSpecCase: SPEC §7's fourth case through the command — two GPUs, 1 B/s links,
// m = 4, 1F1B: makespan 32 on [1–2] [3–4], every algorithm present with the keys, every
// bound at most 32 with what certifies it and its scope, and the JSON checks again in verify.
func TestPipelineSpecCase(t *testing.T) {
	chain := specChainFile(t)
	args := []string{"pipeline", "--chain", chain, "--gpus", "2", "--mem", "1TiB", "--bandwidth", "1B/s", "--micro-batches", "4", "--json"}
	code, out, stderr := run(t, args...)
	require.Equal(t, 0, code, stderr)
	var raw map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &raw))
	for _, r := range raw["results"].([]any) {
		for _, k := range []string{"algo", "feasible", "makespan", "period", "stages", "peak_memory", "verified", "sequences", "schedule", "micro_batches"} {
			assert.Contains(t, r.(map[string]any), k)
		}
	}
	for _, b := range raw["lower_bounds"].([]any) {
		for _, k := range []string{"value", "certified_by", "scope"} {
			assert.Contains(t, b.(map[string]any), k)
		}
	}
	var rep PipelineReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Results, len(leverpl.Names()))
	ex := rep.Results[0]
	require.Equal(t, "exact", ex.Algo)
	require.True(t, ex.Feasible)
	assert.Equal(t, 32.0, *ex.Makespan)
	assert.Equal(t, 6.5, *ex.Period)
	assert.Equal(t, [][2]int{{1, 2}, {3, 4}}, ex.Stages)
	assert.Equal(t, []int64{4, 3}, ex.PeakMemory)
	assert.Equal(t, []int{2, 1}, ex.InFlight)
	assert.True(t, *ex.Optimal)
	assert.LessOrEqual(t, bestMakespan(&rep), 32.0) // a non-contiguous plan may be faster (pipelinemilp_test.go)
	for _, b := range rep.LowerBounds {
		require.NotNil(t, b.Value, b.Name)
		assert.LessOrEqual(t, *b.Value, 32.0, b.Name)
		assert.NotEmpty(t, b.CertifiedBy)
		assert.NotEmpty(t, b.Scope)
	}
	plan := filepath.Join(t.TempDir(), "plan.json")
	require.NoError(t, os.WriteFile(plan, []byte(out), 0o644))
	code, out, stderr = run(t, "verify", "--problem", "pipeline", "--chain", chain, "--schedule", plan, "--algo", "exact", "--json")
	require.Equal(t, 0, code, stderr)
	var v PipelineVerifyReport
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	assert.True(t, v.Valid)
	assert.Equal(t, 32.0, v.Makespan)
	// The same plan on 3-byte GPUs: GPU 0 overflows (exit 1, the violation named).
	code, out, _ = run(t, "verify", "--problem", "pipeline", "--chain", chain, "--schedule", plan, "--algo", "exact", "--mem", "3")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "GPU 0")
	assert.Contains(t, out, "memory overflow")
}

// TestPipelineInfeasible: SPEC §7's fifth case — 3-byte GPUs fit nothing: every result is
// infeasible with a reason, and the branch and bound proves it (a null bound).
func TestPipelineInfeasible(t *testing.T) {
	chain := specChainFile(t)
	code, out, stderr := run(t, "pipeline", "--chain", chain, "--gpus", "2", "--mem", "3", "--bandwidth", "inf", "--micro-batches", "4", "--remat", "none", "--json")
	require.Equal(t, 0, code, stderr)
	var rep PipelineReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, "", rep.Best)
	for _, r := range rep.Results {
		assert.False(t, r.Feasible, r.Algo)
		assert.NotEmpty(t, r.Reason, r.Algo)
	}
	var bb *PipelineBound
	for i, b := range rep.LowerBounds {
		if b.Name == "branch and bound" {
			bb = &rep.LowerBounds[i]
		}
	}
	require.NotNil(t, bb)
	assert.Nil(t, bb.Value)
}

// TestPipelineSweep: --sweep writes the table, the JSON and the plot, one point per GPU count.
func TestPipelineSweep(t *testing.T) {
	chain := specChainFile(t)
	dir := t.TempDir()
	code, _, stderr := run(t, "pipeline", "--chain", chain, "--gpus", "4", "--mem", "1TiB", "--bandwidth", "inf", "--micro-batches", "4", "--sweep", dir)
	require.Equal(t, 0, code, stderr)
	for _, f := range []string{"pipeline-sweep.csv", "pipeline-sweep.json", "pipeline-throughput.svg", "pipeline-throughput.png"} {
		assert.FileExists(t, filepath.Join(dir, f))
	}
	data, err := os.ReadFile(filepath.Join(dir, "pipeline-sweep.json"))
	require.NoError(t, err)
	var res struct {
		Points []struct {
			GPUs  int     `json:"gpus"`
			Bound float64 `json:"bound"`
		} `json:"points"`
	}
	require.NoError(t, json.Unmarshal(data, &res))
	require.Len(t, res.Points, 4)
	// SPEC §7: 48, 30, (3 GPUs) and 21 are the optima; the bound meets them.
	assert.Equal(t, 48.0, res.Points[0].Bound)
	assert.Equal(t, 30.0, res.Points[1].Bound)
	assert.Equal(t, 21.0, res.Points[3].Bound)
}
