package actoffload

import (
	"fmt"
	"math"
	"sort"

	act "github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify/timed"
)

// EventOptions tunes EventSearch. The zero value searches to the end.
type EventOptions struct {
	// Incumbent is the makespan of a verified schedule (0: none). Only shorter schedules are
	// sought; when none exists the search proves Incumbent/(1+Gap) a lower bound.
	Incumbent float64
	// Gap is the relative gap at which a node is pruned: bound ≥ best/(1+Gap). 0: exact.
	Gap float64
	// Stop ends the search when closed (a deadline; checked every 1024 nodes); MaxNodes too
	// (0: 10⁸).
	Stop     <-chan struct{}
	MaxNodes int
	// MaxStates bounds the table of states searched (0: 2²², about 0.7 GB; see
	// EventStatesWithin); past it, new states are not recorded (the search stays complete, only
	// slower).
	MaxStates int
	// Tail, when it has one entry per compute operation, holds certified least times from the
	// start of each operation to the end (e.g. Problem.StaircaseTails's), taken where above the
	// whole-transfer windows' in the node bounds.
	Tail []float64
}

// EventResult is the outcome of EventSearch.
type EventResult struct {
	// Complete: the whole tree was searched (pruned at Gap); Bound is then certified.
	Complete bool
	// Bound: every schedule of Problem 1 has makespan ≥ Bound when Complete (the best found,
	// or the incumbent, over 1+Gap); 0 otherwise.
	Bound float64
	// Best is the shortest schedule the search found, validated by verify/timed (nil if it
	// found none below the incumbent).
	Best *Result
	// Nodes searched and States recorded (for reports and tuning).
	Nodes, States int
}

// eventStateBytes is the memory of one recorded state of EventSearch (packed key, clocks
// and map overhead, with the map's growth).
const eventStateBytes = 160

// EventStatesWithin is the MaxStates whose table fits in bytes.
func EventStatesWithin(bytes int64) int { return int(max(bytes, 0) / eventStateBytes) }

// EventMaxOps is the longest chain (operations per pass) on which the callers run EventSearch:
// beyond, its table records no states (keyActs) and each node's bounds cost O(n), so it would
// only spend its time.
const EventMaxOps = keyActs

// EventSearch is an exact search for Problem 1 (SPEC §2) over event sequences. A schedule is
// the time-ordered sequence of its events — starts and ends of compute operations and of
// transfers — and GPU memory changes only at events, so a sequence is valid or not whatever the
// times; its earliest times follow by one pass (a start at the previous event's time, an end at
// its start plus its duration). Every valid schedule can be left-shifted without changing its
// sequence until each start coincides with an earlier event (constraints and memory change only
// there), so searching, from each state, every event that may come next at the current time
// — start the next operation, start any transfer the link may take, or let time run to the
// next end — reaches an optimal schedule. The search is therefore complete for Problem 1
// itself, not only for no-wait schedules (Exact), and its result, when it finishes, certifies
// a lower bound.
//
// Three rules cut the tree without losing every optimum: ends are taken in time order (an end
// taken later only holds memory longer); for candidates i < j of equal size, O(i) is not
// started while x_j is offloaded and not yet prefetched (the exchange argument of
// docs/act-offload.md); and x_j is never offloaded when no operation from F_j to B_{j+1} needs
// bytes away — x_j can be away only during those operations and the gaps after F_j..B_{j+2},
// whose memory with everything on the GPU is at most that of the operation before, so dropping
// such a round trip leaves every event within M_GPU and no time later. States that agree on where every activation is, on the operation and
// transfer under way, are compared on their clocks (now, end of the running operation, end of
// the running transfer): the sequences that follow one state can follow the other, every time
// no later, memory the same — so a state no earlier on all three than a recorded one is pruned.
// Nodes are pruned too by the bound of Exact (compute left, whole-transfer tails, link work
// left) read for any schedule.
func EventSearch(p *act.Problem, o EventOptions) (*EventResult, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	e := newEvents(p, o)
	e.dfs()
	res := &EventResult{Nodes: e.nodes, States: len(e.seen), Complete: !e.stopped}
	if res.Complete {
		// Nodes were pruned at bound·(1+gap) ≥ best·(1−1e-12), the tolerance of the times: with
		// a gap the bound keeps that factor; without, the best is the optimum to that tolerance.
		res.Bound = e.best
		if e.gap > 0 {
			res.Bound = e.best * (1 - 1e-12) / (1 + e.gap)
		}
		if math.IsInf(e.best, 1) {
			res.Bound = math.Inf(1)
		}
	}
	if e.sol != nil {
		sch := &schedule.Timed{Ops: e.sol.ops, Transfers: e.sol.trs}
		rep, err := timed.Check(p, sch)
		if err != nil {
			return nil, fmt.Errorf("actoffload: event search schedule fails validation (bug): %w", err)
		}
		res.Best = &Result{Feasible: true, Schedule: sch, Report: rep, Offloaded: offloaded(sch)}
		if res.Complete {
			res.Bound = math.Min(res.Bound, rep.Makespan)
		}
	}
	return res, nil
}

