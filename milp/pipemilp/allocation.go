package pipemilp

import (
	"fmt"
	"math"

	pl "github.com/memsched/memsched/instances/pipeline"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/model"
)

// Objective is what the allocation model minimizes.
type Objective uint8

const (
	// Period minimizes T ≥ every GPU's Σ(u_f+u_b) over its stages and every link's Σ of the
	// transfers it carries (a link per ordered pair of GPUs): the steady-state period of the allocation (no
	// order does better; dp/pipepack.Modulo reaches it with free links).
	Period Objective = iota
	// Makespan minimizes C ≥ m·load_g + the forwards and backwards (and transfers) of the
	// stages before GPU g's first one, for every GPU g, C ≥ m·(every link's load) and C ≥ one
	// micro-batch's forwards, backwards and transfers: a lower bound on the makespan of one
	// iteration of every allocation under every order.
	Makespan
)

func (o Objective) String() string {
	if o == Makespan {
		return "makespan"
	}
	return "period"
}

// Allocation is the allocation MILP (003's ILP, our formulation; docs/pipeline.md): binaries
// x_{ℓ,g} put stage ℓ on GPU g (any GPU: a GPU may hold several intervals), GPUs numbered by
// their first stage (symmetry broken: a stage goes on GPU g > 0 only after some earlier stage
// went on GPU g−1), cut variables q_{ℓ,g,h} ≥ x_{ℓ,g} + x_{ℓ+1,h} − 1 on the links, and the
// memory that one micro-batch needs on each GPU — exact for m = 1, a lower bound on every
// order for every m: while a part runs its micro-batch, the GPU holds Σ w of its parts, what
// the micro-batch keeps of the parts before it on that GPU, and the part's own operations:
//
//	W_g + Σ_{i≤ℓ on g} ā^i + Σ_{parts of g starting at s ≤ ℓ} a^{s−1} + K_ℓ ≤ M   (ℓ on g)
//
// (with Remat: the ends a^e of its earlier parts instead of their ā, and K'_ℓ). It is a
// relaxation of the problem over every allocation and every order (scope "any allocation"):
// its optimum and any proven dual bound are lower bounds, and its incumbents are run with
// dp/pipepack's orders and replayed — they may not fit with m micro-batches in flight.
type Allocation struct {
	Model     *model.Model
	Units     milp.Units
	Objective Objective
	Remat     bool
	G         int // GPUs of the model: min(P, L)
	p         *pl.Problem
	x         [][]model.Var // x[ℓ][g], none where g ≥ ℓ (symmetry) or g ≥ G
	obj       model.Var     // T or C
}

// AllocationOptions choose the model.
type AllocationOptions struct {
	Objective Objective
	// Remat relaxes each part's sequence: durations store-all's, memory the least any
	// sequence holds (input and output of the earlier parts, K'_ℓ).
	Remat bool
	// MaxMemory caps the model's estimated memory (0: none).
	MaxMemory int64
}

// AllocationNonzeros estimates the nonzeros of BuildAllocation's model for p.
func AllocationNonzeros(p *pl.Problem) int {
	L := p.L()
	G := min(p.GPUs, L)
	n := 20*L*G + L*L*G // the symmetry rows and the makespan's p rows sum prefixes
	if !math.IsInf(p.Bandwidth, 1) {
		n += 8 * L * G * G
	}
	return n
}

