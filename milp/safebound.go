package milp

import (
	"context"
	"fmt"
	"math"
	"math/big"

	"github.com/memsched/memsched/model"
)

// SafeLPBound returns a rigorous bound on the optimum of the continuous relaxation of m from
// any row multipliers y (one per row, typically the duals an LP solver returned): a lower bound
// when m minimizes, an upper bound when it maximizes. It implements Neumaier and Shcherbina,
// "Safe bounds in linear and mixed-integer programming" (Math. Prog. 99, 2004), §2:
//
// for min cᵀx + c₀ subject to lo ≤ Ax ≤ hi and l ≤ x ≤ u, every feasible x satisfies
//
//	cᵀx = yᵀAx + (c − Aᵀy)ᵀx ≥ Σ_i min_{r∈[lo_i,hi_i]} y_i·r + Σ_j min_{x_j∈[l_j,u_j]} d_j·x_j,
//
// d = c − Aᵀy. A multiplier whose needed side is infinite (y_i > 0 with lo_i = −∞, y_i < 0 with
// hi_i = +∞) is replaced by 0, which keeps the inequality valid. Each d_j is enclosed in an
// interval [d̃_j − e_j, d̃_j + e_j] whose radius bounds the rounding error of its floating-point
// evaluation (Higham's γ_n bound, doubled), the column term takes the minimum over that interval
// too, and the final sum is lowered by its own error bound and one ulp, so that the result can
// only be lower than the exact value of the expression — whatever error the solver made in y.
// The bound is −∞ when a column with an infinite bound has a reduced-cost interval of the wrong
// sign: the multipliers then prove nothing. For maximization the same is applied to −c (and −y).
//
// SafeLPBound panics if len(y) ≠ m.NumRows() (a programmer error).
func SafeLPBound(m *model.Model, y []float64) float64 {
	if len(y) != m.NumRows() {
		panic(fmt.Sprintf("milp: SafeLPBound with %d multipliers for %d rows", len(y), m.NumRows()))
	}
	sense, cost, c0 := m.Objective()
	sign := 1.0
	if sense == model.Maximize {
		sign = -1
	}
	n, r := m.NumVars(), m.NumRows()
	const u = 0x1p-53 // unit roundoff
	yy := make([]float64, r)
	for i := range yy {
		yi := sign * y[i]
		lo, hi := m.RowBounds(i)
		if math.IsNaN(yi) || (yi > 0 && math.IsInf(lo, -1)) || (yi < 0 && math.IsInf(hi, 1)) {
			yi = 0
		}
		yy[i] = yi
	}
	// d_j = sign·c_j − Σ_i a_ij·y_i, and Σ_i |a_ij·y_i| for the error radius.
	d := make([]float64, n)
	mag := make([]float64, n)
	cnt := make([]int, n)
	for j := 0; j < n; j++ {
		d[j] = sign * cost[j]
		mag[j] = math.Abs(cost[j])
	}
	for i := 0; i < r; i++ {
		if yy[i] == 0 {
			continue
		}
		cols, coefs := m.RowTerms(i)
		for k, c := range cols {
			t := coefs[k] * yy[i]
			d[c] -= t
			mag[c] += math.Abs(t)
			cnt[c]++
		}
	}
	var sum, abs float64
	terms := 0
	add := func(t float64) {
		sum += t
		abs += math.Abs(t)
		terms++
	}
	// Row part: Σ_i min over [lo_i, hi_i] of y_i·r (y_i chosen so that the side is finite).
	for i := 0; i < r; i++ {
		switch lo, hi := m.RowBounds(i); {
		case yy[i] > 0:
			add(yy[i] * lo)
		case yy[i] < 0:
			add(yy[i] * hi)
		}
	}
	// Columns with an infinite side need the exact sign of d_j (a basic column's d̃_j is 0 up
	// to rounding): decide those in exact rational arithmetic, in one pass over the rows.
	exact := map[int]*big.Rat{}
	for j := 0; j < n; j++ {
		e := radius(cnt[j], mag[j])
		lb, ub := m.Bounds(model.Var(j))
		if (math.IsInf(lb, -1) && d[j]-e < 0) || (math.IsInf(ub, 1) && d[j]+e > 0) {
			exact[j] = new(big.Rat).SetFloat64(sign * cost[j])
		}
	}
	if len(exact) > 0 {
		var t, a, b big.Rat
		for i := 0; i < r; i++ {
			if yy[i] == 0 {
				continue
			}
			cols, coefs := m.RowTerms(i)
			for k, c := range cols {
				if dj, ok := exact[int(c)]; ok {
					a.SetFloat64(coefs[k])
					b.SetFloat64(yy[i])
					dj.Sub(dj, t.Mul(&a, &b))
				}
			}
		}
	}
	// Column part: min over x_j ∈ [l_j, u_j] and d ∈ [d̃_j − e_j, d̃_j + e_j] of d·x_j.
	for j := 0; j < n; j++ {
		e := radius(cnt[j], mag[j])
		dlo, dhi := d[j]-e, d[j]+e
		lb, ub := m.Bounds(model.Var(j))
		if dj, ok := exact[j]; ok {
			switch sg := dj.Sign(); {
			case sg == 0:
				dlo, dhi = 0, 0
			case sg > 0 && !math.IsInf(lb, -1):
				dlo = math.Max(dlo, 0)
			case sg < 0 && !math.IsInf(ub, 1):
				dhi = math.Min(dhi, 0)
			default:
				// The multipliers are not dual feasible on an unbounded column: they prove
				// nothing (give the column finite bounds to get a bound).
				return sign * math.Inf(-1)
			}
		}
		t := math.Inf(1)
		for _, dv := range [2]float64{dlo, dhi} {
			for _, xv := range [2]float64{lb, ub} {
				var p float64
				switch {
				case dv == 0:
					p = 0
				case math.IsInf(xv, 0):
					p = math.Copysign(math.Inf(1), dv*xv)
				default:
					p = dv * xv
				}
				t = math.Min(t, p)
			}
		}
		if math.IsInf(t, -1) {
			return sign * math.Inf(-1)
		}
		add(t)
	}
	add(sign * c0)
	// Lower the sum by the rounding error of its evaluation (γ_terms·Σ|t|, doubled) and an ulp.
	low := sum - 2*float64(terms+1)*u*abs
	low = math.Nextafter(low, math.Inf(-1))
	return sign * low
}

