package rematoffload

import (
	"container/heap"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
	"github.com/memsched/memsched/verify/combined"
)

// Gap is a stretch of a compute sequence during which a stored tensor may be away: it is
// produced by operation Producer (-1: a^0, there from the start), used last before the stretch
// by operation Reader (its release waits for it; Reader = Producer when nothing reads it in
// between) and next by operation Deadline, before whose start it must be back. It is away
// during the operations Reader+1 … Deadline−1.
type Gap struct {
	Tensor                     schedule.Tensor
	Size                       int64
	Producer, Reader, Deadline int
}

// covers reports whether the tensor may be away during operation i.
func (g Gap) covers(i int) bool { return g.Reader < i && i < g.Deadline }

// Sequence is a 004 sequence replayed for scheduling with transfers: each operation's memory
// with everything stored on the GPU (004's), its duration, and every gap of every stored
// tensor (each stretch between two consecutive uses, a use being its production, a read, or
// its consumption).
type Sequence struct {
	Ops  schedule.Sequence
	Mem  []int64
	Dur  []float64
	Gaps []Gap
}

// NewSequence replays seq on c (SPEC §1) and lists its gaps; an invalid sequence is an error.
func NewSequence(c *instances.Chain, seq schedule.Sequence) (*Sequence, error) {
	n := c.Len()
	s := verify.InitialState(c)
	sq := &Sequence{Ops: seq, Mem: make([]int64, len(seq)), Dur: make([]float64, len(seq))}
	type inst struct {
		t                 schedule.Tensor
		producer, lastUse int
		live              bool
	}
	cur := make([]inst, n+1)
	cur[0] = inst{t: schedule.Tensor{Stage: 0}, producer: -1, lastUse: -1, live: true}
	size := func(t schedule.Tensor) int64 {
		if t.Full {
			return c.Stage(t.Stage).ABar
		}
		return c.SizeA(t.Stage)
	}
	use := func(l, i int) {
		in := &cur[l]
		if !in.live {
			return
		}
		if i-in.lastUse >= 2 && size(in.t) > 0 {
			sq.Gaps = append(sq.Gaps, Gap{Tensor: in.t, Size: size(in.t), Producer: in.producer, Reader: in.lastUse, Deadline: i})
		}
		in.lastUse = i
	}
	for i, op := range seq {
		// An operation of stage ℓ changes a^{ℓ-1} and a^ℓ only (004 Table 1,
		// verify.RematState.Apply): comparing those two, not the whole state, keeps this linear
		// (0.8 s on a 20 001-stage store-all sequence).
		l := op.Stage
		lo, hi := max(l-1, 0), min(l, n)
		var before [2]verify.Act
		for k := lo; k <= hi; k++ {
			before[k-lo] = s.Acts[k]
		}
		// The tensors op reads, replaces or removes (verify/combined's uses).
		switch op.Kind {
		case schedule.Fck, schedule.Fn:
			use(l-1, i)
		case schedule.Fall:
			use(l-1, i)
			if l <= n && s.Acts[l] == verify.Plain {
				use(l, i)
			}
		case schedule.B:
			use(l-1, i)
			use(l, i)
		}
		m, d, err := s.Apply(c, op)
		if err != nil {
			return nil, fmt.Errorf("rematoffload: operation %d (%v) of the sequence is invalid: %v", i+1, op, err)
		}
		sq.Mem[i], sq.Dur[i] = m, d
		for k := lo; k <= hi; k++ {
			if s.Acts[k] == before[k-lo] {
				continue
			}
			if s.Acts[k] == verify.None {
				cur[k].live = false
				continue
			}
			cur[k] = inst{t: schedule.Tensor{Stage: k, Full: s.Acts[k] == verify.Full && k > 0}, producer: i, lastUse: i, live: true}
		}
	}
	if s.T != 0 {
		return nil, fmt.Errorf("rematoffload: the sequence ends before δ^0 (current gradient δ^%d)", s.T)
	}
	return sq, nil
}

// Peak is the sequence's 004 peak (everything on the GPU).
func (sq *Sequence) Peak() int64 {
	var p int64
	for _, m := range sq.Mem {
		p = max(p, m)
	}
	return p
}

