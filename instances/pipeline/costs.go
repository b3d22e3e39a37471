package pipeline

import (
	"github.com/memsched/memsched/instances"
)

// PartCosts are the figures of a part that decide a plan: its forward and backward durations,
// its persistent bytes, what one micro-batch holds between its forward and its backward, and
// the peak of one micro-batch's own operations (everything of the micro-batch, nothing of the
// others, no w).
type PartCosts struct {
	// F and B are the durations of F_k(μ) and B_k(μ), in seconds.
	F, B float64
	// W is Σ w_ℓ over the part's stages (the loss stage included on the last part).
	W int64
	// Held is what a micro-batch stores between F_k(μ) and B_k(μ) (its input included).
	Held int64
	// Peak is the largest memory of the micro-batch's own operations.
	Peak int64
}

// Memory returns the peak of a GPU that holds this part alone with n micro-batches in flight:
// W + (n−1)·Held + Peak (SPEC §7: the others hold Held while one runs; the order of the
// operations decides n, timing does not). Sums past instances.MaxBytes saturate there (above
// every budget).
func (pc PartCosts) Memory(n int) int64 {
	held, ok := instances.MulBytes(int64(max(n-1, 0)), pc.Held)
	if !ok {
		return instances.MaxBytes + 1
	}
	if s, ok := instances.SumBytes(pc.W, held, pc.Peak); ok {
		return s
	}
	return instances.MaxBytes + 1
}

// StoreAllCosts returns the costs of part [first, last] of c storing everything (F_all on
// every stage, then B; the loss stage L+1 joins the part that ends at L = c.Len()−1):
//
//	F = Σ u_f, B = Σ u_b, W = Σ w over the part,
//	Held = ω_a^{first−1} + Σ ω_ā,
//	Peak = max( max_ℓ a^{first−1} + Σ_{first≤i<ℓ} ω_ā^i + ω_ā^ℓ + o_f^ℓ,
//	            max_ℓ a^{first−1} + Σ_{first≤i≤ℓ} ω_ā^i + ω_δ^ℓ + ω_δ^{ℓ−1} + o_b^ℓ ).
//
// It panics when the part is not within 1..L (a programmer error).
func StoreAllCosts(c *instances.Chain, first, last int) PartCosts {
	L := c.Len() - 1
	if first < 1 || last < first || last > L {
		panic("pipeline: StoreAllCosts: part out of range")
	}
	end := last
	if last == L {
		end = L + 1
	}
	var pc PartCosts
	stored := c.SizeA(first - 1)
	for l := first; l <= end; l++ {
		st := c.Stage(l)
		pc.F += st.UF
		pc.B += st.UB
		pc.W += st.W
		pc.Peak = max(pc.Peak, stored+st.ABar+st.OF)
		stored += st.ABar
	}
	pc.Held = stored
	for l := end; l >= first; l-- {
		st := c.Stage(l)
		pc.Peak = max(pc.Peak, stored+c.SizeDelta(l)+c.SizeDelta(l-1)+st.OB)
		stored -= st.ABar
	}
	return pc
}

// CutTimes returns the transfer times of a cut after stage e (1 ≤ e < L): a^e forward and δ^e
// backward over one link.
func (p *Problem) CutTimes(e int) (fwd, bwd float64) {
	return p.Transfer(p.Chain.SizeA(e)), p.Transfer(p.Chain.SizeDelta(e))
}

// StoreAllSweep calls yield with StoreAllCosts(c, first, last) for last = first, first+1, …,
// L in turn, built incrementally (O(L − first) in all, not O((L − first)²)) with the same
// additions in the same order, so each equals StoreAllCosts's bit for bit; it stops when
// yield returns false. The part that ends at L takes the loss stage L+1, as StoreAllCosts's.
// A planner that reads every part [first, last] builds its table in O(L²) this way (it was
// O(L³): minutes on 2001 stages).
func StoreAllSweep(c *instances.Chain, first int, yield func(last int, pc PartCosts) bool) {
	L := c.Len() - 1
	if first < 1 || first > L {
		panic("pipeline: StoreAllSweep: first out of range")
	}
	var pc PartCosts
	stored := c.SizeA(first - 1)
	bwd := int64(0) // max over l of the backward term a^{first−1} + Σ_{first..l} ā + δ^l + δ^{l−1} + o_b^l
	add := func(pc *PartCosts, stored *int64, bwd *int64, l int) {
		st := c.Stage(l)
		pc.F += st.UF
		pc.B += st.UB
		pc.W += st.W
		pc.Peak = max(pc.Peak, *stored+st.ABar+st.OF)
		*stored += st.ABar
		*bwd = max(*bwd, *stored+c.SizeDelta(l)+c.SizeDelta(l-1)+st.OB)
	}
	for last := first; last <= L; last++ {
		add(&pc, &stored, &bwd, last)
		out, s, b := pc, stored, bwd
		if last == L {
			add(&out, &s, &b, L+1)
		}
		out.Held = s
		out.Peak = max(out.Peak, b)
		if !yield(last, out) {
			return
		}
	}
}
