package milp

import "math"

// RelGap returns the relative gap |obj − bound| / max(|obj|, 1e-10) between an incumbent and a
// proven bound: 0 when they agree, +Inf without an incumbent or without a finite bound.
func RelGap(obj, bound float64, hasSolution bool) float64 {
	if !hasSolution || math.IsNaN(bound) || math.IsInf(bound, 0) {
		return math.Inf(1)
	}
	return math.Abs(obj-bound) / math.Max(math.Abs(obj), 1e-10)
}