// CoverRule orders the gaps Cover takes over an operation still above the budget.
type CoverRule uint8

const (
	// Belady takes first the tensor that comes back last.
	Belady CoverRule = iota
	// Produced takes first the tensor produced first (its offload can start soonest), then
	// the one that comes back last.
	Produced
)

// Cover picks gaps whose tensors, away, bring every operation within budget: operations in
// order, and where one is still above it, the gaps over it in Belady's order (the tensor that
// comes back last first) until it fits. nil, false when some operation cannot fit with every
// tensor it does not use away.
func (sq *Sequence) Cover(budget int64) ([]Gap, bool) { return sq.CoverBy(budget, Belady) }

// CoverBy is Cover with the order rule. Operations are taken in order with the gaps over
// each in a heap by the rule (a gap joins after its reader and leaves at its deadline), and
// the bytes the chosen gaps keep away in a running sum: O((L + gaps) log gaps) — scanning
// every gap for every operation took 2.9 s on a 20 001-stage store-all sequence.
func (sq *Sequence) CoverBy(budget int64, rule CoverRule) ([]Gap, bool) {
	n := len(sq.Ops)
	joins := make([][]int, n+1) // the gaps that may be away from operation i on
	for k, g := range sq.Gaps {
		if j := g.Reader + 1; j < g.Deadline && j >= 0 && j < n {
			joins[j] = append(joins[j], k)
		}
	}
	h := &gapHeap{gaps: sq.Gaps, rule: rule}
	back := make([]int64, n+1) // the chosen bytes that come back at operation i
	var sel []Gap
	var away int64
	for i := range sq.Ops {
		away -= back[i]
		for _, k := range joins[i] {
			heap.Push(h, k)
		}
		need := sq.Mem[i] - budget - away
		for need > 0 && h.Len() > 0 {
			k := heap.Pop(h).(int)
			g := sq.Gaps[k]
			if g.Deadline <= i {
				continue // back already: it covers no later operation either
			}
			sel = append(sel, g)
			need -= g.Size
			away += g.Size
			if g.Deadline <= n {
				back[g.Deadline] += g.Size
			}
		}
		if need > 0 {
			return nil, false
		}
	}
	return sel, true
}

// gapHeap orders gap indices by a CoverRule: Belady's, the one that comes back last first
// (then the larger); Produced, the one produced first, then as Belady; then by index.
type gapHeap struct {
	gaps []Gap
	rule CoverRule
	ks   []int
}

func (h *gapHeap) Len() int { return len(h.ks) }
func (h *gapHeap) Less(a, b int) bool {
	ga, gb := h.gaps[h.ks[a]], h.gaps[h.ks[b]]
	if h.rule == Produced && ga.Producer != gb.Producer {
		return ga.Producer < gb.Producer
	}
	if ga.Deadline != gb.Deadline {
		return ga.Deadline > gb.Deadline
	}
	if ga.Size != gb.Size {
		return ga.Size > gb.Size
	}
	return h.ks[a] < h.ks[b]
}
func (h *gapHeap) Swap(a, b int) { h.ks[a], h.ks[b] = h.ks[b], h.ks[a] }
func (h *gapHeap) Push(x any)    { h.ks = append(h.ks, x.(int)) }
func (h *gapHeap) Pop() any {
	x := h.ks[len(h.ks)-1]
	h.ks = h.ks[:len(h.ks)-1]
	return x
}

// ErrNoFit says that Schedule found no way to fit an operation within the budget with the
// gaps given.
var ErrNoFit = errors.New("rematoffload: an operation does not fit the budget with the tensors given away")

