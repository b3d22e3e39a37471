package model

import (
	"fmt"
	"math"
	"strings"
)

// Range is the smallest and largest absolute value of the finite, nonzero numbers of one kind
// in a model. Both are 0 when there is none (Count == 0).
type Range struct {
	Min, Max float64
	Count    int
}

func (r *Range) add(x float64) {
	a := math.Abs(x)
	if a == 0 || math.IsInf(a, 0) || math.IsNaN(a) {
		return
	}
	if r.Count == 0 || a < r.Min {
		r.Min = a
	}
	if r.Count == 0 || a > r.Max {
		r.Max = a
	}
	r.Count++
}

func (r Range) String() string {
	if r.Count == 0 {
		return "none"
	}
	return fmt.Sprintf("[%.3g, %.3g]", r.Min, r.Max)
}

// Stats summarizes a model's size and numerics. Rows are classified by their sides lo ≤ aᵀx ≤ hi:
// Equal (lo = hi), LessEqual (lo = −∞, hi finite), GreaterEqual (lo finite, hi = +∞), Ranged
// (both finite, lo < hi), Free (both infinite); Empty counts rows without terms (of any kind).
// The ranges are over |value| of the finite nonzero numbers: a coefficient range wider than
// about 1e9 is a warning sign for any floating-point solver.
type Stats struct {
	Vars, Continuous, Integer, Binary                         int
	Rows, Equal, LessEqual, GreaterEqual, Ranged, Free, Empty int
	// EmptyCols counts variables that appear in no row.
	EmptyCols int
	Nonzeros  int
	// Coef is the range of the constraint coefficients, Obj of the objective coefficients,
	// Bound of the finite variable bounds, RHS of the finite row sides.
	Coef, Obj, Bound, RHS Range
}

// Stats computes the summary of m in O(nonzeros + variables).
func (m *Model) Stats() Stats {
	s := Stats{Vars: m.NumVars(), Rows: m.NumRows(), Nonzeros: m.NumNonzeros()}
	for j, t := range m.varTypes {
		switch t {
		case Continuous:
			s.Continuous++
		case Integer:
			s.Integer++
		case Binary:
			s.Binary++
		}
		s.Bound.add(m.lb[j])
		s.Bound.add(m.ub[j])
	}
	used := make([]bool, m.NumVars())
	for _, c := range m.colIdx {
		used[c] = true
	}
	for _, u := range used {
		if !u {
			s.EmptyCols++
		}
	}
	for _, v := range m.vals {
		s.Coef.add(v)
	}
	for r := range m.rowNames {
		lo, hi := m.rowLo[r], m.rowHi[r]
		loInf, hiInf := math.IsInf(lo, -1), math.IsInf(hi, 1)
		switch {
		case loInf && hiInf:
			s.Free++
		case lo == hi:
			s.Equal++
		case loInf:
			s.LessEqual++
		case hiInf:
			s.GreaterEqual++
		default:
			s.Ranged++
		}
		if m.rowStart[r] == m.rowStart[r+1] {
			s.Empty++
		}
		s.RHS.add(lo)
		s.RHS.add(hi)
	}
	for _, c := range m.objCoef {
		s.Obj.add(c)
	}
	return s
}

// String formats s for humans, one aspect per line.
func (s Stats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "variables: %d (%d continuous, %d integer, %d binary; %d in no row)\n",
		s.Vars, s.Continuous, s.Integer, s.Binary, s.EmptyCols)
	fmt.Fprintf(&b, "rows: %d (%d =, %d <=, %d >=, %d ranged, %d free; %d empty)\n",
		s.Rows, s.Equal, s.LessEqual, s.GreaterEqual, s.Ranged, s.Free, s.Empty)
	fmt.Fprintf(&b, "nonzeros: %d\n", s.Nonzeros)
	fmt.Fprintf(&b, "|coefficients|: %v\n|objective|: %v\n|bounds|: %v\n|rhs|: %v\n", s.Coef, s.Obj, s.Bound, s.RHS)
	return b.String()
}
