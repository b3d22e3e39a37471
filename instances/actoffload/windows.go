package actoffload

import (
	"math"
	"sort"
)

// maxWindowStates caps the Pareto frontier of one operation in WholeWindows; beyond it that
// operation keeps its fluid window (still a valid bound).
const maxWindowStates = 1 << 16

// WholeWindows strengthens FluidWindows with whole transfers: at the start of a tight
// operation k (m_k > M_GPU) the activations away form a set S ⊆ {x_j : k in the window of x_j}
// with Σ_S |x_j| ≥ m_k − M_GPU, each released — offloaded whole, one at a time on the link,
// starting after F_{j−1} has produced it — before s_k, and prefetched whole after s_k, ending
// before B_j starts. So
//
//	s_k ≥ min_S C(S)   with C(S) the earliest completion of offloading S in index order from
//	                   the release times Head[F_{j−1}] + u_{F_{j−1}} (index order is the
//	                   release order, which minimizes the last completion on one machine);
//	T − s_k ≥ min_S C'(S)  the same in reversed time for the prefetches, released at
//	                   Tail[B_j] (the least time from the start of B_j to the end) and
//	                   processed by increasing j.
//
// The minima run over a Pareto frontier of (volume, completion) built item by item; heads are
// computed by increasing k so that later releases use the improved heads, tails by decreasing
// k; then s_{k+1} ≥ s_k + u_k propagates both ways. Every Problem 1 schedule satisfies them:
// they are certified lower bounds on the start of each operation and on what follows it, and
// max_k Head[k] + Tail[k] is a lower bound on the makespan (at least the fluid one).
func (p *Problem) WholeWindows() (head, tail []float64, ok bool) {
	head, tail, ok = p.FluidWindows()
	if !ok {
		return nil, nil, false
	}
	n := p.L() + 1
	pos := func(i int, backward bool) int {
		if backward {
			return 2*n - 1 - i
		}
		return i
	}
	need := make([]int64, 2*n)
	for i := 0; i < n; i++ {
		need[pos(i, false)] = p.MemF(i) - p.MGPU
		need[pos(i, true)] = p.MemB(i) - p.MGPU
	}
	u := func(k int) float64 {
		if k < n {
			return p.UF[k]
		}
		return p.UB[2*n-1-k]
	}
	dur := func(j int) float64 { return float64(p.X[j]) / p.Beta }
	// items(k): the activations that may be away during operation k, by increasing index.
	items := func(k int) []int {
		var out []int
		for j := 0; j < n; j++ {
			if p.X[j] > 0 && k >= j+1 && k <= 2*n-2-j {
				out = append(out, j)
			}
		}
		return out
	}
	for k := 0; k < 2*n; k++ {
		if k > 0 {
			head[k] = math.Max(head[k], head[k-1]+u(k-1))
		}
		if need[k] <= 0 {
			continue
		}
		rel := func(j int) float64 {
			if j == 0 {
				return 0
			}
			return head[j-1] + u(j-1)
		}
		c, ok := minCompletion(items(k), need[k], p.X, rel, dur)
		if !ok {
			return nil, nil, false
		}
		head[k] = math.Max(head[k], c)
	}
	for k := 2*n - 1; k >= 0; k-- {
		if k < 2*n-1 {
			tail[k] = math.Max(tail[k], tail[k+1]+u(k))
		}
		if need[k] <= 0 {
			continue
		}
		it := items(k)
		// Reversed time: the prefetch of x_j is released at Tail[B_j]; increasing j is the
		// release order (B_0 is last in real time, first in reversed time).
		rel := func(j int) float64 { return tail[pos(j, true)] }
		c, ok := minCompletion(it, need[k], p.X, rel, dur)
		if !ok {
			return nil, nil, false
		}
		// The prefetches end by s_k in reversed time, i.e. T − s_k ≥ c; and op k itself runs
		// after s_k: nothing more is known of its overlap with them.
		tail[k] = math.Max(tail[k], c)
	}
	for k := 1; k < 2*n; k++ {
		head[k] = math.Max(head[k], head[k-1]+u(k-1))
	}
	for k := 2*n - 2; k >= 0; k-- {
		tail[k] = math.Max(tail[k], tail[k+1]+u(k))
	}
	return head, tail, true
}

// minCompletion returns min over subsets S of items (processed in the given order, each after
// its release) with Σ_S size ≥ need of the completion time of the last, and false when even
// all items together are too small. Above maxWindowStates frontier states it returns the
// relaxed value max(release of the earliest item, 0) + need/β-equivalent… conservatively the
// smallest release plus the least total duration reaching need, which is still ≤ the true
// minimum.
func minCompletion(items []int, need int64, size []int64, rel func(int) float64, dur func(int) float64) (float64, bool) {
	type state struct {
		v int64
		c float64
	}
	var total int64
	for _, j := range items {
		total += size[j]
	}
	if total < need {
		return 0, false
	}
	front := []state{{0, 0}}
	best := math.Inf(1)
	for _, j := range items {
		next := make([]state, 0, 2*len(front))
		next = append(next, front...)
		for _, s := range front {
			t := state{s.v + size[j], math.Max(s.c, rel(j)) + dur(j)}
			if t.v >= need {
				best = math.Min(best, t.c)
				continue
			}
			if t.c < best {
				next = append(next, t)
			}
		}
		// Pareto: sort by volume decreasing; keep a state only if its completion is below every
		// state of larger or equal volume.
		sort.Slice(next, func(a, b int) bool {
			if next[a].v != next[b].v {
				return next[a].v > next[b].v
			}
			return next[a].c < next[b].c
		})
		front = front[:0]
		lowest := math.Inf(1)
		for _, s := range next {
			if s.c < lowest && s.c < best {
				front = append(front, s)
				lowest = s.c
			}
		}
		if len(front) > maxWindowStates {
			return relaxedCompletion(items, need, size, rel, dur), true
		}
	}
	return best, true
}

// relaxedCompletion is a lower bound on minCompletion: the earliest release among the items
// plus the shortest total duration of a set reaching need (largest items first; durations
// are proportional to sizes).
func relaxedCompletion(items []int, need int64, size []int64, rel func(int) float64, dur func(int) float64) float64 {
	first := math.Inf(1)
	idx := append([]int(nil), items...)
	for _, j := range idx {
		first = math.Min(first, rel(j))
	}
	sort.Slice(idx, func(a, b int) bool { return size[idx[a]] > size[idx[b]] })
	var v int64
	var d float64
	for _, j := range idx {
		if v >= need {
			break
		}
		v += size[j]
		d += dur(j)
	}
	return first + d
}