// evState is the search's state at a decision point.
type evState struct {
	st       []xstate // per activation: resident, offloading, offDone, away, fetching, back
	k        int      // operations started
	run      bool     // operation k−1 is running
	opStart  float64
	opEnd    float64
	link     int // activation on the link, −1 when free
	linkOff  bool
	linkEnd  float64
	now      float64
	mem      int64
	offBytes int64
}

type evSol struct {
	ops []schedule.TimedOp
	trs []schedule.ActTransfer
}

type events struct {
	p       *act.Problem
	n       int
	tol     float64
	need    int64
	gap     float64
	best    float64
	sol     *evSol
	restOps []float64
	tail    []float64
	tailB   []float64
	need0   []int64   // need0[k] = m_k − M_GPU: the bytes that must be away during operation k
	useful  []bool    // useful[j]: some operation from F_j to B_{j+1} needs bytes away
	fluidLo []float64 // per operation k, the fluid window [fluidLo[k], fluidHi[k]] of C
	fluidHi []float64
	cPre    []int64 // scratch: prefix sums of committed and resident volumes (scan)
	sc      nodeScan
	rPre    []int64
	searchBudget
	seen      map[stateKey]int32
	clocks    []clockEntry
	maxStates int
	ops       []schedule.TimedOp
	trs       []schedule.ActTransfer
	s         evState
}

func newEvents(p *act.Problem, o EventOptions) *events {
	n := p.L() + 1
	e := &events{p: p, n: n, need: max(0, p.Peak()-p.MGPU), gap: o.Gap, best: math.Inf(1),
		searchBudget: searchBudget{max: o.MaxNodes, stop: o.Stop}, maxStates: o.MaxStates, seen: map[stateKey]int32{}}
	if o.Incumbent > 0 {
		e.best = o.Incumbent
	}
	if e.max == 0 {
		e.max = 100_000_000
	}
	if e.maxStates == 0 {
		e.maxStates = 1 << 22
	}
	var scale float64
	for i := 0; i < n; i++ {
		scale += p.UF[i] + p.UB[i]
	}
	for _, x := range p.X {
		scale += 2 * float64(x) / p.Beta
	}
	e.tol = 1e-12 * math.Max(scale, 1)
	e.restOps = make([]float64, 2*n+1)
	for k := 2*n - 1; k >= 0; k-- {
		e.restOps[k] = e.restOps[k+1] + e.opDur(k)
	}
	e.tailB = make([]float64, n+1)
	for i := 0; i < n; i++ {
		e.tailB[i+1] = e.tailB[i] + p.UB[i]
	}
	if _, tail, ok := p.WholeWindows(); ok {
		e.tail = tail
		if len(o.Tail) == len(tail) {
			for k, t := range o.Tail {
				tail[k] = math.Max(tail[k], t)
			}
		}
	}
	e.need0 = p.Needs()
	e.cPre, e.rPre = make([]int64, n+1), make([]int64, n+1)
	e.fluidLo, e.fluidHi = make([]float64, 2*n), make([]float64, 2*n)
	var prefix int64
	for i := 0; i < n; i++ {
		e.fluidLo[i], e.fluidHi[i] = float64(max(0, e.need0[i])), float64(prefix+p.X[i])
		e.fluidLo[2*n-1-i], e.fluidHi[2*n-1-i] = float64(max(0, e.need0[2*n-1-i])), float64(prefix)
		prefix += p.X[i]
	}
	e.useful = make([]bool, n)
	for j := 0; j < n; j++ {
		for k := j; k <= 2*n-2-j; k++ {
			if e.need0[k] > 0 {
				e.useful[j] = true
				break
			}
		}
	}
	e.s = evState{st: make([]xstate, n+1), link: -1, mem: p.X[0]}
	return e
}

