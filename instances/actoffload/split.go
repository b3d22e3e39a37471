package actoffload

import (
	"errors"
	"math"
	"sort"

	"github.com/memsched/memsched/schedule"
)

// DefaultSplitStates caps each side's table of Split (1 Mi states: ResNet-200's 373 k take
// 0.3–3.1 s); DefaultSplitLabels the labels alive at once (512 Ki, each 8 B per activation of
// the side plus 56: about 0.3 GiB on a 70-activation chain; ResNet-200 needs 125 k).
const (
	DefaultSplitStates = 1 << 20
	DefaultSplitLabels = 1 << 19
)

// ErrSplitLimit says one side of Split has more states or labels than its caps allow;
// ErrSplitStopped that Split was stopped.
var (
	ErrSplitLimit   = errors.New("actoffload: split: a side's table is beyond its caps")
	ErrSplitStopped = errors.New("actoffload: split: stopped")
)

// SplitCertificate says what certifies Split's bound, for the reports that print it.
const SplitCertificate = "the offloads before and the prefetches after the operation of largest need, each sequenced exactly on one link with the operations it drives, coupled by the bytes away there (instances/actoffload.Split)"

// SplitOptions configure Split.
type SplitOptions struct {
	// MaxStates caps each side's table and MaxLabels the labels alive at once in it (0: the
	// defaults); past either, Split returns ErrSplitLimit.
	MaxStates, MaxLabels int
	// Schedules is how many joined schedules to build, best first (0: none).
	Schedules int
	// Stop, when closed, stops Split (ErrSplitStopped).
	Stop <-chan struct{}
}

// SplitResult is what Split proves and builds.
type SplitResult struct {
	// Bound is a certified lower bound on the makespan of every Problem 1 schedule (+Inf: no
	// schedule exists).
	Bound float64
	// Op is the operation k* cut at (the one of largest need).
	Op int
	// Schedules are joined schedules, shortest first, each of makespan (by construction) its
	// pair's F + G — not validated here: callers check them with verify/timed.
	Schedules []*schedule.Timed
	// States is the larger side's table, Labels the most labels alive at once in either.
	States, Labels int
}

// Split cuts Problem 1 at the operation k* of largest need and bounds each side exactly for a
// relaxation (phase): with A the activations away at s_{k*} (their offloads completed, their
// prefetches not started), every schedule has
//
//	s_{k*}     ≥ F(A): the offloads alone, each credited once completed and never brought back,
//	             must let every operation before k* start and leave A away by s_{k*};
//	T − s_{k*} ≥ G(A): in reversed time the prefetches alone, of A and of the extras E (moved
//	             out after s_{k*}, or in flight then), must let every operation from k* on run,
//	             each starting only after its reader B_j (reversed), all done by T − s_{k*};
//	             and the extras' offloads take the link too, all but the one in flight inside
//	             [s_{k*}, T]: T − s_{k*} ≥ Σ_{A∪E} d + Σ_E d − max_E d.
//
// Both sides are sequencing problems on one machine; their operations move as the link
// allows, which is what the staircase's fixed deadlines cannot see. F and G depend on A only
// through how many of each size it holds (the lowest-indexed of a size are the best to move,
// on each side); so T ≥ min over count vectors c (volume ≥ the need of k*) of F(c) + G(c):
// the coupling prices the bytes that turn around at the peak on both sides at once.
//
// F's extras (activations moved before k* but not away at s_{k*}: brought back already, or
// in flight) are credited like A's, and then only the start of k* is claimed (not the end of
// every offload). Where the minimum is attained by sets without extras, the two timelines
// joined at s_{k*} = F(c) are a schedule of makespan F(c) + G(c) unless a rule the
// relaxations drop is broken (memory between operations, say): SplitOptions.Schedules of
// them, best first, for the caller to validate — one that validates at the bound is optimal.
func (p *Problem) Split(o SplitOptions) (SplitResult, error) {
	needs := p.Needs()
	k := 0
	for q := range needs {
		if needs[q] > needs[k] {
			k = q
		}
	}
	return p.splitAt(needs, k, o)
}

