package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFormatValues: ratios and percentages (rates: instances.TestFormatRate) print readably at every magnitude (issue 18:
// no 300-digit cells, no "β 1.2e+10 B/s").
func TestFormatValues(t *testing.T) {
	assert.Equal(t, "1.237", formatRatio(1.2366, 3))
	assert.Equal(t, "1e+300", formatRatio(1e300, 3))
	assert.Equal(t, "+Inf", formatRatio(math.Inf(1), 3))
	assert.Equal(t, "+0.90%", formatPercent(0.9))
	assert.Equal(t, "+1e+302%", formatPercent(1e302))
	assert.Equal(t, "+0.00%", formatPercent(-1e-12), "no negative zero")
}

// TestPetabyteRate (issue 29): every message says "1 B/s to 1 PB/s", and 1PB/s was refused as
// an unknown unit. It is accepted, printed as 1 PB/s; above it is refused naming the value.
func TestPetabyteRate(t *testing.T) {
	code, out, stderr := run(t, "offload-act", "--chain", "testdata/a2.json", "--mem", "40B", "--bandwidth", "1PB/s", "--algo", "greedy")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "β 1 PB/s")
	code, _, stderr = run(t, "offload-act", "--chain", "testdata/a2.json", "--mem", "40B", "--bandwidth", "2PB/s")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `"2PB/s" is outside 1 B/s to 1 PB/s`)
}

// TestRatiosOfZero (issue 29): on an all-zero chain the percentages over the bound were
// "+NaN%" and remat-offload --json failed on a NaN ratio. 0 over a bound of 0 meets it.
func TestRatiosOfZero(t *testing.T) {
	chain := filepath.Join(t.TempDir(), "zero.json")
	require.NoError(t, os.WriteFile(chain, []byte(`{"format": "memsched.chain/v1", "input": {"a": 0},
		"stages": [{"uf": 0, "ub": 0, "a": 0, "abar": 0}, {"uf": 0, "ub": 0, "a": 0, "abar": 0}]}`), 0o644))
	for _, args := range [][]string{
		{"remat-offload", "--mem", "1B", "--bandwidth", "1B/s", "--algo", "all"},
		{"offload-weights", "--mem", "1B", "--bandwidth", "1B/s", "--algo", "all", "--bound"},
	} {
		args = append(args, "--chain", chain)
		code, out, stderr := run(t, args...)
		require.Equal(t, 0, code, "%v: %s", args, stderr)
		assert.NotContains(t, out, "NaN", args)
		assert.Contains(t, out, "+0.00%", args)
		code, out, stderr = run(t, append(args, "--json")...)
		require.Equal(t, 0, code, "%v: %s", args, stderr)
		assert.True(t, json.Valid([]byte(out)), args)
	}
	assert.Nil(t, ratioTo(1, 0))
	assert.Equal(t, "-", overBound(1, 0))
	assert.Equal(t, 1.0, *ratioTo(0, 0))
	assert.Equal(t, 2.0, *ratioTo(2, 1))
}
