package pipemilp

import (
	"fmt"
	"math"

	"github.com/memsched/memsched/instances"
	pl "github.com/memsched/memsched/instances/pipeline"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/model"
)

// Contiguous is the MILP of the contiguous allocations of a pipeline problem under its named
// schedule (docs/pipeline.md, "The MILPs"): its optimum is the least makespan of one iteration
// over every contiguous allocation on at most P GPUs, each part storing everything (Remat
// false: exact), or a lower bound on it whatever each part stores or recomputes (Remat true:
// durations and memory relaxed).
//
// Positions j = 0..J−1 (J = min(P, L)) count the GPUs from the last one: position 0 runs stage
// L and the loss stage, position j the part j places before it; a plan of S parts uses
// positions 0..S−1 (GPU k = S−1−j), the others stay empty. Binaries z_{ℓ,j} (j ≥ 1) say that
// stage ℓ sits at position j or above (z_{ℓ,0} = 1); stage ℓ is at position j when
// y_{ℓ,j} = z_{ℓ,j} − z_{ℓ,j+1} = 1, and a cut after ℓ crosses from position j+1 to j when
// x_{ℓ,j} = z_{ℓ,j+1} − z_{ℓ+1,j+1} = 1 (no gap between positions: z_{ℓ+1,j} ≥ z_{ℓ,j+1}).
// In 1F1B the order of position j depends on j alone (warm-up min(m, j+1) = min(m, S−k)); an
// empty position has zero durations and no cut, and delays nobody (its order runs every
// forward it passes on before the backward it waits for). Continuous event times follow the
// replay exactly: every action starts after its predecessor in its GPU's order and after its
// input, each link carries the transfers in order (r ≥ r_prev + c), and the makespan C ends
// every backward. Since every timing row is "later than", C's least value for a fixed
// allocation is the replay's makespan.
type Contiguous struct {
	Model *model.Model
	Units milp.Units
	// J is the number of positions, Remat whether the model is the relaxation.
	J     int
	Remat bool
	p     *pl.Problem
	z     [][]model.Var // z[ℓ][j], ℓ = 1..L, j = 1..J−1; none where ℓ > L−j (fixed 0)
	tF    [][]model.Var // [j][μ]: start of F at position j
	tB    [][]model.Var
	rF    [][]model.Var // [j][μ]: a^{e}(μ) arrives at position j−1 (j ≥ 1)
	rB    [][]model.Var // [j][μ]: δ(μ) arrives at position j+1 (j ≤ J−2)
	fd    []model.Var   // F and B durations of each position
	bd    []model.Var
	cf    []model.Var // [j]: transfer times of the cut between positions j+1 and j
	cb    []model.Var
	C     model.Var
	// defs define the auxiliary variables from the binaries, in order, and edges are the
	// timing rows as "to ≥ from + Σ dur": Point evaluates them.
	defs  []def
	edges []edge
}

// def is an auxiliary variable v = expr (max: v = max over parts, v ≥ each).
type def struct {
	v     model.Var
	parts []model.Expr
	max   bool
}

func cloneExpr(e model.Expr) model.Expr {
	return model.Expr{Terms: append([]model.Term(nil), e.Terms...), Constant: e.Constant}
}

// define adds the row v = e and records it.
func (f *Contiguous) define(name string, v model.Var, e model.Expr) {
	f.defs = append(f.defs, def{v: v, parts: []model.Expr{cloneExpr(e)}})
	e.Add(v, -1)
	f.Model.AddEq(name, e, 0)
}

// edge is one timing row: v[to] ≥ v[from] + Σ v[dur] (from = none: ≥ Σ v[dur]).
type edge struct {
	to, from model.Var
	dur      []model.Var
}

const none = model.Var(-1)

// Units returns the units the models of p are written in: chosen from every size, the budget,
// the durations and the transfer times (milp.ChooseUnits).
func Units(p *pl.Problem) milp.Units {
	c := p.Chain
	sizes := []int64{c.A0, c.Delta0, p.Memory}
	var times []float64
	for l := 1; l <= c.Len(); l++ {
		st := c.Stage(l)
		sizes = append(sizes, st.A, st.ABar, st.Delta, st.OF, st.OB, st.W)
		times = append(times, st.UF, st.UB)
		if l < c.Len()-1 {
			cf, cb := p.CutTimes(l)
			times = append(times, cf, cb)
		}
	}
	return milp.ChooseUnits(sizes, times)
}

