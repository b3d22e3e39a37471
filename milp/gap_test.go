package milp

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestGapText: a bound without an incumbent has no gap. Notes said "relative gap +Inf"
// (certify's weight-offload MILP stopped before an incumbent on a byte-scale chain) and
// pipeline's "bound NaN s, gap +Inf" (its MILP stopped with neither).
func TestGapText(t *testing.T) {
	assert.Equal(t, "0", GapText(RelGap(5, 5, true)))
	assert.Equal(t, "0.2", GapText(RelGap(5, 4, true)))
	assert.Equal(t, "0.000123", GapText(0.000123))
	for _, g := range []float64{RelGap(5, 4, false), RelGap(5, math.NaN(), true), RelGap(5, math.Inf(-1), true), math.NaN()} {
		assert.Equal(t, "none (no incumbent)", GapText(g))
	}
}
