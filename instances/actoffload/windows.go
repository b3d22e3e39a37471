package actoffload

import (
	"errors"
	"math"
	"sort"
)

// maxWindowStates caps the Pareto frontier of WholeWindows; beyond it adjacent states are
// merged into one that claims the larger volume at the earlier completion, which only relaxes
// (the windows stay certified lower bounds, a little weaker).
const maxWindowStates = 1 << 16

// WholeWindows strengthens FluidWindows with whole transfers: at the start of a tight
// operation k (m_k > M_GPU) the activations away form a set S ⊆ {x_j : k in the window of x_j}
// with Σ_S |x_j| ≥ m_k − M_GPU, each released — offloaded whole, one at a time on the link,
// starting after F_{j−1} has produced it — before s_k, and prefetched whole after k has ended,
// ending before B_j starts (a prefetch that starts while k runs allocates its size during k, so
// the bytes that must stay away during k can only start back once k has ended; the overshoot
// beyond them may start earlier, and S is chosen freely, so a minimum over S still bounds). So
//
//	s_k ≥ min_S C(S)         with C(S) the earliest completion of offloading S in index order
//	                         from the release times Head[F_{j−1}] + u_{F_{j−1}} (index order is
//	                         the release order, which minimizes the last completion on one
//	                         machine);
//	T − s_k ≥ u_k + min_S C'(S)  the same in reversed time for the prefetches, released at
//	                         Tail[B_j] (the least time from the start of B_j to the end) and
//	                         processed by increasing j.
//
// The window of x_j is F_{j+1}..B_{j+1}, so the candidates of every operation are a prefix
// x_0..x_{m−1} of the activations (m = i for F_i and for B_i): one Pareto frontier of (volume,
// completion) over the subsets of the prefix, grown by one activation at a time, answers every
// operation — O(n · frontier) for the whole chain (ResNet-1001: milliseconds, where a frontier
// per operation took a minute). Heads are computed by increasing prefix so that later releases
// use the improved heads, tails likewise from B_0 backwards in time; then s_{k+1} ≥ s_k + u_k
// propagates both ways. Every Problem 1 schedule satisfies them: they are certified lower
// bounds on the start of each operation and on what follows it, and max_k Head[k] + Tail[k]
// (WholeTransfers) is a lower bound on the makespan (at least the fluid one).
func (p *Problem) WholeWindows() (head, tail []float64, ok bool) {
	head, tail, ok, _ = p.WholeWindowsUntil(nil)
	return head, tail, ok
}

// ErrStopped says that a bound was stopped (its stop channel closed: a deadline or Ctrl-C)
// before it was complete.
var ErrStopped = errors.New("actoffload: stopped before the bound was complete")

// WholeWindowsUntil is WholeWindows stopped when stop closes (checked once per activation:
// each grows a frontier of up to 2^16 states, and a 20 001-stage chain takes minutes), with
// ErrStopped.
func (p *Problem) WholeWindowsUntil(stop <-chan struct{}) (head, tail []float64, ok bool, err error) {
	head, tail, ok = p.FluidWindows()
	if !ok {
		return nil, nil, false, nil
	}
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	n := p.L() + 1
	need := p.Needs()
	u := func(k int) float64 {
		if k < n {
			return p.UF[k]
		}
		return p.UB[2*n-1-k]
	}
	dur := func(j int) float64 { return float64(p.X[j]) / p.Beta }
	// minC[k]: the least completion over the frontier for operation k (0 where it is not tight).
	minC := make([]float64, 2*n)
	query := func(f *frontier, k int) bool {
		if need[k] <= 0 {
			return true
		}
		c, ok := f.min(need[k])
		minC[k] = c
		return ok
	}
	// Heads: prefix m serves F_m and B_m; x_m is released when F_{m−1} ends.
	f := newFrontier()
	for m := 0; m < n; m++ {
		if m > 0 {
			head[m] = math.Max(head[m], head[m-1]+u(m-1))
		}
		if stopped() {
			return nil, nil, false, ErrStopped
		}
		if !query(f, m) || !query(f, 2*n-1-m) {
			return nil, nil, false, nil
		}
		head[m] = math.Max(head[m], minC[m])
		if rel := 0.0; p.X[m] > 0 {
			if m > 0 {
				rel = head[m-1] + u(m-1)
			}
			f.add(p.X[m], rel, dur(m))
		}
	}
	for k := n; k < 2*n; k++ {
		head[k] = math.Max(head[k], math.Max(head[k-1]+u(k-1), minC[k]))
	}
	// Tails, in reversed time: prefix m serves B_m and F_m; the prefetch of x_m is released
	// (in reversed time) at Tail[B_m], and B_0 comes first.
	clear(minC)
	f = newFrontier()
	for m := 0; m < n; m++ {
		k := 2*n - 1 - m
		if k < 2*n-1 {
			tail[k] = math.Max(tail[k], tail[k+1]+u(k))
		}
		if stopped() {
			return nil, nil, false, ErrStopped
		}
		if !query(f, k) || !query(f, m) {
			return nil, nil, false, nil
		}
		if need[k] > 0 {
			tail[k] = math.Max(tail[k], u(k)+minC[k])
		}
		if p.X[m] > 0 {
			f.add(p.X[m], tail[k], dur(m))
		}
	}
	for k := n - 1; k >= 0; k-- {
		tail[k] = math.Max(tail[k], tail[k+1]+u(k))
		if need[k] > 0 {
			tail[k] = math.Max(tail[k], u(k)+minC[k])
		}
	}
	for k := 1; k < 2*n; k++ {
		head[k] = math.Max(head[k], head[k-1]+u(k-1))
	}
	for k := 2*n - 2; k >= 0; k-- {
		tail[k] = math.Max(tail[k], tail[k+1]+u(k))
	}
	return head, tail, true, nil
}

