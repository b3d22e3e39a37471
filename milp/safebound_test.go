package milp_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/milptest"
	"github.com/memsched/memsched/model"
)

func TestSafeLPBoundExactDual(t *testing.T) {
	// min x + y, x + y ≥ 2, 0 ≤ x, y ≤ 10: the dual y = 1 proves 2; directed rounding may only
	// take a few ulps off.
	m := model.New("")
	x, y := m.AddContinuous("x", 0, 10), m.AddContinuous("y", 0, 10)
	m.AddGE("r", *new(model.Expr).Add(x, 1).Add(y, 1), 2)
	m.SetObjective(model.Minimize, *new(model.Expr).Add(x, 1).Add(y, 1))
	b := milp.SafeLPBound(m, []float64{1})
	assert.LessOrEqual(t, b, 2.0)
	assert.InDelta(t, 2, b, 1e-13)
	// A wrong-signed multiplier on a ≥ row is replaced by 0: the bound is the box's 0.
	assert.LessOrEqual(t, milp.SafeLPBound(m, []float64{-5}), 0.0)
	// An overshooting multiplier still gives a valid (weaker) bound: 2·3 + min over the box of
	// (1 − 3)·(x + y) = 6 − 40.
	assert.InDelta(t, -34, milp.SafeLPBound(m, []float64{3}), 1e-12)
}

// Weak duality whatever the multipliers: on every suite problem with an optimum, random y never
// gives a bound past the optimum. This is what makes the bound safe against a solver's errors.
func TestSafeLPBoundRandomMultipliers(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for _, p := range milptest.Problems() {
		if p.Status != milp.Optimal {
			continue
		}
		m := p.Build()
		sense, _, _ := m.Objective()
		for k := 0; k < 200; k++ {
			y := make([]float64, m.NumRows())
			for i := range y {
				y[i] = (r.Float64()*2 - 1) * math.Pow(10, float64(r.IntN(7)-3))
			}
			b := milp.SafeLPBound(m, y)
			if sense == model.Minimize {
				require.LessOrEqual(t, b, p.Objective, "%s with y = %v", p.Name, y)
			} else {
				require.GreaterOrEqual(t, b, p.Objective, "%s with y = %v", p.Name, y)
			}
		}
	}
}

func TestRelaxKeepsEverythingButIntegrality(t *testing.T) {
	for _, p := range milptest.Problems() {
		m := p.Build()
		lp := milp.Relax(m)
		require.NoError(t, lp.Err(), p.Name)
		assert.Equal(t, m.NumVars(), lp.NumVars(), p.Name)
		assert.Equal(t, m.NumRows(), lp.NumRows(), p.Name)
		assert.Equal(t, m.NumNonzeros(), lp.NumNonzeros(), p.Name)
		for j := 0; j < lp.NumVars(); j++ {
			assert.Equal(t, model.Continuous, lp.VarType(model.Var(j)))
		}
	}
}
