package actmilp

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/memsched/memsched/instances"
	act "github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/model"
)

// Options shape the model.
type Options struct {
	// Upper is the makespan of a verified schedule, in seconds: only schedules no longer than it
	// are modelled (T ≤ Upper), which bounds every time variable and every big-M. 0 means the
	// safe Σu + 2Σ|x_j|/β (some optimal schedule never leaves GPU and link idle together).
	Upper float64
	// Lower is a certified lower bound in seconds (e.g. the interruptible relaxation), added as
	// the row T ≥ Lower (0: none; the fluid windows are always there).
	Lower float64
	// Plain leaves out what only strengthens: the energy rows, the fluid tails on T and the
	// symmetry rows (to test that they cut no optimum).
	Plain bool
	// Interruptible drops the one-transfer-at-a-time disjunctions and the memory rows at
	// prefetch starts, keeping the interval link work (bucketRows): a relaxation (001 §5's
	// interruptible transfers with whole activations), not the exact model.
	Interruptible bool
	// MaxMemory caps the model's estimated memory in bytes (milp.ModelBytes of its nonzeros,
	// HiGHS's copies included): Build stops with a *TooLargeError once the model passes it
	// (0: no cap). The energy and prefetch-memory rows grow as the cube of the chain's length
	// (a 300-stage chain: tens of millions of nonzeros), so the command line always sets it.
	MaxMemory int64
	// Stop, when closed, stops Build with ErrStopped (the caller's deadline or Ctrl-C: building
	// the model of a long chain takes longer than many time limits).
	Stop <-chan struct{}
}

// ErrStopped says that Build was stopped (Options.Stop closed) before the model was complete.
var ErrStopped = errors.New("actmilp: stopped while building the model")

// TooLargeError says that the model passed Options.MaxMemory while it was being built.
type TooLargeError struct {
	// Operations is L+1 (001's layers, as certify counts them), Candidates the activations
	// the model may move.
	Operations, Candidates int
	// Nonzeros is the model's size when Build stopped, Bytes its estimate, Limit the cap.
	Nonzeros     int
	Bytes, Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("actmilp: the exact MILP on %d operations (%d candidate activations) passed %s (%d nonzeros, estimated) while being built, above the memory limit of %s (--max-memory); its energy and memory rows grow as the cube of the chain's length: use the heuristics (greedy, dynprog) and the relaxations' bounds, or a larger --max-memory",
		e.Operations, e.Candidates, instances.FormatSize(e.Bytes), e.Nonzeros, instances.FormatSize(e.Limit))
}

// Formulation is the model with handles to its variables. Operations are numbered by
// position k = 0..2n−1 in execution order (F_0..F_L, B_L..B_0, n = L+1); transfers by
// t = 2c (offload) and 2c+1 (prefetch) of the c-th candidate J[c].
type Formulation struct {
	Model   *model.Model
	Units   milp.Units
	Problem *act.Problem
	Options Options
	// Upper is the makespan bound used (seconds).
	Upper float64
	// J lists the candidate activations, increasing; the others never move in an optimum.
	J []int
	// Tight[k] says operation k does not fit with everything on the GPU (m_k > M_GPU);
	// TightGap[k] that the memory at rest after operation k does not either.
	Tight, TightGap []bool
	// Head and Tail are the certified windows (act.Problem.WholeWindows), seconds.
	Head, Tail []float64

	n     int
	cidx  map[int]int // activation index → candidate index
	S     []model.Var // operation starts, by position
	T     model.Var
	O     []model.Var // o_c: J[c] is offloaded
	A, B  []model.Var // offload and prefetch starts
	lam   map[[2]int]model.Var
	rel   map[[2]int]model.Var // (c, k): x released by the start of k
	pre   map[[2]int]model.Var // (c, k): prefetch started before the start of k
	qre   map[[2]int]model.Var // (c, k): prefetch started before the end of k
	away  map[[2]int]model.Var // (c, c'): x_{J[c]} away when the prefetch of J[c'] starts
	zvar  map[[2]int]model.Var // (t, k+1): the part of transfer t in interval k (bucketRows)
	u, m  []float64            // time (model units) and memory (bytes) of each position
	g     []int64              // memory at rest after each position
	mb    []int64              // m_k in bytes
	kpos  [][]int              // the tight positions in each candidate's window
	lb    map[model.Var]float64
	ub    map[model.Var]float64
	round float64 // seconds per model time unit
	halt  error   // why Build stopped (halted), nil while it goes on
}

// halted reports whether Build must stop: the model passed Options.MaxMemory or Options.Stop
// is closed. The phases check it in their loops (often enough that the model never grows much
// past the cap) and return at once; Build then returns f.halt.
func (f *Formulation) halted() bool {
	if f.halt != nil {
		return true
	}
	if mx := f.Options.MaxMemory; mx > 0 {
		if nnz := f.Model.NumNonzeros(); milp.ModelBytes(nnz) > mx {
			f.halt = &TooLargeError{Operations: f.n, Candidates: len(f.J), Nonzeros: nnz, Bytes: milp.ModelBytes(nnz), Limit: mx}
			return true
		}
	}
	select {
	case <-f.Options.Stop:
		f.halt = ErrStopped
		return true
	default:
		return false
	}
}

