package milp

import (
	"fmt"
	"math"
)

// Units are the memory and time units a formulation is written in: a coefficient 1 of memory
// means Memory bytes, 1 of time means Time seconds. Formulations pick them from their data with
// ChooseUnits so that every coefficient, bound and right-hand side stays far from the solvers'
// tolerances (HiGHS: 1e-6 primal feasibility and integrality; it warns about bounds below 1e-4
// or above 1e9), whatever the scale of the instance — bytes or GiB, microseconds or minutes.
type Units struct {
	// Memory is the number of bytes per model unit of memory (a power of two ≥ 1).
	Memory float64
	// Time is the number of seconds per model unit of time (a power of two).
	Time float64
}

// ChooseUnits returns the units for an instance with the given sizes (bytes) and times
// (seconds): each unit is the power of two nearest to the geometric middle √(min·max) of the
// positive values, so that the smallest and the largest are equally far from 1 (a range of
// 10⁴, as between a GPT-2 chain's input and its GPU memory, becomes [10⁻², 10²] — where a
// median unit would put the smallest size at 10⁻⁴, HiGHS's "excessively small" threshold).
// The memory unit is at least one byte, sizes being integers. Zeros, negative and infinite
// values are ignored; with no positive value the unit is 1. Powers of two make the conversion
// exact in binary floating point.
func ChooseUnits(sizes []int64, times []float64) Units {
	u := Units{Memory: 1, Time: 1}
	lo, hi := math.Inf(1), 0.0
	for _, s := range sizes {
		if s > 0 {
			lo, hi = math.Min(lo, float64(s)), math.Max(hi, float64(s))
		}
	}
	if hi > 0 {
		u.Memory = math.Max(1, pow2(math.Sqrt(lo)*math.Sqrt(hi)))
	}
	lo, hi = math.Inf(1), 0.0
	for _, t := range times {
		if t > 0 && !math.IsInf(t, 0) {
			lo, hi = math.Min(lo, t), math.Max(hi, t)
		}
	}
	if hi > 0 {
		u.Time = pow2(math.Sqrt(lo) * math.Sqrt(hi))
	}
	return u
}

// pow2 rounds x > 0 to the nearest power of two (in the log scale).
func pow2(x float64) float64 { return math.Exp2(math.Round(math.Log2(x))) }

// Mem converts bytes to model units.
func (u Units) Mem(bytes int64) float64 { return float64(bytes) / u.Memory }

// Secs converts seconds to model units.
func (u Units) Secs(s float64) float64 { return s / u.Time }

// Comment is the line that exported files carry so that anyone can read the objective back:
// "memsched units: memory=<bytes per unit> time=<seconds per unit>".
func (u Units) Comment() string {
	return fmt.Sprintf("memsched units: memory=%s time=%s", fmtUnit(u.Memory), fmtUnit(u.Time))
}

func fmtUnit(x float64) string { return fmt.Sprintf("%.17g", x) }
