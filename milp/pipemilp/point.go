package pipemilp

import (
	"fmt"
	"math"

	"github.com/memsched/memsched/model"
)

// Cuts returns the contiguous allocation of a point of the model: each part's last stage, in
// chain order (stage ℓ sits at position Σ_{j≥1} z_{ℓ,j}, rounded).
func (f *Contiguous) Cuts(x []float64) ([]int, error) {
	L := f.p.L()
	pos := make([]int, L+1)
	for l := 1; l <= L; l++ {
		for j := 1; j < f.J; j++ {
			if v := f.z[l][j]; v != none && x[v] > 0.5 {
				pos[l]++
			}
		}
		if l > 1 && (pos[l] > pos[l-1] || pos[l] < pos[l-1]-1) {
			return nil, fmt.Errorf("pipemilp: the point puts stage %d at position %d after stage %d at %d", l, pos[l], l-1, pos[l-1])
		}
	}
	if pos[L] != 0 {
		return nil, fmt.Errorf("pipemilp: the point puts stage L at position %d", pos[L])
	}
	var cuts []int
	for l := 1; l <= L; l++ {
		if l == L || pos[l+1] != pos[l] {
			cuts = append(cuts, l)
		}
	}
	return cuts, nil
}

// Point returns the model's point of a contiguous allocation (cuts: its parts' last stages):
// the binaries, every auxiliary variable at its defined value and every event time at its
// earliest (the longest path of the timing rows), so that C is the allocation's makespan as
// the model computes it — equal to verify/pipeline's (tests) — and the point is feasible
// exactly when the allocation fits the model's memory rows. It serves as the solver's start.
func (f *Contiguous) Point(cuts []int) ([]float64, error) {
	L := f.p.L()
	S := len(cuts)
	if S == 0 || S > f.J || cuts[S-1] != L {
		return nil, fmt.Errorf("pipemilp: cuts %v are not 1..%d parts ending at %d", cuts, f.J, L)
	}
	x := make([]float64, f.Model.NumVars())
	first := 1
	for k, e := range cuts {
		if e < first {
			return nil, fmt.Errorf("pipemilp: cuts %v are not increasing", cuts)
		}
		j := S - 1 - k
		for l := first; l <= e; l++ {
			for jj := 1; jj <= j; jj++ {
				if v := f.z[l][jj]; v != none {
					x[v] = 1
				} else {
					return nil, fmt.Errorf("pipemilp: stage %d cannot sit at position %d", l, j)
				}
			}
		}
		first = e + 1
	}
	eval := func(e model.Expr) float64 {
		s := e.Constant
		for _, t := range e.Terms {
			s += t.Coef * x[t.Var]
		}
		return s
	}
	for _, d := range f.defs {
		v := math.Inf(-1)
		if !d.max {
			v = 0
		}
		for _, e := range d.parts {
			if d.max {
				v = math.Max(v, eval(e))
			} else {
				v += eval(e)
			}
		}
		lb, _ := f.Model.Bounds(d.v)
		x[d.v] = math.Max(v, lb)
	}
	// Event times: relax every timing row until none moves (the rows form a DAG).
	for pass := 0; ; pass++ {
		changed := false
		for _, ed := range f.edges {
			t := 0.0
			if ed.from != none {
				t = x[ed.from]
			}
			for _, d := range ed.dur {
				t += x[d]
			}
			if t > x[ed.to] {
				x[ed.to] = t
				changed = true
			}
		}
		if !changed {
			break
		}
		if pass > len(f.edges) {
			return nil, fmt.Errorf("pipemilp: internal error: the timing rows do not settle (a cycle)")
		}
	}
	return x, nil
}

// Makespan returns C of a point in seconds.
func (f *Contiguous) Makespan(x []float64) float64 { return x[f.C] * f.Units.Time }
