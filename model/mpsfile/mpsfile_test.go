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
	"github.com/memsched/memsched/model/modelfile"
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
	require.GreaterOrEqual(t, len(files), 40)
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
	// Fixed-format spacing, a negative UP bound after MI, an RHS on the objective (constant
	// −RHS), LI/UI bounds, comments.
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
 MI BND       X1
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

// TestModelFiles: every MPS file of testdata/models reads — and survives write → read exactly —
// or is refused with a ParseError naming its line and the construct that expected.tsv names.
func TestModelFiles(t *testing.T) {
	n := 0
	for _, mf := range milptest.ModelFiles(t) {
		if !strings.Contains(mf.Name, ".mps") {
			continue
		}
		n++
		m, err := modelfile.Read(mf.Path)
		if mf.Memsched.Status == "refused" {
			var pe *mpsfile.ParseError
			if assert.ErrorAs(t, err, &pe, mf.Name) {
				assert.Greater(t, pe.Line, 0, mf.Name)
				assert.Contains(t, pe.Msg, mf.Memsched.Text, mf.Name)
				assert.Contains(t, err.Error(), filepath.Base(mf.Name)+": line ", "the file is named")
			}
			continue
		}
		require.NoError(t, err, mf.Name)
		var buf bytes.Buffer
		require.NoError(t, mpsfile.Write(&buf, m), mf.Name)
		back, err := mpsfile.Read(&buf, "rt.mps")
		require.NoError(t, err, mf.Name)
		assert.NoError(t, model.Equal(m, back), mf.Name)
	}
	assert.GreaterOrEqual(t, n, 20)
}

func read(t *testing.T, src string) (*model.Model, error) {
	t.Helper()
	return mpsfile.Read(strings.NewReader(src), "t.mps")
}

// TestStarNames: only a '*' in column 1 starts a comment; *RHS*, *OBJ* and *Y are names
// (issue 19, item 1: the RHS line was dropped and the optimum read as 0 instead of 2).
func TestStarNames(t *testing.T) {
	m, err := read(t, "NAME s\nROWS\n N  *OBJ*\n G  LIM\nCOLUMNS\n    X  *OBJ*  1  LIM  1\n    *Y  *OBJ*  3  LIM  1\nRHS\n    *RHS*  LIM  2.0\n* a comment\nENDATA\n")
	require.NoError(t, err)
	require.Equal(t, 2, m.NumVars())
	assert.Equal(t, "*Y", m.VarName(1))
	lo, _ := m.RowBounds(0)
	assert.Equal(t, 2.0, lo)
	_, c, _ := m.Objective()
	assert.Equal(t, []float64{1, 3}, c)
}

// TestIntegerColumnDefaults: an integer column (MARKER) that no BOUNDS line names is binary
// (issue 19, item 2); any BOUNDS line makes it an integer whose other side keeps its default.
func TestIntegerColumnDefaults(t *testing.T) {
	head := "NAME m\nROWS\n N obj\n L c\nCOLUMNS\n    M1 'MARKER' 'INTORG'\n    x obj -1 c 1\n    M2 'MARKER' 'INTEND'\nRHS\n    rhs c 5.5\n"
	cases := []struct {
		bounds string
		typ    model.VarType
		lb, ub float64
	}{
		{"", model.Binary, 0, 1},
		{"BOUNDS\n MI bnd x\n", model.Integer, math.Inf(-1), math.Inf(1)},
		{"BOUNDS\n PL bnd x\n", model.Integer, 0, math.Inf(1)},
		{"BOUNDS\n UP bnd x 7\n", model.Integer, 0, 7},
		{"BOUNDS\n LO bnd x 2\n", model.Integer, 2, math.Inf(1)},
		{"BOUNDS\n BV bnd x\n", model.Binary, 0, 1},
	}
	for _, c := range cases {
		m, err := read(t, head+c.bounds+"ENDATA\n")
		require.NoError(t, err, c.bounds)
		lb, ub := m.Bounds(0)
		assert.Equal(t, c.typ, m.VarType(0), c.bounds)
		assert.Equal(t, []float64{c.lb, c.ub}, []float64{lb, ub}, c.bounds)
	}
	// A continuous column with UI/LI becomes integer; outside the markers nothing is binary.
	m, err := read(t, "NAME m\nROWS\n N obj\nCOLUMNS\n    x obj 1\n    y obj 1\nBOUNDS\n UI bnd x 3\nENDATA\n")
	require.NoError(t, err)
	assert.Equal(t, model.Integer, m.VarType(0))
	assert.Equal(t, model.Continuous, m.VarType(1))
}