// Schedule builds a strict schedule (verify/combined.Check's rules) of the sequence with the
// given gaps away and returns it with its replay:
//
//   - the offload of a gap's tensor starts after its producer; the prefetch after an anchor
//     operation — with Earliest the first from which memory allows the tensor reserved up to
//     its next use, with JustInTime the last from which it is expected back in time — and its
//     next use waits for it;
//   - the link runs the transfers in the order of the operations they follow (offloads
//     first at a tie, then by when they are needed);
//   - an operation that would not fit waits for the fewest offloads, in link order, whose
//     release makes it fit (counting every prefetch that may be reserved during it).
//
// Both policies are built and the faster valid schedule returned; ErrNoFit when neither
// fits.
func (sq *Sequence) Schedule(c *instances.Chain, budget int64, beta float64, gaps []Gap) (*schedule.Combined, *combined.Report, error) {
	s, rep, _, err := sq.scheduleBoth(c, budget, beta, gaps, func(time.Duration) bool { return true })
	return s, rep, err
}

// built is how a schedule was built: its prefetch policy, and for JustInTime the earliest
// schedule's times it read.
type built struct {
	pol   Policy
	times *combined.Report
}

// scheduleBoth is Schedule, without the just-in-time schedule unless room(d) says that a
// second schedule, which takes about as long as the first, d, may be built (each build
// replays the whole sequence: a second on 20 001 stages); it also says how the schedule
// returned was built.
func (sq *Sequence) scheduleBoth(c *instances.Chain, budget int64, beta float64, gaps []Gap, room func(d time.Duration) bool) (*schedule.Combined, *combined.Report, built, error) {
	t0 := time.Now()
	s, rep, err := sq.build(c, budget, beta, gaps, Earliest, nil, nil)
	if err != nil {
		return nil, nil, built{}, err
	}
	how := built{pol: Earliest}
	if room(time.Since(t0)) {
		// Just in time: each prefetch as late as the earliest schedule's times allow.
		if s2, rep2, err2 := sq.build(c, budget, beta, gaps, JustInTime, rep, nil); err2 == nil && rep2.Exact.Cmp(rep.Exact) < 0 {
			s, rep, how = s2, rep2, built{pol: JustInTime, times: rep}
		}
	}
	return s, rep, how, nil
}

// polishLink is a local search over the link order of the schedule of gaps built as how
// (rep its replay): two neighbours on the link swapped (the transfers of one gap keep their
// order), the first swap that shortens the strict schedule kept, until none does or eval
// says stop. build's order (by the operation each transfer follows) can put first an offload
// that could wait: on the toy chain at 97.78 MiB, 1 GB/s, a^0's offload from time 0 kept
// ā^1's from starting after F^1, and B^5 waited 2.4 ms (43.27 ms; the swapped order, ā^1
// first, is the optimum, 40.88 ms).
//
// eval is asked before each schedule with the time the last one took (last, at first), and
// says whether to build it.
func (sq *Sequence) polishLink(c *instances.Chain, budget int64, beta float64, gaps []Gap, how built, s *schedule.Combined, rep *combined.Report, last time.Duration, eval func(last time.Duration) bool) (*schedule.Combined, *combined.Report) {
	var swaps []int
	for p := 0; p+1 < len(s.Transfers); p++ {
		a, b := s.Transfers[p], s.Transfers[p+1]
		if a.Tensor == b.Tensor {
			continue // the same tensor's transfers keep their order
		}
		if !eval(last) {
			break
		}
		try := append(append([]int(nil), swaps...), p)
		t0 := time.Now()
		s2, rep2, err := sq.build(c, budget, beta, gaps, how.pol, how.times, try)
		last = time.Since(t0)
		if err == nil && rep2.Exact.Cmp(rep.Exact) < 0 {
			s, rep, swaps = s2, rep2, try
			p = max(p-2, -1) // the swap may open one just before it
		}
	}
	return s, rep
}

// transfer is one transfer of a schedule being built.
type transfer struct {
	gap    int
	pre    bool
	after  int
	due    int
	size   int64
	tensor schedule.Tensor
}