func (e *events) opDur(k int) float64 {
	if k < e.n {
		return e.p.UF[k]
	}
	return e.p.UB[2*e.n-1-k]
}

func (e *events) dur(j int) float64 { return float64(e.p.X[j]) / e.p.Beta }

// fDone reports whether F_i has ended.
func (e *events) fDone(i int) bool {
	s := &e.s
	return i < s.k && !(s.run && i == s.k-1)
}

func (e *events) present(l int) bool {
	st := e.s.st[l]
	return st == resident || st == back
}

// bound is a lower bound on the makespan of every schedule that continues the current state.
// nodeScan is what bound, lookahead and fluid read of the activations' statuses, gathered in
// one pass per node (scan): committed means offloading, offDone or away — offloaded and still
// to be prefetched.
type nodeScan struct {
	cDur  float64 // the committed activations' prefetch durations
	cMin  int     // the lowest committed index (n: none)
	rLow  int     // the lowest resident index with |x| > 0 (n: none)
	freed int64   // bytes of offDone and away activations (their offload ended)
}

// scan fills e.sc, and cPre and rPre: cPre[j+1] is the committed volume among x_0..x_j, rPre
// the resident one.
func (e *events) scan() {
	s, p, n := &e.s, e.p, e.n
	sc := nodeScan{cMin: n, rLow: n}
	for j := 0; j < n; j++ {
		c, r := int64(0), int64(0)
		switch s.st[j] {
		case offloading, offDone, away:
			c = p.X[j]
			sc.cDur += e.dur(j)
			sc.cMin = min(sc.cMin, j)
			if s.st[j] != offloading {
				sc.freed += p.X[j]
			}
		case resident:
			r = p.X[j]
			if r > 0 {
				sc.rLow = min(sc.rLow, j)
			}
		}
		e.cPre[j+1], e.rPre[j+1] = e.cPre[j]+c, e.rPre[j]+r
	}
	e.sc = sc
}

func (e *events) bound() float64 {
	e.scan()
	s := &e.s
	free := s.now
	if s.run {
		free = s.opEnd
	}
	lb := free + e.restOps[s.k]
	if e.tail != nil {
		if s.run {
			lb = math.Max(lb, s.opStart+e.tail[s.k-1])
		} else if s.k < 2*e.n {
			lb = math.Max(lb, s.now+e.tail[s.k])
		}
	}
	link := s.now
	jmin := -1
	if s.link >= 0 {
		link = s.linkEnd
		if !s.linkOff {
			jmin = s.link
		}
	}
	link += e.sc.cDur
	if e.sc.cMin < e.n {
		jmin = e.sc.cMin // the committed prefetches come after the one under way
	}
	if jmin >= 0 {
		lb = math.Max(lb, link+e.tailB[jmin+1])
	}
	if miss := e.need - s.offBytes; miss > 0 {
		link += 2 * float64(miss) / e.p.Beta
	}
	return math.Max(math.Max(lb, link), math.Max(e.lookahead(), e.fluid()))
}

