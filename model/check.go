package model

import (
	"fmt"
	"math"
)

// Violation is the worst violation of one kind found by Check.
type Violation struct {
	// Name is the variable or row concerned ("" when there is no violation).
	Name string
	// Amount is how far the point is outside the bound, side or integer (0 when none).
	Amount float64
}

// Report is the result of Check: the worst bound, row and integrality violations, and the
// objective value of the point.
type Report struct {
	Bound, Row, Integrality Violation
	Objective               float64
}

// Feasible reports whether every violation is within tol.
func (r Report) Feasible(tol float64) bool {
	return r.Bound.Amount <= tol && r.Row.Amount <= tol && r.Integrality.Amount <= tol
}

// Err returns nil when r is feasible within tol, else an error naming the worst violation.
func (r Report) Err(tol float64) error {
	for _, v := range []struct {
		kind string
		v    Violation
	}{{"bound of variable", r.Bound}, {"row", r.Row}, {"integrality of variable", r.Integrality}} {
		if v.v.Amount > tol {
			return fmt.Errorf("model: point violates %s %q by %g (tolerance %g)", v.kind, v.v.Name, v.v.Amount, tol)
		}
	}
	return nil
}

// Check evaluates values (one per variable, in column order) against every bound, row and
// integrality requirement of m. Violations are relative to the magnitude of what they compare:
//
//	bound j:  excess / max(1, |bound|)
//	row i:    excess / max(1, |side|, max_j |a_ij·x_j|)
//
// so tol is a relative tolerance for large quantities and an absolute one below 1. A row's
// scale includes its terms because a solver's tolerance applies to the row as computed, term by
// term (and to its scaled model): Σ_j a_ij·x_j with terms near 10³ and a zero side carries
// rounding and a solver's accepted error of 10³ times a relative one, which an absolute test on
// the side alone would call a violation (Netlib perold under lp_solve: 1.3e-6 on a row of zero
// side whose terms reach 10³). A point that really leaves a row is still caught: the excess
// must stay below tol times the row's largest term. Integrality is absolute: |x − round(x)|.
// It panics if len(values) != NumVars().
func (m *Model) Check(values []float64) Report {
	if len(values) != m.NumVars() {
		panic(fmt.Sprintf("model: Check with %d values for %d variables", len(values), m.NumVars()))
	}
	var r Report
	worse := func(v *Violation, name string, amount float64) {
		if math.IsNaN(amount) {
			amount = math.Inf(1)
		}
		if amount > v.Amount {
			*v = Violation{name, amount}
		}
	}
	rel := func(excess, side float64) float64 { return excess / math.Max(1, math.Abs(side)) }
	for j, x := range values {
		lb, ub := m.lb[j], m.ub[j]
		if math.IsNaN(x) || math.IsInf(x, 0) {
			worse(&r.Bound, m.varNames[j], math.Inf(1))
			continue
		}
		if x < lb {
			worse(&r.Bound, m.varNames[j], rel(lb-x, lb))
		}
		if x > ub {
			worse(&r.Bound, m.varNames[j], rel(x-ub, ub))
		}
		if m.varTypes[j] != Continuous {
			worse(&r.Integrality, m.varNames[j], math.Abs(x-math.Round(x)))
		}
	}
	for i := range m.rowNames {
		cols, coefs := m.RowTerms(i)
		s, scale := 0.0, 1.0
		for k, c := range cols {
			t := coefs[k] * values[c]
			s += t
			scale = math.Max(scale, math.Abs(t))
		}
		if s < m.rowLo[i] {
			worse(&r.Row, m.rowNames[i], (m.rowLo[i]-s)/math.Max(scale, math.Abs(m.rowLo[i])))
		}
		if s > m.rowHi[i] {
			worse(&r.Row, m.rowNames[i], (s-m.rowHi[i])/math.Max(scale, math.Abs(m.rowHi[i])))
		}
	}
	r.Objective = m.objConst
	for v, c := range m.objCoef {
		r.Objective += c * values[v]
	}
	return r
}
