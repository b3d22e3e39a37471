package model_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/model"
)

// TestStats: a model with one row of every kind, an empty row, an unused column and ±Inf bounds;
// every count and range below is counted by hand from the construction.
func TestStats(t *testing.T) {
	inf := math.Inf(1)
	m := model.New("stats")
	x := m.AddContinuous("x", -inf, 4)  // bound 4 (−∞ ignored)
	y := m.AddInteger("y", -2, 10)      // bounds 2, 10
	z := m.AddBinary("z")               // bounds 0 (ignored), 1
	m.AddContinuous("unused", 0.5, inf) // bound 0.5; in no row
	e := func(ts ...model.Term) model.Expr { return model.Expr{Terms: ts} }
	m.AddEq("eq", e(model.Term{Var: x, Coef: 1e-3}, model.Term{Var: y, Coef: 2}), 7)
	m.AddLE("le", e(model.Term{Var: y, Coef: -300}, model.Term{Var: y, Coef: 300}, model.Term{Var: z, Coef: 5}), 1e6) // y cancels
	m.AddGE("ge", e(model.Term{Var: z, Coef: -1}), -0.25)
	m.AddRow("ranged", -3, e(model.Term{Var: x, Coef: 1}), 8)
	m.AddRow("free", -inf, e(model.Term{Var: x, Coef: 1}, model.Term{Var: z, Coef: 1}), inf)
	m.AddLE("empty", model.Expr{Constant: 1}, 3) // 0 ≤ 2: rhs 2
	m.SetObjective(model.Minimize, e(model.Term{Var: x, Coef: -0.1}, model.Term{Var: z, Coef: 40}))
	require.NoError(t, m.Validate())

	s := m.Stats()
	assert.Equal(t, model.Stats{
		Vars: 4, Continuous: 2, Integer: 1, Binary: 1,
		Rows: 6, Equal: 1, LessEqual: 2, GreaterEqual: 1, Ranged: 1, Free: 1, Empty: 1,
		EmptyCols: 1, Nonzeros: 7,
		Coef:  model.Range{Min: 1e-3, Max: 5, Count: 7},
		Obj:   model.Range{Min: 0.1, Max: 40, Count: 2},
		Bound: model.Range{Min: 0.5, Max: 10, Count: 5},
		RHS:   model.Range{Min: 0.25, Max: 1e6, Count: 7},
	}, s)
	assert.Contains(t, s.String(), "rows: 6 (1 =, 2 <=, 1 >=, 1 ranged, 1 free; 1 empty)")
	assert.Contains(t, s.String(), "|coefficients|: [0.001, 5]")
	assert.Contains(t, model.New("e").Stats().String(), "|rhs|: none")
}