// fluid is the fractional relaxation of 001 §4 (instances/actoffload.Problem.Fractional) run
// from the current state: C, the bytes on the CPU counted as they stream, is known now (what is
// away, and the part of the transfer under way already sent); |C'| ≤ β; during each operation
// still to run C lies in its window [m_k − M_GPU, bytes that may be away]. Every continuation's
// C obeys this, so the pass's least end is a bound (its windows ignore what came back already,
// which only relaxes).
func (e *events) fluid() float64 {
	s, p := &e.s, e.p
	c := float64(e.sc.freed)
	if s.link >= 0 {
		left := p.Beta * (s.linkEnd - s.now) // bytes of the transfer under way not yet sent
		if s.linkOff {
			c += math.Max(0, float64(p.X[s.link])-left)
		} else {
			c += math.Max(0, left)
		}
	}
	lo, hi := c, c
	t := s.now
	if s.run {
		w := p.Beta * (s.opEnd - s.now)
		k := s.k - 1
		lo, hi = math.Max(e.fluidLo[k], lo-w), math.Min(e.fluidHi[k], hi+w)
		if lo > hi {
			return math.Inf(1)
		}
		t = s.opEnd
	}
	f := act.FluidPass{Lo: lo, Hi: hi, Beta: p.Beta}
	for k := s.k; k < 2*e.n; k++ {
		u := e.opDur(k)
		if !f.Step(e.fluidLo[k], e.fluidHi[k], u) {
			return math.Inf(1)
		}
		t += u
	}
	return t + f.Idle
}

// lookahead bounds the makespan by every operation k still to start that needs bytes away
// (need0[k] > 0). The activations that can be away during k are those whose window
// F_{j+1}..B_{j+1} holds k, that is j ≤ J(k) = min(k−1, 2n−2−k): the committed ones (offloaded
// or on their way, volume C) and the resident ones, which must then be offloaded whole before
// s_k. So at least max(0, need0[k] − C) more bytes cross the link before s_k, after the transfer
// under way and after the prefetches of every committed x_j whose reader B_j comes before k
// (j ≥ 2n−k) — only when some link work must come first (otherwise s_k need not wait for the
// link at all); s_k is also after the operations before it; then T ≥ s_k + tail[k]. The extra
// bytes also come back: every committed prefetch and the extra's round trip follow the link's
// free time, and the last prefetch ends before B_j..B_0 for some j at least the lowest index that
// may still move. A need above what can be away at all is infeasible.
func (e *events) lookahead() float64 {
	s, p, n := &e.s, e.p, e.n
	cDur, cMin, rLow := e.sc.cDur, e.sc.cMin, e.sc.rLow // scan ran in bound
	free := s.now
	if s.link >= 0 {
		free = s.linkEnd
	}
	opFree := s.now
	if s.run {
		opFree = s.opEnd
	}
	lb := 0.0
	first := s.k // the next operation to start
	// pre: durations of committed x_j with j ≥ 2n−k, grown as k rises past the mirror point.
	var pre float64
	jPre := n // committed x_j with j ≥ jPre are counted in pre
	for k := first; k < 2*n; k++ {
		for jPre > 2*n-k && jPre > 0 {
			jPre--
			if st := s.st[jPre]; st == offloading || st == offDone || st == away {
				pre += e.dur(jPre)
			}
		}
		t := e.restOps[k]
		if e.tail != nil {
			t = e.tail[k]
		}
		// s_k ≥ the end of the operations before it.
		sk := opFree + e.restOps[first] - e.restOps[k]
		need := e.need0[k]
		if need > 0 {
			J := min(k-1, 2*n-2-k)
			if J < 0 {
				return math.Inf(1)
			}
			c, r := e.cPre[J+1], e.rPre[J+1]
			if c+r < need {
				return math.Inf(1)
			}
			extra := float64(max(0, need-c)) / p.Beta
			if pre > 0 || extra > 0 {
				sk = math.Max(sk, free+pre+extra)
			}
			if extra > 0 {
				// The resident x_j below j* hold less than the missing bytes, so one x_j with
				// j* ≤ j ≤ J is offloaded whole before s_k, after it is produced (F_{j−1}'s end,
				// after the operations before it) and after the link is free.
				jStar := sort.Search(J+1, func(j int) bool { return e.rPre[j+1] >= need-c })
				done := math.Inf(1)
				for j := jStar; j <= J; j++ {
					if s.st[j] != resident || p.X[j] == 0 {
						continue
					}
					rel := free
					if j > 0 && j-1 >= first {
						rel = math.Max(rel, opFree+e.restOps[first]-e.restOps[j])
					} else if j > 0 && s.run && j-1 == first-1 {
						rel = math.Max(rel, s.opEnd)
					}
					done = math.Min(done, rel+e.dur(j))
				}
				sk = math.Max(sk, done)
			}
			if extra > 0 {
				// The extra bytes go out and come back after free, as do the committed ones;
				// the last prefetch is of some x_j, j ≥ the lowest candidate, before B_j..B_0.
				jmin := cMin
				if rLow <= J {
					jmin = min(jmin, rLow)
				}
				lb = math.Max(lb, free+cDur+2*extra+e.tailB[jmin+1])
			}
		}
		lb = math.Max(lb, sk+t)
	}
	return lb
}

