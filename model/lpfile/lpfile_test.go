package lpfile_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/milp/milptest"
	"github.com/memsched/memsched/model"
	"github.com/memsched/memsched/model/lpfile"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func sample() *model.Model {
	m := model.New("sample model")
	x := m.AddContinuous("x", -2, 10)
	y := m.AddInteger("y 1", -3, 7)
	z := m.AddBinary("e1")
	f := m.AddContinuous("free", math.Inf(-1), math.Inf(1))
	k := m.AddContinuous("3k", 2.5, 2.5)
	w := m.AddContinuous("w", math.Inf(-1), 4)
	var e model.Expr
	m.AddRow("rng", -1, *e.Add(x, 1).Add(y, 2), 8.5)
	e = model.Expr{}
	m.AddLE("cap", *e.Add(x, 1).Add(z, 4).Add(f, 1).Add(w, -1), 6)
	e = model.Expr{}
	m.AddGE("lowf", *e.Add(f, 1).Add(x, -1).Add(k, 1e-7), -4)
	e = model.Expr{}
	m.AddEq("st", *e.Add(y, 1).Add(z, 1), 3)
	m.AddRow("empty", -1, model.Expr{}, 1)
	e = model.Expr{}
	e.Add(x, 3).Add(y, 2).Add(z, 5).Add(f, -1)
	e.Constant = -1.25
	m.SetObjective(model.Maximize, e)
	return m
}

func TestGolden(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, lpfile.Write(&buf, sample()))
	golden := filepath.Join("testdata", "sample.lp")
	if *update {
		require.NoError(t, os.WriteFile(golden, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), buf.String())
}

// TestLongRowsWrap: no line exceeds the 255 characters some readers allow.
func TestLongRowsWrap(t *testing.T) {
	m := model.New("long")
	var e model.Expr
	for i := 0; i < 500; i++ {
		e.Add(m.AddContinuous(fmt.Sprintf("%s%03d", strings.Repeat("v", 20), i), 0, 1), 1.0/3)
	}
	m.AddLE("big", e, 10)
	m.SetObjective(model.Minimize, e)
	var buf bytes.Buffer
	require.NoError(t, lpfile.Write(&buf, m))
	for i, line := range strings.Split(buf.String(), "\n") {
		assert.LessOrEqual(t, len(line), 255, "line %d", i+1)
	}
}

func TestWritesEveryProblem(t *testing.T) {
	for _, p := range milptest.Problems() {
		var buf bytes.Buffer
		assert.NoError(t, lpfile.Write(&buf, p.Build()), p.Name)
	}
	var buf bytes.Buffer
	assert.Error(t, lpfile.Write(&buf, model.New("empty")), "an empty model is rejected")
}

// TestBadFiles: every file of testdata/bad must fail with its line number.
func TestBadFiles(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "bad", "*.lp"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 12)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		_, err = lpfile.Read(bytes.NewReader(data), filepath.Base(f))
		if !assert.Error(t, err, f) {
			continue
		}
		var pe *lpfile.ParseError
		if errors.As(err, &pe) {
			assert.Greater(t, pe.Line, 0, f)
		} else {
			// Semantic errors found once the model is built (duplicate rows, contradictory
			// bounds) name the row or variable instead of a line.
			assert.Contains(t, err.Error(), "model: ", f)
		}
	}
}

// TestReadForms: hand-written forms other writers use.
func TestReadForms(t *testing.T) {
	src := `\ comment line
MAXIMIZE
 profit: 3 x + 2y_z - z + 4
SUBJECT TO
 c1: x + y_z <= 4
 -2 <= x - z <= 5
 c3: 2 x
   + 3 z >= 1
 c4: x + 5 >= 6
BOUNDS
 x <= 10
 -inf <= z <= 3
 y_z free
 w = 2
GENERAL
 z
BINARY
 b
END
`
	m, err := lpfile.Read(strings.NewReader(src), "forms.lp")
	require.NoError(t, err)
	require.Equal(t, 5, m.NumVars(), "x, y_z, z, w, b")
	require.Equal(t, 4, m.NumRows())
	lo, hi := m.RowBounds(1)
	assert.Equal(t, []float64{-2, 5}, []float64{lo, hi})
	lo, hi = m.RowBounds(3)
	assert.Equal(t, []float64{1, math.Inf(1)}, []float64{lo, hi}, "constant moved to the side")
	sense, c, k := m.Objective()
	assert.Equal(t, model.Maximize, sense)
	assert.Equal(t, []float64{3, 2, -1, 0, 0}, c)
	assert.Equal(t, 4.0, k)
	lb, ub := m.Bounds(2)
	assert.Equal(t, model.Integer, m.VarType(2))
	assert.Equal(t, []float64{math.Inf(-1), 3}, []float64{lb, ub})
	lb, ub = m.Bounds(1)
	assert.True(t, math.IsInf(lb, -1) && math.IsInf(ub, 1))
	assert.Equal(t, model.Binary, m.VarType(4))
}

// TestRoundTripExact: for models without ranged rows (written as two rows), write → read gives
// the same model — including columns without cost that first appear in a later row (order kept)
// and a column in no row at all.
func TestRoundTripExact(t *testing.T) {
	m := model.New("rt")
	x := m.AddContinuous("x", -2, 10)
	y := m.AddInteger("y", -3, 7)
	z := m.AddBinary("z")
	f := m.AddContinuous("f", math.Inf(-1), math.Inf(1))
	late := m.AddContinuous("late", 1, 2) // no cost, only in row "c"
	m.AddInteger("alone", -5, 5)          // no cost, in no row
	var e model.Expr
	m.AddLE("a", *e.Add(x, 1).Add(y, 2.5e-7), 8.5)
	e = model.Expr{}
	m.AddGE("b", *e.Add(z, 4).Add(f, 1), -1e9)
	e = model.Expr{}
	m.AddEq("c", *e.Add(y, 1).Add(z, 1).Add(late, -2), 3)
	e = model.Expr{}
	e.Add(x, 1.0/3).Add(y, 2).Add(z, 5).Add(f, -1)
	e.Constant = 0.1
	m.SetObjective(model.Minimize, e)
	var buf bytes.Buffer
	require.NoError(t, lpfile.Write(&buf, m))
	back, err := lpfile.Read(&buf, "rt.lp")
	require.NoError(t, err)
	assert.NoError(t, model.Equal(m, back))
}

func FuzzRead(f *testing.F) {
	var buf bytes.Buffer
	_ = lpfile.Write(&buf, sample())
	f.Add(buf.Bytes())
	files, _ := filepath.Glob(filepath.Join("testdata", "bad", "*.lp"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := lpfile.Read(bytes.NewReader(data), "fuzz.lp")
		if err != nil {
			return
		}
		var out bytes.Buffer
		require.NoError(t, lpfile.Write(&out, m))
		_, err = lpfile.Read(&out, "fuzz-rt.lp")
		require.NoError(t, err, out.String())
	})
}
