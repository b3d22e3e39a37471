package model

import (
	"fmt"
	"math"
	"unicode"
	"unicode/utf8"
)

// VarType is the domain of a variable.
type VarType uint8

const (
	// Continuous variables take any real value within their bounds.
	Continuous VarType = iota
	// Integer variables take integer values within their bounds.
	Integer
	// Binary variables take 0 or 1 (bounds [0, 1]).
	Binary
)

func (t VarType) String() string {
	switch t {
	case Continuous:
		return "continuous"
	case Integer:
		return "integer"
	case Binary:
		return "binary"
	}
	return fmt.Sprintf("VarType(%d)", uint8(t))
}

// Sense is the direction of the objective.
type Sense uint8

const (
	// Minimize the objective.
	Minimize Sense = iota
	// Maximize the objective.
	Maximize
)

func (s Sense) String() string {
	if s == Maximize {
		return "maximize"
	}
	return "minimize"
}

// Var identifies a variable of one Model: its column index, 0-based, in creation order.
type Var int

// Term is coef·var.
type Term struct {
	Var  Var
	Coef float64
}

// Expr is an affine expression Σ coef·var + Constant. Terms may repeat a variable and hold
// zeros: the model merges and drops them when the expression is added.
type Expr struct {
	Terms    []Term
	Constant float64
}

// Add appends coef·v to e and returns e, for chaining.
func (e *Expr) Add(v Var, coef float64) *Expr {
	e.Terms = append(e.Terms, Term{v, coef})
	return e
}

// AddConst adds c to the constant of e and returns e.
func (e *Expr) AddConst(c float64) *Expr {
	e.Constant += c
	return e
}

// Reset empties e, keeping its storage.
func (e *Expr) Reset() {
	e.Terms = e.Terms[:0]
	e.Constant = 0
}

// Model is a mixed-integer linear program
//
//	min or max  cᵀx + c₀
//	subject to  lo_r ≤ a_rᵀx ≤ hi_r   for every row r
//	            l_j ≤ x_j ≤ u_j, x_j ∈ ℤ for integer and binary columns j
//
// with ±Inf (math.Inf) for open sides. Rows are stored in compressed sparse row form, terms
// merged (one entry per variable, sorted by column) and exact zeros dropped, so that every
// writer and backend sees one normalized model. Rows and columns keep their creation order.
//
// Bad data (NaN or infinite coefficients, unknown variables, duplicate names, contradictory
// bounds) does not panic: the first such error is recorded and returned by Err and Validate,
// so a formulation can be built without checking every call.
type Model struct {
	// Name labels the model in files (LP "\ Problem", MPS NAME).
	Name string
	// Comments are written, one line each, at the top of LP and MPS files (after the name);
	// readers skip them. Formulations use one to state their units (see milp.Units).
	Comments []string

	varNames []string
	varTypes []VarType
	lb, ub   []float64

	rowNames []string
	rowLo    []float64
	rowHi    []float64
	rowStart []int // len(rowNames)+1 offsets into colIdx/vals
	colIdx   []int32
	vals     []float64

	sense    Sense
	objCoef  map[Var]float64
	objConst float64

	names map[string]struct{} // variable names, for duplicate detection
	rname map[string]struct{} // row names
	pos   []int32             // scratch: position of a column in the row being merged, -1 if absent
	err   error
}

// New returns an empty model named name.
func New(name string) *Model {
	return &Model{
		Name:     name,
		rowStart: []int{0},
		objCoef:  map[Var]float64{},
		names:    map[string]struct{}{},
		rname:    map[string]struct{}{},
	}
}

func (m *Model) fail(format string, args ...any) {
	if m.err == nil {
		m.err = fmt.Errorf("model: "+format, args...)
	}
}

// Err returns the first bad-data error recorded while building, or nil.
func (m *Model) Err() error { return m.err }

// AddVar adds a variable with the given name, type and bounds and returns it. Binary variables
// must have bounds within [0, 1]. An empty name is replaced by "x<index>".
func (m *Model) AddVar(name string, t VarType, lb, ub float64) Var {
	v := Var(len(m.varNames))
	if name == "" {
		name = fmt.Sprintf("x%d", v)
	}
	if _, dup := m.names[name]; dup {
		m.fail("duplicate variable name %q", name)
	}
	if bad := illegalName(name); bad != "" {
		m.fail("variable name %q: %s", name, bad)
	}
	m.names[name] = struct{}{}
	switch {
	case math.IsNaN(lb) || math.IsNaN(ub):
		m.fail("variable %q: NaN bound", name)
	case lb > ub:
		m.fail("variable %q: contradictory bounds [%g, %g]", name, lb, ub)
	case math.IsInf(lb, 1) || math.IsInf(ub, -1):
		m.fail("variable %q: bounds [%g, %g] leave no finite value", name, lb, ub)
	case t == Binary && (lb < 0 || ub > 1):
		m.fail("variable %q: binary with bounds [%g, %g] outside [0, 1]", name, lb, ub)
	case t > Binary:
		m.fail("variable %q: unknown type %d", name, t)
	}
	m.varNames = append(m.varNames, name)
	m.varTypes = append(m.varTypes, t)
	m.lb = append(m.lb, lb)
	m.ub = append(m.ub, ub)
	m.pos = append(m.pos, -1)
	return v
}