// pos returns the position of F_i (backward false) or B_i.
func (f *Formulation) pos(i int, backward bool) int {
	if backward {
		return 2*f.n - 1 - i
	}
	return i
}

// inWindow reports whether x_j may be away during the operation at position k: after F_j has
// read it and before B_{j+1}, B_j read it again — positions j+1..2n−2−j.
func (f *Formulation) inWindow(j, k int) bool { return k >= j+1 && k <= 2*f.n-2-j }

// gapInWindow reports whether x_j may be away in the gap after position k (after F_j's end up
// to the gap before B_j).
func (f *Formulation) gapInWindow(j, k int) bool { return k >= j && k <= 2*f.n-2-j }

// dur returns |x_j|/β in model time units.
func (f *Formulation) dur(j int) float64 {
	return f.Units.Secs(float64(f.Problem.X[j]) / f.Problem.Beta)
}

// Units returns the units Build writes p's model in: milp.ChooseUnits over the activation and
// gradient sizes, temporary memories and M_GPU, and the operation and transfer times.
func Units(p *act.Problem) milp.Units {
	sizes := []int64{p.MGPU}
	sizes = append(sizes, p.X...)
	sizes = append(sizes, p.Y...)
	sizes = append(sizes, p.ExF...)
	sizes = append(sizes, p.ExB...)
	var times []float64
	times = append(times, p.UF...)
	times = append(times, p.UB...)
	for _, x := range p.X {
		times = append(times, float64(x)/p.Beta)
	}
	return milp.ChooseUnits(sizes, times)
}

