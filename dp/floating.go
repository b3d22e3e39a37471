package dp

import (
	"fmt"
	"math"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
)

// MaxFloatingStages bounds the chains Floating accepts: its table has O(n³·S) entries and takes
// O(n⁴·S) time.
const MaxFloatingStages = 200

// Floating is the table of the dynamic program over weakly persistent sequences (004 §4.3,
// Def. 4.3, Lemma 4.4, Cor. 4.5), re-derived because Thm 4.7 is damaged in the source and, as
// printed, cannot move the floating checkpoint and then run F_all (docs/dp.md). Two tables:
//
// G(s, t, ℓ, m): the checkpoint a^{s-1} is stored outside m (plain, or ā^{s-1} when t = s),
// δ^ℓ inside; run B^ℓ … B^t and end with δ^{t-1} alone (the checkpoint is gone when t > s).
// The checkpoint may first float right to a^{r-1}, s ≤ r ≤ t, by F_∅^s … F_∅^{r-1} (only a
// plain checkpoint floats; by Cor. 4.5 only to sizes ω_a^{r-1} ≥ ω_a^{s-1}):
//
//	G(s, t, ℓ, m) = min_r Σ_{j=s}^{r-1} u_f^j + H(r, t, ℓ, m − ω_a^{r-1} + ω_a^{s-1})
//	  with, for each move F_∅^j:  ω_δ^ℓ + ω_a^{j-1} + ω_a^j + o_f^j ≤ m + ω_a^{s-1}
//
// H(r, t, ℓ, m): the same with the checkpoint a^{r-1} kept until the end:
//
//	H(r, r, ℓ, m) ∋ u_f^r + G(r+1, r+1, ℓ, m − ω_ā^r) + u_b^r           (F_all^r … B^r; for ℓ = r
//	                 just F_all^r B^r)  if ω_δ^ℓ + ω_ā^r + o_f^r ≤ m and ω_δ^r + ω_ā^r + ω_δ^{r-1} + o_b^r ≤ m
//	H(r, t, ℓ, m) ∋ Σ_{j=r}^{s'-1} u_f^j + G(s', t', ℓ, m − ω_a^{s'-1}) + G(r, t, t'−1, m)
//	                 for r < s' ≤ t' ≤ ℓ, t < t': F_ck^r F_∅^{r+1} … F_∅^{s'-1}, each within m with δ^ℓ
//
// The whole chain is G(1, 1, L+1, M − ω_a^0) (a^0 never floats: t = s = 1).
type Floating struct {
	c      *instances.Chain
	sc     *slotted
	aDown  []int // ⌊ω_a^ℓ / q⌋: what a checkpoint that floats away frees, at least
	budget int64
	m, n   int
	idx    []int32 // (s, t, ℓ) → state index, -1 when not s ≤ t ≤ ℓ
	g, h   []float64
	gArg   []int16 // r
	hS, hT []int16 // s', t'; hS = 0 means F_all
}

// NewFloating fills the tables for budget bytes (a^0 included) under opt.
func NewFloating(c *instances.Chain, budget int64, opt Options) (*Floating, error) {
	sc, m, err := discretize(c, budget, opt)
	if err != nil {
		return nil, err
	}
	n := c.Len()
	if n > MaxFloatingStages {
		return nil, fmt.Errorf("dp: floating: %d stages is too many (at most %d); use the persistent algorithm", n, MaxFloatingStages)
	}
	f := &Floating{c: c, sc: sc, budget: budget, m: m, n: n}
	if m < 0 {
		return f, nil
	}
	if b, limit := floatingBytes(n, m), memoryLimit(opt.MaxMemory); b > limit {
		k := slotsWithin(m, limit, func(k int) int64 { return floatingBytes(n, k) })
		return nil, &TooLargeError{Table: fmt.Sprintf("C_FL (floating) with %s on %d stages", slotsName(opt), n), Bytes: b, Limit: limit,
			Hint: slotsHint(k, "the persistent algorithm"), Slots: k, slotted: true}
	}
	f.aDown = make([]int, n+1)
	for l := 0; l <= n; l++ {
		f.aDown[l] = int(min(c.SizeA(l)/sc.q, int64(sc.a[l])))
	}
	f.idx = make([]int32, (n+1)*(n+1)*(n+1))
	k := int32(0)
	for i := range f.idx {
		f.idx[i] = -1
	}
	for s := 1; s <= n; s++ {
		for t := s; t <= n; t++ {
			for l := t; l <= n; l++ {
				f.idx[f.key(s, t, l)] = k
				k++
			}
		}
	}
	w := m + 1
	// Stop is read between the allocations and while they are filled with +Inf: tables of up
	// to --max-memory (2 GiB) take seconds to allocate and touch on a loaded machine, the cost
	// that made C_MP overrun its share (dp/persistent.go, allocChunks).
	size := int(k) * w
	f.g = make([]float64, size)
	if stopped(opt.Stop) {
		return nil, ErrStopped
	}
	f.h = make([]float64, size)
	if stopped(opt.Stop) {
		return nil, ErrStopped
	}
	f.gArg = make([]int16, size)
	f.hS = make([]int16, size)
	f.hT = make([]int16, size)
	inf := math.Inf(1)
	for lo := 0; lo < size; lo += infBlock {
		if stopped(opt.Stop) {
			return nil, ErrStopped
		}
		for i := lo; i < min(lo+infBlock, size); i++ {
			f.g[i], f.h[i] = inf, inf
		}
	}
	x := make([]float64, (n+1)*w) // X(t', m) for the current (r, ℓ)
	xS := make([]int16, (n+1)*w)
	for l := 1; l <= n; l++ {
		if stopped(opt.Stop) {
			return nil, ErrStopped
		}
		for r := l; r >= 1; r-- {
			f.fillX(r, l, x, xS)
			for t := r; t <= l; t++ {
				f.fillH(r, t, l, x, xS)
			}
			for t := r; t <= l; t++ {
				f.fillG(r, t, l)
			}
		}
	}
	return f, nil
}

