package actoffload

import (
	"math"
	"sort"
)

// phase is one side of Problem 1 cut at an operation k* (Split): the link's traffic in one
// direction only, solved exactly for a relaxation.
//
// Forward (the offloads before k*): operations 0..k* in order; operation k starts once the
// previous one has ended and the offloads completed so far, of activations in its window
// (x_j with j ≤ min(k−1, 2n−2−k)), total at least its need m_k − M_GPU; x_j may be offloaded
// once F_{j−1} has ended (x_0 at once); one offload at a time. The value of a set is the start
// of k*.
//
// Backward, in reversed time τ = T − t (the prefetches after k*): the operations 2n−1 down to
// k*; a prefetch (a job in reversed time) of x_j may run once B_j has ended in reversed time
// (the prefetch ends before B_j starts), and operation k' starts (in reversed time: its end in
// real time) once the jobs completed so far — the prefetches that start after k' ends — of
// activations in its window total its need. The value of a set is the end of k* in reversed
// time, T − s_{k*}, at least the completion of every job (every prefetch starts after s_{k*}).
//
// Each is a one-machine sequencing problem with releases set by the operations it drives. A
// state is how many of each size have been moved (among activations of equal size the lower
// index is released no later and sits in every window the higher one does, so the moved ones
// of a size are the lowest-indexed, in index order — the staircase's argument); per state, the
// Pareto set of labels (link-free time, operation clock, release times of the activations whose
// operation has run and that are still to move) — a label no later in all of them than another
// replays every continuation of it no later — so the search is exact for the relaxation.
type phase struct {
	backward bool
	ops      []int     // operation indices in the phase's order
	need     []int64   // per operation of ops: m_k − M_GPU
	u        []float64 // per operation of ops
	elig     [][]int   // per operation, per class: how many of the class are in its window
	relAt    [][]int   // per operation: items released when it ends
	init     []int     // items released at time 0
	items    []int     // activation index per item
	class    []int     // class per item
	size     []int64   // per class
	dur      []float64 // per class: |x|/β
	members  [][]int   // per class: items by increasing activation index
	weight   []int     // mixed radix
	states   int
}

// phaseLabel is one partial sequence of jobs of a state.
type phaseLabel struct {
	f, clock float64 // the link's free time; the end of the last operation run
	value    float64 // the phase's value once every operation has run (NaN before)
	// rel[i]: when item i was released, NaN while its operation has not run, −1 once moved.
	rel    []float64
	parent *phaseLabel
	item   int
}

// newPhase builds one side of the cut at operation split. Its activations are those of some
// window of its operations; classes are their distinct sizes, members by increasing index.
// With more than maxStates states (or too many to count) it returns the phase without its
// operations' tables: the caller refuses it, and a long chain's would take seconds to build.
func newPhase(p *Problem, needs []int64, split int, backward bool, maxStates int) *phase {
	n := p.L() + 1
	ph := &phase{backward: backward}
	if backward {
		for k := 2*n - 1; k >= split; k-- {
			ph.ops = append(ph.ops, k)
		}
	} else {
		for k := 0; k <= split; k++ {
			ph.ops = append(ph.ops, k)
		}
	}
	maxLast := -1
	for _, k := range ph.ops {
		maxLast = max(maxLast, windowLast(n, k))
	}
	// Items are the activations of some window, numbered by increasing index; members hold
	// item numbers.
	var acts [][]int
	ph.size, ph.dur, acts = sizeClasses(p, maxLast)
	itemOf := map[int]int{}
	for j := 0; j <= maxLast && j < len(p.X); j++ {
		if p.X[j] > 0 {
			itemOf[j] = len(ph.items)
			ph.items = append(ph.items, j)
		}
	}
	ph.class = make([]int, len(ph.items))
	ph.members = make([][]int, len(acts))
	for c, js := range acts {
		for _, j := range js {
			ph.members[c] = append(ph.members[c], itemOf[j])
			ph.class[itemOf[j]] = c
		}
	}
	ph.weight, ph.states = mixedRadix(ph.members)
	if ph.states < 0 || ph.states > maxStates {
		return ph
	}
	if i, ok := itemOf[0]; ok && !backward {
		ph.init = append(ph.init, i)
	}
	for _, k := range ph.ops {
		ph.need = append(ph.need, needs[k])
		ph.u = append(ph.u, opTime(p, k))
		e := make([]int, len(ph.size))
		last := windowLast(n, k)
		for c, ms := range ph.members {
			// Members by increasing index: those in the window are a prefix.
			e[c] = sort.Search(len(ms), func(m int) bool { return ph.items[ms[m]] > last })
		}
		ph.elig = append(ph.elig, e)
		var rel []int
		if backward && k >= n {
			if i, ok := itemOf[2*n-1-k]; ok { // B_j releases the prefetch of x_j (reversed time)
				rel = append(rel, i)
			}
		} else if !backward && k < n {
			if i, ok := itemOf[k+1]; ok { // F_k produces x_{k+1}
				rel = append(rel, i)
			}
		}
		ph.relAt = append(ph.relAt, rel)
	}
	return ph
}

