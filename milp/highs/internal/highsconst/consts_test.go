//go:build highs

package highsconst

import (
	"testing"

	"github.com/lanl/highs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDefinitionsMatchHeader: every constant lanl/highs declares extern is defined, with the
// installed highs_c_api.h's value (the 38 that lanl/highs v1.0.0 declares in highs-externs.h and kHighsBasisValidityValid, which it reads without declaring).
func TestDefinitionsMatchHeader(t *testing.T) {
	assert.Equal(t, 39, Count())
	assert.Empty(t, Mismatches())
}

// TestTwoVariableMIP: with this package linked, lanl/highs's own high-level API links and
// solves max x + 2y s.t. x + y ≤ 3.5, x − y ≥ −1.5, x, y ∈ ℤ≥0. The LP optimum (1, 2.5) is
// fractional; the integer optimum is x = 1, y = 2 (objective 5) — checked by enumeration:
// y ≤ x + 1.5 and x + y ≤ 3.5 leave (0,0),(0,1),(1,0),(1,1),(1,2),(2,0),(2,1),(3,0), best 5.
func TestTwoVariableMIP(t *testing.T) {
	m := highs.Model{
		Maximize: true,
		ColCosts: []float64{1, 2},
		ColLower: []float64{0, 0},
		ColUpper: []float64{10, 10},
		RowLower: []float64{-1e30, -1.5},
		RowUpper: []float64{3.5, 1e30},
		ConstMatrix: []highs.Nonzero{
			{Row: 0, Col: 0, Val: 1}, {Row: 0, Col: 1, Val: 1},
			{Row: 1, Col: 0, Val: 1}, {Row: 1, Col: 1, Val: -1},
		},
		VarTypes: []highs.VariableType{highs.IntegerType, highs.IntegerType},
	}
	sol, err := m.Solve()
	require.NoError(t, err)
	assert.Equal(t, highs.Optimal, sol.Status)
	assert.InDelta(t, 5, sol.Objective, 1e-9)
	assert.InDeltaSlice(t, []float64{1, 2}, sol.ColumnPrimal, 1e-9)
}