// infBlock is how many entries NewFloating fills between two reads of Stop (64 MiB of G and H).
const infBlock = 4 << 20

// FloatingBytes estimates the memory of the C_FL table (NewFloating, FloatingLowerBound) of n
// stages with slots slots: per state (s, t, ℓ), s ≤ t ≤ ℓ, rows of slots+1 values of G and H
// (float64) and arguments (three int16), the (n+1)³ state index and the X buffers. 200
// stages with 500 slots: 14.8 GB.
func FloatingBytes(n, slots int) int64 { return floatingBytes(n, slots) }

// floatingBytes is the size of NewFloating's allocations for n stages and m slots; keep it
// next to them.
func floatingBytes(n, m int) int64 {
	states := float64(n) * float64(n+1) * float64(n+2) / 6
	w := float64(m + 1)
	return satMul(states, w, 8+8+2+2+2) + satMul(float64(n+1), float64(n+1), float64(n+1), 4) + satMul(float64(n+1), w, 8+2)
}

func (f *Floating) key(s, t, l int) int { return (s*(f.n+1)+t)*(f.n+1) + l }

func (f *Floating) row(tab []float64, s, t, l int) []float64 {
	i := int(f.idx[f.key(s, t, l)])
	w := f.m + 1
	return tab[i*w : (i+1)*w]
}

func (f *Floating) off(s, t, l int) int { return int(f.idx[f.key(s, t, l)]) * (f.m + 1) }

// fillX computes X(t', m) = min_{r < s' ≤ t'} Σ_{j=r}^{s'-1} u_f^j + G(s', t', ℓ, m − ω_a^{s'-1})
// over the splits whose forward steps F_ck^r F_∅^{r+1..s'-1} fit in m with δ^ℓ.
func (f *Floating) fillX(r, l int, x []float64, xS []int16) {
	sc := f.sc
	w := f.m + 1
	for i := range x {
		x[i], xS[i] = math.Inf(1), 0
	}
	fwd := 0
	pre := 0.0
	for s2 := r + 1; s2 <= l; s2++ {
		fwd = sc.splitPeak(r, s2, fwd)
		pre += sc.uf[s2-1]
		need := sc.d[l] + fwd
		if need > f.m {
			break
		}
		off := sc.a[s2-1]
		for t2 := s2; t2 <= l; t2++ {
			G := f.row(f.g, s2, t2, l)
			X := x[t2*w : (t2+1)*w]
			XS := xS[t2*w : (t2+1)*w]
			for m := max(need, off); m <= f.m; m++ {
				if v := pre + G[m-off]; v < X[m] {
					X[m], XS[m] = v, int16(s2)
				}
			}
		}
	}
}

func (f *Floating) fillH(r, t, l int, x []float64, xS []int16) {
	sc := f.sc
	w := f.m + 1
	o := f.off(r, t, l)
	H, HS, HT := f.h[o:o+w], f.hS[o:o+w], f.hT[o:o+w]
	if t == r {
		need := max(sc.d[l]+sc.abar[r]+sc.of[r], sc.d[r]+sc.abar[r]+sc.d[r-1]+sc.ob[r])
		base := sc.uf[r] + sc.ub[r]
		if l == r {
			for m := need; m <= f.m; m++ {
				H[m] = base
			}
		} else {
			G := f.row(f.g, r+1, r+1, l)
			off := sc.abar[r]
			for m := need; m <= f.m; m++ {
				if v := base + G[m-off]; v < H[m] {
					H[m] = v
				}
			}
		}
	}
	for t2 := t + 1; t2 <= l; t2++ {
		X, XS := x[t2*w:(t2+1)*w], xS[t2*w:(t2+1)*w]
		G := f.row(f.g, r, t, t2-1)
		for m := 0; m <= f.m; m++ {
			if v := X[m] + G[m]; v < H[m] {
				H[m], HS[m], HT[m] = v, XS[m], int16(t2)
			}
		}
	}
}