// swaps, applied in turn to the link order, exchange the transfers at positions p and p+1
// (polishLink).
func (sq *Sequence) build(c *instances.Chain, budget int64, beta float64, gaps []Gap, pol Policy, times *combined.Report, swaps []int) (*schedule.Combined, *combined.Report, error) {
	n := len(sq.Ops)
	ng := len(gaps)
	// Prefetch anchors, earliest deadline first. The tree holds, per operation, its memory
	// with the gaps' tensors away and the prefetches that may be reserved during it counted
	// back (Mem[o] − away[o] + reserved[o]).
	away := make([]int64, n+1) // a difference array, then the bytes away during o
	for _, g := range gaps {
		if g.Reader+1 < g.Deadline {
			away[g.Reader+1] += g.Size
			away[g.Deadline] -= g.Size
		}
	}
	level := make([]int64, n)
	var run int64
	for o := 0; o < n; o++ {
		run += away[o]
		level[o] = sq.Mem[o] - run
	}
	tree := newMaxTree(level)
	anchor := make([]int, ng)
	order := make([]int, ng)
	for k := range order {
		order[k] = k
	}
	sort.SliceStable(order, func(a, b int) bool { return gaps[order[a]].Deadline < gaps[order[b]].Deadline })
	for _, k := range order {
		g := gaps[k]
		d := g.Deadline
		a := d - 1
		// The first anchor from which every operation up to the deadline has room for the
		// tensor: just after the last one that has not.
		first := -1
		if g.Reader < d {
			first = max(g.Reader, tree.lastAbove(g.Reader+1, d-1, budget-g.Size))
		}
		if first >= 0 {
			a = first
		}
		if pol == JustInTime && times != nil && first >= 0 {
			// The last anchor from which the prefetch, started when the anchor ends, is back
			// before the deadline started in the earliest schedule.
			dur := float64(g.Size) / beta
			for cand := d - 1; cand >= first; cand-- {
				if times.OpStart[cand]+sq.Dur[cand]+dur <= times.OpStart[d] {
					a = cand
					break
				}
			}
		}
		anchor[k] = a
		// From its start to its end the prefetch reserves the tensor, which is away in the
		// plan: count it as back.
		tree.rangeAdd(a+1, d-1, g.Size)
	}
	reserved := make([]int64, n+1) // the prefetches that may be reserved during o
	for k, g := range gaps {
		if anchor[k]+1 < g.Deadline {
			reserved[anchor[k]+1] += g.Size
			reserved[g.Deadline] -= g.Size
		}
	}
	for o := 1; o <= n; o++ {
		reserved[o] += reserved[o-1]
	}
	// An earlier gap of the same tensor from the same producer, by its deadline.
	type origin struct {
		t schedule.Tensor
		p int
	}
	firstDeadline := map[origin]int{}
	for _, g := range gaps {
		key := origin{g.Tensor, g.Producer}
		if d, ok := firstDeadline[key]; !ok || g.Deadline < d {
			firstDeadline[key] = g.Deadline
		}
	}
	// The link order.
	var trs []transfer
	for k, g := range gaps {
		// The offload starts after the producer, so that it overlaps the reads before the
		// gap — unless an earlier gap of the same tensor (same producer) is away too: then
		// after the prefetch that ended it, i.e. after this gap's reader.
		after := g.Producer
		if firstDeadline[origin{g.Tensor, g.Producer}] < g.Deadline {
			after = g.Reader
		}
		trs = append(trs, transfer{gap: k, after: after, due: g.Reader + 1, size: g.Size, tensor: g.Tensor},
			transfer{gap: k, pre: true, after: anchor[k], due: g.Deadline, size: g.Size, tensor: g.Tensor})
	}
	sort.SliceStable(trs, func(a, b int) bool {
		if trs[a].after != trs[b].after {
			return trs[a].after < trs[b].after
		}
		if trs[a].pre != trs[b].pre {
			return !trs[a].pre
		}
		return trs[a].due < trs[b].due
	})
	for _, p := range swaps {
		trs[p], trs[p+1] = trs[p+1], trs[p]
	}
	offIdx, preIdx := make([]int, ng), make([]int, ng)
	out := &schedule.Combined{}
	for j, t := range trs {
		kind := schedule.Offload
		if t.pre {
			kind = schedule.Prefetch
			preIdx[t.gap] = j
		} else {
			offIdx[t.gap] = j
		}
		out.Transfers = append(out.Transfers, schedule.CombinedTransfer{Kind: kind, Tensor: t.tensor, After: t.after})
	}
	// Operations: the next use of each gap waits for its prefetch; an operation that would not
	// fit waits for offloads in link order. The offloads away during operation i are kept in a
	// tree by link position (added after their reader, removed at their deadline).
	due := make([][]int, n+1)   // the gaps whose next use is operation i
	leave := make([][]int, n+1) // the gaps away from operation i on
	for k, g := range gaps {
		if g.Deadline >= 0 && g.Deadline <= n {
			due[g.Deadline] = append(due[g.Deadline], k)
		}
		if g.Reader+1 < g.Deadline && g.Reader+1 >= 0 && g.Reader+1 <= n {
			leave[g.Reader+1] = append(leave[g.Reader+1], k)
		}
	}
	awayNow := newSumTree(len(trs))
	for i, op := range sq.Ops {
		o := schedule.CombinedOp{Op: op}
		for _, k := range due[i] {
			o.Wait = append(o.Wait, preIdx[k])
			if gaps[k].Reader+1 < i {
				awayNow.add(offIdx[k], -gaps[k].Size) // back from operation i on
			}
		}
		for _, k := range leave[i] {
			awayNow.add(offIdx[k], gaps[k].Size)
		}
		mem := sq.Mem[i] + reserved[i]
		if mem > budget {
			// Released: every offload over i up to the one waited for.
			w := awayNow.firstReaching(mem - budget)
			if w < 0 {
				return nil, nil, ErrNoFit
			}
			o.Wait = append(o.Wait, w)
		}
		out.Ops = append(out.Ops, o)
	}
	rep, err := combined.Check(c, budget, beta, out)
	if err != nil {
		return nil, nil, err
	}
	combined.Stamp(out, rep)
	return out, rep, nil
}