// windowLast is the last activation of operation k's window: x_j may be away during k iff
// j ≤ min(k−1, 2n−2−k) (x_j's window is F_{j+1}..B_{j+1}).
func windowLast(n, k int) int { return min(k-1, 2*n-2-k) }

// opTime is the duration of operation k.
func opTime(p *Problem, k int) float64 {
	n := p.L() + 1
	if k < n {
		return p.UF[k]
	}
	return p.UB[2*n-1-k]
}

// counts decodes a state.
func (ph *phase) counts(x int, cnt []int) {
	for c := range ph.size {
		cnt[c] = x % (len(ph.members[c]) + 1)
		x /= len(ph.members[c]) + 1
	}
}

// front is the first operation, from r on, whose need the counts do not cover (len(ops) when
// all are covered): every operation before it can run.
func (ph *phase) front(r int, cnt []int) int {
	for ; r < len(ph.ops); r++ {
		var v int64
		for c, e := range ph.elig[r] {
			v += ph.size[c] * int64(min(cnt[c], e))
		}
		if v < ph.need[r] {
			return r
		}
	}
	return r
}

// run runs operations from..to−1 on l: the first waits for the job that ended at end.
func (ph *phase) run(l *phaseLabel, from, to int, end float64) {
	for r := from; r < to; r++ {
		s := l.clock
		if r == from {
			s = math.Max(s, end)
		}
		if r == len(ph.ops)-1 && !ph.backward {
			l.value = s // the start of k*
		}
		l.clock = s + ph.u[r]
		for _, i := range ph.relAt[r] {
			l.rel[i] = l.clock
		}
	}
}

// dominates: a's continuations replay b's no later (same state, so the same operations have
// run and the same items moved).
func (a *phaseLabel) dominates(b *phaseLabel) bool {
	if a.f > b.f || a.clock > b.clock || a.value > b.value {
		return false // NaN values (not all run) compare false, equally for both
	}
	for i, ra := range a.rel {
		if ra >= 0 && math.Max(ra, a.f) > math.Max(b.rel[i], b.f) {
			return false
		}
	}
	return true
}