// Build writes the exact MILP of 001's Problem 1 for p (docs/act-offload.md, "The exact
// MILP"). It returns an error for an invalid problem or when even the fluid relaxation has no
// schedule (no operation may then fit: the caller reports infeasibility without a model).
func Build(p *act.Problem, o Options) (*Formulation, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	head, tail, ok, err := p.WholeWindowsUntil(o.Stop)
	if err != nil {
		return nil, ErrStopped // the windows themselves take minutes on a 20 001-stage chain
	}
	if !ok {
		return nil, fmt.Errorf("actmilp: no schedule fits M_GPU = %d bytes (the fluid relaxation is infeasible)", p.MGPU)
	}
	n := p.L() + 1
	un := Units(p)
	f := &Formulation{Problem: p, Options: o, Units: un, n: n, Head: head, Tail: tail,
		cidx: map[int]int{}, lam: map[[2]int]model.Var{}, rel: map[[2]int]model.Var{},
		pre: map[[2]int]model.Var{}, qre: map[[2]int]model.Var{}, away: map[[2]int]model.Var{}, zvar: map[[2]int]model.Var{},
		lb: map[model.Var]float64{}, ub: map[model.Var]float64{}}
	f.Upper = o.Upper
	if !(f.Upper > 0) || math.IsInf(f.Upper, 0) {
		f.Upper = p.Compute()
		for _, x := range p.X {
			f.Upper += 2 * float64(x) / p.Beta
		}
	}
	f.Upper = math.Max(f.Upper, math.Max(o.Lower, head[2*n-1]+tail[2*n-1]))
	// Per-position data.
	f.u, f.m = make([]float64, 2*n), make([]float64, 2*n)
	f.g, f.mb = make([]int64, 2*n), make([]int64, 2*n)
	f.Tight, f.TightGap = make([]bool, 2*n), make([]bool, 2*n)
	var xs int64 // Σ_{j ≤ i+1} |x_j| for F_i
	for i := 0; i < n; i++ {
		if i == 0 {
			xs = p.X[0]
		}
		xs += p.X[i+1]
		k := f.pos(i, false)
		f.u[k], f.mb[k], f.g[k] = un.Secs(p.UF[i]), p.MemF(i), xs
	}
	for i := n - 1; i >= 0; i-- {
		k := f.pos(i, true)
		f.u[k], f.mb[k] = un.Secs(p.UB[i]), p.MemB(i)
		f.g[k] = p.MemB(i) - p.ExB[i] - p.X[i+1] - p.Y[i+1]
	}
	for k := 0; k < 2*n; k++ {
		f.m[k] = un.Mem(f.mb[k])
		f.Tight[k] = f.mb[k] > p.MGPU
		f.TightGap[k] = k < 2*n-1 && f.g[k] > p.MGPU
	}
	// Time windows (model units).
	up := un.Secs(f.Upper)
	est := func(k int) float64 { return un.Secs(head[k]) }
	lst := func(k int) float64 { return math.Max(est(k), up-un.Secs(tail[k])) }
	endF := func(i int) float64 { // earliest end of F_i; 0 before F_0
		if i < 0 {
			return 0
		}
		return est(i) + f.u[i]
	}
	// Candidates: x_j > 0 whose window holds a tight operation or gap, and whose round trip
	// fits between F_{j−1} and B_j within Upper.
	for j := 0; j < n-1; j++ {
		if p.X[j] == 0 {
			continue
		}
		useful := false
		for k := j; k <= 2*n-2-j; k++ {
			useful = useful || (f.inWindow(j, k) && f.Tight[k]) || (f.gapInWindow(j, k) && f.TightGap[k])
		}
		if !useful {
			continue
		}
		if lst(f.pos(j, true))-2*f.dur(j) < endF(j-1)-1e-9*math.Max(1, up) {
			continue
		}
		f.cidx[j] = len(f.J)
		f.J = append(f.J, j)
	}
	m := model.New(fmt.Sprintf("act-offload L=%d", p.L()))
	f.Model = m
	m.Comments = append(m.Comments, un.Comment(),
		fmt.Sprintf("activation offloading (001 Problem 1), exact MILP: %d operations, M_GPU %d bytes, beta %g B/s, makespan at most %.17g s (a verified schedule)", 2*n, p.MGPU, p.Beta, f.Upper))
	addVar := func(name string, t model.VarType, lo, hi float64) model.Var {
		v := m.AddVar(name, t, lo, hi)
		f.lb[v], f.ub[v] = lo, hi
		return v
	}
	f.S = make([]model.Var, 2*n)
	for k := 0; k < 2*n; k++ {
		f.S[k] = addVar(fmt.Sprintf("s_%s", f.opName(k)), model.Continuous, est(k), lst(k))
	}
	f.T = addVar("T", model.Continuous, math.Max(est(2*n-1)+f.u[2*n-1], un.Secs(o.Lower)), math.Max(up, est(2*n-1)+f.u[2*n-1]))
	nc := len(f.J)
	f.O, f.A, f.B = make([]model.Var, nc), make([]model.Var, nc), make([]model.Var, nc)
	for c, j := range f.J {
		f.O[c] = addVar(fmt.Sprintf("o_%d", j), model.Binary, 0, 1)
		bj := lst(f.pos(j, true))
		f.A[c] = addVar(fmt.Sprintf("a_%d", j), model.Continuous, endF(j-1), bj)
		f.B[c] = addVar(fmt.Sprintf("b_%d", j), model.Continuous, endF(j), bj)
	}
	var e model.Expr
	row := func() *model.Expr { e.Reset(); return &e }
	obj := model.Expr{}
	obj.Add(f.T, 1)
	m.SetObjective(model.Minimize, obj)
	// The compute sequence and the makespan.
	for k := 0; k+1 < 2*n; k++ {
		m.AddGE(fmt.Sprintf("seq_%d", k), *row().Add(f.S[k+1], 1).Add(f.S[k], -1), f.u[k])
	}
	m.AddGE("makespan", *row().Add(f.T, 1).Add(f.S[2*n-1], -1), f.u[2*n-1])
	if !o.Plain {
		for k := 0; k+1 < 2*n; k++ {
			m.AddGE(fmt.Sprintf("tail_%d", k), *row().Add(f.T, 1).Add(f.S[k], -1), un.Secs(tail[k]))
		}
	}
	// Transfers of each candidate: offload after F_{j−1}, prefetch after the offload and after
	// F_j (x_j left the GPU), ending before B_j.
	for c, j := range f.J {
		d := f.dur(j)
		if j > 0 {
			m.AddGE(fmt.Sprintf("produced_%d", j), *row().Add(f.A[c], 1).Add(f.S[f.pos(j-1, false)], -1), f.u[f.pos(j-1, false)])
		}
		m.AddGE(fmt.Sprintf("offload_first_%d", j), *row().Add(f.B[c], 1).Add(f.A[c], -1).Add(f.O[c], -d), 0)
		m.AddGE(fmt.Sprintf("read_first_%d", j), *row().Add(f.B[c], 1).Add(f.S[f.pos(j, false)], -1), f.u[f.pos(j, false)])
		m.AddGE(fmt.Sprintf("back_%d", j), *row().Add(f.S[f.pos(j, true)], 1).Add(f.B[c], -1).Add(f.O[c], -d), 0)
	}
	phases := []func(){f.positionRows, f.memoryRows}
	if !o.Interruptible {
		phases = append([]func(){func() { f.linkRows(lst, endF) }}, phases...)
	}
	if !o.Plain || o.Interruptible {
		phases = append(phases, f.energyRows, f.bucketRows)
	}
	if !o.Plain && !o.Interruptible {
		phases = append(phases, f.symmetryRows)
	}
	for _, phase := range phases {
		if f.halted() {
			break
		}
		phase()
	}
	if f.halt != nil {
		return nil, f.halt
	}
	if err := m.Err(); err != nil {
		return nil, fmt.Errorf("actmilp: %w", err)
	}
	return f, nil
}

