package actoffload

import (
	"math"
	"sort"
)

// DefaultStaircaseStates is Staircase's default cap on its table: 4 Mi states (32 MiB).
const DefaultStaircaseStates = 1 << 22

// DefaultStaircaseWork is Staircase's default cap on the work of one decision, counted as
// states × (demands + sizes): about a second for the whole search on two cores.
const DefaultStaircaseWork = 1 << 25

// staircaseReverseWork caps the steps of the backward passes from every tight operation
// (binary searches of up to 40 decisions each); beyond it only the largest need's runs.
const staircaseReverseWork = 1 << 36

// StaircaseOptions configure Staircase.
type StaircaseOptions struct {
	// Upper is the makespan of a verified schedule: the bound is sought below it (required).
	Upper float64
	// MaxStates caps the table (0: DefaultStaircaseStates) and MaxWork the work of one
	// decision (0: DefaultStaircaseWork); above either, Staircase gives up.
	MaxStates, MaxWork int
	// Stop, when closed, stops the search; what was proven so far is returned.
	Stop <-chan struct{}
	// Quick runs the backward pass from the largest need only (see Staircase).
	Quick bool
}

// Staircase returns a certified lower bound on the makespan of every Problem 1 schedule that
// is at least WholeTransfers: the whole-transfer windows ask each tight operation separately
// for a set of offloads complete before it, while one link must serve every operation at
// once — with whole transfers the bytes away rise as a staircase, and where the need climbs
// operation after operation (the end of the forward pass) the steps make the operations wait.
//
// The relaxation: if T ≤ D, every tight operation k starts by t_k = D − Tail[k] (Tail from
// WholeWindows: a certified least time from the start of k to the end), and at its start the
// activations of its window whose offload has completed (and whose reader has run) total at
// least m_k − M_GPU (prefetches only lower what is away, and they are dropped, as is their link
// time). Offloads run one at a time on the link, each after its release, bounded below by
// Head[F_{j−1}] + u_{F_{j−1}}. Staircase decides whether some sequence of whole offloads meets
// every (deadline, need) and binary-searches the least D for which it does: every D it finds
// infeasible is below every schedule.
//
// The decision is exact for the relaxation: among activations of equal size the lower index is
// released no later and sits in the window of every tight operation the higher one does, so
// the offloaded ones of each size can be taken to be the lowest-indexed, in index order; a
// state is the number taken of each size, kept with its earliest link-free time (an earlier
// time with the same set is never worse: the same continuations, each no later). States are
// enumerated in mixed radix, predecessors first. ok is false (and the bound WholeTransfers)
// when the table would pass MaxStates or a decision MaxWork, or when stopped before the first
// decision (NaN when stopped while the windows were computed); stopped later, the best D
// proven infeasible so far is returned.
func (p *Problem) Staircase(o StaircaseOptions) (bound float64, ok bool) {
	_, bound, ok = p.StaircaseTails(o)
	return bound, ok
}

// StaircaseTails is Staircase with the tails it ends with: WholeWindows' tails raised by the
// backward passes — certified least times from the start of each operation to the end (nil
// where the windows admit no schedule), stronger node bounds for the event search.
func (p *Problem) StaircaseTails(o StaircaseOptions) (tail []float64, bound float64, ok bool) {
	head, tail, wok, err := p.WholeWindowsUntil(o.Stop)
	if err != nil {
		return nil, math.NaN(), false // stopped before the first decision
	}
	if !wok {
		return nil, math.Inf(1), true
	}
	bound, ok = p.staircase(head, tail, o)
	return tail, bound, ok
}