// BuildAllocation returns the allocation MILP of p.
func BuildAllocation(p *pl.Problem, o AllocationOptions) (*Allocation, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if nnz := AllocationNonzeros(p); o.MaxMemory > 0 && milp.ModelBytes(nnz) > o.MaxMemory {
		return nil, &TooLargeError{"allocation", nnz, milp.ModelBytes(nnz), o.MaxMemory}
	}
	c := p.Chain
	L, m := p.L(), float64(p.MicroBatches)
	G := min(p.GPUs, L)
	un := Units(p)
	a := &Allocation{Units: un, Objective: o.Objective, Remat: o.Remat, G: G, p: p}
	name := "pipeline-allocation-" + o.Objective.String()
	if o.Remat {
		name += "-relaxed"
	}
	mod := model.New(fmt.Sprintf("%s L=%d P=%d m=%d", name, L, p.GPUs, p.MicroBatches))
	mod.Comments = append(mod.Comments, un.Comment())
	a.Model = mod
	secs, mem := un.Secs, un.Mem
	free := math.IsInf(p.Bandwidth, 1)
	inf := math.Inf(1)
	var e model.Expr
	row := func() *model.Expr { e.Reset(); return &e }

	a.x = make([][]model.Var, L+1)
	for l := 1; l <= L; l++ {
		a.x[l] = make([]model.Var, G)
		r := row()
		for g := 0; g < G; g++ {
			a.x[l][g] = none
			if g < l {
				a.x[l][g] = mod.AddBinary(fmt.Sprintf("x_%d_%d", l, g))
				r.Add(a.x[l][g], 1)
			}
		}
		mod.AddEq(fmt.Sprintf("assign_%d", l), *r, 1)
	}
	xt := func(e *model.Expr, l, g int, coef float64) {
		if l >= 1 && l <= L && a.x[l][g] != none {
			e.Add(a.x[l][g], coef)
		}
	}
	// Symmetry: x_{ℓ,g} ≤ Σ_{i<ℓ} x_{i,g−1}.
	for g := 1; g < G; g++ {
		for l := g + 1; l <= L; l++ {
			r := row().Add(a.x[l][g], 1)
			for i := 1; i < l; i++ {
				xt(r, i, g-1, -1)
			}
			mod.AddLE(fmt.Sprintf("sym_%d_%d", l, g), *r, 0)
		}
	}
	tl := func(l int) float64 {
		st := c.Stage(l)
		t := st.UF + st.UB
		if l == L {
			t += c.Stage(L+1).UF + c.Stage(L+1).UB
		}
		return secs(t)
	}
	// Cut variables on the links: q[ℓ][g][h] for ℓ on g, ℓ+1 on h ≠ g.
	var q [][][]model.Var
	if !free {
		q = make([][][]model.Var, L)
		for l := 1; l < L; l++ {
			q[l] = make([][]model.Var, G)
			for g := 0; g < G; g++ {
				q[l][g] = make([]model.Var, G)
				for h := 0; h < G; h++ {
					q[l][g][h] = none
					if g == h || a.x[l][g] == none || a.x[l+1][h] == none {
						continue
					}
					v := mod.AddContinuous(fmt.Sprintf("q_%d_%d_%d", l, g, h), 0, 1)
					q[l][g][h] = v
					mod.AddGE(fmt.Sprintf("qdef_%d_%d_%d", l, g, h), *row().Add(v, 1).Add(a.x[l][g], -1).Add(a.x[l+1][h], -1), -1)
				}
			}
		}
	}
	// cut_ℓ = Σ_{g≠h} q_{ℓ,g,h}: the cut after ℓ exists (the makespan's head and tail).
	var cutv []model.Var
	if !free && o.Objective == Makespan {
		cutv = make([]model.Var, L)
		for l := 1; l < L; l++ {
			cutv[l] = mod.AddContinuous(fmt.Sprintf("cut_%d", l), 0, 1)
			r := row().Add(cutv[l], -1)
			for g := 0; g < G; g++ {
				for h := 0; h < G; h++ {
					if q[l][g][h] != none {
						r.Add(q[l][g][h], 1)
					}
				}
			}
			mod.AddEq(fmt.Sprintf("cutdef_%d", l), *r, 0)
		}
	}
	a.obj = mod.AddContinuous(map[Objective]string{Period: "T", Makespan: "C"}[o.Objective], 0, inf)
	scale := 1.0
	if o.Objective == Makespan {
		scale = m
	}
	// GPU loads (and, for the makespan, the stages before the GPU's first).
	var tsum float64
	for l := 1; l <= L; l++ {
		tsum += tl(l)
	}
	if o.Objective == Makespan {
		// One micro-batch runs every stage: C ≥ Σ(u_f + u_b).
		mod.SetBounds(a.obj, tsum, inf)
	}
	for g := 0; g < G; g++ {
		r := row().Add(a.obj, 1)
		for l := 1; l <= L; l++ {
			xt(r, l, g, -scale*tl(l))
		}
		rhs := 0.0
		if o.Objective == Makespan {
			// + Σ_{ℓ<s_min(g)} t_ℓ (1 − p_{ℓ,g}) + Σ_ℓ c_ℓ v_{ℓ,g}, p_{ℓ,g} ≤ min(1, Σ_{i≤ℓ} x_{i,g}),
			// v_{ℓ,g} ≥ cut_ℓ − p_{ℓ,g}: the head and tail of GPU g.
			for l := 1; l <= L; l++ {
				pv := mod.AddContinuous(fmt.Sprintf("p_%d_%d", l, g), 0, 1)
				pr := model.Expr{}
				pr.Add(pv, 1)
				for i := 1; i <= l; i++ {
					xt(&pr, i, g, -1)
				}
				mod.AddLE(fmt.Sprintf("pdef_%d_%d", l, g), pr, 0)
				r.Add(pv, tl(l))
				rhs += tl(l)
				if !free && l < L {
					cf, cb := p.CutTimes(l)
					if cf+cb > 0 {
						vv := mod.AddContinuous(fmt.Sprintf("v_%d_%d", l, g), 0, 1)
						vr := model.Expr{}
						vr.Add(vv, 1).Add(pv, 1).Add(cutv[l], -1)
						mod.AddGE(fmt.Sprintf("vdef_%d_%d", l, g), vr, 0)
						r.Add(vv, -secs(cf+cb))
					}
				}
			}
		}
		mod.AddGE(fmt.Sprintf("load_%d", g), *r, rhs)
	}
	if o.Objective == Makespan && !free {
		// One micro-batch runs every stage and crosses every cut both ways:
		// C ≥ Σ(u_f+u_b) + Σ_ℓ (c_f^ℓ + c_b^ℓ)·cut_ℓ.
		r := row().Add(a.obj, 1)
		for l := 1; l < L; l++ {
			cf, cb := p.CutTimes(l)
			r.Add(cutv[l], -secs(cf+cb))
		}
		mod.AddGE("latency", *r, tsum)
	}
	// Link loads: the link g→h carries a^ℓ of every cut with ℓ on g, ℓ+1 on h, and δ^ℓ of
	// every cut with ℓ on h, ℓ+1 on g (verify/pipeline: one link per ordered pair).
	if !free {
		for g := 0; g < G; g++ {
			for h := 0; h < G; h++ {
				if g == h {
					continue
				}
				r := row().Add(a.obj, 1)
				n := 0
				for l := 1; l < L; l++ {
					cf, cb := p.CutTimes(l)
					if q[l][g][h] != none && cf > 0 {
						r.Add(q[l][g][h], -scale*secs(cf))
						n++
					}
					if q[l][h][g] != none && cb > 0 {
						r.Add(q[l][h][g], -scale*secs(cb))
						n++
					}
				}
				if n > 0 {
					mod.AddGE(fmt.Sprintf("link_%d_%d", g, h), *r, 0)
				}
			}
		}
	}
	a.buildMemory(xt, mem)
	mod.SetObjective(model.Minimize, *row().Add(a.obj, 1))
	return a, mod.Err()
}