func (f *Formulation) opName(k int) string {
	if k < f.n {
		return fmt.Sprintf("F%d", k)
	}
	return fmt.Sprintf("B%d", 2*f.n-1-k)
}

// tvar returns the start variable of transfer t and its candidate.
func (f *Formulation) tvar(t int) (model.Var, int) {
	c := t / 2
	if t%2 == 0 {
		return f.A[c], c
	}
	return f.B[c], c
}

func (f *Formulation) tname(t int) string {
	if t%2 == 0 {
		return fmt.Sprintf("O%d", f.J[t/2])
	}
	return fmt.Sprintf("P%d", f.J[t/2])
}

// Lambda returns the order variable "transfer t ends before t' starts, both exist", or -1 when
// that order is impossible (or t = t').
func (f *Formulation) Lambda(t, t2 int) model.Var {
	if v, ok := f.lam[[2]int{t, t2}]; ok {
		return v
	}
	return -1
}

// linkRows writes one transfer at a time (001 (B)): for every pair of transfers of two
// candidates (and the two of one), binaries λ_{tt'} ("t ends before t' starts", both exist) with
// λ_{tt'} + λ_{t't} ≥ o + o' − 1 and λ ≤ o, o'; and the disjunction
// τ_{t'} ≥ τ_t + d_t − M_{tt'}(1 − λ_{tt'}), M_{tt'} = d_t + ub(τ_t) − lb(τ_{t'}). An order
// that the time windows of existing transfers forbid is fixed to 0.
func (f *Formulation) linkRows(lst func(int) float64, endF func(int) float64) {
	m := f.Model
	nt := 2 * len(f.J)
	// Windows of existing transfers: the offload in [end F_{j−1}, lst(B_j) − 2d], the prefetch
	// in [max(end F_j, end F_{j−1} + d), lst(B_j) − d].
	lo, hi := make([]float64, nt), make([]float64, nt)
	for c, j := range f.J {
		d := f.dur(j)
		bj := lst(f.pos(j, true))
		lo[2*c], hi[2*c] = endF(j-1), bj-2*d
		lo[2*c+1], hi[2*c+1] = math.Max(endF(j), endF(j-1)+d), bj-d
	}
	dur := func(t int) float64 { return f.dur(f.J[t/2]) }
	eps := 1e-9 * math.Max(1, f.Units.Secs(f.Upper))
	for t := 0; t < nt; t++ {
		if f.halted() {
			return
		}
		for t2 := 0; t2 < nt; t2++ {
			if t == t2 || (t2 == t+1 && t%2 == 0) || (t == t2+1 && t2%2 == 0) {
				continue // the offload of x_j precedes its prefetch (rows offload_first, back)
			}
			if lo[t]+dur(t) > hi[t2]+eps {
				continue // t cannot end before t' starts
			}
			_, c := f.tvar(t)
			_, c2 := f.tvar(t2)
			v := m.AddBinary(fmt.Sprintf("lam_%s_%s", f.tname(t), f.tname(t2)))
			f.lb[v], f.ub[v] = 0, 1
			f.lam[[2]int{t, t2}] = v
			m.AddLE(fmt.Sprintf("lamo_%s_%s", f.tname(t), f.tname(t2)), *new(model.Expr).Add(v, 1).Add(f.O[c], -1), 0)
			m.AddLE(fmt.Sprintf("lamp_%s_%s", f.tname(t), f.tname(t2)), *new(model.Expr).Add(v, 1).Add(f.O[c2], -1), 0)
		}
	}
	for t := 0; t < nt; t++ {
		if f.halted() {
			return
		}
		for t2 := t + 1; t2 < nt; t2++ {
			if t2 == t+1 && t%2 == 0 {
				continue
			}
			_, c := f.tvar(t)
			_, c2 := f.tvar(t2)
			e := model.Expr{}
			if v := f.Lambda(t, t2); v >= 0 {
				e.Add(v, 1)
			}
			if v := f.Lambda(t2, t); v >= 0 {
				e.Add(v, 1)
			}
			e.Add(f.O[c], -1).Add(f.O[c2], -1)
			m.AddGE(fmt.Sprintf("order_%s_%s", f.tname(t), f.tname(t2)), e, -1)
		}
	}
	// In a fixed order (not the map's), so that the model and its files are the same each run.
	for t := 0; t < nt; t++ {
		if f.halted() {
			return
		}
		for t2 := 0; t2 < nt; t2++ {
			v := f.Lambda(t, t2)
			if v < 0 {
				continue
			}
			a, _ := f.tvar(t)
			b, _ := f.tvar(t2)
			bigM := math.Max(0, dur(t)+f.ub[a]-f.lb[b])
			// τ' − τ − (d + M) λ ≥ −M
			m.AddGE(fmt.Sprintf("link_%s_%s", f.tname(t), f.tname(t2)),
				*new(model.Expr).Add(b, 1).Add(a, -1).Add(v, -(dur(t) + bigM)), -bigM)
		}
	}
}