// staircase computes Staircase from the whole-transfer windows, raising tail in place.
func (p *Problem) staircase(head, tail []float64, o StaircaseOptions) (bound float64, ok bool) {
	lb := 0.0
	for k := range head {
		lb = math.Max(lb, head[k]+tail[k])
	}
	if !(o.Upper > lb) {
		return lb, true
	}
	n := p.L() + 1
	u := func(k int) float64 {
		if k < n {
			return p.UF[k]
		}
		return p.UB[2*n-1-k]
	}
	needs := p.Needs()
	need := func(k int) int64 { return needs[k] }
	last := func(k int) int { return min(k-1, 2*n-2-k) }
	// The same staircase backwards in time from the operation with the largest need, k*: the
	// prefetches of what is away during k' ≥ k* start (in reversed time: complete) only after
	// k' has ended, each released at Tail[B_j], so T − s_{k*} is at least the least D for
	// which they meet every need by D − (u_{k*} + … + u_{k'}); and T − s_k ≥ that plus the
	// compute from k to k* for k < k*. These tails give the forward staircase its deadlines.
	peak := -1
	for k := 0; k < 2*n; k++ {
		if need(k) > 0 && (peak < 0 || need(k) > need(peak)) {
			peak = k
		}
	}
	if peak < 0 {
		return lb, true // nothing needs to move
	}
	// Then from every other tight operation, last first (each pass's tails are the next one's
	// releases), where the whole takes at most staircaseReverseWork steps: a little more
	// (ResNet-152 at 50 %: 401.79 → 402.33 ms) for about six times the time.
	peaks := []int{peak}
	var tight []int
	for k := 2*n - 1; k >= 0; k-- {
		if need(k) > 0 && k != peak {
			tight = append(tight, k)
		}
	}
	for x := 0; x < len(peaks); x++ {
		peak := peaks[x]
		var rev []stairDemand
		var comp float64
		for k := peak; k < 2*n; k++ {
			comp += u(k)
			if need(k) > 0 {
				rev = append(rev, stairDemand{need(k), comp, last(k)})
			}
		}
		b := newStaircase(p, func(j int) float64 { return tail[2*n-1-j] }, rev)
		if x == 0 && !o.Quick && b.states > 0 && float64(b.states)*float64(len(b.need)+b.classes)*float64(len(tight)+1)*40 <= staircaseReverseWork {
			peaks = append(peaks, tight...)
		}
		if t, ok := b.search(tail[peak], o.Upper-head[peak], o); !ok {
			if x > 0 {
				break // the first pass's tails stand
			}
			return lb, false
		} else if t > tail[peak] {
			tail[peak] = t
			for k := peak - 1; k >= 0; k-- {
				tail[k] = math.Max(tail[k], tail[k+1]+u(k))
			}
			for k := range head {
				lb = math.Max(lb, head[k]+tail[k])
			}
		}
	}
	// Forward: the offloads meet every need by D − Tail[k], each released when F_{j−1} ends.
	var fwd []stairDemand
	for k := 0; k < 2*n; k++ {
		if need(k) > 0 {
			fwd = append(fwd, stairDemand{need(k), tail[k], last(k)})
		}
	}
	f := newStaircase(p, func(j int) float64 {
		if j == 0 {
			return 0
		}
		return head[j-1] + u(j-1)
	}, fwd)
	return f.search(lb, o.Upper, o)
}

// stairDemand is one operation's need: by the deadline D − off, the offloads complete of the
// activations x_0..x_last total at least need bytes.
type stairDemand struct {
	need int64
	off  float64
	last int
}

// sizeClasses groups the activations x_0..x_last of positive size by size, classes in order of
// first appearance: each class's size, transfer time |x|/β and members (activation indices,
// increasing) — Staircase's and Split's states count how many of each class are moved.
func sizeClasses(p *Problem, last int) (size []int64, dur []float64, members [][]int) {
	bySize := map[int64]int{}
	for j := 0; j <= last && j < len(p.X); j++ {
		if p.X[j] <= 0 {
			continue
		}
		c, seen := bySize[p.X[j]]
		if !seen {
			c = len(size)
			bySize[p.X[j]] = c
			size = append(size, p.X[j])
			dur = append(dur, float64(p.X[j])/p.Beta)
			members = append(members, nil)
		}
		members[c] = append(members[c], j)
	}
	return size, dur, members
}

// mixedRadix numbers the count vectors (0..len(members[c]) of each class c): the weight of
// each digit and how many vectors there are, −1 past MaxInt32.
func mixedRadix(members [][]int) (weight []int, states int) {
	weight = make([]int, len(members))
	states = 1
	for c, ms := range members {
		weight[c] = states
		if states > math.MaxInt32/(len(ms)+1) {
			return weight, -1
		}
		states *= len(ms) + 1
	}
	return weight, states
}

// staircase is Staircase's decision problem.
type staircase struct {
	size    []int64     // per class
	rel     [][]float64 // per class, per item by increasing index: release
	dur     []float64   // per class
	weight  []int       // mixed radix
	states  int         // Π (items + 1), −1 on overflow
	need    []int64     // per demand, by increasing deadline (off decreasing)
	tk      []float64   // per demand: D − tk is its deadline
	elig    [][]int     // per demand, per class: how many of the class are in its window
	classes int
}

