package model_test

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/model"
)

// TestBadInput: each kind of bad data is an error from Validate, naming what is wrong, before
// any solver sees the model.
func TestBadInput(t *testing.T) {
	cases := []struct {
		name  string
		build func(m *model.Model)
		want  string
	}{
		{"empty model", func(m *model.Model) {}, "empty model"},
		{"NaN coefficient", func(m *model.Model) {
			x := m.AddContinuous("x", 0, 1)
			m.AddLE("c", *(&model.Expr{}).Add(x, math.NaN()), 1)
		}, `row "c": coefficient NaN on variable "x"`},
		{"Inf coefficient", func(m *model.Model) {
			x := m.AddContinuous("x", 0, 1)
			m.AddLE("c", *(&model.Expr{}).Add(x, math.Inf(1)), 1)
		}, "coefficient +Inf"},
		{"Inf objective coefficient", func(m *model.Model) {
			x := m.AddContinuous("x", 0, 1)
			m.SetObjective(model.Minimize, *(&model.Expr{}).Add(x, math.Inf(-1)))
		}, "objective: coefficient -Inf"},
		{"duplicate variable name", func(m *model.Model) {
			m.AddContinuous("x", 0, 1)
			m.AddContinuous("x", 0, 1)
		}, `duplicate variable name "x"`},
		{"duplicate row name", func(m *model.Model) {
			x := m.AddContinuous("x", 0, 1)
			m.AddLE("c", *(&model.Expr{}).Add(x, 1), 1)
			m.AddLE("c", *(&model.Expr{}).Add(x, 1), 1)
		}, `duplicate row name "c"`},
		{"unknown variable", func(m *model.Model) {
			m.AddContinuous("x", 0, 1)
			m.AddLE("c", *(&model.Expr{}).Add(model.Var(7), 1), 1)
		}, `row "c": unknown variable 7`},
		{"unknown variable in objective", func(m *model.Model) {
			m.AddContinuous("x", 0, 1)
			m.SetObjective(model.Minimize, *(&model.Expr{}).Add(model.Var(-1), 1))
		}, "objective: unknown variable -1"},
		{"contradictory bounds", func(m *model.Model) { m.AddContinuous("x", 2, 1) }, `variable "x": contradictory bounds [2, 1]`},
		{"NaN bound", func(m *model.Model) { m.AddContinuous("x", math.NaN(), 1) }, "NaN bound"},
		{"binary outside [0,1]", func(m *model.Model) { m.AddVar("b", model.Binary, 0, 2) }, "outside [0, 1]"},
		{"contradictory row sides", func(m *model.Model) {
			x := m.AddContinuous("x", 0, 1)
			m.AddRow("r", 3, *(&model.Expr{}).Add(x, 1), 2)
		}, `row "r": contradictory sides 3 > 2`},
		{"illegal variable name", func(m *model.Model) { m.AddContinuous("x\ny", 0, 1) }, `variable name "x\ny": control character U+000A`},
		{"illegal row name", func(m *model.Model) {
			x := m.AddContinuous("x", 0, 1)
			m.AddLE("r\x00", *(&model.Expr{}).Add(x, 1), 1)
		}, "control character U+0000"},
		{"invalid UTF-8 name", func(m *model.Model) { m.AddContinuous("\xff", 0, 1) }, "not valid UTF-8"},
		{"lower bound +Inf", func(m *model.Model) { m.AddContinuous("x", math.Inf(1), math.Inf(1)) }, "no finite value"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := model.New("bad")
			c.build(m)
			err := m.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.True(t, strings.HasPrefix(err.Error(), "model: "), err.Error())
		})
	}
}

// TestNormalization: terms merged in column order, zeros and cancellations dropped, the
// constant moved to the sides.
func TestNormalization(t *testing.T) {
	m := model.New("n")
	x, y, z := m.AddContinuous("x", 0, 1), m.AddContinuous("y", 0, 1), m.AddContinuous("z", 0, 1)
	e := model.Expr{Constant: 2}
	e.Add(z, 1).Add(x, 2).Add(y, 0).Add(z, 3).Add(x, -2)
	r := m.AddRow("r", 1, e, 10)
	cols, coefs := m.RowTerms(r)
	assert.Equal(t, []int32{int32(z)}, cols)
	assert.Equal(t, []float64{4}, coefs)
	lo, hi := m.RowBounds(r)
	assert.Equal(t, []float64{-1, 8}, []float64{lo, hi})
	assert.Equal(t, 1, m.NumNonzeros())
}

func TestCheck(t *testing.T) {
	m := model.New("c")
	x := m.AddInteger("x", 0, 5)
	y := m.AddContinuous("y", -1, 1)
	m.AddLE("cap", *(&model.Expr{}).Add(x, 1).Add(y, 1), 4)
	m.SetObjective(model.Maximize, model.Expr{Terms: []model.Term{{Var: x, Coef: 2}}, Constant: 1})
	rep := m.Check([]float64{3, 1})
	assert.True(t, rep.Feasible(1e-9))
	assert.Equal(t, 7.0, rep.Objective)
	rep = m.Check([]float64{3.5, 1.5})
	assert.False(t, rep.Feasible(1e-9))
	assert.Equal(t, "x", rep.Integrality.Name)
	assert.InDelta(t, 0.5, rep.Integrality.Amount, 1e-12)
	assert.Equal(t, "y", rep.Bound.Name)
	assert.Equal(t, "cap", rep.Row.Name)
	assert.InDelta(t, 0.25, rep.Row.Amount, 1e-12, "excess 1 relative to the side 4")
	assert.ErrorContains(t, rep.Err(1e-6), `bound of variable "y"`)
	assert.Panics(t, func() { m.Check([]float64{1}) })
}

// TestCheckScalesRowsByTheirTerms: the row tolerance is relative to the row's largest term, so
// that a zero-side row with terms near 10³ (Netlib perold's POPL08 under lp_solve: 1.307e-6 over)
// is not refused for an error the solver's own tolerance allows — while a point that leaves the
// row by more than 1e-6 of its terms still is, with the row named.
func TestCheckScalesRowsByTheirTerms(t *testing.T) {
	m := model.New("perold-like")
	x := m.AddContinuous("x", 0, math.Inf(1))
	y := m.AddContinuous("y", 0, math.Inf(1))
	m.AddLE("POPL08", *(&model.Expr{}).Add(x, 812.5).Add(y, -1037.25), 0)
	yv := 1.0
	xv := 1037.25/812.5 + 1.307e-6/812.5 // row value 1.307e-6 above its zero side
	rep := m.Check([]float64{xv, yv})
	assert.InDelta(t, 1.307e-6/1037.25, rep.Row.Amount, 1e-15, "excess over the largest term")
	assert.NoError(t, rep.Err(1e-6), "within the solver's tolerance on terms of 10³")

	xv = 1037.25/812.5 + 0.01/812.5 // 0.01 over: 9.6e-6 of the largest term
	rep = m.Check([]float64{xv, yv})
	assert.ErrorContains(t, rep.Err(1e-6), `row "POPL08"`)

	// Small terms: the tolerance stays absolute (1e-6), as before.
	rep = m.Check([]float64{2e-6 / 812.5, 0})
	assert.ErrorContains(t, rep.Err(1e-6), `row "POPL08"`)
}