// buildMemory adds the memory rows of one micro-batch on each GPU.
func (a *Allocation) buildMemory(xt func(e *model.Expr, l, g int, coef float64), mem func(int64) float64) {
	p, mod := a.p, a.Model
	c := p.Chain
	L, G := p.L(), a.G
	inf := math.Inf(1)
	kf := stageK
	if a.Remat {
		kf = stageKRelaxed
	}
	kmin := kf(c, L+1)
	var maxA int64
	for l := 1; l <= L; l++ {
		kmin = min(kmin, kf(c, l))
		maxA = max(maxA, c.SizeA(l))
	}
	var e model.Expr
	row := func() *model.Expr { e.Reset(); return &e }
	for g := 0; g < G; g++ {
		W := mod.AddContinuous(fmt.Sprintf("W_%d", g), 0, inf)
		r := row()
		for l := 1; l <= L; l++ {
			xt(r, l, g, mem(c.Stage(l).W))
		}
		xt(r, L, g, mem(c.Stage(L+1).W))
		r.Add(W, -1)
		mod.AddEq(fmt.Sprintf("Wdef_%d", g), *r, 0)
		// pre_ℓ: Σ_{i≤ℓ} ā^i x_{i,g} (store-all) or Σ_{i<ℓ} a^i end_{i,g} (remat), plus the
		// inputs of the parts of g starting at or before ℓ.
		pre := none
		for l := 1; l <= L+1; l++ {
			np := mod.AddContinuous(fmt.Sprintf("pre_%d_%d", g, l), 0, inf)
			r = row()
			if pre != none {
				r.Add(pre, 1)
			}
			if l <= L && a.x[l][g] != none {
				// Input of a part starting at ℓ: st ≥ x_{ℓ,g} − x_{ℓ−1,g}.
				in := c.SizeA(l - 1)
				if in > 0 {
					if l == 1 {
						r.Add(a.x[1][g], mem(in))
					} else {
						st := mod.AddContinuous(fmt.Sprintf("st_%d_%d", l, g), 0, 1)
						sr := model.Expr{}
						sr.Add(st, 1)
						xt(&sr, l, g, -1)
						xt(&sr, l-1, g, 1)
						mod.AddGE(fmt.Sprintf("stdef_%d_%d", l, g), sr, 0)
						r.Add(st, mem(in))
					}
				}
			}
			switch {
			case !a.Remat && l <= L:
				xt(r, l, g, mem(c.Stage(l).ABar))
			case !a.Remat:
				xt(r, L, g, mem(c.Stage(L+1).ABar))
			case l >= 2 && l <= L:
				// The end a^{ℓ−1} of an earlier part: end ≥ x_{ℓ−1,g} − x_{ℓ,g}.
				if out := c.SizeA(l - 1); out > 0 && a.x[l-1][g] != none {
					en := mod.AddContinuous(fmt.Sprintf("end_%d_%d", l-1, g), 0, 1)
					er := model.Expr{}
					er.Add(en, 1)
					xt(&er, l-1, g, -1)
					xt(&er, l, g, 1)
					mod.AddGE(fmt.Sprintf("enddef_%d_%d", l-1, g), er, 0)
					r.Add(en, mem(out))
				}
			}
			r.Add(np, -1)
			mod.AddEq(fmt.Sprintf("predef_%d_%d", g, l), *r, 0)
			pre = np
			// The row of stage ℓ (ℓ = L+1: the loss stage, on the GPU of stage L).
			sl := min(l, L)
			if a.x[sl][g] == none {
				continue
			}
			k := kf(c, l)
			big := mem(k - kmin)
			if a.Remat {
				big += mem(maxA)
			}
			r = row().Add(W, 1).Add(pre, 1)
			rhs := mem(p.Memory - k)
			if big > 0 {
				r.Add(a.x[sl][g], big)
				rhs += big
			}
			mod.AddLE(fmt.Sprintf("mem_%d_%d", g, l), *r, rhs)
		}
	}
}

// Assignment returns each stage's GPU at a point of the model.
func (a *Allocation) Assignment(x []float64) []int {
	L := a.p.L()
	out := make([]int, L)
	for l := 1; l <= L; l++ {
		best := -1.0
		for g := 0; g < a.G; g++ {
			if v := a.x[l][g]; v != none && x[v] > best {
				best, out[l-1] = x[v], g
			}
		}
	}
	return out
}

// Value returns the objective of a point in seconds.
func (a *Allocation) Value(x []float64) float64 { return x[a.obj] * a.Units.Time }