// Positions of the events relative to the tight operations. For candidate c (x_j) and every
// tight position k in its window:
//
//	R_{c,k} = 1  ⇒  x_j was released by the start of k: a_j + d_j ≤ s_k (F_j has ended: k > F_j)
//	P_{c,k} = 1  ⇔  its prefetch started before s_k (b_j ≤ s_k; else b_j ≥ s_k)
//	Q_{c,k} = 1  ⇔  its prefetch started before the end of k (b_j ≤ s_k + u_k; else ≥); Q = P
//	                when u_k = 0 (a zero-length operation has no "during")
//
// monotone along the window: P ≤ Q ≤ P_next ≤ … ≤ o_j, R ≤ R_next ≤ o_j, P ≤ R, Q ≤ R_next.
func (f *Formulation) positionRows() {
	m := f.Model
	f.kpos = make([][]int, len(f.J))
	for c, j := range f.J {
		if f.halted() {
			return
		}
		for k := j + 1; k <= 2*f.n-2-j; k++ {
			if f.Tight[k] {
				f.kpos[c] = append(f.kpos[c], k)
			}
		}
		var chainP, chainR []model.Var
		for _, k := range f.kpos[c] {
			r := m.AddBinary(fmt.Sprintf("R_%d_%s", j, f.opName(k)))
			pv := m.AddBinary(fmt.Sprintf("P_%d_%s", j, f.opName(k)))
			q := pv
			if f.u[k] > 0 {
				q = m.AddBinary(fmt.Sprintf("Q_%d_%s", j, f.opName(k)))
			}
			for _, v := range []model.Var{r, pv, q} {
				f.lb[v], f.ub[v] = 0, 1
			}
			f.rel[[2]int{c, k}], f.pre[[2]int{c, k}], f.qre[[2]int{c, k}] = r, pv, q
			chainP = append(chainP, pv)
			if q != pv {
				chainP = append(chainP, q)
			}
			chainR = append(chainR, r)
			m.AddLE(fmt.Sprintf("pre_after_rel_%d_%s", j, f.opName(k)), *new(model.Expr).Add(pv, 1).Add(r, -1), 0)
			d := f.dur(j)
			s := f.S[k]
			a, b := f.A[c], f.B[c]
			// R ⇒ a + d ≤ s:   a − s + (d + M) R ≤ M,  M = ub(a) − lb(s)
			bm := math.Max(0, f.ub[a]-f.lb[s])
			m.AddLE(fmt.Sprintf("rel_%d_%s", j, f.opName(k)), *new(model.Expr).Add(a, 1).Add(s, -1).Add(r, d+bm), bm)
			// P ⇒ b ≤ s:   b − s + M P ≤ M
			bm = math.Max(0, f.ub[b]-f.lb[s])
			m.AddLE(fmt.Sprintf("pre1_%d_%s", j, f.opName(k)), *new(model.Expr).Add(b, 1).Add(s, -1).Add(pv, bm), bm)
			// ¬P ⇒ b ≥ s:  s − b − M P ≤ 0
			bm = math.Max(0, f.ub[s]-f.lb[b])
			m.AddLE(fmt.Sprintf("pre0_%d_%s", j, f.opName(k)), *new(model.Expr).Add(s, 1).Add(b, -1).Add(pv, -bm), 0)
			if q != pv {
				u := f.u[k]
				// Q ⇒ b ≤ s + u:  b − s + M Q ≤ u + M
				bm = math.Max(0, f.ub[b]-f.lb[s]-u)
				m.AddLE(fmt.Sprintf("qre1_%d_%s", j, f.opName(k)), *new(model.Expr).Add(b, 1).Add(s, -1).Add(q, bm), u+bm)
				// ¬Q ⇒ b ≥ s + u:  s − b − M Q ≤ −u
				bm = math.Max(0, f.ub[s]+u-f.lb[b])
				m.AddLE(fmt.Sprintf("qre0_%d_%s", j, f.opName(k)), *new(model.Expr).Add(s, 1).Add(b, -1).Add(q, -bm), -u)
			}
		}
		chainP = append(chainP, f.O[c])
		for x := 0; x+1 < len(chainP); x++ {
			m.AddLE(fmt.Sprintf("mono_p_%d_%d", j, x), *new(model.Expr).Add(chainP[x], 1).Add(chainP[x+1], -1), 0)
		}
		chainR = append(chainR, f.O[c])
		for x := 0; x+1 < len(chainR); x++ {
			m.AddLE(fmt.Sprintf("mono_r_%d_%d", j, x), *new(model.Expr).Add(chainR[x], 1).Add(chainR[x+1], -1), 0)
		}
		// The prefetch started before the end of k: x_j had been released by the next start.
		ks := f.kpos[c]
		for x := 0; x+1 < len(ks); x++ {
			q, r := f.qre[[2]int{c, ks[x]}], f.rel[[2]int{c, ks[x+1]}]
			m.AddLE(fmt.Sprintf("rel_before_%d_%s", j, f.opName(ks[x])), *new(model.Expr).Add(q, 1).Add(r, -1), 0)
		}
	}
}