// SequenceCandidate is a 004 sequence to schedule with transfers, and where it comes from.
// Seed, when set, is a valid schedule of that sequence (another strategy's): the tensors it
// keeps away (GapsOf) start a local search of their own (ScheduleSequences).
type SequenceCandidate struct {
	Sequence schedule.Sequence
	Source   string
	Seed     *schedule.Combined
}

// GapsOf returns the gaps schedule s keeps its tensors away over, s being a schedule of the
// sequence: for each prefetch, the gap of its tensor that ends at the first operation waiting
// for it. false when some prefetch matches no gap (s is not a schedule of this sequence, or
// no operation waits for a prefetch).
func (sq *Sequence) GapsOf(s *schedule.Combined) ([]Gap, bool) {
	if s == nil || len(s.Ops) != len(sq.Ops) {
		return nil, false
	}
	firstWait := make([]int, len(s.Transfers))
	for j := range firstWait {
		firstWait[j] = -1
	}
	for i := len(s.Ops) - 1; i >= 0; i-- {
		if s.Ops[i].Op != sq.Ops[i] {
			return nil, false
		}
		for _, w := range s.Ops[i].Wait {
			if w >= 0 && w < len(firstWait) {
				firstWait[w] = i
			}
		}
	}
	type end struct {
		t schedule.Tensor
		d int
	}
	byEnd := make(map[end]Gap, len(sq.Gaps))
	for _, g := range sq.Gaps {
		byEnd[end{g.Tensor, g.Deadline}] = g
	}
	var gaps []Gap
	for j, tr := range s.Transfers {
		if tr.Kind != schedule.Prefetch {
			continue
		}
		g, ok := byEnd[end{tr.Tensor, firstWait[j]}]
		if !ok {
			return nil, false
		}
		gaps = append(gaps, g)
	}
	return gaps, true
}

// SequenceResult is the fastest schedule found over the candidates.
type SequenceResult struct {
	Schedule *schedule.Combined
	Report   *combined.Report
	// Source is the candidate's, Gaps the tensors away over gaps, Tried the candidates
	// scheduled and Evaluations the schedules built.
	Source             string
	Gaps               int
	Tried, Evaluations int
	// Polished counts the schedules the link-order polish built (polishLink; not in
	// Evaluations), Enumerated those of the small sets of gaps (smallSets; nor these).
	Polished, Enumerated int
	// Why says, when there is no schedule because no candidate was found, what the
	// sources lacked (C_FL's table out of reach, …).
	Why string
}

