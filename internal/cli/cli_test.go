package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memsched/memsched/milp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// run executes the CLI in-process with injected streams.
func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Main(args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestVersion(t *testing.T) {
	code, out, _ := run(t, "version")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "memsched "+Version)
}

// TestInfoToy is the foundation issue's acceptance: the toy chain's store-all makespan is
// 37.38 ms and its peak 107 MiB (106.99 MiB from the table's rounded values).
func TestInfoToy(t *testing.T) {
	code, out, stderr := run(t, "info")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "store-all makespan        37.38 ms")
	assert.Contains(t, out, "store-all peak            106.99 MiB")

	code, out, _ = run(t, "info", "--json")
	require.Equal(t, 0, code)
	var rep InfoReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.InDelta(t, 0.03738, rep.StoreAllMakespan, 1e-12)
	assert.InDelta(t, 107, float64(rep.StoreAllPeak)/(1<<20), 0.015)
	assert.Equal(t, 7, rep.Stages)
}

func TestInfoChainFile(t *testing.T) {
	path := filepath.Join("..", "..", "instances", "testdata", "toy.json")
	code, out, _ := run(t, "--json", "info", "--chain", path)
	require.Equal(t, 0, code)
	assert.Contains(t, out, `"store_all_peak": 112187147`)
}

// TestBadInput: bad input exits 2 with one line on stderr naming the problem.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"format": "memsched.chain/v1", "input": {"a": 1}, "stages": [{"uf": 1, "ub": 1, "a": 5, "abar": 2}]}`), 0o644))
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown command", []string{"bogus"}, "unknown command"},
		{"unknown flag", []string{"info", "--chian", "x"}, "unknown flag"},
		{"missing file", []string{"info", "--chain", filepath.Join(dir, "absent.json")}, "no such file"},
		{"invalid chain", []string{"info", "--chain", bad}, "stages[0].abar: 2: is smaller than a"},
		{"extra argument", []string{"version", "x"}, "unknown command"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := run(t, c.args...)
			assert.Equal(t, 2, code)
			assert.Contains(t, stderr, c.want)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line on stderr: %q", stderr)
		})
	}
}

// TestVersionBackends: version names the MILP backends compiled in, and a binary without the
// cgo ones (memsched_torch's wheel) says which bounds it then lacks.
func TestVersionBackends(t *testing.T) {
	code, out, _ := run(t, "version", "--json")
	require.Equal(t, 0, code)
	var v struct {
		Backends []string `json:"milp_backends"`
		Note     string   `json:"milp_note"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	assert.Equal(t, milp.Available(), v.Backends)
	assert.Contains(t, v.Backends, "ref")
	assert.Equal(t, milpNote(v.Backends), v.Note)
	assert.Contains(t, milpNote([]string{"ref"}), "MILP bounds")
	assert.Empty(t, milpNote([]string{"highs", "ref"}))
}
