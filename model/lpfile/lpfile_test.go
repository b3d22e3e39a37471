package lpfile_test

import (
	"bytes"
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