// polishEvals caps the schedules one polish of the link order builds (ScheduleSequences).
const polishEvals = 128

// ScheduleSequences schedules each candidate with transfers (Sequence.CoverBy's gaps by
// both rules, then a local search: a gap dropped, or dropped and the operations it served
// covered again, while that shortens the strict schedule; the link order polished before and
// after it, polishLink, at most polishEvals schedules each time; then the same local search
// from the gaps of the candidate's Seed, when it has one; then, where the candidate computes
// for less than the best schedule at hand, every small set of gaps, smallSets, at most
// smallSetEvals schedules, the local search from the fastest) and returns the fastest valid
// schedule (Schedule nil when none fits). It stops starting candidates or moves once o's deadline has
// passed (the best so far stands) and after maxEvals schedules in all (0: no cap).
func ScheduleSequences(c *instances.Chain, budget int64, beta float64, cands []SequenceCandidate, o Options, maxEvals int) (*SequenceResult, error) {
	best := &SequenceResult{}
	// built1 is what one schedule took to build at the last evaluation: none is started when
	// the deadline is nearer (a build is not interruptible: with the replay by verify/combined
	// it takes about a second on 20 001 stages; the second cover rule and the just-in-time
	// schedule are skipped too). The first build is not: without it there is no schedule.
	var built1 time.Duration
	room := func(d time.Duration) bool { return !o.passed() && (o.Deadline.IsZero() || time.Until(o.Deadline) >= d) }
	late := func() bool { return !room(built1) }
	out := func() bool {
		return late() || maxEvals > 0 && best.Evaluations >= maxEvals || meetsSumU(c, best.Schedule, best.Report)
	}
	for _, cd := range cands {
		if out() {
			break
		}
		sq, err := NewSequence(c, cd.Sequence)
		if err != nil {
			return nil, err
		}
		var how built // how the schedule of gaps was built (polish reads it)
		// build schedules the gaps g; eval does and counts it against maxEvals.
		build := func(g []Gap) (*schedule.Combined, *combined.Report) {
			t0 := time.Now()
			s, rep, h, err := sq.scheduleBoth(c, budget, beta, g, room)
			built1 = time.Since(t0)
			if h.pol == JustInTime {
				built1 /= 2 // two schedules built
			}
			if err != nil {
				return nil, nil // no schedule with these gaps
			}
			how = h
			return s, rep
		}
		eval := func(g []Gap) (*schedule.Combined, *combined.Report) {
			best.Evaluations++
			return build(g)
		}
		// The link order of a schedule of gaps polished (polishLink), before the local search
		// over the gaps and after it if it moved them: dropping a gap can win against the
		// first order (the toy chain at 97.78 MiB: a^0 and ā^1 away, 43.27 ms; ā^1 alone,
		// 42.29 ms) and lose against a better one (both, ā^1 first: 40.88 ms, the optimum).
		// Its schedules are not counted against maxEvals, which bounds the candidates'
		// covers and moves (counted, Inception v3 at 10 %, 12 GB/s scheduled 15 candidates
		// instead of 23 and missed C_FL's, 153.22 against 152.74 ms), but capped on their own.
		descend := func(gaps []Gap, s *schedule.Combined, rep *combined.Report, sHow built) ([]Gap, *schedule.Combined, *combined.Report) {
			polish := func() {
				if !out() && !meetsSumU(c, s, rep) {
					left := polishEvals
					s, rep = sq.polishLink(c, budget, beta, gaps, sHow, s, rep, built1, func(last time.Duration) bool {
						if left--; left < 0 || !room(last) {
							return false
						}
						best.Polished++
						return true
					})
				}
			}
			polish()
			polished := true
			// Local search over the gaps: the first move that shortens the schedule, until none
			// (or until it computes without a pause and recomputes nothing: nothing is faster).
			for improved := true; improved && !out() && !meetsSumU(c, s, rep); {
				improved = false
				for k := range gaps {
					if out() {
						break
					}
					drop := append(append([]Gap(nil), gaps[:k]...), gaps[k+1:]...)
					moves := [][]Gap{drop}
					if re, ok := sq.coverWith(budget, drop, gaps[k]); ok {
						moves = append(moves, re)
					}
					for _, g := range moves {
						if s2, rep2 := eval(g); s2 != nil && rep2.Exact.Cmp(rep.Exact) < 0 {
							s, rep, gaps, sHow, improved, polished = s2, rep2, g, how, true, false
							break
						}
					}
					if improved {
						break
					}
				}
			}
			if !polished {
				polish()
			}
			return gaps, s, rep
		}
		// From the better of the two cover rules' gaps.
		var gaps []Gap
		var s *schedule.Combined
		var rep *combined.Report
		var sHow built
		for _, rule := range []CoverRule{Belady, Produced} {
			if late() { // also when Belady's cover did not schedule: its build took the time
				break
			}
			g, ok := sq.CoverBy(budget, rule)
			if !ok {
				continue
			}
			if s2, rep2 := eval(g); s2 != nil && (rep == nil || rep2.Exact.Cmp(rep.Exact) < 0) {
				s, rep, gaps, sHow = s2, rep2, g, how
			}
		}
		if s != nil {
			gaps, s, rep = descend(gaps, s, rep, sHow)
		}
		// Then from the seed's own gaps (another strategy's choice: pofo's can be far from
		// both rules', Inception v3 at 75 %, 12 GB/s: 142.50 ms against their 152.31 ms on its
		// sequence). A search of its own: the local search is not monotone in where it starts
		// (ResNet-50 at 10 %, 12 GB/s: from the covers 112.44 ms, from pofo's gaps, the better
		// start, 114.04 ms).
		if g, ok := sq.GapsOf(cd.Seed); ok && !out() {
			if s2, rep2 := eval(g); s2 != nil {
				if g2, s2, rep2 := descend(g, s2, rep2, how); rep == nil || rep2.Exact.Cmp(rep.Exact) < 0 {
					gaps, s, rep = g2, s2, rep2
				}
			}
		}
		// Then every small set of gaps, smallest first: the covers and the moves from them miss
		// sets that no single drop or re-cover reaches (ResNet-50 at 50 %, 12 GB/s, pofo's
		// sequence: the local search ends at 104.64 ms with 4 gaps; a set of 2, the 23rd
		// scheduled, runs it without a pause, 104.54 ms). Its schedules are capped on their
		// own (smallSetEvals), not against maxEvals, like the polish's.
		// Only where a set could win: the candidate computes for less than the best schedule
		// at hand (its own, and every candidate's so far).
		compute := 0.0
		for _, d := range sq.Dur {
			compute += d
		}
		worth := (rep == nil || compute < rep.Makespan*(1-1e-12)) && (best.Report == nil || compute < best.Report.Makespan*(1-1e-12))
		if worth && !out() {
			// The fastest set is built once more: how, which the polish reads, is the last
			// build's, and the sets built after the fastest were other schedules.
			if g, s2, _ := sq.smallSets(c, budget, beta, rep, out, build, &best.Enumerated); s2 != nil {
				if s2, rep2 := build(g); s2 != nil {
					if g2, s2, rep2 := descend(g, s2, rep2, how); rep == nil || rep2.Exact.Cmp(rep.Exact) < 0 {
						gaps, s, rep = g2, s2, rep2
					}
				}
			}
		}
		if s == nil {
			continue
		}
		best.Tried++
		if best.Report == nil || rep.Exact.Cmp(best.Report.Exact) < 0 {
			best.Schedule, best.Report, best.Source, best.Gaps = s, rep, cd.Source, len(gaps)
		}
	}
	return best, nil
}