// stageK returns K_ℓ, what the operations of stage ℓ add on top of what a part storing
// everything holds up to ā^ℓ: max(o_f^ℓ, δ^ℓ + δ^{ℓ−1} + o_b^ℓ) (instances/pipeline
// StoreAllCosts: the peak of a part is max_ℓ (input + Σ_{first≤i≤ℓ} ā^i + K_ℓ)).
func stageK(c *instances.Chain, l int) int64 {
	st := c.Stage(l)
	return max(st.OF, c.SizeDelta(l)+c.SizeDelta(l-1)+st.OB)
}

// stageKRelaxed returns K'_ℓ, the least any sequence holds during stage ℓ's own operations
// beyond the part's input: max(a^ℓ + o_f^ℓ, ā^ℓ + δ^ℓ + δ^{ℓ−1} + o_b^ℓ) — F^ℓ writes at
// least the plain a^ℓ, B^ℓ reads ā^ℓ and δ^ℓ and writes δ^{ℓ−1}; for the loss stage plus a^L,
// its input, which no operation of the part can drop before B^{L+1}.
func stageKRelaxed(c *instances.Chain, l int) int64 {
	st := c.Stage(l)
	k := max(st.A+st.OF, st.ABar+c.SizeDelta(l)+c.SizeDelta(l-1)+st.OB)
	if l == c.Len() {
		k += c.SizeA(l - 1)
	}
	return k
}

// ContiguousOptions choose the model.
type ContiguousOptions struct {
	// Remat relaxes the model to every sequence per part: durations at least storing
	// everything's, memory at least Σw + (n−1)·(input + output) + input + K'_ℓ (a lower bound).
	Remat bool
	// MaxMemory caps the model's estimated memory (milp.ModelBytes; 0: none): above it the
	// build fails with a *TooLargeError before allocating.
	MaxMemory int64
}

// TooLargeError is a model whose estimated memory passes the cap.
type TooLargeError struct {
	What     string
	Nonzeros int
	Bytes    int64
	Limit    int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("pipemilp: the %s model would have about %d nonzeros (%s), above the memory limit of %s (--max-memory)",
		e.What, e.Nonzeros, instances.FormatSize(e.Bytes), instances.FormatSize(e.Limit))
}

// ContiguousNonzeros estimates the nonzeros of BuildContiguous's model for p.
func ContiguousNonzeros(p *pl.Problem) int {
	L, m := p.L(), p.MicroBatches
	J := min(p.GPUs, L)
	return J*(16*m+10*L) + 6*L*J
}

