package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/milp"
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
		{[]string{"solve"}, "give one model file"},
	}
	for _, c := range cases {
		code, _, stderr := run(t, c.args...)
		assert.Equal(t, 2, code, c.args)
		assert.Contains(t, stderr, c.want, c.args)
	}
}

// TestSolveFlags: argv → SolveOptions through the command's own flag binding, defaults
// included; a malformed number is a parse error naming the flag.
func TestSolveFlags(t *testing.T) {
	cases := []struct {
		name string
		argv []string
		want SolveOptions
	}{
		{"defaults", nil, SolveOptions{}},
		{"all flags", []string{"--solver", "ref", "--time-limit", "2.5", "--gap", "0.01", "--threads", "3"},
			SolveOptions{Solver: "ref", TimeLimit: 2.5, Gap: 0.01, Threads: 3}},
		{"equals form", []string{"--solver=lpsolve", "--time-limit=60"}, SolveOptions{Solver: "lpsolve", TimeLimit: 60}},
	}
	for _, c := range cases {
		var got SolveOptions
		f := pflag.NewFlagSet("solve", pflag.ContinueOnError)
		bindSolveFlags(f, &got)
		require.NoError(t, f.Parse(c.argv), c.name)
		assert.Equal(t, c.want, got, c.name)
	}
	var got SolveOptions
	f := pflag.NewFlagSet("solve", pflag.ContinueOnError)
	f.SetOutput(&bytes.Buffer{})
	bindSolveFlags(f, &got)
	err := f.Parse([]string{"--threads", "two"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "threads")
}

// TestSolveHumanTable: options → human output with injected writers; the objective of the
// referee's solve appears in the table, and an infeasible model prints "-" for missing values.
func TestSolveHumanTable(t *testing.T) {
	var out bytes.Buffer
	io := &IO{Out: &out, ErrOut: &out}
	require.NoError(t, runSolve(&SolveOptions{File: writeProblem(t, "mip-knapsack"), Solver: "ref", TimeLimit: 10}, io))
	for _, want := range []string{"solver      ref", "status      optimal", "objective   220", "best bound  220", "gap         0", "time        "} {
		assert.Contains(t, out.String(), want)
	}
	out.Reset()
	require.NoError(t, runSolve(&SolveOptions{File: writeProblem(t, "lp-infeasible"), Solver: "ref"}, io))
	assert.Contains(t, out.String(), "status      infeasible")
	assert.Contains(t, out.String(), "objective   -")

	err := runSolve(&SolveOptions{File: "x.mps", TimeLimit: -1}, io)
	var ue *UsageError
	require.ErrorAs(t, err, &ue)
	assert.Contains(t, err.Error(), "--time-limit must be 0 (none) or a positive number")
}

// TestSolveBadLPLine: a malformed .lp file is a usage error (exit 2) naming its line.
func TestSolveBadLPLine(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.lp")
	require.NoError(t, os.WriteFile(bad, []byte("Minimize\n obj: x + y\nSubject To\n c1: x + y <> 1\nEnd\n"), 0o644))
	code, _, stderr := run(t, "solve", bad, "--solver", "ref")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "line 4")
}

// TestSolveLpsolveMIPNote: lp_solve's "optimal" on a MIP comes with a note that it is its own
// word (its branch and bound has called non-optimal points optimal on memsched's models); on
// an LP, and for HiGHS, there is none.
func TestSolveLpsolveMIPNote(t *testing.T) {
	if !slices.Contains(milp.Backends(), "lpsolve") {
		t.Skip("lp_solve is not compiled in")
	}
	for _, tc := range []struct {
		problem, solver string
		note            bool
	}{{"mip-knapsack", "lpsolve", true}, {"lp-basic", "lpsolve", false}, {"mip-knapsack", "highs", false}} {
		if !slices.Contains(milp.Backends(), tc.solver) {
			continue
		}
		code, out, stderr := run(t, "solve", writeProblem(t, tc.problem), "--solver", tc.solver, "--json")
		require.Equal(t, 0, code, stderr)
		var rep SolveReport
		require.NoError(t, json.Unmarshal([]byte(out), &rep))
		require.Equal(t, "optimal", rep.Status, tc)
		assert.Equal(t, tc.note, rep.Note == lpsolveMIPNote, "%+v: %q", tc, rep.Note)
	}
}