func (f *Floating) fillG(s, t, l int) {
	sc := f.sc
	w := f.m + 1
	o := f.off(s, t, l)
	G, GA := f.g[o:o+w], f.gArg[o:o+w]
	copy(G, f.row(f.h, s, t, l))
	for i := range GA {
		GA[i] = int16(s)
	}
	// Float the (plain) checkpoint from s-1 to r-1, s < r ≤ t.
	pre := 0.0
	moves := 0 // peak of the F_∅ moves, δ^ℓ included, before crediting ω_a^{s-1}
	for r := s + 1; r <= t; r++ {
		j := r - 1
		moves = max(moves, sc.d[l]+sc.a[j-1]+sc.a[j]+sc.of[j])
		pre += sc.uf[j]
		if sc.a[r-1] < f.aDown[s-1] {
			continue // Cor. 4.5: a checkpoint only floats to a larger or equal size
		}
		shift := sc.a[r-1] - f.aDown[s-1]
		H := f.row(f.h, r, t, l)
		from := max(moves-f.aDown[s-1], shift, 0)
		for m := from; m <= f.m; m++ {
			if v := pre + H[m-shift]; v < G[m] {
				G[m], GA[m] = v, int16(r)
			}
		}
	}
}

// Solve returns the best weakly persistent sequence (an optimal one, by Lemma 4.4) for
// budget ≤ the table's budget, replayed by verify.Remat as in Persistent.Solve.
func (f *Floating) Solve(budget int64) (Result, error) {
	if budget > f.budget {
		return Result{}, fmt.Errorf("dp: budget %d above the table's %d", budget, f.budget)
	}
	res := Result{Budget: budget, SlotSize: f.sc.q}
	avail := budget - f.c.A0
	if avail < 0 || f.m < 0 {
		return res, nil
	}
	m := min(int(avail/f.sc.q), f.m)
	want := f.row(f.g, 1, 1, f.n)[m]
	if math.IsInf(want, 1) {
		return res, nil
	}
	seq := make(schedule.Sequence, 0, 4*f.n)
	f.rebuildG(&seq, 1, 1, f.n, m)
	return check(f.c, seq, want, budget, res)
}

func (f *Floating) rebuildG(seq *schedule.Sequence, s, t, l, m int) {
	r := int(f.gArg[f.off(s, t, l)+m])
	if r == s {
		f.rebuildH(seq, s, t, l, m)
		return
	}
	for j := s; j < r; j++ {
		*seq = append(*seq, schedule.Op{Kind: schedule.Fn, Stage: j})
	}
	f.rebuildH(seq, r, t, l, m-(f.sc.a[r-1]-f.aDown[s-1]))
}

func (f *Floating) rebuildH(seq *schedule.Sequence, r, t, l, m int) {
	o := f.off(r, t, l) + m
	s2, t2 := int(f.hS[o]), int(f.hT[o])
	if s2 == 0 {
		*seq = append(*seq, schedule.Op{Kind: schedule.Fall, Stage: r})
		if l > r {
			f.rebuildG(seq, r+1, r+1, l, m-f.sc.abar[r])
		}
		*seq = append(*seq, schedule.Op{Kind: schedule.B, Stage: r})
		return
	}
	*seq = append(*seq, schedule.Op{Kind: schedule.Fck, Stage: r})
	for j := r + 1; j < s2; j++ {
		*seq = append(*seq, schedule.Op{Kind: schedule.Fn, Stage: j})
	}
	f.rebuildG(seq, s2, t2, l, m-f.sc.a[s2-1])
	f.rebuildG(seq, r, t, t2-1, m)
}

// Frontier returns the budgets at which the best weakly persistent makespan improves.
func (f *Floating) Frontier() []Point {
	if f.m < 0 {
		return nil
	}
	return frontier(f.row(f.g, 1, 1, f.n), f.c.A0, f.sc.q)
}

// FloatingLowerBound returns a certified lower bound on the optimal makespan of c under budget
// (004's model): the optimum of C_FL on the chain with every size rounded DOWN to slots, a
// relaxation in which every sequence that fits in bytes still fits. With Exact it is the
// optimum itself. feasible = false proves that no sequence fits the budget.
func FloatingLowerBound(c *instances.Chain, budget int64, opt Options) (bound float64, feasible bool, err error) {
	opt.lower = true
	f, err := NewFloating(c, budget, opt)
	if err != nil {
		return 0, false, err
	}
	if f.m < 0 {
		return math.Inf(1), false, nil
	}
	v := f.row(f.g, 1, 1, f.n)[f.m]
	return v, !math.IsInf(v, 1), nil
}

// SolveFloating fills the tables for budget and returns the best weakly persistent sequence.
func SolveFloating(c *instances.Chain, budget int64, opt Options) (Result, error) {
	f, err := NewFloating(c, budget, opt)
	if err != nil {
		return Result{}, err
	}
	return f.Solve(budget)
}