// stateKey is a decision state's discrete part, packed: 3 bits per activation status (at most
// keyActs activations), then the operations started, the activation on the link and two flags.
// Fixed-size and pointer-free, so the table costs the collector nothing to scan.
type stateKey [5]uint64

// keyActs is the most activations a stateKey holds (and so the longest chain whose states the
// search records; longer ones are searched without the table, completely but slower).
const keyActs = 80

// clockEntry is one recorded state's clocks (now, end of the running operation, end of the
// running transfer; −1 where none runs), chained per key.
type clockEntry struct {
	c    [3]float64
	next int32
}

// dominated records the state's clocks under its discrete key and reports whether a recorded
// state with the same key is no later on every clock.
func (e *events) dominated() bool {
	s := &e.s
	if len(s.st) > keyActs+1 {
		return false
	}
	var k stateKey
	for j, st := range s.st[:len(s.st)-1] { // x_{L+1} never moves
		k[j/21] |= uint64(st) << (3 * (j % 21))
	}
	k[4] = uint64(s.k) | uint64(uint16(int16(s.link)))<<16
	if s.run {
		k[4] |= 1 << 32
	}
	if s.linkOff {
		k[4] |= 1 << 33
	}
	c := [3]float64{s.now, -1, -1}
	if s.run {
		c[1] = s.opEnd
	}
	if s.link >= 0 {
		c[2] = s.linkEnd
	}
	head, ok := e.seen[k]
	if ok {
		for i := head; i >= 0; i = e.clocks[i].next {
			d := &e.clocks[i].c
			if d[0] <= c[0]+e.tol && d[1] <= c[1]+e.tol && d[2] <= c[2]+e.tol {
				return true
			}
		}
	} else {
		head = -1
	}
	if len(e.clocks) >= e.maxStates {
		return false // the table is full: search on without recording
	}
	// A recorded entry that the new clocks dominate stays (it only costs a comparison).
	e.clocks = append(e.clocks, clockEntry{c: c, next: head})
	e.seen[k] = int32(len(e.clocks) - 1)
	return false
}