// BuildContiguous returns the contiguous MILP of p.
func BuildContiguous(p *pl.Problem, o ContiguousOptions) (*Contiguous, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if nnz := ContiguousNonzeros(p); o.MaxMemory > 0 && milp.ModelBytes(nnz) > o.MaxMemory {
		return nil, &TooLargeError{"contiguous", nnz, milp.ModelBytes(nnz), o.MaxMemory}
	}
	c := p.Chain
	L, m := p.L(), p.MicroBatches
	J := min(p.GPUs, L)
	un := Units(p)
	f := &Contiguous{J: J, Remat: o.Remat, p: p, Units: un}
	name := "pipeline-contiguous"
	if o.Remat {
		name += "-relaxed"
	}
	mod := model.New(fmt.Sprintf("%s L=%d P=%d m=%d %s", name, L, p.GPUs, m, p.Schedule))
	mod.Comments = append(mod.Comments, un.Comment())
	f.Model = mod
	secs := func(s float64) float64 { return un.Secs(s) }
	free := math.IsInf(p.Bandwidth, 1)

	// z[ℓ][j].
	f.z = make([][]model.Var, L+2)
	for l := 1; l <= L; l++ {
		f.z[l] = make([]model.Var, J)
		for j := range f.z[l] {
			f.z[l][j] = none
			if j >= 1 && l <= L-j {
				f.z[l][j] = mod.AddBinary(fmt.Sprintf("z_%d_%d", l, j))
			}
		}
	}
	// zt adds coef·z_{ℓ,j} to e (z_{ℓ,0} = 1, z_{ℓ,j} = 0 beyond the variables).
	zt := func(e *model.Expr, l, j int, coef float64) {
		switch {
		case j == 0:
			e.Constant += coef
		case j >= J || l > L || f.z[l][j] == none:
		default:
			e.Add(f.z[l][j], coef)
		}
	}
	yt := func(e *model.Expr, l, j int, coef float64) { zt(e, l, j, coef); zt(e, l, j+1, -coef) }
	xt := func(e *model.Expr, l, j int, coef float64) { zt(e, l, j+1, coef); zt(e, l+1, j+1, -coef) }
	// st: stage ℓ starts position j.
	stt := func(e *model.Expr, l, j int, coef float64) {
		if l == 1 {
			yt(e, 1, j, coef)
		} else {
			xt(e, l-1, j, coef)
		}
	}
	var e model.Expr
	row := func() *model.Expr { e.Reset(); return &e }
	for l := 1; l <= L; l++ {
		for j := 1; j < J; j++ {
			if f.z[l][j] == none {
				continue
			}
			if j+1 < J && f.z[l][j+1] != none {
				mod.AddGE(fmt.Sprintf("zpos_%d_%d", l, j), *row().Add(f.z[l][j], 1).Add(f.z[l][j+1], -1), 0)
			}
			if l < L && f.z[l+1][j] != none {
				mod.AddGE(fmt.Sprintf("zorder_%d_%d", l, j), *row().Add(f.z[l][j], 1).Add(f.z[l+1][j], -1), 0)
			}
		}
		// No gap: z_{ℓ+1,j} ≥ z_{ℓ,j+1}.
		for j := 1; j+1 < J && l < L; j++ {
			if f.z[l][j+1] == none {
				continue
			}
			r := row()
			zt(r, l+1, j, 1)
			r.Add(f.z[l][j+1], -1)
			mod.AddGE(fmt.Sprintf("zgap_%d_%d", l, j), *r, 0)
		}
	}
	// Durations and cut times of each position.
	f.fd, f.bd = make([]model.Var, J), make([]model.Var, J)
	for j := 0; j < J; j++ {
		f.fd[j] = mod.AddContinuous(fmt.Sprintf("F_%d", j), 0, math.Inf(1))
		f.bd[j] = mod.AddContinuous(fmt.Sprintf("B_%d", j), 0, math.Inf(1))
		rf, rb := row(), model.Expr{}
		for l := 1; l <= L; l++ {
			st := c.Stage(l)
			yt(rf, l, j, secs(st.UF))
			yt(&rb, l, j, secs(st.UB))
		}
		if j == 0 {
			rf.Constant += secs(c.Stage(L + 1).UF)
			rb.Constant += secs(c.Stage(L + 1).UB)
		}
		f.define(fmt.Sprintf("Fdef_%d", j), f.fd[j], *rf)
		f.define(fmt.Sprintf("Bdef_%d", j), f.bd[j], rb)
	}
	f.cf, f.cb = make([]model.Var, J), make([]model.Var, J)
	for j := 0; j+1 < J; j++ {
		f.cf[j], f.cb[j] = none, none
		if free {
			continue
		}
		f.cf[j] = mod.AddContinuous(fmt.Sprintf("cf_%d", j), 0, math.Inf(1))
		f.cb[j] = mod.AddContinuous(fmt.Sprintf("cb_%d", j), 0, math.Inf(1))
		rf, rb := row(), model.Expr{}
		for l := 1; l < L; l++ {
			af, ab := p.CutTimes(l)
			xt(rf, l, j, secs(af))
			xt(&rb, l, j, secs(ab))
		}
		f.define(fmt.Sprintf("cfdef_%d", j), f.cf[j], *rf)
		f.define(fmt.Sprintf("cbdef_%d", j), f.cb[j], rb)
	}
	f.buildMemory(zt, yt, xt, stt)
	f.buildTiming()
	mod.SetObjective(model.Minimize, *row().Add(f.C, 1))
	return f, mod.Err()
}