// smallSetGaps, smallSetEvals and smallSetCands bound smallSets: sets of at most
// smallSetGaps gaps, at most smallSetEvals schedules built a candidate, and only among at most
// smallSetCands useful gaps (C(24, 5) = 42 504 sets to filter; a 201-stage random chain's
// store-all sequence has hundreds, and enumerating their sets took 30 s).
const (
	smallSetGaps  = 5
	smallSetEvals = 1024
	smallSetCands = 24
)

// smallSets schedules the sets of at most smallSetGaps gaps, smallest first, that could bring
// every operation within the budget — each gap over some operation above it, and over each
// such operation gaps of at least its excess — and returns the fastest faster than rep (nil
// when none, or no schedule, or more than smallSetCands such gaps). It stops after
// smallSetEvals schedules (counted in *evals) or when out says so.
func (sq *Sequence) smallSets(c *instances.Chain, budget int64, beta float64, rep *combined.Report, out func() bool,
	build func([]Gap) (*schedule.Combined, *combined.Report), evals *int) ([]Gap, *schedule.Combined, *combined.Report) {
	var over []int // the operations above the budget
	for i, m := range sq.Mem {
		if m > budget {
			over = append(over, i)
		}
	}
	var cand []Gap
	for _, g := range sq.Gaps {
		for _, i := range over {
			if g.covers(i) {
				cand = append(cand, g)
				break
			}
		}
	}
	if len(cand) > smallSetCands {
		return nil, nil, nil
	}
	covered := func(sel []Gap) bool {
		for _, i := range over {
			if sq.uncovered(i, budget, sel) > 0 {
				return false
			}
		}
		return true
	}
	var bestG []Gap
	var bestS *schedule.Combined
	bestR := rep
	built := 0
	sel := make([]Gap, 0, smallSetGaps)
	var choose func(from, size int) bool // false: stop
	choose = func(from, size int) bool {
		if len(sel) == size {
			if !covered(sel) {
				return true
			}
			if built >= smallSetEvals || out() {
				return false
			}
			built++
			*evals++
			if s2, rep2 := build(sel); s2 != nil && (bestR == nil || rep2.Exact.Cmp(bestR.Exact) < 0) {
				bestG, bestS, bestR = append([]Gap(nil), sel...), s2, rep2
			}
			return true
		}
		for j := from; j < len(cand); j++ {
			sel = append(sel, cand[j])
			ok := choose(j+1, size)
			sel = sel[:len(sel)-1]
			if !ok {
				return false
			}
		}
		return true
	}
	for size := 1; size <= min(smallSetGaps, len(cand)); size++ {
		if !choose(0, size) {
			break
		}
	}
	return bestG, bestS, bestR
}

