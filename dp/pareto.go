package dp

import (
	"math"
	"sort"
)

// pareto is a non-increasing step function of the memory m (bytes), given by its breakpoints:
// the value is val[i] on [mem[i], mem[i+1]) (the last one up to +∞) and +∞ below mem[0]; mem
// increases strictly and val decreases strictly, so the breakpoints are the Pareto set of
// (memory, makespan) pairs of a sub-chain. arg[i] names the candidate of the recurrence that
// reaches val[i] (its meaning is the table's).
type pareto struct {
	mem []int64
	val []float64
	arg []int32
}

// at returns the index of the breakpoint in force at m, or -1 when the value there is +∞.
func (p *pareto) at(m int64) int {
	return sort.Search(len(p.mem), func(i int) bool { return p.mem[i] > m }) - 1
}

// value is the function at m (+∞ below the first breakpoint).
func (p *pareto) value(m int64) float64 {
	if i := p.at(m); i >= 0 {
		return p.val[i]
	}
	return math.Inf(1)
}

// least is the value for unbounded memory (+∞ for an empty function).
func (p *pareto) least() float64 {
	if len(p.val) == 0 {
		return math.Inf(1)
	}
	return p.val[len(p.val)-1]
}

// thin replaces p by a coarser staircase below it: each run of breakpoints whose values fall
// by less than eps from the run's first is one breakpoint, at the run's first memory with its
// last value. At every m the result is ≤ p's value and > p's value − eps, and it has at most
// (first value − least value)/eps + 1 breakpoints. A table filled from thinned frontiers
// (minima of sums of them, each sum non-decreasing in every term) is a relaxation: its
// values are lower bounds on the exact table's. eps ≤ 0 leaves p as it is.
func (p *pareto) thin(eps float64) {
	if !(eps > 0) {
		return
	}
	k := 0
	for i := 0; i < len(p.mem); {
		j := i
		for j+1 < len(p.mem) && p.val[i]-p.val[j+1] < eps {
			j++
		}
		p.mem[k], p.val[k], p.arg[k] = p.mem[i], p.val[j], p.arg[j]
		k++
		i = j + 1
	}
	p.mem, p.val, p.arg = p.mem[:k], p.val[:k], p.arg[:k]
}

func (p *pareto) reset() { p.mem, p.val, p.arg = p.mem[:0], p.val[:0], p.arg[:0] }

func (p *pareto) push(m int64, v float64, a int32) {
	p.mem, p.val, p.arg = append(p.mem, m), append(p.val, v), append(p.arg, a)
}

// envelope builds the lower envelope min(cand_1, cand_2, …) of candidates given one at a time,
// each of the form c + A(m − offA) [+ B(m)] on lo ≤ m ≤ hi. On ties the earlier candidate
// keeps the breakpoint, as the slotted tables keep the first candidate that reaches the
// minimum.
type envelope struct {
	cur, cand, tmp pareto
	hi             int64
	// lim: values above it are not needed (a cutoff's limit; +∞ when none), so a candidate
	// starts where it may come under it.
	lim float64
	src []sourcePart // scratch of the collapsed tables' splitsFrom
}

func (e *envelope) start(hi int64) { e.startUnder(hi, math.Inf(1)) }

// startUnder starts an envelope whose values above lim are not needed.
func (e *envelope) startUnder(hi int64, lim float64) {
	e.cur.reset()
	e.hi, e.lim = hi, lim
}

// firstUnder returns the first m where c + A(m − off) ≤ v (A non-increasing), or MaxInt64.
func firstUnder(A *pareto, c float64, off int64, v float64) int64 {
	i := sort.Search(len(A.val), func(i int) bool { return c+A.val[i] <= v })
	if i == len(A.val) {
		return math.MaxInt64
	}
	return A.mem[i] + off
}

// relTol is the relative difference below which two makespans count as equal in a frontier:
// sums of the same durations in another order differ in the last bits, and without it such a
// difference would count as a (meaningless) breakpoint. A frontier is thus exact up to 1e-12
// relative, far below what Solve's replay check (1e-9) accepts.
const relTol = 1e-12

// below is the threshold a value must be under to count as lower than v (+∞ for v = +∞).
func below(v float64) float64 { return v * (1 - relTol) }

// add merges the candidate c + A(m − offA) + B(m) (B nil: c + A(m − offA)) restricted to
// lo ≤ m ≤ e.hi, labelled id (with argA, id | A's own argument << 16). The float sums are
// (c + A) + B, as in the slotted tables.
//
// The candidate is at least bound = c + min A + min B, and the envelope is non-increasing, so
// it can only win on the window [x, w) from its first point x to the first breakpoint w of the
// envelope at or under bound: only that window is generated and merged.
func (e *envelope) add(c float64, A *pareto, offA int64, B *pareto, lo int64, id int32, argA bool) {
	e.addShifted(c, A, offA, B, 0, lo, id, argA)
}

