package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
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
	assert.Contains(t, b.Note, "MILP not built: its 735 nonzeros would take about 373.24 KiB")

	code, _, stderr = run(t, append(args, "--max-memory", "0")...)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "--max-memory must be positive")
}

// TestRematTooLarge: a table above --max-memory is refused at once with its size and the
// slots that fit (exit 1: the input is valid, the command cannot complete within the limit),
// and the advice works; with --slots exact the table falls back to slots, announced.
func TestRematTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g.json")
	code, _, stderr := run(t, "gen", "zoo", "gpt2", "--hidden", "64", "--heads", "4", "--layers", "298", "--seq", "16", "--batch", "1", "-o", path)
	require.Equal(t, 0, code, stderr)
	args := []string{"remat", "--chain", path, "--mem", "1GiB", "--max-memory", "32MiB"}
	code, out, stderr := run(t, args...)
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Contains(t, stderr, "the C_MP (persistent) with 500 slots on 300 stages table would take 178.26 MiB")
	assert.Contains(t, stderr, "above the memory limit of 32.00 MiB (--max-memory); use --slots 87 or fewer")
	assert.Equal(t, 1, strings.Count(stderr, "\n"))
	code, out, stderr = run(t, append(args, "--slots", "87")...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "verified")
}

// TestCertifyTimeLines: certify prints, per lever, the time it took and its share of
// --time-limit (JSON: seconds, time_budget_seconds), and the MILP bounds' own limits.
func TestCertifyTimeLines(t *testing.T) {
	code, out, stderr := run(t, "certify", "--bandwidth", "12GB/s", "--time-limit", "30")
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `(?m)^time: \d+\.\d s of a 10\.0 s share`, out, "three levers run (the toy has no weights): 10 s each")
	code, out, stderr = run(t, "certify", "--bandwidth", "12GB/s", "--time-limit", "30", "--json")
	require.Equal(t, 0, code, stderr)
	var rep struct {
		Levers map[string]struct {
			Seconds    float64 `json:"seconds"`
			TimeBudget float64 `json:"time_budget_seconds"`
		} `json:"levers"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.InDelta(t, 10, rep.Levers["remat"].TimeBudget, 0.5)
	assert.LessOrEqual(t, rep.Levers["remat"].Seconds, rep.Levers["remat"].TimeBudget)
	assert.Positive(t, rep.Levers["act-offload"].TimeBudget)
}

// TestActMILPLimits: the exact MILP of Problem 1 (whose model grows as the cube of the chain's
// length) keeps --max-memory and --time-limit: `offload-act --algo milp` above the memory
// limit exits 1 with one line naming the model's size and the limit; `--algo all` and `bound`
// go on without it, saying why; a time limit spent while the model is built leaves the start
// schedule, status time-limit and no bound (a 60-block GPT-2's model takes seconds to build).
func TestActMILPLimits(t *testing.T) {
	if _, err := milp.Lookup("highs"); err != nil {
		t.Skip("needs HiGHS")
	}
	dir := t.TempDir()
	small := filepath.Join(dir, "g12.json")
	code, _, stderr := run(t, "gen", "zoo", "gpt2", "--hidden", "256", "--heads", "4", "--layers", "12", "--seq", "128", "--batch", "4", "-o", small)
	require.Equal(t, 0, code, stderr)
	args := []string{"--chain", small, "--mem", "273489920B", "--bandwidth", "12GB/s", "--max-memory", "256KiB"}

	code, out, stderr := run(t, append([]string{"offload-act", "--algo", "milp"}, args...)...)
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	assert.Contains(t, stderr, "above the memory limit of 256.00 KiB (--max-memory)")

	code, out, stderr = run(t, append([]string{"offload-act", "--algo", "all", "--json"}, args...)...)
	require.Equal(t, 0, code, stderr)
	var rep ActReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Contains(t, rep.LowerBounds.MILPNote, "not run: ")
	assert.Nil(t, rep.LowerBounds.MILP)
	for _, r := range rep.Results {
		assert.NotEqual(t, "milp", r.Algo)
	}

	// bound: GREEDY's schedule meets the bounds here, so the MILP is not needed (issue 29:
	// the best verified schedule is the incumbent) and --max-memory does not matter.
	code, out, stderr = run(t, append([]string{"bound", "--problem", "act-offload"}, args...)...)
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `best schedule\s+16.60 ms \(greedy, verified by verify/timed\), proven optimal`, out)
	assert.NotContains(t, out, "bound milp")

	long := filepath.Join(dir, "g60.json")
	code, _, stderr = run(t, "gen", "zoo", "gpt2", "--layers", "60", "-o", long)
	require.Equal(t, 0, code, stderr)
	code, out, stderr = run(t, "offload-act", "--chain", long, "--mem", "160GiB", "--bandwidth", "12GB/s", "--algo", "milp", "--time-limit", "0.2", "--json")
	require.Equal(t, 0, code, stderr)
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, "time-limit", rep.LowerBounds.MILPStatus)
	assert.Nil(t, rep.LowerBounds.MILP)
	assert.Contains(t, rep.LowerBounds.CertifiedBy["milp"], "stopped while building the model")
	assert.True(t, rep.Verified)
}

// TestExportLimits: export of the offloading MILPs stops at --max-memory (their models grow as
// the cube of the chain) with one line naming the model's size and the limit, exit 1, and
// writes no file.
func TestExportLimits(t *testing.T) {
	dir := t.TempDir()
	chain := filepath.Join(dir, "r18.json")
	code, _, stderr := run(t, "gen", "zoo", "resnet", "--depth", "18", "--batch", "32", "-o", chain)
	require.Equal(t, 0, code, stderr)
	for _, problem := range []string{"act-offload", "remat-offload"} {
		out := filepath.Join(dir, problem+".lp")
		args := []string{"export", "--problem", problem, "--chain", chain, "--mem", "600MiB", "--bandwidth", "12GB/s", "--format", "lp", "-o", out}
		code, stdout, stderr := run(t, append(args, "--max-memory", "16KiB")...)
		assert.Equal(t, 1, code, problem)
		assert.Empty(t, stdout)
		assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
		assert.Contains(t, stderr, "above the memory limit of 16.00 KiB (--max-memory)", problem)
		assert.NoFileExists(t, out)
		code, _, stderr = run(t, args...)
		assert.Equal(t, 0, code, stderr)
		assert.FileExists(t, out)
	}
}
