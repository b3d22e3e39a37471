package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExportJSON (issue 18): export --json was accepted and printed nothing; now it prints what
// was written — the file, the model's size and its units, the same as the file's comment line —
// for both problems. A --problem that export does not know is refused naming both it does.
func TestExportJSON(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		problem string
		args    []string
	}{
		{"weight-offload-lb", []string{"--chain", filepath.Join("testdata", "w3.json"), "--mem", "25B", "--bandwidth", "10B/s"}},
		{"remat-ilp", []string{"--chain", filepath.Join("..", "..", "instances", "testdata", "toy.json"), "--mem", "90MiB"}},
		{"remat-ilp", []string{"--graph", filepath.Join("..", "..", "instances", "testdata", "graphs", "diamond.json"), "--mem", "9MiB"}},
	} {
		out := filepath.Join(dir, c.problem+".lp")
		args := append([]string{"export", "--problem", c.problem, "--format", "lp", "-o", out, "--json"}, c.args...)
		code, stdout, stderr := run(t, args...)
		require.Equal(t, 0, code, "%v: %s", args, stderr)
		var rep ExportReport
		require.NoError(t, json.Unmarshal([]byte(stdout), &rep), stdout)
		assert.Equal(t, out, rep.File)
		assert.Equal(t, c.problem, rep.Problem)
		assert.Equal(t, "lp", rep.Format)
		m, err := readModel(out)
		require.NoError(t, err)
		assert.Equal(t, m.NumVars(), rep.Variables)
		assert.Equal(t, m.NumRows(), rep.Rows)
		assert.Equal(t, m.NumNonzeros(), rep.Nonzeros)
		b, err := os.ReadFile(out)
		require.NoError(t, err)
		assert.Contains(t, string(b), fmt.Sprintf("memsched units: memory=%.17g time=%.17g", rep.Units.Memory, rep.Units.Time),
			"the JSON's units are the file's")
	}
	code, _, stderr := run(t, "export", "--problem", "bogus", "-o", filepath.Join(dir, "x.lp"))
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `unknown --problem "bogus" (want weight-offload-lb or remat-ilp or act-offload or remat-offload or pipeline)`)
}
