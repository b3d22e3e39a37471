package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func smallGPT(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "gpt.json")
	code, _, stderr := run(t, "gen", "zoo", "gpt2", "--hidden", "256", "--heads", "4", "--layers", "3", "--seq", "64", "--batch", "2", "-o", path)
	require.Equal(t, 0, code, stderr)
	return path
}

// TestOffloadWeightsCLI: every algorithm returns a validated schedule with the JSON keys;
// the bound (pure-Go referee: 3 blocks + embedding) is at most every makespan.
func TestOffloadWeightsCLI(t *testing.T) {
	chain := smallGPT(t)
	makespans := map[string]float64{}
	for _, algo := range []string{"greedy", "greedy-nodiscount", "greedy-reserve", "l2l"} {
		code, out, stderr := run(t, "offload-weights", "--chain", chain, "--mem", "110MiB", "--bandwidth", "1GB/s", "--algo", algo, "--json")
		require.Equal(t, 0, code, stderr)
		var rep map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &rep))
		for _, k := range []string{"makespan", "selection", "schedule", "verified"} {
			assert.Contains(t, rep, k, algo)
		}
		assert.Equal(t, true, rep["verified"], algo)
		makespans[algo] = rep["makespan"].(float64)
	}
	code, out, stderr := run(t, "bound", "--problem", "weight-offload", "--chain", chain, "--mem", "110MiB", "--bandwidth", "1GB/s", "--solver", "highs", "--json")
	if code != 0 {
		// Plain builds have no HiGHS; the bound of this 4-layer model is beyond the referee.
		assert.Contains(t, stderr, "not available")
		return
	}
	var b BoundReport
	require.NoError(t, json.Unmarshal([]byte(out), &b))
	require.NotNil(t, b.LowerBound)
	for algo, m := range makespans {
		assert.LessOrEqual(t, *b.LowerBound, m+1e-9, algo)
	}
}

// TestOffloadWeightsCompare: --algo all reports every algorithm, each verified, with the same
// periods as the single runs; with --bound (HiGHS builds) the certified bound is at most each
// period and at least Σu. --bound without --algo all is a usage error.
func TestOffloadWeightsCompare(t *testing.T) {
	chain := smallGPT(t)
	args := []string{"offload-weights", "--chain", chain, "--mem", "110MiB", "--bandwidth", "1GB/s", "--algo", "all", "--json"}
	code, out, stderr := run(t, args...)
	require.Equal(t, 0, code, stderr)
	var rep CompareReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	want := len(offloadAlgos) // the milp row only where a real MILP backend is compiled in
	if !realMILPBackend() {
		want--
	}
	require.Len(t, rep.Results, want)
	assert.Nil(t, rep.Bound)
	for _, r := range rep.Results {
		require.True(t, r.Verified, r.Algorithm)
		assert.GreaterOrEqual(t, r.Makespan, rep.SumU-1e-9, r.Algorithm)
		code, one, stderr := run(t, "offload-weights", "--chain", chain, "--mem", "110MiB", "--bandwidth", "1GB/s", "--algo", r.Algorithm, "--json")
		require.Equal(t, 0, code, stderr)
		var single OffloadReport
		require.NoError(t, json.Unmarshal([]byte(one), &single))
		assert.Equal(t, single.Makespan, r.Makespan, r.Algorithm)
	}

	code, out, stderr = run(t, append(args, "--bound", "--solver", "highs")...)
	if code != 0 {
		assert.Contains(t, stderr, "not available") // plain builds have no HiGHS
	} else {
		require.NoError(t, json.Unmarshal([]byte(out), &rep))
		require.NotNil(t, rep.Bound)
		require.NotNil(t, rep.Bound.LowerBound)
		assert.GreaterOrEqual(t, *rep.Bound.LowerBound, rep.SumU-1e-9)
		for _, r := range rep.Results {
			assert.LessOrEqual(t, *rep.Bound.LowerBound, r.Makespan+1e-9, r.Algorithm)
		}
	}

	code, _, stderr = run(t, "offload-weights", "--chain", chain, "--mem", "110MiB", "--bandwidth", "12GB/s", "--bound")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "--bound goes with --algo all")
}

func TestExportCLI(t *testing.T) {
	chain := smallGPT(t)
	for _, f := range []string{"lp", "mps"} {
		out := filepath.Join(t.TempDir(), "lb."+f)
		code, _, stderr := run(t, "export", "--problem", "weight-offload-lb", "--chain", chain, "--mem", "110MiB", "--bandwidth", "12GB/s", "--format", f, "-o", out)
		require.Equal(t, 0, code, stderr)
		data, err := os.ReadFile(out)
		require.NoError(t, err)
		assert.Greater(t, len(data), 1000)
		m, err := readModel(out)
		require.NoError(t, err, "the exported file reads back")
		assert.Greater(t, m.NumRows(), 100)
	}
	code, _, stderr := run(t, "export", "--problem", "remat", "--chain", chain, "--mem", "1GiB", "-o", "x")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "unknown --problem")
	code, _, stderr = run(t, "offload-weights", "--chain", chain, "--mem", "1GiB", "--bandwidth", "12GB/s", "--algo", "magic")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "unknown --algo")
}
