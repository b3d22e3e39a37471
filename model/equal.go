package model

import (
	"fmt"
	"math"
)

// sameType treats a binary and an integer with bounds inside [0, 1] as the same domain (a file
// format may write a fixed binary as a fixed integer).
func sameType(ta, tb VarType, lb, ub float64) bool {
	if ta == tb {
		return true
	}
	return ta != Continuous && tb != Continuous && lb >= 0 && ub <= 1
}

// Equal returns nil when a and b are the same model up to names — same variables (types,
// bounds), rows (sides, coefficients in the same order) and objective — else an error naming
// the first difference. File-format round trips are checked with it.
func Equal(a, b *Model) error {
	if a.NumVars() != b.NumVars() || a.NumRows() != b.NumRows() || a.NumNonzeros() != b.NumNonzeros() {
		return fmt.Errorf("model: sizes differ: %d×%d (%d nonzeros) vs %d×%d (%d nonzeros)",
			a.NumRows(), a.NumVars(), a.NumNonzeros(), b.NumRows(), b.NumVars(), b.NumNonzeros())
	}
	same := func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) }
	for j := 0; j < a.NumVars(); j++ {
		v := Var(j)
		la, ua := a.Bounds(v)
		lb, ub := b.Bounds(v)
		if !sameType(a.VarType(v), b.VarType(v), la, ua) || !same(la, lb) || !same(ua, ub) {
			return fmt.Errorf("model: variable %d (%q/%q): %v [%g, %g] vs %v [%g, %g]", j, a.VarName(v), b.VarName(v),
				a.VarType(v), la, ua, b.VarType(v), lb, ub)
		}
	}
	for i := 0; i < a.NumRows(); i++ {
		la, ha := a.RowBounds(i)
		lb, hb := b.RowBounds(i)
		ca, va := a.RowTerms(i)
		cb, vb := b.RowTerms(i)
		if !same(la, lb) || !same(ha, hb) || len(ca) != len(cb) {
			return fmt.Errorf("model: row %d (%q/%q) differs", i, a.RowName(i), b.RowName(i))
		}
		for k := range ca {
			if ca[k] != cb[k] || va[k] != vb[k] {
				return fmt.Errorf("model: row %d (%q) term %d: %g·x%d vs %g·x%d", i, a.RowName(i), k, va[k], ca[k], vb[k], cb[k])
			}
		}
	}
	sa, oa, ka := a.Objective()
	sb, ob, kb := b.Objective()
	if sa != sb || ka != kb {
		return fmt.Errorf("model: objective sense/constant %v %g vs %v %g", sa, ka, sb, kb)
	}
	for j := range oa {
		if oa[j] != ob[j] {
			return fmt.Errorf("model: objective coefficient of variable %d: %g vs %g", j, oa[j], ob[j])
		}
	}
	return nil
}