// AddContinuous adds a continuous variable with bounds [lb, ub].
func (m *Model) AddContinuous(name string, lb, ub float64) Var {
	return m.AddVar(name, Continuous, lb, ub)
}

// AddInteger adds an integer variable with bounds [lb, ub].
func (m *Model) AddInteger(name string, lb, ub float64) Var { return m.AddVar(name, Integer, lb, ub) }

// AddBinary adds a binary variable.
func (m *Model) AddBinary(name string) Var { return m.AddVar(name, Binary, 0, 1) }

// AddRow adds the ranged row lo ≤ e ≤ hi and returns its index. The constant of e moves to
// both sides; terms on the same variable are merged and zero coefficients dropped. Use
// math.Inf(-1) / math.Inf(1) for an open side. An empty name is replaced by "r<index>".
func (m *Model) AddRow(name string, lo float64, e Expr, hi float64) int {
	r := len(m.rowNames)
	if name == "" {
		name = fmt.Sprintf("r%d", r)
	}
	if _, dup := m.rname[name]; dup {
		m.fail("duplicate row name %q", name)
	}
	if bad := illegalName(name); bad != "" {
		m.fail("row name %q: %s", name, bad)
	}
	m.rname[name] = struct{}{}
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsNaN(e.Constant) || math.IsInf(e.Constant, 0) {
		m.fail("row %q: NaN or infinite side or constant", name)
	}
	if lo > hi {
		m.fail("row %q: contradictory sides %g > %g", name, lo, hi)
	}
	if math.IsInf(lo, 1) || math.IsInf(hi, -1) {
		m.fail("row %q: sides [%g, %g] leave no finite value", name, lo, hi)
	}
	start := len(m.colIdx)
	for _, t := range e.Terms {
		if t.Var < 0 || int(t.Var) >= len(m.varNames) {
			m.fail("row %q: unknown variable %d", name, t.Var)
			continue
		}
		if math.IsNaN(t.Coef) || math.IsInf(t.Coef, 0) {
			m.fail("row %q: coefficient %g on variable %q", name, t.Coef, m.varNames[t.Var])
			continue
		}
		if p := m.pos[t.Var]; p >= 0 {
			m.vals[p] += t.Coef
			continue
		}
		m.pos[t.Var] = int32(len(m.colIdx))
		m.colIdx = append(m.colIdx, int32(t.Var))
		m.vals = append(m.vals, t.Coef)
	}
	// Reset the scratch positions and drop exact zeros (including merged cancellations).
	w := start
	for k := start; k < len(m.colIdx); k++ {
		m.pos[m.colIdx[k]] = -1
		if m.vals[k] != 0 {
			m.colIdx[w], m.vals[w] = m.colIdx[k], m.vals[k]
			w++
		}
	}
	m.colIdx, m.vals = m.colIdx[:w], m.vals[:w]
	sortRow(m.colIdx[start:], m.vals[start:])
	m.rowNames = append(m.rowNames, name)
	m.rowLo = append(m.rowLo, lo-e.Constant)
	m.rowHi = append(m.rowHi, hi-e.Constant)
	m.rowStart = append(m.rowStart, len(m.colIdx))
	return r
}

// AddLE adds the row e ≤ rhs.
func (m *Model) AddLE(name string, e Expr, rhs float64) int {
	return m.AddRow(name, math.Inf(-1), e, rhs)
}

// AddGE adds the row e ≥ rhs.
func (m *Model) AddGE(name string, e Expr, rhs float64) int {
	return m.AddRow(name, rhs, e, math.Inf(1))
}

// AddEq adds the row e = rhs.
func (m *Model) AddEq(name string, e Expr, rhs float64) int { return m.AddRow(name, rhs, e, rhs) }

