package combined

import (
	"container/heap"
	"fmt"
	"math"
	"math/big"
	"sort"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
)

// Rule names the rule a combined schedule breaks.
type Rule string

// The rules Check enforces.
const (
	// RuleIndex: a Wait or After index is out of range.
	RuleIndex Rule = "index"
	// RuleDeadlock: the dependencies form a cycle (an operation waits for a transfer that
	// waits for a later operation).
	RuleDeadlock Rule = "deadlock"
	// RuleOp: an operation is not valid in 004's model (SPEC §1, verify.RematState.Apply), or
	// the sequence ends before δ^0.
	RuleOp Rule = "operation"
	// RuleAway: an operation uses a tensor that is not on the GPU (offloaded, or its prefetch
	// has not ended).
	RuleAway Rule = "away"
	// RuleTransfer: a transfer names a tensor that is not stored, an offload of a tensor that
	// is not on the GPU, a prefetch of one that was never offloaded.
	RuleTransfer Rule = "transfer"
	// RuleReleased: a prefetch starts before its tensor has left the GPU (its offload and the
	// operations reading it have not all ended).
	RuleReleased Rule = "released"
	// RuleMemory: GPU memory exceeds the budget at some instant.
	RuleMemory Rule = "memory"
)

// Violation is the first broken rule: at time Time (seconds), at compute operation Op or
// transfer Transfer (0-based, as the indices of the file: ops[Op], transfers[Transfer]; -1
// when it is not about one). Its messages write every index 0-based too.
type Violation struct {
	Rule         Rule
	Time         float64
	Op, Transfer int
	Msg          string
}

func (v *Violation) Error() string {
	where := ""
	switch {
	case v.Op >= 0:
		where = fmt.Sprintf(" at operation %d", v.Op)
	case v.Transfer >= 0:
		where = fmt.Sprintf(" at transfer %d", v.Transfer)
	}
	return fmt.Sprintf("combined: %s violated%s, t = %g s: %s", v.Rule, where, v.Time, v.Msg)
}

// Report is what a valid combined schedule achieves.
type Report struct {
	// Makespan is the end of the last operation or transfer, in seconds; Exact the same as an
	// exact rational.
	Makespan float64
	Exact    *big.Rat
	// Peak is the largest GPU memory at any instant, in bytes.
	Peak int64
	// Compute is Σ of the operations' durations; Idle = Makespan − Compute.
	Compute, Idle float64
	// LinkBusy is the total transfer time.
	LinkBusy float64
	// Offloaded is the number of offloads, OffloadedBytes their volume.
	Offloaded      int
	OffloadedBytes int64
	// OpStart and TransferStart are the start times the dependencies give (seconds).
	OpStart, TransferStart []float64
}

// where a tensor is.
type place uint8

const (
	onGPU       place = iota // stored on the GPU (possibly being copied out)
	onCPU                    // released: only the CPU copy exists
	prefetching              // coming back; its memory is reserved
)

// item is an operation (op) or a transfer of the schedule, id its index, rank the order in
// which the timing pass computed it.
type item struct {
	op   bool
	id   int
	rank int
}

// event kinds, in the order they are processed at one instant (see Check).
type evKind uint8

const (
	evOpEnd evKind = iota
	evTransferEnd
)

type endEvent struct {
	t    *big.Int // ticks of the replay's clock
	kind evKind
	id   int
}

type endHeap []endEvent