// radius bounds the rounding error of d̃_j = c_j − Σ_i a_ij·y_i evaluated with cnt products and
// sums whose magnitudes add up to mag (γ_{cnt+2}·mag, doubled), rounded up.
func radius(cnt int, mag float64) float64 {
	e := 2 * float64(cnt+2) * 0x1p-53 * mag
	return math.Nextafter(e+math.SmallestNonzeroFloat64, math.Inf(1))
}

// LPBoundResult is the outcome of LPBound.
type LPBoundResult struct {
	// Status is the LP solve's status.
	Status Status
	// Bound is the rigorous bound of SafeLPBound (a lower bound when minimizing), ±Inf when the
	// LP was not solved to optimality or its duals prove nothing.
	Bound float64
	// SolverValue is the LP optimum the solver reported (not rigorous), NaN when none.
	SolverValue float64
	// Solver names the backend.
	Solver string
}

// LPBound solves the continuous relaxation of m (integrality dropped) with s and returns the
// rigorous bound SafeLPBound computes from the solver's row duals. A backend that reports no
// duals gives Bound −∞ (+∞ for maximization): nothing it said is taken on trust.
func LPBound(ctx context.Context, s Solver, m *model.Model, p Params) (LPBoundResult, error) {
	lp := Relax(m)
	sense, _, _ := lp.Objective()
	none := math.Inf(-1)
	if sense == model.Maximize {
		none = math.Inf(1)
	}
	res, err := Solve(ctx, s, lp, p)
	if err != nil {
		return LPBoundResult{}, err
	}
	out := LPBoundResult{Status: res.Status, Bound: none, SolverValue: math.NaN(), Solver: res.Solver}
	if res.Status != Optimal {
		return out, nil
	}
	out.SolverValue = res.Objective
	if len(res.RowDuals) == lp.NumRows() {
		out.Bound = SafeLPBound(lp, res.RowDuals)
	} else if lp.NumRows() == 0 {
		out.Bound = SafeLPBound(lp, nil)
	}
	return out, nil
}

// Relax returns a copy of m with every integer and binary column made continuous (binaries keep
// their [0, 1] bounds): the LP relaxation.
func Relax(m *model.Model) *model.Model {
	lp := model.New(m.Name + " (LP relaxation)")
	lp.Comments = append([]string(nil), m.Comments...)
	for j := 0; j < m.NumVars(); j++ {
		v := model.Var(j)
		lb, ub := m.Bounds(v)
		lp.AddVar(m.VarName(v), model.Continuous, lb, ub)
	}
	var e model.Expr
	for i := 0; i < m.NumRows(); i++ {
		e.Reset()
		cols, coefs := m.RowTerms(i)
		for k, c := range cols {
			e.Add(model.Var(c), coefs[k])
		}
		lo, hi := m.RowBounds(i)
		lp.AddRow(m.RowName(i), lo, e, hi)
	}
	sense, cost, c0 := m.Objective()
	e.Reset()
	for j, c := range cost {
		if c != 0 {
			e.Add(model.Var(j), c)
		}
	}
	e.Constant = c0
	lp.SetObjective(sense, e)
	return lp
}
