package milp

import (
	"fmt"
	"math"
)

// RelGap returns the relative gap |obj − bound| / max(|obj|, 1e-10) between an incumbent and a
// proven bound: 0 when they agree, +Inf without an incumbent or without a finite bound.
func RelGap(obj, bound float64, hasSolution bool) float64 {
	if !hasSolution || math.IsNaN(bound) || math.IsInf(bound, 0) {
		return math.Inf(1)
	}
	return math.Abs(obj-bound) / math.Max(math.Abs(obj), 1e-10)
}

// GapText writes a relative gap for a note or a table: "%.3g", or "none (no incumbent)" when
// RelGap has none to give (+Inf, NaN) — a bound without an incumbent has no gap, and notes
// read "relative gap +Inf" (weight-offload's MILP stopped at its limit before an incumbent).
func GapText(g float64) string {
	if math.IsInf(g, 0) || math.IsNaN(g) {
		return "none (no incumbent)"
	}
	return fmt.Sprintf("%.3g", g)
}