func (h endHeap) Len() int { return len(h) }
func (h endHeap) Less(i, j int) bool {
	if c := h[i].t.Cmp(h[j].t); c != 0 {
		return c < 0
	}
	if h[i].kind != h[j].kind {
		return h[i].kind < h[j].kind
	}
	return h[i].id < h[j].id
}
func (h endHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *endHeap) Push(x any)   { *h = append(*h, x.(endEvent)) }
func (h *endHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// uses returns the stored tensors op reads, replaces or removes in state s (004 Table 1):
// the input of a forward (a^{ℓ-1} or ā^{ℓ-1}, and a plain a^ℓ that F_all^ℓ replaces), and for
// B^ℓ, ā^ℓ and its input.
func uses(s *verify.RematState, op schedule.Op) []schedule.Tensor {
	l := op.Stage
	var out []schedule.Tensor
	in := func(k int) {
		if k >= 0 && k < len(s.Acts) && s.Acts[k] != verify.None {
			out = append(out, schedule.Tensor{Stage: k, Full: s.Acts[k] == verify.Full && k > 0})
		}
	}
	switch op.Kind {
	case schedule.Fck, schedule.Fn:
		in(l - 1)
	case schedule.Fall:
		in(l - 1)
		if l < len(s.Acts) && s.Acts[l] == verify.Plain {
			in(l)
		}
	case schedule.B:
		in(l - 1)
		in(l)
	}
	return out
}

// stored says whether tensor t is what state s holds at its stage.
func stored(s *verify.RematState, t schedule.Tensor) bool {
	if t.Stage < 0 || t.Stage >= len(s.Acts) {
		return false
	}
	a := s.Acts[t.Stage]
	if t.Stage == 0 {
		return a != verify.None && !t.Full
	}
	return a == verify.Plain && !t.Full || a == verify.Full && t.Full
}

// Check replays the combined schedule s on chain c under budget bytes (everything counted,
// a^0 and δ^{L+1} included) with one link of beta bytes per second, half-duplex (one transfer
// at a time, whatever its direction, as 001's assumption (B)), and returns its report or the
// first broken rule as a *Violation. Times are computed exactly (rationals; every float64 input
// is the binary fraction it is), so a schedule built on integer instances is judged exactly.
//
// Timing: operation i starts when operation i−1 and every transfer of its Wait have ended and
// lasts u_f or u_b of its stage; transfer j starts when transfer j−1 and operation After have
// ended and lasts |tensor|/β.
//
// Memory (strict timing, SPEC §6): an operation allocates its outputs and overhead when it
// starts and frees its overhead and the inputs it consumes when it ends (004 Table 1); an
// offloaded tensor stays on the GPU until its offload has ended and every operation that uses
// it before its prefetch is waited for has ended (its readers); a prefetch reserves the whole
// tensor when it starts, and the tensor is usable when it ends. An operation may use only
// tensors on the GPU. At one instant, ends and releases come first, then starts in the order
// the dependencies computed them; memory is checked after every start.
func Check(c *instances.Chain, budget int64, beta float64, s *schedule.Combined) (*Report, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if !(beta > 0) || math.IsInf(beta, 0) {
		return nil, fmt.Errorf("combined: bandwidth β = %g must be positive and finite", beta)
	}
	nOp, nTr := len(s.Ops), len(s.Transfers)
	var cl *clock // set once the inputs are known to be in range
	viol := func(r Rule, t *big.Int, op, tr int, format string, args ...any) error {
		v := &Violation{Rule: r, Op: op, Transfer: tr, Msg: fmt.Sprintf(format, args...)}
		if t != nil {
			v.Time = cl.seconds(t)
		}
		return v
	}
	for i, o := range s.Ops {
		if o.Kind == schedule.Del {
			return nil, viol(RuleOp, nil, i, -1, "Del is not an operation of the combined model")
		}
		if o.Stage < 1 || o.Stage > c.Len() {
			return nil, viol(RuleOp, nil, i, -1, "stage %d out of range 1..%d", o.Stage, c.Len())
		}
		for _, w := range o.Wait {
			if w < 0 || w >= nTr {
				if nTr == 0 {
					return nil, viol(RuleIndex, nil, i, -1, "waits for transfer %d, but the schedule has no transfers", w)
				}
				return nil, viol(RuleIndex, nil, i, -1, "waits for transfer %d, not in 0..%d", w, nTr-1)
			}
		}
	}
	for j, t := range s.Transfers {
		if t.After < -1 || t.After >= nOp {
			return nil, viol(RuleIndex, nil, -1, j, "after operation %d, not in -1..%d (-1: none)", t.After, nOp-1)
		}
		if t.Kind != schedule.Offload && t.Kind != schedule.Prefetch {
			return nil, viol(RuleTransfer, nil, -1, j, "kind %v (want offload or prefetch)", t.Kind)
		}
		if t.Tensor.Stage < 0 || t.Tensor.Stage > c.Len() || t.Tensor.Full && t.Tensor.Stage == 0 {
			return nil, viol(RuleTransfer, nil, -1, j, "tensor %v does not exist (a^0..a^%d, ā^1..ā^%d)", t.Tensor, c.Len(), c.Len())
		}
	}

	// Timing: the two streams advance together; an item is computed once what it depends on
	// is. Times are exact: ticks of the clock (see clock).
	durs := make([]float64, 0, 2*c.Len())
	for l := 1; l <= c.Len(); l++ {
		durs = append(durs, c.Stage(l).UF, c.Stage(l).UB)
	}
	cl = newClock(durs, beta)
	opStart, opEnd := make([]*big.Int, nOp), make([]*big.Int, nOp)
	trStart, trEnd := make([]*big.Int, nTr), make([]*big.Int, nTr)
	opDur, trDur := make([]*big.Int, nOp), make([]*big.Int, nTr)
	sizes := make([]int64, nTr)
	stageDur := make([][2]*big.Int, c.Len()+1) // u_f, u_b of each stage in ticks
	for l := 1; l <= c.Len(); l++ {
		stageDur[l] = [2]*big.Int{cl.dur(c.Stage(l).UF), cl.dur(c.Stage(l).UB)}
	}
	for i, o := range s.Ops {
		if o.Kind == schedule.B {
			opDur[i] = stageDur[o.Stage][1]
		} else {
			opDur[i] = stageDur[o.Stage][0]
		}
	}
	for j, t := range s.Transfers {
		sizes[j] = tensorSize(c, t.Tensor)
		trDur[j] = cl.transfer(sizes[j])
	}
	var order []item // the order in which items were computed: causal at equal times
	zero := new(big.Int)
	for i, j := 0, 0; i < nOp || j < nTr; {
		ready := i < nOp
		if ready {
			for _, w := range s.Ops[i].Wait {
				if w >= j {
					ready = false
					break
				}
			}
		}
		if ready {
			t := zero
			if i > 0 {
				t = opEnd[i-1]
			}
			for _, w := range s.Ops[i].Wait {
				if trEnd[w].Cmp(t) > 0 {
					t = trEnd[w]
				}
			}
			opStart[i] = t
			opEnd[i] = new(big.Int).Add(t, opDur[i])
			order = append(order, item{true, i, len(order)})
			i++
			continue
		}
		if j < nTr && s.Transfers[j].After < i {
			t := zero
			if j > 0 {
				t = trEnd[j-1]
			}
			if a := s.Transfers[j].After; a >= 0 && opEnd[a].Cmp(t) > 0 {
				t = opEnd[a]
			}
			trStart[j] = t
			trEnd[j] = new(big.Int).Add(t, trDur[j])
			order = append(order, item{false, j, len(order)})
			j++
			continue
		}
		if i < nOp {
			return nil, viol(RuleDeadlock, nil, i, -1, "%v waits for a transfer that waits for this or a later operation", s.Ops[i].Op)
		}
		return nil, viol(RuleDeadlock, nil, -1, j, "the transfer waits for operation %d, which does not exist", s.Transfers[j].After)
	}
	// Starts in time order, causal order at equal times. Each stream's starts never decrease
	// (an operation starts after the one before it ends, a transfer likewise), and each is
	// computed in its index order: the order wanted is the merge of the two streams by
	// (start, rank), linear where a sort was n log n comparisons.
	order = mergeStarts(order, opStart, trStart)

	// Readers: for each offload, the operations that use its tensor between the previous
	// wait for a prefetch of it and the first operation waiting for the next prefetch of it.
	plain := verify.InitialState(c)
	opUses := make([][]schedule.Tensor, nOp)
	for i, o := range s.Ops {
		opUses[i] = uses(&plain, o.Op)
		if _, _, err := plain.Apply(c, o.Op); err != nil {
			return nil, viol(RuleOp, opStart[i], i, -1, "%v: %v", o.Op, err)
		}
	}
	if plain.T != 0 {
		return nil, viol(RuleOp, opEnd[nOp-1], -1, -1, "the sequence ends before δ^0 is computed (current gradient δ^%d)", plain.T)
	}
	firstWait := make([]int, nTr) // first operation waiting for transfer j (nOp if none)
	for j := range firstWait {
		firstWait[j] = nOp
	}
	for i := nOp - 1; i >= 0; i-- {
		for _, w := range s.Ops[i].Wait {
			firstWait[w] = i
		}
	}
	// The transfers and the readers of each tensor, in order (a tensor is moved a few times,
	// read by a few operations: looking them up per transfer keeps the replay linear — a
	// 20 001-stage schedule with 40 000 transfers took 18 s scanning them all).
	sameTensor := map[schedule.Tensor][]int{}
	prevSame := make([]int, nTr) // the previous transfer of the same tensor, -1 if none
	for j, t := range s.Transfers {
		l := sameTensor[t.Tensor]
		prevSame[j] = -1
		if len(l) > 0 {
			prevSame[j] = l[len(l)-1]
		}
		sameTensor[t.Tensor] = append(l, j)
	}
	usedBy := map[schedule.Tensor][]int{}
	for i, us := range opUses {
		for _, u := range us {
			usedBy[u] = append(usedBy[u], i)
		}
	}
	readers := make([][]int, nTr)
	unread := make([]int, nTr)    // readers of offload j not ended yet
	opReads := make([][]int, nOp) // the offloads operation i is a reader of
	for j, t := range s.Transfers {
		if t.Kind != schedule.Offload {
			continue
		}
		lo, hi := -1, nOp
		same := sameTensor[t.Tensor]
		at := sort.SearchInts(same, j)
		for k := at - 1; k >= 0; k-- { // the previous prefetch of the same tensor
			if s.Transfers[same[k]].Kind == schedule.Prefetch {
				lo = firstWait[same[k]]
				break
			}
		}
		for k := at + 1; k < len(same); k++ { // the next prefetch of it
			if s.Transfers[same[k]].Kind == schedule.Prefetch {
				hi = firstWait[same[k]]
				break
			}
		}
		ops := usedBy[t.Tensor]
		for k := sort.SearchInts(ops, max(lo, 0)); k < len(ops) && ops[k] < hi; k++ {
			i := ops[k]
			readers[j] = append(readers[j], i)
			opReads[i] = append(opReads[i], j)
		}
		unread[j] = len(readers[j])
	}

	// Replay.
	state := verify.InitialState(c)
	loc := map[schedule.Tensor]place{{Stage: 0}: onGPU}
	cur := state.Memory(c)
	rep := &Report{Peak: cur}
	if cur > budget {
		return nil, viol(RuleMemory, zero, -1, -1, "%d bytes in the initial state (a^0, δ^%d), budget %d", cur, c.Len(), budget)
	}
	opDone := make([]bool, nOp)
	// ahead is state with the running operation applied (its post-state): one operation runs
	// at a time, so state catches up at its end. A copy of the state per operation was
	// quadratic in the chain's length (0.7 s of a 20 001-stage replay).
	ahead := state.Clone()
	during := make([]int64, nOp)
	trDone := make([]bool, nTr)
	released := make([]bool, nTr)
	ends := &endHeap{}
	next := 0 // next item of order to start
	now := zero
	release := func(j int) {
		released[j] = true
		t := s.Transfers[j].Tensor
		if stored(&state, t) && loc[t] == onGPU {
			loc[t] = onCPU
			cur -= sizes[j]
		}
	}
	// Offloads that have ended, waiting for their readers (released in index order, as
	// they become free).
	var holding []int
	tryReleases := func() {
		if len(holding) == 0 {
			return
		}
		sort.Ints(holding)
		kept := holding[:0]
		for _, j := range holding {
			if unread[j] == 0 {
				release(j)
			} else {
				kept = append(kept, j)
			}
		}
		holding = kept
	}
	for next < len(order) || ends.Len() > 0 {
		// The next instant: the earliest pending end or start.
		t := (*big.Int)(nil)
		if ends.Len() > 0 {
			t = (*ends)[0].t
		}
		if next < len(order) {
			st := startOf(order[next].op, order[next].id, opStart, trStart)
			if t == nil || st.Cmp(t) < 0 {
				t = st
			}
		}
		now = t
		for {
			progressed := false
			for ends.Len() > 0 && (*ends)[0].t.Cmp(now) == 0 {
				e := heap.Pop(ends).(endEvent)
				progressed = true
				switch e.kind {
				case evOpEnd:
					i := e.id
					post := &ahead
					cur -= during[i] - post.Memory(c) // its overhead and the inputs it consumed
					// Tensors it consumed are gone; its outputs are stored on the GPU. An
					// operation of stage ℓ changes a^{ℓ-1} and a^ℓ only (004 Table 1,
					// verify.RematState.Apply).
					for l := max(s.Ops[i].Stage-1, 0); l <= s.Ops[i].Stage && l < len(post.Acts); l++ {
						if post.Acts[l] == state.Acts[l] {
							continue
						}
						if state.Acts[l] != verify.None {
							delete(loc, schedule.Tensor{Stage: l, Full: state.Acts[l] == verify.Full && l > 0})
						}
						if post.Acts[l] != verify.None {
							loc[schedule.Tensor{Stage: l, Full: post.Acts[l] == verify.Full && l > 0}] = onGPU
						}
					}
					if _, _, err := state.Apply(c, s.Ops[i].Op); err != nil {
						return nil, viol(RuleOp, now, i, -1, "%v: %v", s.Ops[i].Op, err) // ahead took it: never
					}
					opDone[i] = true
					for _, j := range opReads[i] {
						unread[j]--
					}
				case evTransferEnd:
					j := e.id
					trDone[j] = true
					if s.Transfers[j].Kind == schedule.Prefetch {
						loc[s.Transfers[j].Tensor] = onGPU
					} else {
						holding = append(holding, j)
					}
				}
			}
			tryReleases()
			if next < len(order) && startOf(order[next].op, order[next].id, opStart, trStart).Cmp(now) == 0 {
				it := order[next]
				next++
				progressed = true
				if it.op {
					i := it.id
					o := s.Ops[i].Op
					for _, u := range uses(&state, o) {
						switch loc[u] {
						case onCPU:
							return nil, viol(RuleAway, now, i, -1, "%v uses %v, which is on the CPU (offloaded; a prefetch must bring it back first)", o, u)
						case prefetching:
							return nil, viol(RuleAway, now, i, -1, "%v uses %v, whose prefetch has not ended", o, u)
						}
					}
					m, _, err := ahead.Apply(c, o)
					if err != nil {
						return nil, viol(RuleOp, now, i, -1, "%v: %v", o, err)
					}
					during[i] = m
					cur += m - state.Memory(c)
					heap.Push(ends, endEvent{opEnd[i], evOpEnd, i})
				} else {
					j := it.id
					tr := s.Transfers[j]
					switch tr.Kind {
					case schedule.Offload:
						if !stored(&state, tr.Tensor) {
							return nil, viol(RuleTransfer, now, -1, j, "offload of %v, which is not stored (not computed yet, or consumed)", tr.Tensor)
						}
						if loc[tr.Tensor] != onGPU {
							return nil, viol(RuleTransfer, now, -1, j, "offload of %v, which is not on the GPU", tr.Tensor)
						}
						if k := prevSame[j]; k >= 0 && s.Transfers[k].Kind == schedule.Offload {
							return nil, viol(RuleTransfer, now, -1, j, "%v offloaded again before its prefetch", tr.Tensor)
						}
						rep.Offloaded++
						rep.OffloadedBytes += sizes[j]
					case schedule.Prefetch:
						if !stored(&state, tr.Tensor) {
							return nil, viol(RuleTransfer, now, -1, j, "prefetch of %v, which is not stored", tr.Tensor)
						}
						switch loc[tr.Tensor] {
						case onGPU:
							prevOff := prevSame[j]
							for prevOff >= 0 && s.Transfers[prevOff].Kind != schedule.Offload {
								prevOff = prevSame[prevOff]
							}
							if prevOff >= 0 && !released[prevOff] {
								return nil, viol(RuleReleased, now, -1, j, "prefetch of %v starts before it has left the GPU (its offload or a reader has not ended)", tr.Tensor)
							}
							return nil, viol(RuleTransfer, now, -1, j, "prefetch of %v, which is on the GPU (not offloaded)", tr.Tensor)
						case prefetching:
							return nil, viol(RuleTransfer, now, -1, j, "%v prefetched twice", tr.Tensor)
						}
						loc[tr.Tensor] = prefetching
						cur += sizes[j]
					}
					heap.Push(ends, endEvent{trEnd[j], evTransferEnd, j})
				}
				if cur > rep.Peak {
					rep.Peak = cur
				}
				if cur > budget {
					what := "operation"
					op, tr := -1, -1
					if it.op {
						op = it.id
						what = s.Ops[it.id].Op.String()
					} else {
						tr = it.id
						what = s.Transfers[it.id].Kind.String() + " of " + s.Transfers[it.id].Tensor.String()
					}
					held := ""
					for k := range s.Transfers {
						if s.Transfers[k].Kind != schedule.Offload || released[k] || !trDone[k] {
							continue
						}
						for _, r := range readers[k] {
							if !opDone[r] {
								held += fmt.Sprintf("; %v is copied out but held until operation %d (%v), which reads it before any prefetch is waited for", s.Transfers[k].Tensor, r, s.Ops[r].Op)
								break
							}
						}
					}
					return nil, viol(RuleMemory, now, op, tr, "%d bytes on the GPU when %s starts, budget %d%s", cur, what, budget, held)
				}
			}
			if !progressed {
				break
			}
		}
	}

	// Figures.
	end := new(big.Int)
	compute := new(big.Int)
	for i := range s.Ops {
		if opEnd[i].Cmp(end) > 0 {
			end = opEnd[i]
		}
		compute.Add(compute, opDur[i])
	}
	busy := new(big.Int)
	for j := range s.Transfers {
		if trEnd[j].Cmp(end) > 0 {
			end = trEnd[j]
		}
		busy.Add(busy, trDur[j])
	}
	rep.Exact = cl.rat(end)
	rep.Makespan = cl.seconds(end)
	rep.Compute = cl.seconds(compute)
	rep.Idle = cl.seconds(new(big.Int).Sub(end, compute))
	rep.LinkBusy = cl.seconds(busy)
	rep.OpStart, rep.TransferStart = make([]float64, nOp), make([]float64, nTr)
	for i := range s.Ops {
		rep.OpStart[i] = cl.seconds(opStart[i])
	}
	for j := range s.Transfers {
		rep.TransferStart[j] = cl.seconds(trStart[j])
	}
	return rep, nil
}

// mergeStarts returns the items of order (operations and transfers, each stream in index
// order, ranked as computed) sorted by start, then rank.
func mergeStarts(order []item, opStart, trStart []*big.Int) []item {
	ops, trs := make([]item, 0, len(opStart)), make([]item, 0, len(trStart))
	for _, it := range order {
		if it.op {
			ops = append(ops, it)
		} else {
			trs = append(trs, it)
		}
	}
	out := order[:0]
	i, j := 0, 0
	for i < len(ops) || j < len(trs) {
		takeOp := j == len(trs)
		if i < len(ops) && j < len(trs) {
			c := opStart[ops[i].id].Cmp(trStart[trs[j].id])
			takeOp = c < 0 || c == 0 && ops[i].rank < trs[j].rank
		}
		if takeOp {
			out = append(out, ops[i])
			i++
		} else {
			out = append(out, trs[j])
			j++
		}
	}
	return out
}

func startOf(op bool, id int, opStart, trStart []*big.Int) *big.Int {
	if op {
		return opStart[id]
	}
	return trStart[id]
}

// Stamp writes the start times of rep into s (the informative Start fields).
func Stamp(s *schedule.Combined, rep *Report) {
	for i := range s.Ops {
		s.Ops[i].Start = rep.OpStart[i]
	}
	for j := range s.Transfers {
		s.Transfers[j].Start = rep.TransferStart[j]
	}
}