// buildMemory adds each position's memory rows.
func (f *Contiguous) buildMemory(zt, yt, xt, stt func(e *model.Expr, l, j int, coef float64)) {
	p, mod, un := f.p, f.Model, f.Units
	c := p.Chain
	L, J := p.L(), f.J
	mem := func(b int64) float64 { return un.Mem(b) }
	var e model.Expr
	row := func() *model.Expr { e.Reset(); return &e }
	for j := 0; j < J; j++ {
		n := p.MicroBatches // GPipe; 1F1B: the warm-up min(m, j+1) of position j
		if p.Schedule == pl.OneFOneB {
			n = min(p.MicroBatches, j+1)
		}
		// W_j, IN_j and the held state as variables (one defining row each).
		W := mod.AddContinuous(fmt.Sprintf("W_%d", j), 0, math.Inf(1))
		IN := mod.AddContinuous(fmt.Sprintf("IN_%d", j), 0, math.Inf(1))
		H := mod.AddContinuous(fmt.Sprintf("H_%d", j), 0, math.Inf(1))
		r := row()
		for l := 1; l <= L; l++ {
			yt(r, l, j, mem(c.Stage(l).W))
		}
		if j == 0 {
			r.Constant += mem(c.Stage(L + 1).W)
		}
		f.define(fmt.Sprintf("Wdef_%d", j), W, *r)
		r = row()
		for l := 1; l <= L; l++ {
			stt(r, l, j, mem(c.SizeA(l-1)))
		}
		f.define(fmt.Sprintf("INdef_%d", j), IN, *r)
		r = row()
		if f.Remat {
			// The held state is at least the input and the output: a^{e_j} (the next GPU's
			// input, sent by the stand-in loss stage), a^L and ā^{L+1} on the last position.
			if j == 0 {
				r.Constant += mem(c.SizeA(L) + c.Stage(L+1).ABar)
			} else {
				for l := 1; l < L; l++ {
					xt(r, l, j-1, mem(c.SizeA(l)))
				}
			}
		} else {
			for l := 1; l <= L; l++ {
				yt(r, l, j, mem(c.Stage(l).ABar))
			}
			if j == 0 {
				r.Constant += mem(c.Stage(L + 1).ABar)
			}
		}
		r.Add(IN, 1)
		f.define(fmt.Sprintf("Hdef_%d", j), H, *r)
		nm1 := float64(n - 1)
		if f.Remat {
			// One row per position: W + (n−1)·H + IN + E ≤ M, E ≥ K'_ℓ on every stage of the
			// position (E ≥ K'_ℓ·y_{ℓ,j}).
			E := mod.AddContinuous(fmt.Sprintf("E_%d", j), 0, math.Inf(1))
			d := def{v: E, max: true}
			for l := 1; l <= L; l++ {
				r = row()
				yt(r, l, j, mem(stageKRelaxed(c, l)))
				d.parts = append(d.parts, cloneExpr(*r))
				r.Add(E, -1)
				mod.AddLE(fmt.Sprintf("E_%d_%d", j, l), *r, 0)
			}
			if j == 0 {
				mod.SetBounds(E, mem(stageKRelaxed(c, L+1)), math.Inf(1))
				d.parts = append(d.parts, model.Expr{Constant: mem(stageKRelaxed(c, L+1))})
			}
			f.defs = append(f.defs, d)
			r = row().Add(W, 1).Add(H, nm1).Add(IN, 1).Add(E, 1)
			mod.AddLE(fmt.Sprintf("mem_%d", j), *r, mem(p.Memory))
			continue
		}
		// Store-all: for every stage ℓ the position may hold,
		//   W + (n−1)·H + IN + Σ_{i≤ℓ} ā^i y_{i,j} + K_ℓ ≤ M + BigM_ℓ·(1 − y_{ℓ,j}),
		// with BigM_ℓ = K_ℓ − min K: a stage not on the position makes the row at most the
		// position's own row at its last stage (whose prefix is the whole held state) plus
		// K_ℓ − K_last, so the row is then implied — a big-M of the size of one stage's
		// overheads, not of the memory.
		kmin := stageK(c, L+1)
		for l := 1; l <= L; l++ {
			kmin = min(kmin, stageK(c, l))
		}
		pre := none
		for l := 1; l <= L+1; l++ {
			if j > 0 && l > L-j {
				break // stages L−j+1.. cannot sit at position j
			}
			if j > 0 && l == L+1 {
				break
			}
			// pre_ℓ = pre_{ℓ−1} + ā^ℓ y_{ℓ,j} (ℓ = L+1: + ā^{L+1}, on position 0 only).
			np := mod.AddContinuous(fmt.Sprintf("pre_%d_%d", j, l), 0, math.Inf(1))
			r = row()
			if pre != none {
				r.Add(pre, 1)
			}
			if l <= L {
				yt(r, l, j, mem(c.Stage(l).ABar))
			} else {
				r.Constant += mem(c.Stage(L + 1).ABar)
			}
			f.define(fmt.Sprintf("predef_%d_%d", j, l), np, *r)
			pre = np
			k := stageK(c, l)
			big := mem(k - kmin)
			r = row().Add(W, 1).Add(H, nm1).Add(IN, 1).Add(pre, 1)
			rhs := mem(p.Memory - k)
			if l <= L && big > 0 {
				yt(r, l, j, big)
				rhs += big
			}
			mod.AddLE(fmt.Sprintf("mem_%d_%d", j, l), *r, rhs)
		}
	}
}

