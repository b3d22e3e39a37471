package cli

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/model"
)

// fixedAnswer is a backend that returns one answer whatever the model.
type fixedAnswer struct {
	name string
	res  milp.Result
}

func (f fixedAnswer) Name() string { return f.name }
func (f fixedAnswer) Solve(context.Context, *model.Model, milp.Params) (*milp.Result, error) {
	r := f.res
	r.Values = append([]float64(nil), f.res.Values...)
	return &r, nil
}

func init() {
	// Answers for lp-basic (max 3x + 5y, x ≤ 4, 2y ≤ 12, 3x + 2y ≤ 18; optimum 36 at (2, 6)),
	// which milp.Solve re-checks: (0, 0) is feasible, (4, 4) violates c3 by 2.
	milp.Register("test-unbounded", func() (milp.Solver, error) {
		// HiGHS returns a feasible point with an unbounded status.
		return fixedAnswer{"test-unbounded", milp.Result{Status: milp.Unbounded, HasSolution: true, Values: []float64{0, 0}, Objective: 0, Bound: 1e300}}, nil
	})
	milp.Register("test-liar", func() (milp.Solver, error) {
		return fixedAnswer{"test-liar", milp.Result{Status: milp.Optimal, HasSolution: true, Values: []float64{4, 4}, Objective: 32, Bound: 32}}, nil
	})
}

// TestSolveUnboundedPrintsNoObjective: an unbounded status comes with no objective and no gap,
// in JSON (null) and in the table ("-"), even when the solver returned a point.
func TestSolveUnboundedPrintsNoObjective(t *testing.T) {
	code, out, stderr := run(t, "solve", writeProblem(t, "lp-basic"), "--solver", "test-unbounded", "--json")
	require.Equal(t, 0, code, stderr)
	var rep SolveReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, "unbounded", rep.Status)
	assert.Nil(t, rep.Objective)
	assert.Nil(t, rep.Gap)

	var buf bytes.Buffer
	require.NoError(t, runSolve(&SolveOptions{File: writeProblem(t, "lp-basic"), Solver: "test-unbounded"}, &IO{Out: &buf, ErrOut: &buf}))
	assert.Contains(t, buf.String(), "status      unbounded")
	assert.Contains(t, buf.String(), "objective   -")
}

// TestSolveRefusedIsAStatus: a point that fails the re-check is reported as status solver-error
// with the evidence (exit 0, like every solve outcome), never as a missing status or a result.
func TestSolveRefusedIsAStatus(t *testing.T) {
	code, out, stderr := run(t, "solve", writeProblem(t, "lp-basic"), "--solver", "test-liar", "--json")
	require.Equal(t, 0, code, stderr)
	var rep SolveReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, "solver-error", rep.Status)
	assert.False(t, rep.HasSolution)
	assert.Nil(t, rep.Objective)
	assert.Nil(t, rep.Bound)
	assert.Contains(t, rep.Refused, `test-liar claimed optimal, objective 32; refused: infeasible point: point violates row "c3" by 0.1111`)

	var buf bytes.Buffer
	require.NoError(t, runSolve(&SolveOptions{File: writeProblem(t, "lp-basic"), Solver: "test-liar"}, &IO{Out: &buf, ErrOut: &buf}))
	assert.Contains(t, buf.String(), "status      solver-error")
	assert.Contains(t, buf.String(), "refused     test-liar claimed optimal")
}

// TestSolveGzip: .mps.gz and .lp.gz files are read through gzip; a corrupt one is exit 2.
func TestSolveGzip(t *testing.T) {
	plain, err := os.ReadFile(writeProblem(t, "mip-knapsack"))
	require.NoError(t, err)
	dir := t.TempDir()
	path := filepath.Join(dir, "knapsack.mps.gz")
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	_, err = w.Write(plain)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.NoError(t, os.WriteFile(path, z.Bytes(), 0o644))
	code, out, stderr := run(t, "solve", path, "--solver", "ref", "--json")
	require.Equal(t, 0, code, stderr)
	var rep SolveReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.NotNil(t, rep.Objective)
	assert.InDelta(t, 220, *rep.Objective, 1e-9)

	bad := filepath.Join(dir, "bad.lp.gz")
	require.NoError(t, os.WriteFile(bad, []byte("not gzip"), 0o644))
	code, _, stderr = run(t, "solve", bad, "--solver", "ref")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "bad.lp.gz")
}
