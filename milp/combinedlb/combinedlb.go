// Package combinedlb is a relaxation MILP for rematerialization and activation offloading
// together (SPEC §6): a lower bound on the makespan of every schedule of the strict combined
// model — any sequence of 004's operations (SPEC §1), offloads and prefetches of any stored
// tensor on one link of bandwidth β — not only on the combined class that the POFO dynamic
// program searches.
//
// The argument (docs/bounds.md, "Rematerialization and offloading combined"). Take any valid
// schedule and clean it without changing its makespan: an operation whose output never reaches
// a backward operation is replaced by idle time of its length, and an offload whose tensor is
// never prefetched afterwards (its consumer reads it while the copy runs) is dropped. Cut the
// sequence into 004's phases (Def. 4.2): phase ℓ = n..1 (n = L+1) ends with B^ℓ, the only
// backward of the phase. Then, whatever the order of the forwards inside a phase:
//
//   - each forward variant run in phase ℓ costs its u_f at least once; its input was stored
//     when the phase began or produced earlier in the phase (only forwards of stages ≤ ℓ are
//     useful), F_∅ consumes a plain input, ā^ℓ exists at B^ℓ;
//   - a tensor stored at the start of phase ℓ−1 was stored at the start of phase ℓ or produced
//     in phase ℓ;
//   - during B^ℓ the memory counted by 004 is exactly the tensors stored after it, plus what it
//     consumes (ā^ℓ, δ^ℓ, a plain a^{ℓ−1}), plus δ^{ℓ−1} and o_b^ℓ;
//   - during a forward of phase ℓ, at least the ā stored when the phase began, the plain a
//     stored then that no F_∅ of the phase consumes, a^0, δ^ℓ (ℓ < n), its input, its output
//     and o_f are stored;
//   - the bytes on the CPU, counted as they stream (C(t), fluid), start at 0, change at rate at
//     most β (one transfer at a time), are at least the memory counted above minus the budget
//     during every operation, and at most the tensors stored during B^ℓ that B^ℓ does not
//     consume (C = 0 during B^1).
//
// With D_ℓ the time between the end of B^{ℓ+1} (time 0 for ℓ = n) and the start of B^ℓ, the
// makespan is Σ_ℓ (D_ℓ + u_b^ℓ); the model minimizes it. Every cleaned schedule gives a point
// (its phase contents, stored sets and C at the ends of each B and of each first run of a
// forward), so the optimum and any proven dual bound are lower bounds. Without transfers it is a
// relaxation of rematerialization (≤ C_FL, C_MP); with the store-all sequence it relaxes 001's
// fractional relaxation (≤ Problem 1's optimum, δ^{L+1} counted from B^{L+1} on as 001 does).
package combinedlb

import (
	"errors"
	"fmt"
	"math"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/model"
)

// Forward variants.
const (
	Fck = iota
	Fn
	Fall
)

// Formulation is the model with handles to its variables, indexed by phase ℓ = 1..n and stage.
type Formulation struct {
	Model  *model.Model
	Units  milp.Units
	Chain  *instances.Chain
	Budget int64
	Beta   float64
	// X[ℓ][k][v]: forward variant v of stage k runs in phase ℓ (-1 when not a variable).
	X [][][3]model.Var
	// P[ℓ][j], Q[ℓ][j]: a^j (plain), ā^j stored when phase ℓ starts (ℓ < n; -1 when absent).
	P, Q [][]model.Var
	// D[ℓ]: the time before B^ℓ in phase ℓ; Cs[ℓ], Ce[ℓ]: bytes on the CPU at the start and
	// end of B^ℓ.
	D, Cs, Ce []model.Var
	// SumUB is Σ u_b, the constant part of the makespan (seconds).
	SumUB float64
}

const none = model.Var(-1)

// Units returns the units Build writes c's model in.
func Units(c *instances.Chain, budget int64) milp.Units {
	sizes := []int64{c.A0, c.Delta0, budget}
	var times []float64
	for _, st := range c.Stages {
		sizes = append(sizes, st.A, st.ABar, st.Delta, st.OF, st.OB)
		times = append(times, st.UF, st.UB)
	}
	return milp.ChooseUnits(sizes, times)
}