// meetsSumU says whether schedule s (replayed as rep) runs every stage's forward and backward
// once and never idles: its makespan is Σ(u_f+u_b), which bounds every schedule (SPEC §5).
func meetsSumU(c *instances.Chain, s *schedule.Combined, rep *combined.Report) bool {
	return s != nil && rep != nil && len(s.Ops) == 2*c.Len() && rep.Idle <= 0
}

// uncovered is what operation i holds beyond the budget with the tensors of the gaps sel
// over it away (≤ 0: it fits).
func (sq *Sequence) uncovered(i int, budget int64, sel []Gap) int64 {
	need := sq.Mem[i] - budget
	for _, g := range sel {
		if g.covers(i) {
			need -= g.Size
		}
	}
	return need
}

// coverWith completes the gaps sel, without the gap excluded, so that every operation fits
// (Cover's rule for the operations still above the budget).
func (sq *Sequence) coverWith(budget int64, sel []Gap, excluded Gap) ([]Gap, bool) {
	out := append([]Gap(nil), sel...)
	in := func(g Gap) bool {
		for _, h := range out {
			if h == g {
				return true
			}
		}
		return g == excluded
	}
	for i := range sq.Ops {
		need := sq.uncovered(i, budget, out)
		if need <= 0 {
			continue
		}
		var cand []Gap
		for _, g := range sq.Gaps {
			if g.covers(i) && !in(g) {
				cand = append(cand, g)
			}
		}
		sort.SliceStable(cand, func(a, b int) bool {
			if cand[a].Deadline != cand[b].Deadline {
				return cand[a].Deadline > cand[b].Deadline
			}
			return cand[a].Size > cand[b].Size
		})
		for _, g := range cand {
			if need <= 0 {
				break
			}
			out = append(out, g)
			need -= g.Size
		}
		if need > 0 {
			return nil, false
		}
	}
	return out, true
}
