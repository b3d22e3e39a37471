// Package ref is a pure-Go reference MILP backend for tiny models: it enumerates every
// assignment of the integer variables (at most MaxAssignments, all with finite bounds) and
// solves the remaining LP with gonum's simplex. It is a referee that lets the conformance suite
// and memsched's tests run where no C library is installed — not a production solver.
package ref

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"

	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/model"
)

// MaxAssignments bounds the number of integer assignments Solve enumerates.
const MaxAssignments = 1 << 16

// MaxWork bounds assignments × (rows + columns)², a proxy for the dense simplex work of the
// whole enumeration: beyond it Solve refuses the model with an error rather than running for
// minutes (it is a referee for tiny models, not a production solver).
const MaxWork = 1 << 28

func init() { milp.Register("ref", New) }

// Solver is the reference backend.
type Solver struct{}

// New returns a reference solver.
func New() (milp.Solver, error) { return Solver{}, nil }

// Name returns "ref".
func (Solver) Name() string { return "ref" }

// Solve enumerates integer assignments and solves each LP. It returns an error when the model
// is too large for enumeration or has an integer variable with an infinite bound.
func (Solver) Solve(ctx context.Context, m *model.Model, p milp.Params) (*milp.Result, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if p.Start != nil && p.Log != nil {
		// Enumeration visits every integer point anyway: a start point would change nothing.
		fmt.Fprintln(p.Log, "ref: the start point is ignored (the enumeration is exhaustive)")
	}
	start := time.Now()
	n := m.NumVars()
	var ints []int
	count := 1.0
	for j := 0; j < n; j++ {
		if m.VarType(model.Var(j)) == model.Continuous {
			continue
		}
		lb, ub := m.Bounds(model.Var(j))
		if math.IsInf(lb, 0) || math.IsInf(ub, 0) {
			return nil, fmt.Errorf("ref: integer variable %q has an infinite bound; enumeration needs finite ones", m.VarName(model.Var(j)))
		}
		ints = append(ints, j)
		count *= math.Floor(ub) - math.Ceil(lb) + 1
	}
	if count > MaxAssignments {
		return nil, fmt.Errorf("ref: %g integer assignments, more than the %d this referee enumerates", count, MaxAssignments)
	}
	if size := float64(m.NumRows() + n); count*size*size > MaxWork {
		return nil, fmt.Errorf("ref: model too large for enumeration (%g assignments × (%d rows + %d columns)² > %d)", count, m.NumRows(), n, MaxWork)
	}
	sense, cost, offset := m.Objective()
	sign := 1.0
	if sense == model.Maximize {
		sign = -1
	}
	res := &milp.Result{Solver: "ref", Status: milp.Infeasible, Bound: math.NaN(), Gap: math.Inf(1)}
	fixed := make([]float64, n)
	for j := range fixed {
		fixed[j] = math.NaN()
	}
	best := math.Inf(1)
	var rec func(k int) error
	rec = func(k int) error {
		if k < len(ints) {
			j := ints[k]
			lb, ub := m.Bounds(model.Var(j))
			for v := math.Ceil(lb); v <= math.Floor(ub); v++ {
				fixed[j] = v
				if err := rec(k + 1); err != nil {
					return err
				}
			}
			fixed[j] = math.NaN()
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p.TimeLimit > 0 && time.Since(start) > p.TimeLimit {
			return errTimeLimit
		}
		x, obj, status := solveLP(m, fixed, cost, sign)
		switch status {
		case milp.Unbounded:
			res.Status = milp.Unbounded
			return errStop
		case milp.Optimal:
			if obj < best {
				best = obj
				res.Values = x
				res.Status, res.HasSolution = milp.Optimal, true
			}
		}
		return nil
	}
	switch err := rec(0); {
	case errors.Is(err, errStop):
		res.HasSolution, res.Values = false, nil
	case errors.Is(err, errTimeLimit):
		res.Status = milp.TimeLimit
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		res.Status = milp.StoppedStatus(ctx)
	case err != nil:
		return nil, err
	}
	res.Wall = time.Since(start)
	if res.HasSolution {
		res.Objective = sign*best + offset
		if res.Status == milp.Optimal {
			res.Bound = res.Objective
		}
	}
	res.Gap = milp.RelGap(res.Objective, res.Bound, res.HasSolution)
	return res, nil
}

var (
	errStop      = errors.New("ref: stop")
	errTimeLimit = errors.New("ref: time limit")
)

// column maps a model variable to standard-form columns: x = shift + dir·z (+ −z2 if free).
type column struct {
	fixed  bool
	shift  float64
	dir    float64
	z, z2  int // indices into the standard-form columns; z2 ≥ 0 only for free variables
	ubSlot int // row index of x's upper-bound row, or −1
}

// solveLP solves min sign·cᵀx over the continuous variables with the integer ones fixed.
// It returns the full point, the minimized value (sign·cᵀx without the constant) and a status.
func solveLP(m *model.Model, fixed, cost []float64, sign float64) ([]float64, float64, milp.Status) {
	n := m.NumVars()
	cols := make([]column, n)
	nz := 0
	var rhs []float64
	var zCost []float64
	newZ := func(c float64) int {
		zCost = append(zCost, c)
		nz++
		return nz - 1
	}
	const tol = 1e-9
	type pendingRow struct {
		terms map[int]float64
		b     float64
	}
	var eqs []pendingRow
	constObj := 0.0
	for j := 0; j < n; j++ {
		lb, ub := m.Bounds(model.Var(j))
		c := sign * cost[j]
		switch {
		case !math.IsNaN(fixed[j]):
			cols[j] = column{fixed: true, shift: fixed[j], z: -1, z2: -1}
			constObj += c * fixed[j]
		case lb == ub:
			cols[j] = column{fixed: true, shift: lb, z: -1, z2: -1}
			constObj += c * lb
		case !math.IsInf(lb, -1):
			cols[j] = column{shift: lb, dir: 1, z: newZ(c), z2: -1}
			constObj += c * lb
			if !math.IsInf(ub, 1) {
				s := newZ(0)
				eqs = append(eqs, pendingRow{map[int]float64{cols[j].z: 1, s: 1}, ub - lb})
			}
		case !math.IsInf(ub, 1):
			cols[j] = column{shift: ub, dir: -1, z: newZ(-c), z2: -1}
			constObj += c * ub
		default:
			z := newZ(c)
			cols[j] = column{dir: 1, z: z, z2: newZ(-c)}
		}
	}
	for i := 0; i < m.NumRows(); i++ {
		lo, hi := m.RowBounds(i)
		idx, coef := m.RowTerms(i)
		terms := map[int]float64{}
		k := 0.0
		for t, j := range idx {
			col := cols[j]
			a := coef[t]
			k += a * col.shift
			if col.fixed {
				continue
			}
			terms[col.z] += a * col.dir
			if col.z2 >= 0 {
				terms[col.z2] -= a
			}
		}
		if len(terms) == 0 {
			if k < lo-tol*math.Max(1, math.Abs(lo)) || k > hi+tol*math.Max(1, math.Abs(hi)) {
				return nil, 0, milp.Infeasible
			}
			continue
		}
		switch {
		case lo == hi:
			eqs = append(eqs, pendingRow{terms, lo - k})
		default:
			if !math.IsInf(lo, -1) {
				t := copyTerms(terms)
				t[newZ(0)] = -1
				eqs = append(eqs, pendingRow{t, lo - k})
			}
			if !math.IsInf(hi, 1) {
				t := copyTerms(terms)
				t[newZ(0)] = 1
				eqs = append(eqs, pendingRow{t, hi - k})
			}
		}
	}
	// Columns in no row: at 0 when their cost is ≥ 0, unbounded otherwise.
	used := make([]bool, nz)
	for _, e := range eqs {
		for z, a := range e.terms {
			if a != 0 {
				used[z] = true
			}
		}
	}
	for z := 0; z < nz; z++ {
		if !used[z] && zCost[z] < 0 {
			return nil, 0, milp.Unbounded
		}
	}
	zVal := make([]float64, nz)
	if len(eqs) > 0 {
		remap := make([]int, nz)
		var keep []int
		for z := 0; z < nz; z++ {
			remap[z] = -1
			if used[z] {
				remap[z] = len(keep)
				keep = append(keep, z)
			}
		}
		A := mat.NewDense(len(eqs), len(keep), nil)
		rhs = make([]float64, len(eqs))
		for i, e := range eqs {
			s := 1.0
			if e.b < 0 {
				s = -1 // the simplex wants b ≥ 0
			}
			rhs[i] = s * e.b
			for z, a := range e.terms {
				if remap[z] >= 0 {
					A.Set(i, remap[z], s*a)
				}
			}
		}
		c := make([]float64, len(keep))
		for i, z := range keep {
			c[i] = zCost[z]
		}
		_, x, err := lp.Simplex(c, A, rhs, 1e-10, nil)
		switch {
		case errors.Is(err, lp.ErrInfeasible):
			return nil, 0, milp.Infeasible
		case errors.Is(err, lp.ErrUnbounded):
			return nil, 0, milp.Unbounded
		case errors.Is(err, lp.ErrSingular):
			// Redundant equalities: drop dependent rows and retry.
			A2, b2 := independentRows(A, rhs)
			if A2 == nil {
				return nil, 0, milp.Infeasible
			}
			_, x, err = lp.Simplex(c, A2, b2, 1e-10, nil)
			switch {
			case errors.Is(err, lp.ErrInfeasible):
				return nil, 0, milp.Infeasible
			case errors.Is(err, lp.ErrUnbounded):
				return nil, 0, milp.Unbounded
			case err != nil:
				return nil, 0, milp.SolverError
			}
		case err != nil:
			return nil, 0, milp.SolverError
		}
		for i, z := range keep {
			zVal[z] = x[i]
		}
	}
	out := make([]float64, n)
	obj := constObj
	for j, col := range cols {
		if col.fixed {
			out[j] = col.shift
			continue
		}
		v := col.shift + col.dir*zVal[col.z]
		if col.z2 >= 0 {
			v -= zVal[col.z2]
		}
		out[j] = v
	}
	for z := 0; z < nz; z++ {
		obj += zCost[z] * zVal[z]
	}
	return out, obj, milp.Optimal
}

func copyTerms(t map[int]float64) map[int]float64 {
	c := make(map[int]float64, len(t)+1)
	for k, v := range t {
		c[k] = v
	}
	return c
}

// independentRows keeps a maximal set of linearly independent rows of [A | b]; it returns nil
// when the dropped rows contradict the kept ones (an inconsistent system).
func independentRows(A *mat.Dense, b []float64) (*mat.Dense, []float64) {
	r, c := A.Dims()
	var keep []int
	var basis [][]float64 // orthonormalized kept rows (Gram–Schmidt on [A | b])
	for i := 0; i < r; i++ {
		v := append(mat.Row(nil, i, A), b[i])
		w := append([]float64(nil), v...)
		for _, q := range basis {
			d := 0.0
			for k := range w {
				d += w[k] * q[k]
			}
			for k := range w {
				w[k] -= d * q[k]
			}
		}
		norm := 0.0
		for _, x := range w {
			norm += x * x
		}
		norm = math.Sqrt(norm)
		if norm > 1e-9*math.Max(1, vecNorm(v)) {
			for k := range w {
				w[k] /= norm
			}
			basis = append(basis, w)
			keep = append(keep, i)
		}
	}
	A2 := mat.NewDense(len(keep), c, nil)
	b2 := make([]float64, len(keep))
	for k, i := range keep {
		A2.SetRow(k, mat.Row(nil, i, A))
		b2[k] = b[i]
	}
	return A2, b2
}

func vecNorm(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}