// WholeTransfers returns max_k Head[k] + Tail[k] of WholeWindows, a certified lower bound on
// the makespan of every Problem 1 schedule (at least the fluid windows' bound), and +Inf when
// even the windows admit no schedule.
func (p *Problem) WholeTransfers() float64 {
	v, _ := p.WholeTransfersUntil(nil)
	return v
}

// WholeTransfersUntil is WholeTransfers stopped when stop closes (ErrStopped, no bound).
func (p *Problem) WholeTransfersUntil(stop <-chan struct{}) (float64, error) {
	head, tail, ok, err := p.WholeWindowsUntil(stop)
	if err != nil {
		return math.NaN(), err
	}
	if !ok {
		return math.Inf(1), nil
	}
	var best float64
	for k := range head {
		best = math.Max(best, head[k]+tail[k])
	}
	return best, nil
}

// frontier is the Pareto set of (volume, earliest completion) over the subsets of the
// activations added so far, each subset offloaded in the order of addition, one at a time,
// each after its release: volumes and completions both strictly increasing (a state with more
// volume and no later completion dominates).
type frontier struct {
	v []int64
	c []float64
	// scratch for add
	v2 []int64
	c2 []float64
}

func newFrontier() *frontier { return &frontier{v: []int64{0}, c: []float64{0}} }

// add extends every subset by an activation of the given size, release and duration:
// F ∪ {(v + size, max(c, rel) + dur)}, merged (both lists are sorted by volume) and filtered.
func (f *frontier) add(size int64, rel, dur float64) {
	nv, nc := f.v2[:0], f.c2[:0]
	push := func(v int64, c float64) {
		// Keep v increasing and c strictly increasing: a state with no more completion and at
		// least the volume replaces the states before it that it dominates.
		for len(nv) > 0 && nc[len(nc)-1] >= c {
			nv, nc = nv[:len(nv)-1], nc[:len(nc)-1]
		}
		if len(nv) > 0 && nv[len(nv)-1] >= v {
			return
		}
		nv, nc = append(nv, v), append(nc, c)
	}
	i, j := 0, 0
	for i < len(f.v) || j < len(f.v) {
		if j == len(f.v) || (i < len(f.v) && f.v[i] <= f.v[j]+size) {
			push(f.v[i], f.c[i])
			i++
			continue
		}
		push(f.v[j]+size, math.Max(f.c[j], rel)+dur)
		j++
	}
	if len(nv) > maxWindowStates {
		// Merge adjacent pairs into (larger volume, earlier completion): optimistic, so every
		// answer stays a lower bound.
		w := 0
		for a := 0; a < len(nv); a += 2 {
			b := min(a+1, len(nv)-1)
			nv[w], nc[w] = nv[b], nc[a]
			w++
		}
		nv, nc = nv[:w], nc[:w]
	}
	f.v, f.v2 = nv, f.v
	f.c, f.c2 = nc, f.c
}

// min returns the earliest completion of a subset with volume ≥ need, and false when even all
// the activations together are too small.
func (f *frontier) min(need int64) (float64, bool) {
	i := sort.Search(len(f.v), func(i int) bool { return f.v[i] >= need })
	if i == len(f.v) {
		return 0, false
	}
	return f.c[i], true
}