// Build writes the relaxation MILP of chain c under budget bytes (everything counted, a^0
// included) with one link of beta bytes per second (0: no link, a relaxation of
// rematerialization alone).
func Build(c *instances.Chain, budget int64, beta float64) (*Formulation, error) {
	return BuildWithin(c, budget, beta, Limits{})
}

// Limits bound the building of the model. Its phase rows grow as the cube of the chain's
// length (a 300-stage chain: tens of millions of nonzeros, gigabytes and minutes before the
// solver starts), so the command line always sets them.
type Limits struct {
	// MaxMemory caps the model's estimated memory in bytes (milp.ModelBytes of its nonzeros):
	// BuildWithin stops with a *TooLargeError once the model passes it (0: no cap).
	MaxMemory int64
	// Stop, when closed, stops BuildWithin with ErrStopped (the caller's deadline or Ctrl-C).
	Stop <-chan struct{}
}

// ErrStopped says that BuildWithin was stopped (Limits.Stop closed) before the model was
// complete.
var ErrStopped = errors.New("combinedlb: stopped while building the model")

// TooLargeError says that the model passed Limits.MaxMemory while it was being built.
type TooLargeError struct {
	// Stages is the chain's length; Nonzeros the model's size when it stopped, Bytes its
	// estimated memory, Limit the cap.
	Stages       int
	Nonzeros     int
	Bytes, Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("combinedlb: the relaxation MILP of %d stages passed %s (%d nonzeros, estimated) while being built, above the memory limit of %s (--max-memory); its rows grow as the cube of the chain's length: Σ(u_f+u_b) is the bound without it, or give a larger --max-memory",
		e.Stages, instances.FormatSize(e.Bytes), e.Nonzeros, instances.FormatSize(e.Limit))
}