// order returns position j's actions as (μ, backward) pairs: the named order of a GPU with
// warm-up min(m, j+1) (1F1B) or m (GPipe).
func (f *Contiguous) order(j int) [][2]int {
	m := f.p.MicroBatches
	w := m
	if f.p.Schedule == pl.OneFOneB {
		w = min(m, j+1)
	}
	var as [][2]int
	for mu := 0; mu < w; mu++ {
		as = append(as, [2]int{mu, 0})
	}
	for i := 0; i < m-w; i++ {
		as = append(as, [2]int{i, 1}, [2]int{w + i, 0})
	}
	for i := m - w; i < m; i++ {
		as = append(as, [2]int{i, 1})
	}
	return as
}

// buildTiming adds the event times and the makespan.
func (f *Contiguous) buildTiming() {
	p, mod := f.p, f.Model
	m, J := p.MicroBatches, f.J
	inf := math.Inf(1)
	f.tF, f.tB = make([][]model.Var, J), make([][]model.Var, J)
	f.rF, f.rB = make([][]model.Var, J), make([][]model.Var, J)
	for j := 0; j < J; j++ {
		f.tF[j], f.tB[j] = make([]model.Var, m), make([]model.Var, m)
		for mu := 0; mu < m; mu++ {
			f.tF[j][mu] = mod.AddContinuous(fmt.Sprintf("tF_%d_%d", j, mu), 0, inf)
			f.tB[j][mu] = mod.AddContinuous(fmt.Sprintf("tB_%d_%d", j, mu), 0, inf)
		}
		if j >= 1 {
			f.rF[j] = make([]model.Var, m)
			for mu := 0; mu < m; mu++ {
				f.rF[j][mu] = mod.AddContinuous(fmt.Sprintf("rF_%d_%d", j, mu), 0, inf)
			}
		}
		if j+1 < J {
			f.rB[j] = make([]model.Var, m)
			for mu := 0; mu < m; mu++ {
				f.rB[j][mu] = mod.AddContinuous(fmt.Sprintf("rB_%d_%d", j, mu), 0, inf)
			}
		}
	}
	f.C = mod.AddContinuous("C", 0, inf)
	var e model.Expr
	add := func(name string, to, from model.Var, dur ...model.Var) {
		e.Reset()
		e.Add(to, 1)
		if from != none {
			e.Add(from, -1)
		}
		var ds []model.Var
		for _, d := range dur {
			if d != none {
				e.Add(d, -1)
				ds = append(ds, d)
			}
		}
		mod.AddGE(name, e, 0)
		f.edges = append(f.edges, edge{to: to, from: from, dur: ds})
	}
	cut := func(vs []model.Var, j int) model.Var {
		if j < 0 || j >= len(vs) {
			return none
		}
		return vs[j]
	}
	for j := 0; j < J; j++ {
		// The GPU's order.
		as := f.order(j)
		at := func(a [2]int) (model.Var, model.Var) {
			if a[1] == 1 {
				return f.tB[j][a[0]], f.bd[j]
			}
			return f.tF[j][a[0]], f.fd[j]
		}
		for i := 1; i < len(as); i++ {
			v0, d0 := at(as[i-1])
			v1, _ := at(as[i])
			add(fmt.Sprintf("ord_%d_%d", j, i), v1, v0, d0)
		}
		for mu := 0; mu < m; mu++ {
			// Forward input from position j+1 (the top position has it at 0).
			if j+1 < J {
				add(fmt.Sprintf("inF_%d_%d", j, mu), f.tF[j][mu], f.rF[j+1][mu])
			}
			// a^{e} from position j to j−1 over the forward link, in order.
			if j >= 1 {
				add(fmt.Sprintf("sendF_%d_%d", j, mu), f.rF[j][mu], f.tF[j][mu], f.fd[j], cut(f.cf, j-1))
				if mu > 0 {
					add(fmt.Sprintf("linkF_%d_%d", j, mu), f.rF[j][mu], f.rF[j][mu-1], cut(f.cf, j-1))
				}
			}
			// Backward input: the loss gradient on position 0, δ from position j−1 elsewhere.
			if j == 0 {
				add(fmt.Sprintf("inB_0_%d", mu), f.tB[0][mu], f.tF[0][mu], f.fd[0])
			} else {
				add(fmt.Sprintf("inB_%d_%d", j, mu), f.tB[j][mu], f.rB[j-1][mu])
			}
			if j+1 < J {
				add(fmt.Sprintf("sendB_%d_%d", j, mu), f.rB[j][mu], f.tB[j][mu], f.bd[j], cut(f.cb, j))
				if mu > 0 {
					add(fmt.Sprintf("linkB_%d_%d", j, mu), f.rB[j][mu], f.rB[j][mu-1], cut(f.cb, j))
				}
			}
		}
		add(fmt.Sprintf("end_%d", j), f.C, f.tB[j][m-1], f.bd[j])
	}
}