// solve fills, per state whose operations have all run, the least value over its labels
// (value: the phase's value, at least the link's free time) and that label, and the least
// start of k* over its labels (forward only: without the link's free time); +Inf elsewhere.
// peak is the most labels alive at once. It stops with ErrSplitLimit past maxLabels labels
// alive at once, or ErrSplitStopped.
func (ph *phase) solve(maxLabels int, stop <-chan struct{}) (value, start []float64, best []*phaseLabel, peak int, err error) {
	if ph.states < 0 {
		return nil, nil, nil, peak, ErrSplitLimit
	}
	R := len(ph.ops)
	value = make([]float64, ph.states)
	start = make([]float64, ph.states)
	best = make([]*phaseLabel, ph.states)
	for i := range value {
		value[i], start[i] = math.Inf(1), math.Inf(1)
	}
	labels := make([][]*phaseLabel, ph.states)
	fronts := make([]int32, ph.states)
	cnt := make([]int, len(ph.size))
	l0 := &phaseLabel{rel: make([]float64, len(ph.items)), value: math.NaN(), item: -1}
	for i := range l0.rel {
		l0.rel[i] = math.NaN()
	}
	for _, i := range ph.init {
		l0.rel[i] = 0
	}
	fr0 := ph.front(0, cnt)
	ph.run(l0, 0, fr0, 0)
	labels[0], fronts[0] = []*phaseLabel{l0}, int32(fr0)
	alive := 1
	for x := 0; x < ph.states; x++ {
		ls := labels[x]
		if len(ls) == 0 {
			continue
		}
		if x&0xff == 0 {
			select {
			case <-stop:
				return nil, nil, nil, peak, ErrSplitStopped
			default:
			}
		}
		ph.counts(x, cnt)
		fr := int(fronts[x])
		if fr == R {
			for _, l := range ls {
				v := math.Max(l.clock, l.f) // backward: the end of k*; both: every job done
				if !ph.backward {
					v = math.Max(l.value, l.f)
					start[x] = math.Min(start[x], l.value)
				}
				if v < value[x] {
					value[x], best[x] = v, l
				}
			}
		}
		for c := range ph.size {
			if cnt[c] == len(ph.members[c]) {
				continue
			}
			i := ph.members[c][cnt[c]]
			cnt[c]++
			y := x + ph.weight[c]
			nfr := ph.front(fr, cnt)
			fronts[y] = int32(nfr)
			cnt[c]--
			for _, l := range ls {
				rel := l.rel[i]
				if math.IsNaN(rel) {
					continue // its operation has not run: not released
				}
				end := math.Max(l.f, rel) + ph.dur[c]
				nl := &phaseLabel{f: end, clock: l.clock, value: l.value, rel: append([]float64(nil), l.rel...), parent: l, item: i}
				nl.rel[i] = -1
				ph.run(nl, fr, nfr, end)
				alive += insertLabel(&labels[y], nl)
			}
		}
		peak = max(peak, alive)
		alive -= len(ls)
		labels[x] = nil
		if alive > maxLabels {
			return nil, nil, nil, peak, ErrSplitLimit
		}
	}
	return value, start, best, peak, nil
}

// insertLabel adds l to the Pareto set *ls unless a label there dominates it, dropping the
// labels it dominates; it returns the change in the set's size.
func insertLabel(ls *[]*phaseLabel, l *phaseLabel) int {
	for _, o := range *ls {
		if o.dominates(l) {
			return 0
		}
	}
	before := len(*ls)
	out := (*ls)[:0]
	for _, o := range *ls {
		if !l.dominates(o) {
			out = append(out, o)
		}
	}
	*ls = append(out, l)
	return len(*ls) - before
}

// sequence lists the activations a label moved, in order.
func (ph *phase) sequence(l *phaseLabel) []int {
	var s []int
	for ; l != nil && l.item >= 0; l = l.parent {
		s = append(s, ph.items[l.item])
	}
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
	return s
}

// replay runs a sequence of activations through the phase: each job's start, each
// operation's start (in the phase's order and time), and the value; ok is false when the
// sequence does not reach the end.
func (ph *phase) replay(seq []int) (jobStart, opStart []float64, value float64, ok bool) {
	itemOf := map[int]int{}
	for i, j := range ph.items {
		itemOf[j] = i
	}
	R := len(ph.ops)
	cnt := make([]int, len(ph.size))
	rel := make([]float64, len(ph.items))
	for i := range rel {
		rel[i] = math.NaN()
	}
	for _, i := range ph.init {
		rel[i] = 0
	}
	opStart = make([]float64, R)
	clock, f, r := 0.0, 0.0, 0
	advance := func(end float64) {
		to := ph.front(r, cnt)
		for q := r; q < to; q++ {
			s := clock
			if q == r {
				s = math.Max(s, end)
			}
			opStart[q] = s
			clock = s + ph.u[q]
			for _, i := range ph.relAt[q] {
				rel[i] = clock
			}
		}
		r = to
	}
	advance(0)
	for _, j := range seq {
		i, in := itemOf[j]
		if !in || math.IsNaN(rel[i]) {
			return nil, nil, 0, false
		}
		s := math.Max(f, rel[i])
		jobStart = append(jobStart, s)
		f = s + ph.dur[ph.class[i]]
		cnt[ph.class[i]]++
		advance(f)
	}
	if r < R {
		return nil, nil, 0, false
	}
	if ph.backward {
		return jobStart, opStart, math.Max(clock, f), true
	}
	return jobStart, opStart, math.Max(opStart[R-1], f), true
}