// splitAt is Split cut at operation k.
func (p *Problem) splitAt(needs []int64, k int, o SplitOptions) (SplitResult, error) {
	n := p.L() + 1
	res := SplitResult{Op: k}
	if needs[k] <= 0 {
		// Nothing needs to move: the operations back to back are optimal.
		res.Bound = p.Compute()
		if o.Schedules > 0 {
			s, t := &schedule.Timed{}, 0.0
			for q := 0; q < 2*n; q++ {
				s.Ops = append(s.Ops, opAt(n, q, t))
				t += opTime(p, q)
			}
			res.Schedules = []*schedule.Timed{s}
		}
		return res, nil
	}
	maxStates, maxLabels := o.MaxStates, o.MaxLabels
	if maxStates <= 0 {
		maxStates = DefaultSplitStates
	}
	if maxLabels <= 0 {
		maxLabels = DefaultSplitLabels
	}
	F := newPhase(p, needs, k, false, maxStates)
	if F.states < 0 || F.states > maxStates {
		res.States = F.states
		return res, ErrSplitLimit
	}
	G := newPhase(p, needs, k, true, maxStates)
	res.States = max(F.states, G.states)
	if G.states < 0 || res.States > maxStates {
		return res, ErrSplitLimit
	}
	fVal, fStart, fBest, fPeak, err := F.solve(maxLabels, o.Stop)
	res.Labels = fPeak
	if err != nil {
		return res, err
	}
	gVal, _, gBest, gPeak, err := G.solve(maxLabels, o.Stop)
	res.Labels = max(res.Labels, gPeak)
	if err != nil {
		return res, err
	}
	// The count vectors c range over the sizes of k*'s window; each size is a class of both
	// sides, its first members the window's (classes list members by increasing index).
	last := windowLast(n, k)
	type wclass struct {
		f, g, m int // class on each side, members in the window
	}
	var wc []wclass
	for c, ms := range F.members {
		m := 0
		for _, i := range ms {
			if F.items[i] <= last {
				m++
			}
		}
		if m == 0 {
			continue
		}
		g := -1
		for d := range G.size {
			if G.size[d] == F.size[c] {
				g = d
			}
		}
		wc = append(wc, wclass{c, g, m})
	}
	need := needs[k]
	res.Bound = math.Inf(1)
	type pair struct {
		xf, xg int
		v      float64
	}
	var exact []pair
	cnt := make([]int, len(wc))
	gCnt, fCnt := make([]int, len(G.size)), make([]int, len(F.size))
	poll := &splitPoll{stop: o.Stop}
	var walk func(w int)
	walk = func(w int) {
		if poll.stopped || poll.hit() {
			return
		}
		if w < len(wc) {
			for cnt[w] = 0; cnt[w] <= wc[w].m; cnt[w]++ {
				walk(w + 1)
			}
			return
		}
		var vol int64
		xf, xg := 0, 0
		for w, c := range wc {
			vol += F.size[c.f] * int64(cnt[w])
			xf += cnt[w] * F.weight[c.f]
			if cnt[w] > 0 {
				xg += cnt[w] * G.weight[c.g]
			}
		}
		if vol < need {
			return
		}
		F.counts(xf, fCnt)
		f := F.extras(fVal, fStart, xf, fCnt, 2, res.Bound, poll)
		if v := fVal[xf] + gVal[xg]; o.Schedules > 0 && !math.IsInf(v, 1) && fBest[xf] != nil && gBest[xg] != nil {
			exact = append(exact, pair{xf, xg, v})
		}
		if math.IsInf(f, 1) || f >= res.Bound {
			return // G ≥ 0: no lower sum
		}
		G.counts(xg, gCnt)
		if g := G.extras(gVal, gVal, xg, gCnt, 1, res.Bound-f, poll); f+g < res.Bound {
			res.Bound = f + g
		}
	}
	walk(0)
	if poll.stopped {
		// The bound is a minimum over every count vector: one taken over some is no bound.
		return res, ErrSplitStopped
	}
	if o.Schedules > 0 {
		sort.Slice(exact, func(a, b int) bool { return exact[a].v < exact[b].v })
		for _, e := range exact[:min(len(exact), o.Schedules)] {
			if s := p.join(F, G, fBest[e.xf], gBest[e.xg]); s != nil {
				res.Schedules = append(res.Schedules, s)
			}
		}
	}
	return res, nil
}