func (e *events) dfs() {
	if e.stopped {
		return
	}
	s := &e.s
	if s.k == 2*e.n && !s.run && s.link < 0 {
		if s.now < e.best {
			e.best = s.now
			e.sol = &evSol{ops: append([]schedule.TimedOp(nil), e.ops...), trs: append([]schedule.ActTransfer(nil), e.trs...)}
		}
		return
	}
	if e.spend() {
		return
	}
	if e.bound()*(1+e.gap) >= e.best*(1-1e-12) || e.dominated() {
		return
	}
	p := e.p
	// Start the next compute operation.
	if !s.run && s.k < 2*e.n {
		k := s.k
		i, bw := k, false
		if k >= e.n {
			i, bw = 2*e.n-1-k, true
		}
		var add int64
		ok := true
		if !bw {
			add = p.X[i+1] + p.ExF[i]
		} else {
			ok = e.present(i) && e.present(i+1)
			add = p.Y[i] + p.ExB[i]
			if i == e.n-1 {
				add += p.Y[i+1]
			}
		}
		if ok && s.mem+add <= p.MGPU {
			saved := e.save()
			s.mem += add
			s.run, s.k, s.opStart = true, k+1, s.now
			s.opEnd = s.now + e.opDur(k)
			e.ops = append(e.ops, schedule.TimedOp{Backward: bw, Index: i, Start: s.now})
			e.dfs()
			e.ops = e.ops[:len(e.ops)-1]
			e.restore(saved)
		}
	}
	// Start a transfer.
	if s.link < 0 {
		for j := e.n - 1; j >= 0; j-- {
			if s.st[j] == away && s.mem+p.X[j] <= p.MGPU {
				e.branchTransfer(j, schedule.Prefetch)
			}
		}
		for j := 0; j < e.n; j++ {
			if s.st[j] != resident || p.X[j] == 0 || !e.useful[j] || (j > 0 && !e.fDone(j-1)) || s.k > 2*e.n-1-j {
				continue
			}
			if 2*float64(s.offBytes+p.X[j])/p.Beta >= e.best || twinAway(p.X, s.st, j) {
				continue
			}
			e.branchTransfer(j, schedule.Offload)
		}
	}
	// Let time run to the next end (both, when they coincide).
	if s.run || s.link >= 0 {
		fwd := -1
		if s.run && s.k-1 < e.n {
			fwd = s.k - 1 // endOp may release x_{k−1}
		}
		saved := e.save(fwd, s.link)
		next := math.Inf(1)
		if s.run {
			next = s.opEnd
		}
		if s.link >= 0 {
			next = math.Min(next, s.linkEnd)
		}
		s.now = math.Max(s.now, next)
		if s.run && s.opEnd <= s.now+e.tol {
			e.endOp()
		}
		if s.link >= 0 && s.linkEnd <= s.now+e.tol {
			e.endLink()
		}
		e.dfs()
		e.restore(saved)
	}
}

// branchTransfer searches on from starting the transfer of x_j now: an offload frees nothing
// yet; a prefetch reserves |x_j|.
func (e *events) branchTransfer(j int, kind schedule.TransferKind) {
	s, p := &e.s, e.p
	saved := e.save(j)
	if kind == schedule.Offload {
		s.st[j] = offloading
		s.offBytes += p.X[j]
	} else {
		s.st[j] = fetching
		s.mem += p.X[j]
	}
	s.link, s.linkOff, s.linkEnd = j, kind == schedule.Offload, s.now+e.dur(j)
	e.trs = append(e.trs, schedule.ActTransfer{Kind: kind, Index: j, Start: s.now})
	e.dfs()
	e.trs = e.trs[:len(e.trs)-1]
	e.restore(saved)
}

func (e *events) endOp() {
	s, p := &e.s, e.p
	s.run = false
	k := s.k - 1
	if k < e.n {
		s.mem -= p.ExF[k]
		if s.st[k] == offDone {
			s.st[k] = away
			s.mem -= p.X[k]
		}
		return
	}
	i := 2*e.n - 1 - k
	s.mem -= p.ExB[i] + p.X[i+1] + p.Y[i+1]
}

func (e *events) endLink() {
	s, p := &e.s, e.p
	j := s.link
	s.link = -1
	if s.linkOff {
		s.st[j] = offDone
		if e.fDone(j) {
			s.st[j] = away
			s.mem -= p.X[j]
		}
		return
	}
	s.st[j] = back
}

// saved is what a branch changes: the scalar state and at most two statuses (the activation
// on the link, and the one the running forward operation releases).
type saved struct {
	s      evState
	idx    [2]int
	old    [2]xstate
	nSaved int
}

// save records the state before a branch that may change the statuses of the activations
// in idx (−1: none).
func (e *events) save(idx ...int) saved {
	c := saved{s: e.s}
	for _, j := range idx {
		if j >= 0 {
			c.idx[c.nSaved], c.old[c.nSaved] = j, e.s.st[j]
			c.nSaved++
		}
	}
	return c
}

func (e *events) restore(c saved) {
	st := e.s.st
	for i := c.nSaved - 1; i >= 0; i-- {
		st[c.idx[i]] = c.old[i]
	}
	e.s = c.s
	e.s.st = st
}