// pTerm adds coef × [prefetch of candidate c started before the start of position k] to e: 0
// up to F_j, o_j from B_j on, the variable P in between (k must then be tight).
func (f *Formulation) pTerm(e *model.Expr, c, k int, coef float64) {
	f.prefetchTerm(e, f.pre, "P", c, k, coef)
}

// qTerm is pTerm for "started before the end of k" (the variable Q).
func (f *Formulation) qTerm(e *model.Expr, c, k int, coef float64) {
	f.prefetchTerm(e, f.qre, "Q", c, k, coef)
}

// prefetchTerm is pTerm and qTerm: vars holds the variable (P or Q, named so in the panic)
// for the positions strictly inside x_j's window.
func (f *Formulation) prefetchTerm(e *model.Expr, vars map[[2]int]model.Var, name string, c, k int, coef float64) {
	j := f.J[c]
	switch {
	case k <= j:
	case k >= f.pos(j, true):
		e.Add(f.O[c], coef)
	default:
		v, ok := vars[[2]int{c, k}]
		if !ok {
			panic(fmt.Sprintf("actmilp: no %s variable for x_%d at position %d", name, j, k))
		}
		e.Add(v, coef)
	}
}

// prefetchPositions returns, for candidate c, the tight places where its prefetch may start:
// during a tight operation k of its window (gap = false) or in a tight gap after k (gap = true),
// each with its memory at rest with everything on the GPU (m_k, resp. g_k) and the expression
// of "the prefetch starts there" added by add.
type place struct {
	k   int
	gap bool
}

func (f *Formulation) places(c int) []place {
	j := f.J[c]
	var out []place
	for k := j; k <= 2*f.n-2-j; k++ {
		if k > j && f.Tight[k] {
			out = append(out, place{k, false})
		}
		if f.TightGap[k] {
			out = append(out, place{k, true})
		}
	}
	return out
}

// addPlace adds coef × [the prefetch of c starts at place pl] to e.
func (f *Formulation) addPlace(e *model.Expr, c int, pl place, coef float64) {
	if pl.gap {
		f.pTerm(e, c, pl.k+1, coef)
		f.qTerm(e, c, pl.k, -coef)
		return
	}
	f.qTerm(e, c, pl.k, coef)
	f.pTerm(e, c, pl.k, -coef)
}

// inWindowPlace says whether x_j may be away at place pl.
func (f *Formulation) inWindowPlace(j int, pl place) bool {
	if pl.gap {
		return f.gapInWindow(j, pl.k)
	}
	return f.inWindow(j, pl.k)
}

// memoryRows writes M_GPU at every event that allocates: the start of every tight operation
// k, m_k − Σ_{x_i away} |x_i| ≤ M_GPU with away = R − P; and the start of every prefetch, whose
// memory is that of the place it starts in (m_k during operation k, g_k in the gap after it)
// minus what is away then: w_{i,j} ≤ λ_{O(i),P(j)} − λ_{P(i),P(j)} (offload of x_i before, its
// prefetch not) and w_{i,j} ≤ [the prefetch of x_j starts at a place of x_i's window].
func (f *Formulation) memoryRows() {
	m := f.Model
	p := f.Problem
	M := f.Units.Mem(p.MGPU)
	for k := 0; k < 2*f.n; k++ {
		if f.halted() {
			return
		}
		if !f.Tight[k] {
			continue
		}
		e := model.Expr{}
		for c, j := range f.J {
			if f.inWindow(j, k) {
				x := f.Units.Mem(p.X[j])
				e.Add(f.rel[[2]int{c, k}], x)
				e.Add(f.pre[[2]int{c, k}], -x)
			}
		}
		m.AddGE(fmt.Sprintf("mem_%s", f.opName(k)), e, f.m[k]-M)
	}
	for c2, j2 := range f.J {
		if f.halted() {
			return
		}
		pls := f.places(c2)
		if len(pls) == 0 || f.Options.Interruptible {
			continue
		}
		e := model.Expr{}
		for _, pl := range pls {
			mem := f.m[pl.k]
			if pl.gap {
				mem = f.Units.Mem(f.g[pl.k])
			}
			f.addPlace(&e, c2, pl, mem)
		}
		for c, j := range f.J {
			if c == c2 {
				continue
			}
			var where model.Expr
			for _, pl := range pls {
				if f.inWindowPlace(j, pl) {
					f.addPlace(&where, c2, pl, 1)
				}
			}
			lo := f.Lambda(2*c, 2*c2+1)
			if len(where.Terms) == 0 || lo < 0 {
				continue
			}
			w := m.AddContinuous(fmt.Sprintf("w_%d_%d", j, j2), 0, 1)
			f.lb[w], f.ub[w] = 0, 1
			f.away[[2]int{c, c2}] = w
			r := *new(model.Expr).Add(w, 1).Add(lo, -1)
			if v := f.Lambda(2*c+1, 2*c2+1); v >= 0 {
				r.Add(v, 1)
			}
			m.AddLE(fmt.Sprintf("w_order_%d_%d", j, j2), r, 0)
			where.Add(w, -1)
			m.AddGE(fmt.Sprintf("w_where_%d_%d", j, j2), where, 0)
			e.Add(w, -f.Units.Mem(p.X[j]))
		}
		m.AddLE(fmt.Sprintf("mem_pre_%d", j2), e, M)
	}
}

