package mpsfile_test

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/milp/milptest"
	"github.com/memsched/memsched/model"
	"github.com/memsched/memsched/model/mpsfile"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// Sample is a model with every feature of the format: ranged, free, equality rows, an empty
// row, an empty column, integer/binary/free/fixed/negative-bounded columns, names to legalize,
// a maximized objective with a constant.
func Sample() *model.Model {
	m := model.New("sample model")
	x := m.AddContinuous("x", -2, 10)
	y := m.AddInteger("y 1", -3, 7)
	z := m.AddBinary("$z")
	f := m.AddContinuous("free", math.Inf(-1), math.Inf(1))
	k := m.AddContinuous("fixed", 2.5, 2.5)
	m.AddContinuous("unused", math.Inf(-1), 4)
	n := m.AddInteger("n", 0, math.Inf(1))
	var e model.Expr
	m.AddRow("rng", -1, *e.Add(x, 1).Add(y, 2), 8.5)
	e = model.Expr{}
	m.AddLE("cap", *e.Add(x, 1).Add(z, 4).Add(f, 1).Add(n, 0.1), 6)
	e = model.Expr{}
	m.AddGE("lowf", *e.Add(f, 1).Add(x, -1).Add(k, 1e-7), -4)
	e = model.Expr{}
	m.AddEq("eq", *e.Add(y, 1).Add(z, 1), 3)
	m.AddRow("freerow", math.Inf(-1), *(&model.Expr{}).Add(x, 1), math.Inf(1))
	m.AddRow("empty", -1, model.Expr{}, 1)
	e = model.Expr{}
	e.Add(x, 3).Add(y, 2).Add(z, 5).Add(f, -1).Add(n, -0.5)
	e.Constant = 1.25
	m.SetObjective(model.Maximize, e)
	return m
}

func TestGolden(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, mpsfile.Write(&buf, Sample()))
	golden := filepath.Join("testdata", "sample.mps")
	if *update {
		require.NoError(t, os.WriteFile(golden, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), buf.String())
}

// TestRoundTrip: write → read gives the same model (names aside) for the sample and every
// conformance problem.
func TestRoundTrip(t *testing.T) {
	models := []*model.Model{Sample()}
	for _, p := range milptest.Problems() {
		models = append(models, p.Build())
	}
	for i, m := range models {
		var buf bytes.Buffer
		require.NoError(t, mpsfile.Write(&buf, m))
		back, err := mpsfile.Read(bytes.NewReader(buf.Bytes()), "rt.mps")
		require.NoError(t, err, "model %d:\n%s", i, buf.String())
		assert.NoError(t, model.Equal(m, back), "model %d:\n%s", i, buf.String())
	}
}

// TestBadFiles: every file of testdata/bad must fail with its line number.
func TestBadFiles(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "bad", "*.mps"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 12)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		_, err = mpsfile.Read(bytes.NewReader(data), filepath.Base(f))
		var pe *mpsfile.ParseError
		if assert.ErrorAs(t, err, &pe, f) {
			assert.Greater(t, pe.Line, 0, f)
			assert.Contains(t, err.Error(), "line ", f)
		}
	}
}

func TestReadFixedStyleAndConventions(t *testing.T) {
	// Fixed-format spacing, a negative UP bound alone (lower bound becomes −inf), an RHS on the
	// objective (constant −RHS), LI/UI bounds, comments.
	src := `* a comment
NAME          TESTLP
ROWS
 N  COST
 L  LIM1
COLUMNS
    X1        COST         1.0   LIM1         1.0
    X2        COST         2.0   LIM1         1.0
RHS
    RHS       LIM1         4.0   COST        -3.0
BOUNDS
 UP BND       X1          -1.0
 LI BND       X2           1
 UI BND       X2           5
ENDATA
`
	m, err := mpsfile.Read(strings.NewReader(src), "fixed.mps")
	require.NoError(t, err)
	lb, ub := m.Bounds(0)
	assert.True(t, math.IsInf(lb, -1))
	assert.Equal(t, -1.0, ub)
	assert.Equal(t, model.Integer, m.VarType(1))
	lb, ub = m.Bounds(1)
	assert.Equal(t, []float64{1, 5}, []float64{lb, ub})
	_, _, k := m.Objective()
	assert.Equal(t, 3.0, k)
}

func FuzzRead(f *testing.F) {
	var buf bytes.Buffer
	_ = mpsfile.Write(&buf, Sample())
	f.Add(buf.Bytes())
	files, _ := filepath.Glob(filepath.Join("testdata", "bad", "*.mps"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := mpsfile.Read(bytes.NewReader(data), "fuzz.mps")
		if err != nil {
			return
		}
		var out bytes.Buffer
		require.NoError(t, mpsfile.Write(&out, m))
		back, err := mpsfile.Read(&out, "fuzz-rt.mps")
		require.NoError(t, err)
		require.NoError(t, model.Equal(m, back))
	})
}