// TestFixedFormat: a file that free format cannot read but that has the fixed layout is read by
// column, names with spaces included (Netlib forplan; issue 19, item 5).
func TestFixedFormat(t *testing.T) {
	m, err := modelfile.Read(filepath.Join("..", "..", "testdata", "models", "memsched", "fixed-spaces.mps"))
	require.NoError(t, err)
	assert.Equal(t, []string{"X 1", "Y 2"}, []string{m.VarName(0), m.VarName(1)})
	assert.Equal(t, []string{"ROW 1", "ROW 2"}, []string{m.RowName(0), m.RowName(1)})
	lo, _ := m.RowBounds(0)
	_, hi := m.RowBounds(1)
	assert.Equal(t, []float64{3, 1}, []float64{lo, hi})

	m, err = modelfile.Read(filepath.Join("..", "..", "testdata", "models", "netlib", "forplan.mps.gz"))
	require.NoError(t, err)
	assert.Equal(t, []int{161, 421, 4563}, []int{m.NumRows(), m.NumVars(), m.NumNonzeros()}, "forplan as HiGHS reads it")

	// An error past the point where free format fails is reported from the fixed reading.
	bad := "NAME f\nROWS\n N  COST ROW\n G  ROW 1\nCOLUMNS\n    X 1       COST ROW  1.0            ROW 9     1.0\nENDATA\n"
	_, err = read(t, bad)
	assert.ErrorContains(t, err, `line 6: unknown row "ROW 9" (read as fixed-format MPS)`)
}

// TestNumbers: Fortran D exponents (HiGHS reads them; issue 19, item 5), Infinity; NaN refused.
func TestNumbers(t *testing.T) {
	m, err := read(t, "NAME n\nROWS\n N obj\n G c\nCOLUMNS\n    x obj 1.0D0 c 2.0d0\n    y obj 1\nRHS\n    rhs c 1.5D1\nBOUNDS\n UP bnd y Infinity\n LO bnd y -1.25E+1\nENDATA\n")
	require.NoError(t, err)
	lo, _ := m.RowBounds(0)
	assert.Equal(t, 15.0, lo)
	cols, coefs := m.RowTerms(0)
	assert.Equal(t, []int32{0}, cols)
	assert.Equal(t, []float64{2}, coefs)
	lb, ub := m.Bounds(1)
	assert.Equal(t, []float64{-12.5, math.Inf(1)}, []float64{lb, ub})
	_, err = read(t, "NAME n\nROWS\n N obj\nCOLUMNS\n    x obj nan\nENDATA\n")
	assert.ErrorContains(t, err, `line 5: bad number "nan"`)
}