// energyRows are valid inequalities (docs/act-offload.md): the link moves one transfer at a
// time, so for a tight operation k and a candidate q,
//
//	Σ_{i ≥ q} d_i R_{i,k} ≤ s_k − end(F_{q−1})                (offloads released by s_k)
//	Σ_{i ≥ q} d_i (o_i − P_{i,k}) ≤ s_{B_q} − s_k            (prefetches not started by s_k)
//	Σ_{i ≥ q} 2 d_i o_i ≤ s_{B_q} − end(F_{q−1})              (whole round trips)
//
// each offload of x_i (i ≥ q) starting after F_{q−1} and each prefetch ending before B_i,
// which is not after B_q.
func (f *Formulation) energyRows() {
	m := f.Model
	for cq, q := range f.J {
		if f.halted() {
			return
		}
		e := model.Expr{}
		e.Add(f.S[f.pos(q, true)], 1)
		rhs := 0.0
		if q > 0 {
			e.Add(f.S[f.pos(q-1, false)], -1)
			rhs = f.u[f.pos(q-1, false)]
		}
		for c := cq; c < len(f.J); c++ {
			e.Add(f.O[c], -2*f.dur(f.J[c]))
		}
		m.AddGE(fmt.Sprintf("round_trips_%d", q), e, rhs)
	}
	for k := 0; k < 2*f.n; k++ {
		if f.halted() {
			return
		}
		if !f.Tight[k] {
			continue
		}
		for cq, q := range f.J {
			if f.halted() {
				return
			}
			if f.inWindow(q, k) {
				e := model.Expr{}
				e.Add(f.S[k], 1)
				rhs := 0.0
				if q > 0 {
					e.Add(f.S[f.pos(q-1, false)], -1)
					rhs = f.u[f.pos(q-1, false)]
				}
				for c := cq; c < len(f.J); c++ {
					if f.inWindow(f.J[c], k) {
						e.Add(f.rel[[2]int{c, k}], -f.dur(f.J[c]))
					}
				}
				m.AddGE(fmt.Sprintf("energy_off_%s_%d", f.opName(k), q), e, rhs)
			}
			if k < f.pos(q, true) {
				e := model.Expr{}
				e.Add(f.S[f.pos(q, true)], 1).Add(f.S[k], -1)
				for c := cq; c < len(f.J); c++ {
					j := f.J[c]
					if k >= f.pos(j, true) {
						continue
					}
					e.Add(f.O[c], -f.dur(j))
					f.pTerm(&e, c, k, f.dur(j))
				}
				m.AddGE(fmt.Sprintf("energy_pre_%s_%d", f.opName(k), q), e, 0)
			}
		}
	}
}

// symmetryRows: for two candidates i < j of equal size, if the offload of x_j precedes that
// of x_i on the link, so does the prefetch of x_j (λ_{O(j),O(i)} ≤ λ_{P(j),O(i)}). Exchanging
// the two offloads' slots otherwise gives a valid schedule with the same operation times and
// fewer inversions (docs/act-offload.md, "Order of transfers").
func (f *Formulation) symmetryRows() {
	m := f.Model
	bySize := map[int64][]int{}
	for c, j := range f.J {
		bySize[f.Problem.X[j]] = append(bySize[f.Problem.X[j]], c)
	}
	sizes := make([]int64, 0, len(bySize))
	for s := range bySize {
		sizes = append(sizes, s)
	}
	sort.Slice(sizes, func(a, b int) bool { return sizes[a] < sizes[b] })
	for _, s := range sizes {
		if f.halted() {
			return
		}
		cs := bySize[s]
		for x := 0; x < len(cs); x++ {
			for y := x + 1; y < len(cs); y++ {
				ci, cj := cs[x], cs[y] // J increasing: J[ci] < J[cj]
				l1 := f.Lambda(2*cj, 2*ci)
				if l1 < 0 {
					continue
				}
				e := *new(model.Expr).Add(l1, 1)
				if l2 := f.Lambda(2*cj+1, 2*ci); l2 >= 0 {
					e.Add(l2, -1)
				}
				m.AddLE(fmt.Sprintf("sym_%d_%d", f.J[ci], f.J[cj]), e, 0)
			}
		}
	}
}

