package cli

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/milp"
)

// TestBoundLimits: --time-limit counts from the command's start, model building included: a
// budget spent before the MILP's model is built leaves the closed-form bounds and says so;
// --max-memory below the MILP's estimated memory skips it with a note; both are results,
// not errors.
func TestBoundLimits(t *testing.T) {
	if _, err := milp.Lookup("highs"); err != nil {
		t.Skip("needs HiGHS")
	}
	chain := smallGPT(t)
	args := []string{"bound", "--chain", chain, "--mem", "110MiB", "--bandwidth", "1GB/s", "--json"}
	code, out, stderr := run(t, append(args, "--time-limit", "0.000001")...)
	require.Equal(t, 0, code, stderr)
	var b BoundReport
	require.NoError(t, json.Unmarshal([]byte(out), &b))
	assert.Equal(t, "time-limit", b.Status)
	assert.Contains(t, b.Note, "the time ran out")
	require.NotNil(t, b.LowerBound)
	assert.Equal(t, b.SumU, *b.LowerBound, "Σu stands")

	code, out, stderr = run(t, append(args, "--max-memory", "100KiB")...)
	require.Equal(t, 0, code, stderr)
	b = BoundReport{}
	require.NoError(t, json.Unmarshal([]byte(out), &b))
	assert.Equal(t, "not-solved", b.Status)
	assert.Contains(t, b.Note, "MILP not built: its 735 nonzeros would take about 0.36 MiB")

	code, _, stderr = run(t, append(args, "--max-memory", "0")...)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "--max-memory must be positive")
}
