package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/milp/milptest"
	"github.com/memsched/memsched/model/mpsfile"
)

func writeProblem(t *testing.T, name string) string {
	t.Helper()
	for _, p := range milptest.Problems() {
		if p.Name == name {
			path := filepath.Join(t.TempDir(), name+".mps")
			f, err := os.Create(path)
			require.NoError(t, err)
			require.NoError(t, mpsfile.Write(f, p.Build()))
			require.NoError(t, f.Close())
			return path
		}
	}
	t.Fatalf("no problem %s", name)
	return ""
}

// TestSolveRef solves conformance files with the pure-Go referee (always compiled in).
func TestSolveRef(t *testing.T) {
	code, out, stderr := run(t, "solve", writeProblem(t, "mip-knapsack"), "--solver", "ref", "--json")
	require.Equal(t, 0, code, stderr)
	var rep SolveReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, "optimal", rep.Status)
	require.NotNil(t, rep.Objective)
	assert.InDelta(t, 220, *rep.Objective, 1e-9)
	require.NotNil(t, rep.Bound)
	assert.InDelta(t, 0, *rep.Gap, 1e-12)

	code, out, _ = run(t, "solve", writeProblem(t, "lp-infeasible"), "--solver", "ref", "--json")
	require.Equal(t, 0, code, "infeasible is a result")
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, "infeasible", rep.Status)
	assert.Nil(t, rep.Objective)
}

func TestSolveBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.mps")
	require.NoError(t, os.WriteFile(bad, []byte("NAME x\nROWS\n N obj\n Q c\nENDATA\n"), 0o644))
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"solve", bad}, "line 4"},
		{[]string{"solve", filepath.Join(dir, "absent.mps")}, "no such file"},
		{[]string{"solve", filepath.Join(dir, "x.txt")}, "unknown extension"},
		{[]string{"solve", writeProblem(t, "lp-basic"), "--solver", "cplex"}, `solver "cplex" not available`},
		{[]string{"solve", writeProblem(t, "lp-basic"), "--gap", "2"}, "--gap must be in [0, 1)"},
		{[]string{"solve"}, "accepts 1 arg"},
	}
	for _, c := range cases {
		code, _, stderr := run(t, c.args...)
		assert.Equal(t, 2, code, c.args)
		assert.Contains(t, stderr, c.want, c.args)
	}
}