// bucketRows embed the interruptible relaxation (001 §5) in the model as valid inequalities
// without big-M: z_{t,k} ≥ 0 is the part of transfer t the link does in the interval
// [s_k, s_{k+1}) of the compute sequence (k = −1 is [0, s_0), k = 2n−1 is [s_{2n−1}, T)):
//
//	Σ_t z_{t,k} ≤ s_{k+1} − s_k                  one transfer at a time
//	Σ_k z_{t,k} = d_j o_j                        every transfer done whole
//	z_{O(j),j−1} ≤ s_j − s_{j−1} − u_{F_{j−1}}    the offload after F_{j−1} has ended
//	z_{P(j),j}   ≤ s_{j+1} − s_j − u_{F_j}        the prefetch after F_j has ended
//	d_j R_{j,k} ≤ Σ_{k'<k} z_{O(j),k'}            released by s_k: offloaded by then
//	Σ_{k'<k} z_{P(j),k'} ≤ d_j P_{j,k}             prefetch work before s_k: started before s_k
//	Σ_{k'<k} z_{P(j),k'} ≤ Σ_{k'<k} z_{O(j),k'}    a prefetch after its offload
//
// with z_{O(j),k} only for k from j−1 and z_{P(j),k} from j, both up to B_j's interval
// (excluded). A schedule gives z by cutting each transfer at the operation starts.
func (f *Formulation) bucketRows() {
	m := f.Model
	n := f.n
	// interval k is [start(k), start(k+1)); start(−1) = 0, start(2n) = T.
	startVar := func(k int) (model.Var, bool) {
		switch {
		case k < 0:
			return 0, false
		case k >= 2*n:
			return f.T, true
		}
		return f.S[k], true
	}
	zs := make([][]model.Var, 2*n+1) // by interval k+1
	type tz struct {
		first int
		z     []model.Var
	}
	off, pre := make([]tz, len(f.J)), make([]tz, len(f.J))
	for c, j := range f.J {
		if f.halted() {
			return
		}
		last := f.pos(j, true) - 1
		d := f.dur(j)
		for _, isPre := range []bool{false, true} {
			first := j - 1
			name := "zO"
			if isPre {
				first, name = j, "zP"
			}
			var vs []model.Var
			for k := first; k <= last; k++ {
				v := m.AddContinuous(fmt.Sprintf("%s_%d_%d", name, j, k+1), 0, d)
				f.lb[v], f.ub[v] = 0, d
				vs = append(vs, v)
				zs[k+1] = append(zs[k+1], v)
				t := 2 * c
				if isPre {
					t++
				}
				f.zvar[[2]int{t, k + 1}] = v
			}
			e := model.Expr{}
			for _, v := range vs {
				e.Add(v, 1)
			}
			e.Add(f.O[c], -d)
			m.AddEq(fmt.Sprintf("%s_done_%d", name, j), e, 0)
			if isPre {
				pre[c] = tz{first, vs}
			} else {
				off[c] = tz{first, vs}
			}
		}
		// After the producer's (resp. the reader's) end.
		if j > 0 {
			e := *new(model.Expr).Add(off[c].z[0], 1).Add(f.S[j-1], 1).Add(f.S[j], -1)
			m.AddLE(fmt.Sprintf("zO_after_%d", j), e, -f.u[j-1])
		}
		e := *new(model.Expr).Add(pre[c].z[0], 1).Add(f.S[j], 1).Add(f.S[j+1], -1)
		m.AddLE(fmt.Sprintf("zP_after_%d", j), e, -f.u[j])
		// Cumulative links at the tight starts, and prefetch work never ahead of offload work.
		cum := func(t tz, k int, e *model.Expr, coef float64) {
			for x, v := range t.z {
				if t.first+x < k {
					e.Add(v, coef)
				}
			}
		}
		for _, k := range f.kpos[c] {
			e := model.Expr{}
			cum(off[c], k, &e, 1)
			e.Add(f.rel[[2]int{c, k}], -d)
			m.AddGE(fmt.Sprintf("z_rel_%d_%s", j, f.opName(k)), e, 0)
			e = model.Expr{}
			cum(pre[c], k, &e, 1)
			e.Add(f.pre[[2]int{c, k}], -d)
			m.AddLE(fmt.Sprintf("z_pre_%d_%s", j, f.opName(k)), e, 0)
		}
		for k := j + 1; k <= last; k++ {
			e := model.Expr{}
			cum(pre[c], k, &e, 1)
			cum(off[c], k, &e, -1)
			if len(e.Terms) > 0 {
				m.AddLE(fmt.Sprintf("z_order_%d_%d", j, k), e, 0)
			}
		}
	}
	for k := -1; k < 2*n; k++ {
		if len(zs[k+1]) == 0 {
			continue
		}
		e := model.Expr{}
		for _, v := range zs[k+1] {
			e.Add(v, 1)
		}
		hi, _ := startVar(k + 1)
		e.Add(hi, -1)
		if lo, ok := startVar(k); ok {
			e.Add(lo, 1)
		}
		m.AddLE(fmt.Sprintf("link_cap_%d", k+1), e, 0)
	}
}