// newStaircase builds the decision problem of the demands, the activations released at rel.
func newStaircase(p *Problem, rel func(j int) float64, ds []stairDemand) *staircase {
	s := &staircase{}
	ds = append([]stairDemand(nil), ds...)
	sort.SliceStable(ds, func(a, b int) bool { return ds[a].off > ds[b].off })
	maxLast := -1
	for _, d := range ds {
		maxLast = max(maxLast, d.last)
	}
	// Classes of equal size among the activations some demand can use.
	var idx [][]int
	s.size, s.dur, idx = sizeClasses(p, maxLast)
	s.classes = len(s.size)
	s.weight, s.states = mixedRadix(idx)
	if s.states < 0 {
		return s
	}
	for c := range s.size {
		r := make([]float64, len(idx[c]))
		for i, j := range idx[c] {
			r[i] = rel(j)
		}
		s.rel = append(s.rel, r)
	}
	for _, d := range ds {
		s.need = append(s.need, d.need)
		s.tk = append(s.tk, d.off)
		e := make([]int, s.classes)
		for c := range idx {
			e[c] = sort.SearchInts(idx[c], d.last+1)
		}
		s.elig = append(s.elig, e)
	}
	return s
}

// search returns the largest D in [lo, hi] it decides infeasible (lo when lo is feasible or
// hi ≤ lo), and false when the table is out of o's caps or it was stopped before deciding lo.
func (s *staircase) search(lo, hi float64, o StaircaseOptions) (float64, bool) {
	if !(hi > lo) {
		return lo, true
	}
	limit := o.MaxStates
	if limit <= 0 {
		limit = DefaultStaircaseStates
	}
	work := o.MaxWork
	if work <= 0 {
		work = DefaultStaircaseWork
	}
	if s.states < 0 || s.states > limit || float64(s.states)*float64(len(s.need)+s.classes) > float64(work) {
		return lo, false
	}
	stopped := func() bool {
		select {
		case <-o.Stop:
			return true
		default:
			return false
		}
	}
	f := make([]float64, s.states)
	feasible, done := s.feasible(f, lo, stopped)
	if !done || feasible {
		return lo, done
	}
	base := lo
	for it := 0; it < 40 && hi-lo > 1e-10*hi; it++ {
		mid := lo + (hi-lo)/2
		fe, done := s.feasible(f, mid, stopped)
		if !done {
			break
		}
		if fe {
			hi = mid
		} else {
			lo = mid
		}
	}
	// lo was decided infeasible in floating point: keep a margin for the rounding of the
	// deadlines and completions (sums of a few hundred terms). The search goes to 10⁻¹⁰ of hi so
	// that a staircase that meets a verified schedule proves it optimal at certify's 10⁻⁹.
	return math.Max(base, lo*(1-1e-12)), true
}

// feasible decides whether a sequence of offloads meets every demand with T = D (f is
// scratch of s.states entries); done is false when stopped.
func (s *staircase) feasible(f []float64, D float64, stopped func() bool) (feasible, done bool) {
	inf := math.Inf(1)
	for i := range f {
		f[i] = inf
	}
	f[0] = 0
	cnt := make([]int, s.classes)
	for x := 0; x < s.states; x++ {
		if x > 0 {
			// Mixed-radix increment of cnt.
			for c := 0; c < s.classes; c++ {
				cnt[c]++
				if cnt[c] <= len(s.rel[c]) {
					break
				}
				cnt[c] = 0
			}
		}
		if x&0xffff == 0 && stopped() {
			return false, false
		}
		fx := f[x]
		if fx == inf {
			continue
		}
		// The earliest deadline at or after fx that this set misses (+Inf: none).
		next := inf
		for d, t := range s.tk {
			dl := D - t
			if dl < fx {
				continue
			}
			var v int64
			for c, e := range s.elig[d] {
				v += s.size[c] * int64(min(cnt[c], e))
			}
			if v < s.need[d] {
				next = dl
				break
			}
		}
		if next == inf {
			return true, true
		}
		for c := 0; c < s.classes; c++ {
			if cnt[c] == len(s.rel[c]) {
				continue
			}
			end := math.Max(fx, s.rel[c][cnt[c]]) + s.dur[c]
			if end <= next {
				if y := x + s.weight[c]; end < f[y] {
					f[y] = end
				}
			}
		}
	}
	return false, true
}