// extras is one side's value for the count vector c (state xc, counts cnt): exact[xc], or,
// with extras — states y ≥ c, the activations moved beyond c — max(with[y], Σ_c d + 2 Σ_{y−c} d
// − inFlight · max_{y−c} d): every extra crosses the link twice on this side of s_{k*} (G: its
// offload after s_{k*} and its prefetch; F: its offload and, not being away at s_{k*}, its
// prefetch before it), but for one in flight at s_{k*} (G: its offload, partly before; F: its
// offload, partly after, and no prefetch — inFlight = 2). The search over extras stops once
// their work alone reaches limit or the least value so far. Once poll says stop it returns
// what it has, which the caller drops (a minimum over part of the extras bounds nothing).
func (ph *phase) extras(exact, with []float64, xc int, cnt []int, inFlight, limit float64, poll *splitPoll) float64 {
	var busy float64
	for c, k := range cnt {
		busy += float64(k) * ph.dur[c]
	}
	best := exact[xc]
	var walk func(c, y int, extra, maxd float64)
	walk = func(c, y int, extra, maxd float64) {
		if poll.stopped || poll.hit() {
			return
		}
		if c == len(ph.size) {
			if extra > 0 {
				best = math.Min(best, math.Max(with[y], busy+2*extra-inFlight*maxd))
			}
			return
		}
		for e := 0; cnt[c]+e <= len(ph.members[c]); e++ {
			x := extra + float64(e)*ph.dur[c]
			md := maxd
			if e > 0 {
				md = math.Max(md, ph.dur[c])
			}
			// busy + 2·extra − inFlight·maxd only grows with more extras (each adds ≥ 2d −
			// its share of the max): past the best or the limit, no better.
			if e > 0 && busy+2*x-inFlight*md >= math.Min(best, limit) {
				break
			}
			walk(c+1, y+e*ph.weight[c], x, md)
		}
	}
	walk(0, xc, 0, 0)
	return best
}

// join builds the schedule of a forward and a backward label: the forward timeline up to the
// start of k* at F, the backward one mirrored after it, T = F + G.
func (p *Problem) join(F, G *phase, fl, gl *phaseLabel) *schedule.Timed {
	n := p.L() + 1
	off, pre := F.sequence(fl), G.sequence(gl)
	fJobs, fOps, sk, ok := F.replay(off)
	if !ok {
		return nil
	}
	gJobs, gOps, d, ok := G.replay(pre)
	if !ok {
		return nil
	}
	T := sk + d
	s := &schedule.Timed{}
	for r, k := range F.ops[:len(F.ops)-1] {
		s.Ops = append(s.Ops, opAt(n, k, fOps[r]))
	}
	for r := len(G.ops) - 1; r >= 0; r-- {
		s.Ops = append(s.Ops, opAt(n, G.ops[r], T-(gOps[r]+G.u[r])))
	}
	for q, j := range off {
		s.Transfers = append(s.Transfers, schedule.ActTransfer{Kind: schedule.Offload, Index: j, Start: fJobs[q]})
	}
	for q := len(pre) - 1; q >= 0; q-- {
		j := pre[q]
		s.Transfers = append(s.Transfers, schedule.ActTransfer{Kind: schedule.Prefetch, Index: j, Start: T - (gJobs[q] + float64(p.X[j])/p.Beta)})
	}
	return s
}

// opAt is operation k (F_k for k < n, else B_{2n−1−k}) started at start.
func opAt(n, k int, start float64) schedule.TimedOp {
	if k < n {
		return schedule.TimedOp{Index: k, Start: start}
	}
	return schedule.TimedOp{Backward: true, Index: 2*n - 1 - k, Start: start}
}

// splitPoll looks at Split's stop channel every splitPollEvery steps of its searches over
// count vectors and extras: exponential in the window's sizes, they ran 125 s on a 20-stage
// random chain (offload-act --algo all at 1040653605 B, 12 GB/s, --time-limit 60: 135 s)
// without a look at the channel.
type splitPoll struct {
	stop    <-chan struct{}
	n       int
	stopped bool
}

const splitPollEvery = 1 << 12

// hit counts one step and reports whether the stop channel is closed (sticky).
func (q *splitPoll) hit() bool {
	if q.stop == nil {
		return false
	}
	if q.n++; q.n%splitPollEvery != 0 {
		return false
	}
	select {
	case <-q.stop:
		q.stopped = true
	default:
	}
	return q.stopped
}
