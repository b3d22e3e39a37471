package actmilp

import (
	"fmt"
	"math"
	"sort"

	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/model"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify/timed"
)

// Clean drops from a validated schedule the transfers of activations that are not candidates
// (Formulation.J): x_j with no tight operation or gap in its window is away only where
// everything fits on the GPU, so its round trip can go without touching any other time. The
// result is re-validated; an error means the schedule was not valid or lies outside the model
// (a bug, since the model's windows are certified).
func (f *Formulation) Clean(s *schedule.Timed) (*schedule.Timed, error) {
	out := &schedule.Timed{Ops: append([]schedule.TimedOp(nil), s.Ops...)}
	for _, t := range s.Transfers {
		if _, ok := f.cidx[t.Index]; ok {
			out.Transfers = append(out.Transfers, t)
		}
	}
	canonical(f.Problem.X, out.Transfers)
	if _, err := timed.Check(f.Problem, out); err != nil {
		return nil, fmt.Errorf("actmilp: the schedule without its non-candidate transfers: %w", err)
	}
	return out, nil
}

// canonical applies the exchange behind symmetryRows until none applies: for x_i, x_j of equal
// size, i < j, whose offload of x_j starts before that of x_i while x_j's prefetch does not,
// the two offloads trade slots (x_i, produced earlier, takes the earlier one). The operations'
// times do not change and the schedule stays valid (docs/act-offload.md, "Order of
// transfers"); each exchange removes an inversion, so it ends — with a schedule that satisfies
// every symmetry row (a local search or any order-agnostic heuristic may produce one that
// does not).
func canonical(x []int64, tr []schedule.ActTransfer) {
	pre := map[int]float64{}
	for _, t := range tr {
		if t.Kind == schedule.Prefetch {
			pre[t.Index] = t.Start
		}
	}
	for swapped := true; swapped; {
		swapped = false
		for a := range tr {
			for b := range tr {
				ta, tb := tr[a], tr[b] // ta: O(j), tb: O(i)
				if ta.Kind != schedule.Offload || tb.Kind != schedule.Offload || tb.Index >= ta.Index ||
					x[ta.Index] != x[tb.Index] || !(ta.Start < tb.Start) {
					continue
				}
				if p, ok := pre[ta.Index]; ok && p < tb.Start {
					continue
				}
				tr[a].Index, tr[b].Index = tb.Index, ta.Index
				swapped = true
			}
		}
	}
}

