package cli

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCertifyToy: the main job on the built-in instance — the exhaustive optimum 47.42 ms
// certifies floating and persistent as optimal and revolve at 1.1611.
func TestCertifyToy(t *testing.T) {
	code, out, stderr := run(t, "certify", "--json")
	require.Equal(t, 0, code, stderr)
	var rep CertifyReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.True(t, rep.Certified)
	assert.Equal(t, "exhaustive search", rep.OptimumBy)
	assert.InDelta(t, 0.04742, rep.Optimum, 1e-12)
	got := map[string]CertifyRow{}
	for _, r := range rep.Rows {
		got[r.Algorithm] = r
		assert.True(t, r.Verified || !r.Feasible, r.Algorithm)
	}
	assert.InDelta(t, 1, got["floating"].Ratio, 1e-12)
	assert.InDelta(t, 1, got["persistent"].Ratio, 1e-12)
	assert.InDelta(t, 0.05506/0.04742, got["revolve"].Ratio, 1e-9)
	assert.False(t, got["sequential"].Feasible)
	assert.False(t, got["store-all"].Feasible)
}

// TestCertifyLargeChain: beyond the exhaustive search, the exact C_FL table in bytes certifies
// the optimum (ResNet-50, batch 8, at 700 MiB); with its frontiers capped below their size the
// optimum is bracketed instead, between a certified lower bound (sizes rounded down) and the
// best sequence (sizes rounded up), and the report says the exact table was out of reach.
func TestCertifyLargeChain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r50.json")
	code, _, stderr := run(t, "gen", "zoo", "resnet", "--depth", "50", "--batch", "8", "-o", path)
	require.Equal(t, 0, code, stderr)
	code, out, stderr := run(t, "certify", "--chain", path, "--mem", "700MiB", "--slots", "200", "--json")
	require.Equal(t, 0, code, stderr)
	var exact CertifyReport
	require.NoError(t, json.Unmarshal([]byte(out), &exact))
	assert.Equal(t, "C_FL, exact in bytes", exact.OptimumBy)
	assert.True(t, exact.Certified)
	assert.Equal(t, exact.Optimum, exact.LowerBound)

	code, out, stderr = run(t, "certify", "--chain", path, "--mem", "700MiB", "--slots", "200", "--max-breakpoints", "2", "--json")
	require.Equal(t, 0, code, stderr)
	var rep CertifyReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Contains(t, rep.Note, "exact C_FL out of reach")
	assert.Greater(t, rep.LowerBound, 0.0)
	assert.LessOrEqual(t, rep.LowerBound, exact.Optimum+1e-12, "the bracket holds the exact optimum")
	assert.GreaterOrEqual(t, rep.Optimum, exact.Optimum-1e-12)
	assert.Equal(t, rep.Optimum <= rep.LowerBound*(1+1e-12), rep.Certified, "certified exactly when a sequence meets the bound")
	for _, r := range rep.Rows {
		if r.Feasible {
			assert.GreaterOrEqual(t, r.Ratio, 1.0-1e-12, r.Algorithm)
		}
	}
}

func TestCertifyInfeasible(t *testing.T) {
	code, out, _ := run(t, "certify", "--mem", "60MiB")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "infeasible")
	code, _, stderr := run(t, "certify", "--mem", "lots")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "--mem")
}

// TestCertifySweep: N budgets from the smallest feasible one to the store-all peak; at the
// smallest the exhaustive optimum exists, at the peak store-all fits with ratio 1.
func TestCertifySweep(t *testing.T) {
	code, out, stderr := run(t, "certify", "--sweep", "4", "--json")
	require.Equal(t, 0, code, stderr)
	var reps []CertifyReport
	require.NoError(t, json.Unmarshal([]byte(out), &reps))
	require.Len(t, reps, 4)
	assert.InDelta(t, 0.05617, reps[0].Optimum, 1e-12, "smallest feasible budget")
	last := reps[3]
	assert.InDelta(t, 0.03738, last.Optimum, 1e-12)
	for _, r := range last.Rows {
		if r.Algorithm == "store-all" {
			assert.True(t, r.Feasible)
			assert.InDelta(t, 1, r.Ratio, 1e-12)
		}
	}
	for i := 1; i < len(reps); i++ {
		assert.Greater(t, reps[i].Budget, reps[i-1].Budget)
		assert.LessOrEqual(t, reps[i].Optimum, reps[i-1].Optimum)
	}
	code, _, stderr = run(t, "certify", "--sweep", "-1")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "--sweep")
}