// SetObjective sets the objective to sense e (replacing any previous one); terms are merged
// and zeros dropped.
func (m *Model) SetObjective(sense Sense, e Expr) {
	m.sense = sense
	m.objCoef = make(map[Var]float64, len(e.Terms))
	m.objConst = e.Constant
	if math.IsNaN(e.Constant) || math.IsInf(e.Constant, 0) {
		m.fail("objective: constant %g", e.Constant)
	}
	for _, t := range e.Terms {
		if t.Var < 0 || int(t.Var) >= len(m.varNames) {
			m.fail("objective: unknown variable %d", t.Var)
			continue
		}
		if math.IsNaN(t.Coef) || math.IsInf(t.Coef, 0) {
			m.fail("objective: coefficient %g on variable %q", t.Coef, m.varNames[t.Var])
			continue
		}
		m.objCoef[t.Var] += t.Coef
	}
	for v, c := range m.objCoef {
		if c == 0 {
			delete(m.objCoef, v)
		}
	}
}

// NumVars returns the number of variables (columns).
func (m *Model) NumVars() int { return len(m.varNames) }

// NumRows returns the number of rows.
func (m *Model) NumRows() int { return len(m.rowNames) }

// NumNonzeros returns the number of stored constraint coefficients.
func (m *Model) NumNonzeros() int { return len(m.colIdx) }

// VarName returns the name of v.
func (m *Model) VarName(v Var) string { return m.varNames[v] }

// VarType returns the type of v.
func (m *Model) VarType(v Var) VarType { return m.varTypes[v] }

// Bounds returns the bounds of v.
func (m *Model) Bounds(v Var) (lb, ub float64) { return m.lb[v], m.ub[v] }

// SetBounds changes the bounds of v (checked as in AddVar).
func (m *Model) SetBounds(v Var, lb, ub float64) {
	if math.IsNaN(lb) || math.IsNaN(ub) || lb > ub {
		m.fail("variable %q: contradictory bounds [%g, %g]", m.varNames[v], lb, ub)
	}
	m.lb[v], m.ub[v] = lb, ub
}

// RowName returns the name of row r.
func (m *Model) RowName(r int) string { return m.rowNames[r] }

// RowBounds returns the sides lo ≤ a_rᵀx ≤ hi of row r (constant already moved).
func (m *Model) RowBounds(r int) (lo, hi float64) { return m.rowLo[r], m.rowHi[r] }

// RowTerms returns the columns and coefficients of row r, sorted by column. The slices alias
// the model's storage and must not be modified.
func (m *Model) RowTerms(r int) (cols []int32, coefs []float64) {
	a, b := m.rowStart[r], m.rowStart[r+1]
	return m.colIdx[a:b], m.vals[a:b]
}

// CSR returns the constraint matrix in compressed sparse row form: row r has columns
// index[start[r]:start[r+1]] with coefficients value[...]. The slices alias the model.
func (m *Model) CSR() (start []int, index []int32, value []float64) {
	return m.rowStart, m.colIdx, m.vals
}

// Objective returns the sense, the dense objective vector c (len NumVars) and c₀.
func (m *Model) Objective() (Sense, []float64, float64) {
	c := make([]float64, len(m.varNames))
	for v, k := range m.objCoef {
		c[v] = k
	}
	return m.sense, c, m.objConst
}

// illegalName says why a name can be written in no file format: control characters (line
// breaks, tabs, NUL) or invalid UTF-8. Spaces and punctuation are legal here; each writer
// replaces what its format forbids.
func illegalName(name string) string {
	if !utf8.ValidString(name) {
		return "not valid UTF-8"
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return fmt.Sprintf("control character %U", r)
		}
	}
	return ""
}

// sortRow sorts one row's (column, value) pairs by column. Rows are short in memsched's
// formulations, so insertion sort is fastest; long rows fall back to a heap sort.
func sortRow(idx []int32, val []float64) {
	if len(idx) > 32 {
		heapSortRow(idx, val)
		return
	}
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0 && idx[j-1] > idx[j]; j-- {
			idx[j-1], idx[j] = idx[j], idx[j-1]
			val[j-1], val[j] = val[j], val[j-1]
		}
	}
}

func heapSortRow(idx []int32, val []float64) {
	n := len(idx)
	sift := func(root, end int) {
		for {
			c := 2*root + 1
			if c >= end {
				return
			}
			if c+1 < end && idx[c] < idx[c+1] {
				c++
			}
			if idx[root] >= idx[c] {
				return
			}
			idx[root], idx[c] = idx[c], idx[root]
			val[root], val[c] = val[c], val[root]
			root = c
		}
	}
	for i := n/2 - 1; i >= 0; i-- {
		sift(i, n)
	}
	for end := n - 1; end > 0; end-- {
		idx[0], idx[end] = idx[end], idx[0]
		val[0], val[end] = val[end], val[0]
		sift(0, end)
	}
}