// addShifted is add with B read at m − offB: the candidate c + A(m − offA) + B(m − offB)
// (the tables with phase credits read a later phase's row at a larger budget, offB < 0).
func (e *envelope) addShifted(c float64, A *pareto, offA int64, B *pareto, offB int64, lo int64, id int32, argA bool) {
	if len(A.mem) == 0 || B != nil && len(B.mem) == 0 {
		return
	}
	x := max(lo, A.mem[0]+offA)
	if B != nil {
		x = max(x, B.mem[0]+offB)
	}
	if e.lim < math.Inf(1) {
		// The candidate is at least c + A(m − offA) + min B and c + min A + B(m): it cannot
		// come under lim before both do.
		bmin, amin := 0.0, A.least()
		if B != nil {
			bmin = B.least()
			x = max(x, firstUnder(B, c+amin, offB, e.lim))
		}
		x = max(x, firstUnder(A, c+bmin, offA, e.lim))
	}
	if x > e.hi {
		return
	}
	bound := c + A.least()
	if B != nil {
		bound += B.least()
	}
	cur := &e.cur
	// p0: envelope breakpoints before x; w: the first one at or under bound (len if none).
	p0 := sort.Search(len(cur.mem), func(i int) bool { return cur.mem[i] >= x })
	w := sort.Search(len(cur.val), func(i int) bool { return cur.val[i] <= bound })
	if w < p0 || w == p0 && p0 < len(cur.mem) && cur.mem[p0] == x {
		return // already at or under the bound at x: the candidate never wins
	}
	wend := e.hi
	if w < len(cur.mem) {
		wend = cur.mem[w] - 1
	}
	// The candidate on [x, wend].
	cd := &e.cand
	cd.reset()
	ia := A.at(x - offA)
	jb := -1
	v := c + A.val[ia]
	if B != nil {
		jb = B.at(x - offB)
		v += B.val[jb]
	}
	label := func() int32 {
		if argA {
			return A.arg[ia]<<16 | id
		}
		return id
	}
	cd.push(x, v, label())
	thr := below(v)
	for {
		next := int64(math.MaxInt64)
		if ia+1 < len(A.mem) {
			next = A.mem[ia+1] + offA
		}
		if B != nil && jb+1 < len(B.mem) {
			next = min(next, B.mem[jb+1]+offB)
		}
		if next > wend {
			break
		}
		if ia+1 < len(A.mem) && A.mem[ia+1]+offA == next {
			ia++
		}
		v := c + A.val[ia]
		if B != nil {
			if jb+1 < len(B.mem) && B.mem[jb+1]+offB == next {
				jb++
			}
			v += B.val[jb]
		}
		if v < thr {
			cd.push(next, v, label())
			thr = below(v)
		}
	}
	e.merge(p0, w)
}

// merge sets cur = min(cur, cand), cur winning ties, where cand lies in the window between
// cur's breakpoints p0 (the first at or after cand's start) and w (where cur is already at or
// under every value of cand): the prefix and the suffix are copied, the window merged.
func (e *envelope) merge(p0, w int) {
	a, b, out := &e.cur, &e.cand, &e.tmp
	out.mem = append(out.mem[:0], a.mem[:p0]...)
	out.val = append(out.val[:0], a.val[:p0]...)
	out.arg = append(out.arg[:0], a.arg[:p0]...)
	va, ga := math.Inf(1), int32(0)
	if p0 > 0 {
		va, ga = a.val[p0-1], a.arg[p0-1]
	}
	vb, gb := math.Inf(1), int32(0)
	thr := below(va)
	i, j := p0, 0
	for i < w || j < len(b.mem) {
		x := int64(math.MaxInt64)
		if i < w {
			x = a.mem[i]
		}
		if j < len(b.mem) {
			x = min(x, b.mem[j])
		}
		if i < w && a.mem[i] == x {
			va, ga = a.val[i], a.arg[i]
			i++
		}
		if j < len(b.mem) && b.mem[j] == x {
			vb, gb = b.val[j], b.arg[j]
			j++
		}
		v, g := va, ga
		if vb < below(va) {
			v, g = vb, gb
		}
		if v < thr {
			out.push(x, v, g)
			thr = below(v)
		}
	}
	// From a.mem[w] on the envelope is cur's own: its first breakpoint may tie the window's
	// last value; the rest are already apart.
	if w < len(a.mem) && !(a.val[w] < thr) {
		w++
	}
	out.mem = append(out.mem, a.mem[w:]...)
	out.val = append(out.val, a.val[w:]...)
	out.arg = append(out.arg, a.arg[w:]...)
	e.cur, e.tmp = e.tmp, e.cur
}

// arena hands out the final breakpoint lists of a table from a few large blocks.
type arena struct {
	mem  []int64
	val  []float64
	arg  []int32
	size int // breakpoints stored
}

// keep copies p into the arena and returns the copy.
func (ar *arena) keep(p *pareto) pareto {
	n := len(p.mem)
	if cap(ar.mem)-len(ar.mem) < n {
		c := max(n, 1<<16)
		ar.mem, ar.val, ar.arg = make([]int64, 0, c), make([]float64, 0, c), make([]int32, 0, c)
	}
	k := len(ar.mem)
	ar.mem, ar.val, ar.arg = append(ar.mem, p.mem...), append(ar.val, p.val...), append(ar.arg, p.arg...)
	ar.size += n
	return pareto{mem: ar.mem[k : k+n : k+n], val: ar.val[k : k+n : k+n], arg: ar.arg[k : k+n : k+n]}
}

// reset empties the arena for reuse: what it handed out before is overwritten from now on.
func (ar *arena) reset() {
	ar.mem, ar.val, ar.arg = ar.mem[:0], ar.val[:0], ar.arg[:0]
	ar.size = 0
}