// BuildWithin is Build under lim: it checks the model's size and lim.Stop between phases.
func BuildWithin(c *instances.Chain, budget int64, beta float64, lim Limits) (*Formulation, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if budget <= 0 {
		return nil, fmt.Errorf("combinedlb: budget %d bytes must be positive", budget)
	}
	if beta < 0 || math.IsNaN(beta) || math.IsInf(beta, 0) {
		return nil, fmt.Errorf("combinedlb: bandwidth %g must be finite and ≥ 0", beta)
	}
	n := c.Len()
	un := Units(c, budget)
	m := model.New("remat-offload-lb")
	if c.Name != "" {
		m.Name += "-" + c.Name
	}
	m.Comments = append(m.Comments, un.Comment(),
		fmt.Sprintf("rematerialization and offloading combined, relaxation MILP (milp/combinedlb): %d stages, budget %d bytes, beta %g B/s", n, budget, beta))
	f := &Formulation{Model: m, Units: un, Chain: c, Budget: budget, Beta: beta}
	// halted reports whether the build must stop (checked at the start of every phase, each
	// O(n²) nonzeros at most), with the reason in haltErr.
	var haltErr error
	halted := func() bool {
		if lim.MaxMemory > 0 {
			if nnz := m.NumNonzeros(); milp.ModelBytes(nnz) > lim.MaxMemory {
				haltErr = &TooLargeError{Stages: n, Nonzeros: nnz, Bytes: milp.ModelBytes(nnz), Limit: lim.MaxMemory}
				return true
			}
		}
		select {
		case <-lim.Stop:
			haltErr = ErrStopped
			return true
		default:
			return false
		}
	}
	M := un.Mem(budget)
	b := beta * un.Time / un.Memory // model memory units per model time unit
	a := func(j int) float64 { return un.Mem(c.SizeA(j)) }
	abar := func(j int) float64 {
		if j == 0 {
			return un.Mem(c.A0)
		}
		return un.Mem(c.Stage(j).ABar)
	}
	delta := func(j int) float64 { return un.Mem(c.SizeDelta(j)) }
	// Upper bounds: everything stored at once.
	var all int64 = c.A0
	for _, st := range c.Stages {
		all += st.ABar + st.Delta + st.OF + st.OB
	}
	bigMem := un.Mem(all) + M
	f.X = make([][][3]model.Var, n+1)
	f.P, f.Q = make([][]model.Var, n+1), make([][]model.Var, n+1)
	f.D, f.Cs, f.Ce = make([]model.Var, n+2), make([]model.Var, n+2), make([]model.Var, n+2)
	obj := model.Expr{}
	for _, st := range c.Stages {
		f.SumUB += st.UB
	}
	// Σ u_b as the cost of a column fixed to 1 (an objective constant is read differently by
	// cbc and glpsol, docs/checkmate.md).
	obj.Add(m.AddContinuous("backwards", 1, 1), un.Secs(f.SumUB))
	for l := n; l >= 1; l-- {
		if halted() {
			return nil, haltErr
		}
		f.X[l] = make([][3]model.Var, l+1)
		f.P[l], f.Q[l] = make([]model.Var, l+1), make([]model.Var, l+1)
		for k := 0; k <= l; k++ {
			f.X[l][k] = [3]model.Var{none, none, none}
			f.P[l][k], f.Q[l][k] = none, none
		}
		for k := 1; k <= l; k++ {
			if k < l {
				f.X[l][k][Fck] = m.AddBinary(fmt.Sprintf("Fck_%d_%d", l, k))
				if k >= 2 { // F_∅^1 would consume a^0, which B^1 needs and nothing recomputes
					f.X[l][k][Fn] = m.AddBinary(fmt.Sprintf("Fn_%d_%d", l, k))
				}
			}
			f.X[l][k][Fall] = m.AddBinary(fmt.Sprintf("Fall_%d_%d", l, k))
			if l < n {
				if k < l {
					f.P[l][k] = m.AddBinary(fmt.Sprintf("P_%d_%d", l, k))
				}
				f.Q[l][k] = m.AddBinary(fmt.Sprintf("Q_%d_%d", l, k))
			}
		}
		f.D[l] = m.AddContinuous(fmt.Sprintf("D_%d", l), 0, math.Inf(1))
		obj.Add(f.D[l], 1)
		capB := 0.0
		if l >= 2 {
			capB = bigMem
		}
		f.Cs[l] = m.AddContinuous(fmt.Sprintf("Cs_%d", l), 0, capB)
		f.Ce[l] = m.AddContinuous(fmt.Sprintf("Ce_%d", l), 0, capB)
	}
	m.SetObjective(model.Minimize, obj)
	add := func(e *model.Expr, v model.Var, coef float64) *model.Expr {
		if v != none {
			e.Add(v, coef)
		}
		return e
	}
	xs := func(e *model.Expr, l, k int, coef float64) *model.Expr {
		for v := 0; v < 3; v++ {
			add(e, f.X[l][k][v], coef)
		}
		return e
	}
	for l := n; l >= 1; l-- {
		if halted() {
			return nil, haltErr
		}
		X, P, Q := f.X[l], f.P[l], f.Q[l]
		// Compute time of the phase's forwards, each variant at least once.
		e := model.Expr{}
		e.Add(f.D[l], 1)
		for k := 1; k <= l; k++ {
			xs(&e, l, k, -un.Secs(c.Stage(k).UF))
		}
		m.AddGE(fmt.Sprintf("forwards_%d", l), e, 0)
		// What B^ℓ needs, what each forward needs.
		e = model.Expr{}
		add(add(&e, X[l][Fall], 1), Q[l], 1)
		m.AddGE(fmt.Sprintf("abar_%d", l), e, 1)
		if l >= 2 {
			e = model.Expr{}
			add(add(xs(&e, l, l-1, 1), P[l-1], 1), Q[l-1], 1)
			m.AddGE(fmt.Sprintf("input_%d", l), e, 1)
		}
		for k := 1; k <= l; k++ {
			if l < n {
				e = model.Expr{}
				if add(add(&e, P[k], 1), Q[k], 1); len(e.Terms) == 2 {
					m.AddLE(fmt.Sprintf("one_state_%d_%d", l, k), e, 1)
				}
			}
			if k < 2 {
				continue
			}
			for v := 0; v < 3; v++ {
				if X[k][v] == none {
					continue
				}
				e = model.Expr{}
				e.Add(X[k][v], 1)
				add(add(xs(&e, l, k-1, -1), P[k-1], -1), Q[k-1], -1)
				m.AddLE(fmt.Sprintf("either_%d_%d_%d", l, k, v), e, 0)
			}
			if X[k][Fn] != none {
				e = model.Expr{}
				e.Add(X[k][Fn], 1)
				add(add(add(&e, P[k-1], -1), X[k-1][Fck], -1), X[k-1][Fn], -1)
				m.AddLE(fmt.Sprintf("plain_%d_%d", l, k), e, 0)
			}
		}
		// Carry into phase ℓ−1: stored then ⇒ stored now or produced in this phase.
		if l >= 2 {
			for j := 1; j <= l-1; j++ {
				if pv := f.P[l-1][j]; pv != none {
					e = model.Expr{}
					e.Add(pv, 1)
					add(add(add(&e, P[j], -1), X[j][Fck], -1), X[j][Fn], -1)
					m.AddLE(fmt.Sprintf("carryP_%d_%d", l-1, j), e, 0)
				}
				e = model.Expr{}
				e.Add(f.Q[l-1][j], 1)
				add(add(&e, Q[j], -1), X[j][Fall], -1)
				m.AddLE(fmt.Sprintf("carryQ_%d_%d", l-1, j), e, 0)
			}
		}
	}
	// Memory during B^ℓ: stored after it + what it consumes + δ^{ℓ−1} + o_b, at its start and
	// end, minus the bytes away; the bytes away at most what is stored and not consumed.
	for l := 1; l <= n; l++ {
		if halted() {
			return nil, haltErr
		}
		mem, capE := model.Expr{}, model.Expr{}
		mem.Constant = a(0) + abar(l) + delta(l) + delta(l-1) + un.Mem(c.Stage(l).OB)
		if l >= 2 {
			capE.Constant = a(0)
			for j := 1; j <= l-1; j++ {
				add(&mem, f.P[l-1][j], a(j))
				add(&mem, f.Q[l-1][j], abar(j))
				add(&capE, f.P[l-1][j], a(j))
				add(&capE, f.Q[l-1][j], abar(j))
			}
			// A plain a^{ℓ−1} input is consumed: counted unless ā^{ℓ−1} is stored after B^ℓ.
			mem.Constant += a(l - 1)
			add(&mem, f.Q[l-1][l-1], -a(l-1))
		}
		for _, cv := range []model.Var{f.Cs[l], f.Ce[l]} {
			e := mem
			e.Terms = append(append([]model.Term(nil), mem.Terms...), model.Term{Var: cv, Coef: -1})
			m.AddLE(fmt.Sprintf("memB_%s", m.VarName(cv)), e, M)
			if l >= 2 {
				ce := capE
				ce.Terms = append(append([]model.Term(nil), capE.Terms...), model.Term{Var: cv, Coef: -1})
				m.AddGE(fmt.Sprintf("capB_%s", m.VarName(cv)), ce, 0)
			}
		}
		// During B^ℓ: |C(end) − C(start)| ≤ β u_b.
		ub := un.Secs(c.Stage(l).UB)
		m.AddLE(fmt.Sprintf("linkB1_%d", l), *new(model.Expr).Add(f.Ce[l], 1).Add(f.Cs[l], -1), b*ub)
		m.AddLE(fmt.Sprintf("linkB2_%d", l), *new(model.Expr).Add(f.Cs[l], 1).Add(f.Ce[l], -1), b*ub)
		// Between the end of B^{ℓ+1} (time 0 for ℓ = n) and the start of B^ℓ.
		if l < n {
			m.AddLE(fmt.Sprintf("link1_%d", l), *new(model.Expr).Add(f.Cs[l], 1).Add(f.Ce[l+1], -1).Add(f.D[l], -b), 0)
			m.AddLE(fmt.Sprintf("link2_%d", l), *new(model.Expr).Add(f.Ce[l+1], 1).Add(f.Cs[l], -1).Add(f.D[l], -b), 0)
		} else {
			m.AddLE(fmt.Sprintf("link1_%d", l), *new(model.Expr).Add(f.Cs[l], 1).Add(f.D[l], -b), 0)
		}
	}
	// Memory during a forward of phase ℓ, and the bytes away then: C(τ) at its start τ (and
	// at its end τ + u) within β·(time) of C at the end of B^{ℓ+1} and at the start of B^ℓ:
	//   need ≤ C_e + β(D − u),  need ≤ C_s + β(D − u),  2·need ≤ C_e + C_s + β(D − u).
	for l := n; l >= 1; l-- {
		if halted() {
			return nil, haltErr
		}
		X, P, Q := f.X[l], f.P[l], f.Q[l]
		// z_j ≥ P_j − [F_∅^{j+1} runs in the phase]: a stored plain a^j present throughout.
		z := make([]model.Var, l+1)
		for j := range z {
			z[j] = none
		}
		for j := 1; j < l; j++ {
			z[j] = P[j]
			if P[j] != none && j+1 <= l && X[j+1][Fn] != none {
				z[j] = m.AddContinuous(fmt.Sprintf("z_%d_%d", l, j), 0, 1)
				m.AddGE(fmt.Sprintf("zdef_%d_%d", l, j), *new(model.Expr).Add(z[j], 1).Add(P[j], -1).Add(X[j+1][Fn], 1), 0)
			}
		}
		for k := 1; k <= l; k++ {
			st := c.Stage(k)
			for v := 0; v < 3; v++ {
				x := X[k][v]
				if x == none {
					continue
				}
				mem := model.Expr{}
				mem.Constant = a(0) + un.Mem(st.OF)
				if l < n {
					mem.Constant += delta(l)
				}
				if v == Fall {
					mem.Constant += abar(k)
				} else {
					mem.Constant += a(k)
				}
				for j := 1; j <= l; j++ {
					if j == k-1 {
						continue
					}
					add(&mem, z[j], a(j))
					add(&mem, Q[j], abar(j))
				}
				if k >= 2 { // the input, at least a^{k−1}; ā^{k−1} when that is stored
					mem.Constant += a(k - 1)
					add(&mem, Q[k-1], abar(k-1)-a(k-1))
				}
				need := mem
				need.Constant -= M
				// need ≤ (big)(1 − x) + ...: rows only bind when the forward runs.
				big := bigMem
				u := un.Secs(st.UF)
				cf := m.AddContinuous(fmt.Sprintf("Cf_%d_%d_%d", l, k, v), 0, bigMem)
				// need − Cf ≤ big(1 − x)
				r := need
				r.Terms = append(append([]model.Term(nil), need.Terms...), model.Term{Var: cf, Coef: -1}, model.Term{Var: x, Coef: big})
				m.AddLE(fmt.Sprintf("memF_%d_%d_%d", l, k, v), r, big)
				// Cf − C_e − β D + β u x ≤ 0 (and with C_s; and twice Cf against both).
				var ce model.Var = none
				if l < n {
					ce = f.Ce[l+1]
				}
				for i, side := range []model.Var{ce, f.Cs[l]} {
					e := model.Expr{}
					e.Add(cf, 1).Add(f.D[l], -b).Add(x, b*u)
					add(&e, side, -1)
					m.AddLE(fmt.Sprintf("linkF%d_%d_%d_%d", i, l, k, v), e, 0)
				}
				e := model.Expr{}
				e.Add(cf, 2).Add(f.D[l], -b).Add(x, b*u).Add(f.Cs[l], -1)
				add(&e, ce, -1)
				m.AddLE(fmt.Sprintf("linkF2_%d_%d_%d", l, k, v), e, 0)
			}
		}
	}
	if err := m.Err(); err != nil {
		return nil, fmt.Errorf("combinedlb: %w", err)
	}
	return f, nil
}

// Seconds converts an objective value of the model to seconds.
func (f *Formulation) Seconds(obj float64) float64 { return obj * f.Units.Time }