// TestRefusals: constructs HiGHS and CBC read differently, or outside memsched's model, are
// ParseErrors naming the line and what is wrong — never a silent choice.
func TestRefusals(t *testing.T) {
	head := "NAME r\nROWS\n N obj\n L c\n L d\nCOLUMNS\n    x obj -1 c 1\n    y obj -1 d 1\n"
	cases := []struct{ name, tail, want string }{
		{"duplicate entry", "    z c 1\n    z c 2\nENDATA\n", `line 10: column "z" has a second entry in row "c" (line 9 has the first): HiGHS keeps the first, CBC refuses the file`},
		{"duplicate cost", "    z obj 1\n    z obj 2\nENDATA\n", `line 10: column "z" has a second entry in the objective row "obj" (line 9 has the first)`},
		{"duplicate RHS", "RHS\n    rhs c 1\n    rhs c 2\nENDATA\n", `line 11: a second RHS entry for row "c" (line 10 has the first)`},
		{"duplicate range", "RANGES\n    rng c 1 c 2\nENDATA\n", `line 10: a second RANGES entry for row "c" (line 10 has the first)`},
		{"bound side twice", "BOUNDS\n LO bnd x 1\n FX bnd x 2\nENDATA\n", `line 11: FX bound sets the lower bound of column "x" again (line 10 set it)`},
		{"second RHS set", "RHS\n    r1 c 1\n    r2 d 2\nENDATA\n", `line 11: a second RHS set "r2" (line 10 started "r1") gives row "d" a value the first set does not`},
		{"negative upper bound", "BOUNDS\n UP bnd x -2\nENDATA\n", `line 10: upper bound -2 < 0 on column "x" whose lower bound is left at 0: HiGHS reads [0, -2] (infeasible), CBC and CPLEX (−∞, -2]`},
		{"contradictory bounds", "BOUNDS\n LO bnd x 3\n UP bnd x 1\nENDATA\n", `line 11: contradictory bounds [3, 1] on column "x"`},
		{"semi-continuous", "BOUNDS\n SC bnd x 5\nENDATA\n", "line 10: bound type SC (semi-continuous column) is outside memsched's model"},
		{"quadratic", "QUADOBJ\n    x x 1\nENDATA\n", "line 9: section QUADOBJ (quadratic objective) is outside memsched's model"},
		{"cone", "CSECTION k 0 QUAD\n    x\nENDATA\n", "line 9: section CSECTION (conic constraint) is outside"},
		{"SOS", "SOS\n S1 SOS s\nENDATA\n", "line 9: section SOS (special ordered sets) is outside"},
		{"indicator", "INDICATORS\n IF c x 1\nENDATA\n", "line 9: section INDICATORS (indicator constraints) is outside"},
		{"unknown row", "    z e 1\nENDATA\n", `line 9: unknown row "e"`},
		{"bound without a value", "BOUNDS\n UP bnd x\nENDATA\n", `line 10: UP bound on column "x" without a value`},
		{"trailing comment", "    z c 1 $ note\nENDATA\n", `line 9: text "$" after the fields: only a '*' in column 1 starts a comment`},
	}
	for _, c := range cases {
		_, err := read(t, head+c.tail)
		var pe *mpsfile.ParseError
		if assert.ErrorAs(t, err, &pe, c.name) {
			assert.Contains(t, err.Error(), c.want, c.name)
		}
	}
}

// TestAgreedReadings: where HiGHS and CBC agree, memsched reads as they do — a second RHS set
// that only repeats rows of the first is ignored (both keep the first values), a RHS entry on a
// free row is ignored (CBC; HiGHS 1.15 adds it to the objective constant), zero entries do not
// count as duplicates, OBJSENSE on its own line or the next.
func TestAgreedReadings(t *testing.T) {
	head := "NAME a\nROWS\n N obj\n G c\n N free\nCOLUMNS\n    x obj 1 c 1\n    x free 1\n"
	m, err := read(t, head+"RHS\n    r1 c 2\n    r2 c 3 free 7\nENDATA\n")
	require.NoError(t, err)
	lo, _ := m.RowBounds(0)
	assert.Equal(t, 2.0, lo)
	_, _, k := m.Objective()
	assert.Equal(t, 0.0, k)

	m, err = read(t, "NAME z\nROWS\n N obj\n L c\nCOLUMNS\n    x obj 0 c 0\n    x c 1 obj 2\nENDATA\n")
	require.NoError(t, err)
	_, coefs := m.RowTerms(0)
	assert.Equal(t, []float64{1}, coefs)

	for _, sense := range []string{"OBJSENSE MAX\n", "OBJSENSE\n    MAXIMIZE\n", "OBJSENCE\n    max\n", "OBJSENSE\nMAX\n"} {
		m, err := read(t, "NAME s\n"+sense+"ROWS\n N obj\nCOLUMNS\n    x obj 1\nENDATA\n")
		require.NoError(t, err, sense)
		s, _, _ := m.Objective()
		assert.Equal(t, model.Maximize, s, sense)
	}
}

func FuzzRead(f *testing.F) {
	var buf bytes.Buffer
	_ = mpsfile.Write(&buf, Sample())
	f.Add(buf.Bytes())
	files, _ := filepath.Glob(filepath.Join("testdata", "bad", "*.mps"))
	more, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "models", "*", "*.mps"))
	for _, p := range append(files, more...) {
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