// Point converts a validated schedule (cleaned of non-candidate transfers, see Clean) into a
// point of the model, in model units, e.g. a start for the solver. It is the map from schedules
// to points on which the model's validity as a relaxation rests: every valid schedule no
// longer than Upper gives a point satisfying every row (checked here; an error is a defect of
// the model or of the schedule), with objective its makespan.
func (f *Formulation) Point(s *schedule.Timed) ([]float64, error) {
	p := f.Problem
	rep, err := timed.Check(p, s)
	if err != nil {
		return nil, fmt.Errorf("actmilp: start schedule: %w", err)
	}
	n := f.n
	un := f.Units
	x := make([]float64, f.Model.NumVars())
	start := make([]float64, 2*n) // seconds
	for k, op := range s.Ops {
		start[k] = op.Start
		x[f.S[k]] = un.Secs(op.Start)
	}
	x[f.T] = un.Secs(rep.Makespan)
	uSec := func(k int) float64 {
		if k < n {
			return p.UF[k]
		}
		return p.UB[2*n-1-k]
	}
	// The validator's time tolerance: events closer than tol are simultaneous.
	var scale float64
	for k := 0; k < 2*n; k++ {
		scale += uSec(k)
	}
	for _, xx := range p.X {
		scale += 2 * float64(xx) / p.Beta
	}
	tol := 1e-9 * math.Max(scale, 1)
	nc := len(f.J)
	off, pre := make([]float64, nc), make([]float64, nc)
	has := make([]bool, nc)
	for _, t := range s.Transfers {
		c, ok := f.cidx[t.Index]
		if !ok {
			return nil, fmt.Errorf("actmilp: start schedule moves x_%d, not a candidate (Clean it first)", t.Index)
		}
		has[c] = true
		if t.Kind == schedule.Offload {
			off[c] = t.Start
		} else {
			pre[c] = t.Start
		}
	}
	for c, j := range f.J {
		if has[c] {
			x[f.O[c]] = 1
			x[f.A[c]], x[f.B[c]] = un.Secs(off[c]), un.Secs(pre[c])
			continue
		}
		// A phantom: its times only have to satisfy the rows of a transfer that does not exist.
		fj := start[f.pos(j, false)] + p.UF[j]
		a := 0.0
		if j > 0 {
			a = start[f.pos(j-1, false)] + p.UF[j-1]
		}
		x[f.A[c]], x[f.B[c]] = un.Secs(a), un.Secs(math.Max(fj, start[f.pos(j, true)]))
	}
	// The link order of the existing transfers.
	tstart := func(t int) float64 {
		if t%2 == 0 {
			return off[t/2]
		}
		return pre[t/2]
	}
	for key, v := range f.lam {
		t, t2 := key[0], key[1]
		if has[t/2] && has[t2/2] && tstart(t) < tstart(t2) {
			x[v] = 1
		}
	}
	for c, j := range f.J {
		if !has[c] {
			continue
		}
		release := math.Max(off[c]+float64(p.X[j])/p.Beta, start[f.pos(j, false)]+p.UF[j])
		for _, k := range f.kpos[c] {
			if release <= start[k]+tol {
				x[f.rel[[2]int{c, k}]] = 1
			}
			if pre[c] < start[k]-tol {
				x[f.pre[[2]int{c, k}]] = 1
			}
			if pre[c] < start[k]+uSec(k)-tol {
				x[f.qre[[2]int{c, k}]] = 1
			}
		}
	}
	// The link work of each transfer in each interval [start(k), start(k+1)) of the compute
	// sequence (k = −1: from 0; the last interval ends at the makespan).
	bound := func(k int) float64 {
		switch {
		case k < 0:
			return 0
		case k >= 2*n:
			return rep.Makespan
		}
		return start[k]
	}
	for key, v := range f.zvar {
		t, k := key[0], key[1]-1
		c := t / 2
		if !has[c] {
			continue
		}
		t0 := tstart(t)
		t1 := t0 + float64(p.X[f.J[c]])/p.Beta
		lo, hi := math.Max(t0, bound(k)), math.Min(t1, bound(k+1))
		if hi > lo {
			x[v] = un.Secs(hi - lo)
		}
	}
	// Away at a prefetch: as much as the two bounds allow (both are what the validator sees).
	eval := func(e model.Expr) float64 {
		v := e.Constant
		for _, t := range e.Terms {
			v += t.Coef * x[t.Var]
		}
		return v
	}
	for key, w := range f.away {
		c, c2 := key[0], key[1]
		e := model.Expr{}
		e.Add(f.lam[[2]int{2 * c, 2*c2 + 1}], 1)
		if v := f.Lambda(2*c+1, 2*c2+1); v >= 0 {
			e.Add(v, -1)
		}
		var where model.Expr
		for _, pl := range f.places(c2) {
			if f.inWindowPlace(f.J[c], pl) {
				f.addPlace(&where, c2, pl, 1)
			}
		}
		x[w] = math.Max(0, math.Min(1, math.Min(eval(e), eval(where))))
	}
	if err := f.Model.Check(x).Err(milp.FeasTol); err != nil {
		return nil, fmt.Errorf("actmilp: the point of a valid schedule breaks the model: %w", err)
	}
	return x, nil
}

// order returns the transfers of point x (offloaded candidates) in link order, by start time,
// ties broken by the λ variables.
func (f *Formulation) order(x []float64) []int {
	var ts []int
	for c := range f.J {
		if x[f.O[c]] > 0.5 {
			ts = append(ts, 2*c, 2*c+1)
		}
	}
	sort.SliceStable(ts, func(a, b int) bool {
		ta, tb := ts[a], ts[b]
		va, _ := f.tvar(ta)
		vb, _ := f.tvar(tb)
		if math.Abs(x[va]-x[vb]) > 1e-9 {
			return x[va] < x[vb]
		}
		if ta/2 == tb/2 {
			return ta < tb
		}
		if v := f.Lambda(ta, tb); v >= 0 && x[v] > 0.5 {
			return true
		}
		return false
	})
	return ts
}
