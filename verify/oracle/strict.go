package oracle

import (
	"container/heap"
	"errors"
	"fmt"
	"math"
	"math/big"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
	"github.com/memsched/memsched/verify/combined"
)

// MaxStrictStages is the longest chain (loss stage included) Strict accepts.
const MaxStrictStages = 7

// DefaultStrictNodes caps the configurations Strict settles (StrictOptions.MaxNodes = 0).
const DefaultStrictNodes = 4 << 20

// The caps certify and `memsched remat-offload` give the search inside their time limits:
// ToolStrictNodes configurations, ToolStrictNodesFine where the durations share no coarse tick
// (StrictOptions.MaxNodesFine; 2 Mi configurations took 10 s on the toy chain without an
// answer).
const (
	ToolStrictNodes     = 2 << 20
	ToolStrictNodesFine = 512 << 10
)

// ErrStrictLimit says that Strict settled StrictOptions.MaxNodes configurations without
// reaching the end: the instance is too large for the exhaustive search.
var ErrStrictLimit = errors.New("oracle: the exhaustive search of strict schedules passed its node limit")

// StrictLimitError is ErrStrictLimit (errors.Is) with the cap that applied: MaxNodes or
// MaxNodesFine configurations settled, or, when MaxMemory is set, StrictOptions.MaxMemory
// reached after MaxNodes configurations.
type StrictLimitError struct {
	MaxNodes  int
	MaxMemory int64
	// Bound is what the search proved before it stopped (seconds, rounded down; 0 when
	// nothing): no strict schedule is faster (StrictOptions.Upper, when set, caps it). A* with
	// a consistent estimate settles configurations in the order of their time reached plus
	// estimate, and some configuration of an optimal schedule is always queued with at most
	// the optimum; so the priority of the next configuration to settle is a global lower
	// bound.
	Bound float64
}

func (e *StrictLimitError) Error() string {
	if e.MaxMemory > 0 {
		return fmt.Sprintf("%v: its memory limit, %d bytes, after %d configurations", ErrStrictLimit, e.MaxMemory, e.MaxNodes)
	}
	return fmt.Sprintf("%v (%d configurations)", ErrStrictLimit, e.MaxNodes)
}

func (e *StrictLimitError) Is(target error) bool { return target == ErrStrictLimit }

// Reason is the error in a report's words: "more than N configurations", or "past its memory
// limit (M) after N configurations".
func (e *StrictLimitError) Reason() string {
	if e.MaxMemory > 0 {
		return fmt.Sprintf("past its memory limit (%s) after %d configurations", instances.FormatSize(e.MaxMemory), e.MaxNodes)
	}
	return fmt.Sprintf("more than %d configurations", e.MaxNodes)
}

// strictNodeBytes is what one configuration queued costs the search: its node (120 bytes), its
// place in the heap and in the map of the best ones, each at up to twice its length once grown
// (measured: the toy chain, 7 stages, 80 MiB, 1 GB/s: 741 343 queued and 524 289 settled,
// 394 MB resident above the command without the search, 530 bytes a configuration).
const strictNodeBytes = 560

// StrictOptions switch one lever off and bound the search.
type StrictOptions struct {
	// NoOffload allows no transfer: the search is then over 004's sequences alone (Remat's).
	NoOffload bool
	// NoRecompute allows F_all only, which leaves the store-all sequence (F_all^1 … F_all^{L+1}
	// B^{L+1} … B^1: a plain a^ℓ exists only from F_ck or F_∅, and ā^ℓ is consumed only by
	// B^ℓ, after which stage ℓ never runs again), with any transfers: activation offloading.
	NoRecompute bool
	// MaxNodes caps the configurations settled (0: DefaultStrictNodes); past it Strict fails
	// with ErrStrictLimit.
	MaxNodes int
	// MaxNodesFine, when positive, caps them instead of MaxNodes when the durations share no
	// tick that keeps them below 2^52 — measured profiles' float seconds: fewer
	// configurations coincide there and the search grows much faster (GPT-2 of 2 blocks, 4
	// stages, at 12 GB/s: 0.4–2.3 M configurations; of 3 blocks: more than 8 M).
	MaxNodesFine int
	// MaxMemory, when positive, caps the search's memory in bytes (strictNodeBytes for each
	// configuration queued): past it Strict fails with a StrictLimitError.
	MaxMemory int64
	// Stop, when closed, stops the search with ErrStrictStopped (checked every 1024
	// configurations).
	Stop <-chan struct{}
	// Upper, when positive, is a makespan already reached (a verified schedule's, seconds):
	// configurations that cannot finish by it are dropped, and a search that ends without a
	// schedule then reports NoBetter — no schedule is faster than Upper.
	Upper float64
}

// ErrStrictStopped says that StrictOptions.Stop closed before the search ended.
var ErrStrictStopped = errors.New("oracle: the exhaustive search of strict schedules was stopped")

// StrictStoppedError is ErrStrictStopped (errors.Is) with what the search proved before it
// stopped: Bound, as StrictLimitError's.
type StrictStoppedError struct {
	Nodes int
	Bound float64
}

func (e *StrictStoppedError) Error() string {
	return fmt.Sprintf("%v after %d configurations", ErrStrictStopped, e.Nodes)
}

func (e *StrictStoppedError) Is(target error) bool { return target == ErrStrictStopped }

// StrictResult is an optimum of the strict combined model.
type StrictResult struct {
	// Feasible is false when no schedule fits the budget.
	Feasible bool
	// Makespan is the optimal makespan, exact; Schedule an optimal schedule and Report its
	// replay by verify/combined.Check (Report.Exact equals Makespan).
	Makespan *big.Rat
	Schedule *schedule.Combined
	Report   *combined.Report
	// Nodes is the number of configurations settled.
	Nodes int
	// NoBetter (with StrictOptions.Upper, Feasible false): the search ended without a
	// schedule of makespan at most Upper, so none is faster than Upper.
	NoBetter bool
}

// where a stored tensor is (strict timing, verify/combined.Check).
const (
	lGPU         = iota // on the GPU, not offloaded since its last prefetch
	lOffloading         // on the GPU, its offload under way
	lHeld               // on the GPU, its offload ended, not released (a reader runs or will run)
	lCPU                // released: only the CPU copy exists
	lPrefetching        // coming back: reserved
)

// sconf is a configuration at an instant after its ends and releases: what is stored and
// where, the current gradient, the operation and the transfer under way with the ticks they
// have left. Times are integer ticks (Strict scales them).
type sconf struct {
	acts   [MaxStrictStages + 1]uint8
	loc    [MaxStrictStages + 1]uint8
	t      int8
	op     int8 // index into the operation list; -1: the compute stream is free
	tr     int8 // stage*2 + (1 for a prefetch); -1: the link is free
	orphan bool // the tensor the transfer moves was consumed: its end does nothing
	// fresh has bit l set while stage l's tensor is back from a prefetch that no operation
	// has read since: it may not be offloaded again then. verify/combined.Check counts the
	// readers of an offload up to the first operation waiting for the next prefetch, so a
	// round trip no operation waits for would make the first offload's readers run on to
	// the tensor's next use, and its prefetch start before its release (a transformer of 3
	// blocks, β = 3: off a^0, pre a^0, off a^0, … was "optimal" and did not validate).
	fresh  uint8
	opLeft tk
	trLeft tk
}

// snode is a settled or queued configuration: the time it is reached, and how.
type snode struct {
	conf   sconf
	time   tk
	prio   tk
	parent int
	// what the parent started to reach it: an operation (-1: none) and a transfer (-1).
	startOp, startTr int
	final            bool
	done             bool
}

type sheap struct {
	idx   []int
	nodes *[]snode
}

func (h sheap) Len() int { return len(h.idx) }
func (h sheap) Less(i, j int) bool {
	a, b := &(*h.nodes)[h.idx[i]], &(*h.nodes)[h.idx[j]]
	if a.prio != b.prio {
		return a.prio.less(b.prio)
	}
	if a.final != b.final {
		return a.final
	}
	return h.idx[i] < h.idx[j]
}
func (h sheap) Swap(i, j int) { h.idx[i], h.idx[j] = h.idx[j], h.idx[i] }
func (h *sheap) Push(x any)   { h.idx = append(h.idx, x.(int)) }
func (h *sheap) Pop() any {
	x := h.idx[len(h.idx)-1]
	h.idx = h.idx[:len(h.idx)-1]
	return x
}

// Strict returns an optimal schedule of the strict combined model (SPEC §6, the rules of
// verify/combined.Check) of chain c under budget bytes (everything counted) with one
// half-duplex link of beta bytes per second, by exhaustive search: any sequence of 004's
// operations, offloads and prefetches of any stored tensor in any order on the link, each
// item starting at an event (the end of an operation or of a transfer, or time 0) — which
// every schedule does, since its start times follow from its dependencies — and each
// offloaded tensor released at the end of its offload or of any operation reading it then
// (Check releases it at the end of the last such reader). It is a shortest path (A*, with the
// compute still needed as its admissible estimate) over configurations at events: the
// stored tensors and where each is, the current gradient, the operation and transfer under
// way and what they have left; a configuration reached earlier dominates the same one
// reached later (every continuation shifts). Times are exact: every duration is scaled to
// integer ticks. The schedule found is replayed by verify/combined.Check, which must give
// the same makespan.
//
// It fails on chains longer than MaxStrictStages, when the durations have no common tick
// that keeps them below 2^52, and past opt.MaxNodes configurations (ErrStrictLimit).
func Strict(c *instances.Chain, budget int64, beta float64, opt StrictOptions) (*StrictResult, error) {
	n := c.Len()
	if n > MaxStrictStages {
		return nil, fmt.Errorf("oracle: chain has %d stages, the exhaustive search of strict schedules handles at most %d", n, MaxStrictStages)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if !(beta > 0) {
		return nil, fmt.Errorf("oracle: bandwidth %g must be positive", beta)
	}
	maxNodes := opt.MaxNodes
	if maxNodes <= 0 {
		maxNodes = DefaultStrictNodes
	}
	// Operations and their durations, transfers' durations, all in ticks.
	var ops []schedule.Op
	for l := 1; l <= n; l++ {
		ops = append(ops, schedule.Op{Kind: schedule.B, Stage: l}, schedule.Op{Kind: schedule.Fall, Stage: l})
		if !opt.NoRecompute {
			ops = append(ops, schedule.Op{Kind: schedule.Fck, Stage: l}, schedule.Op{Kind: schedule.Fn, Stage: l})
		}
	}
	var rats []*big.Rat
	for l := 1; l <= n; l++ {
		rats = append(rats, new(big.Rat).SetFloat64(c.Stage(l).UF), new(big.Rat).SetFloat64(c.Stage(l).UB))
	}
	b := new(big.Rat).SetFloat64(beta)
	size := func(l int, full bool) int64 {
		if full {
			return c.Stage(l).ABar
		}
		return c.SizeA(l)
	}
	for l := 0; l <= n; l++ {
		for _, full := range []bool{false, true} {
			if full && l == 0 {
				continue
			}
			rats = append(rats, new(big.Rat).Quo(new(big.Rat).SetInt64(size(l, full)), b))
		}
	}
	tick, fine, err := commonTick(rats)
	if err != nil {
		return nil, err
	}
	if fine && opt.MaxNodesFine > 0 {
		maxNodes = opt.MaxNodesFine
	}
	ticks := func(r *big.Rat) tk {
		return tkOf(new(big.Rat).Mul(r, tick).Num())
	}
	uf, ub := make([]tk, n+1), make([]tk, n+1)
	for l := 1; l <= n; l++ {
		uf[l], ub[l] = ticks(new(big.Rat).SetFloat64(c.Stage(l).UF)), ticks(new(big.Rat).SetFloat64(c.Stage(l).UB))
	}
	trTicks := func(l int, full bool) tk {
		return ticks(new(big.Rat).Quo(new(big.Rat).SetInt64(size(l, full)), b))
	}
	opDur := func(k int) tk {
		if ops[k].Kind == schedule.B {
			return ub[ops[k].Stage]
		}
		return uf[ops[k].Stage]
	}

	start := verify.InitialState(c)
	if start.Memory(c) > budget {
		return &StrictResult{}, nil
	}
	tensorOf := func(cf *sconf, l int) (int64, bool) { // size and fullness of what stage l stores
		full := cf.acts[l] == uint8(verify.Full) && l > 0
		return size(l, full), full
	}
	// uses lists the stages whose stored tensor op k reads, replaces or removes in cf.
	uses := func(cf *sconf, k int) (out [3]int, m int) {
		op := ops[k]
		l := op.Stage
		add := func(j int) {
			if j >= 0 && j <= n && cf.acts[j] != uint8(verify.None) {
				out[m] = j
				m++
			}
		}
		switch op.Kind {
		case schedule.Fck, schedule.Fn:
			add(l - 1)
		case schedule.Fall:
			add(l - 1)
			if l <= n && cf.acts[l] == uint8(verify.Plain) {
				add(l)
			}
		case schedule.B:
			add(l - 1)
			add(l)
		}
		return out, m
	}
	// extra[k] is what operation k adds while it runs: its output and overhead (a forward),
	// or δ^{ℓ−1} and its overhead (B^ℓ); its inputs are freed at its end (004 Table 1).
	extra := make([]int64, len(ops))
	for k, op := range ops {
		st := c.Stage(op.Stage)
		switch op.Kind {
		case schedule.B:
			extra[k] = c.SizeDelta(op.Stage-1) + st.OB
		case schedule.Fall:
			extra[k] = st.ABar + st.OF
		default:
			extra[k] = st.A + st.OF
		}
	}
	// memory of cf: what is stored on the GPU or reserved, the gradient, and the running
	// operation's outputs and overhead.
	memory := func(cf *sconf) int64 {
		var m int64 = c.SizeDelta(int(cf.t))
		for l := 0; l <= n; l++ {
			if cf.acts[l] != uint8(verify.None) && cf.loc[l] != lCPU {
				sz, _ := tensorOf(cf, l)
				m += sz
			}
		}
		if cf.op >= 0 {
			m += extra[cf.op]
		}
		return m
	}
	// estimate is an admissible estimate of the time still needed from cf: every B^ℓ for
	// ℓ ≤ T, F_all^ℓ where ā^ℓ is missing, the running operation's rest; and the link's.
	estimate := func(cf *sconf) tk {
		var e tk
		runB, runF := 0, 0 // the stage whose B, or whose F_all, is under way (0: none)
		if cf.op >= 0 {
			e = e.add(cf.opLeft)
			switch ops[cf.op].Kind {
			case schedule.B:
				runB = ops[cf.op].Stage
			case schedule.Fall:
				runF = ops[cf.op].Stage
			}
		}
		for l := 1; l <= int(cf.t); l++ {
			if l == runB {
				continue // counted in opLeft
			}
			e = e.add(ub[l])
			if cf.acts[l] != uint8(verify.Full) && l != runF {
				e = e.add(uf[l])
			}
		}
		return tkMax(e, cf.trLeft)
	}

	nodes := []snode{}
	best := map[sconf]int{}
	h := &sheap{nodes: &nodes}
	limit := tkInf // prio above it cannot finish by opt.Upper
	if opt.Upper > 0 {
		u := new(big.Rat).Mul(new(big.Rat).SetFloat64(opt.Upper*(1+1e-12)), tick)
		if fl := new(big.Int).Quo(u.Num(), u.Denom()); fl.BitLen() <= 128 {
			limit = tkOf(fl)
		}
	}
	push := func(nd snode) {
		if limit.less(nd.prio) {
			return
		}
		if old, ok := best[nd.conf]; ok && !nd.final {
			o := &nodes[old]
			if o.done || !nd.time.less(o.time) {
				return
			}
		}
		nodes = append(nodes, nd)
		if !nd.final {
			best[nd.conf] = len(nodes) - 1
		}
		heap.Push(h, len(nodes)-1)
	}
	var c0 sconf
	for l := 0; l <= n; l++ {
		c0.acts[l] = uint8(start.Acts[l])
	}
	c0.t, c0.op, c0.tr = int8(start.T), -1, -1
	push(snode{conf: c0, parent: -1, startOp: -1, startTr: -1, prio: estimate(&c0)})
	settled := 0
	for h.Len() > 0 {
		i := heap.Pop(h).(int)
		nd := nodes[i]
		if nd.final {
			return rebuildStrict(c, budget, beta, ops, nodes, i, tick, settled)
		}
		if nd.done || best[nd.conf] != i {
			continue
		}
		nodes[i].done = true
		settled++

		// Nothing queued is below nd.prio: the bound proved so far.
		if settled > maxNodes {
			return nil, &StrictLimitError{MaxNodes: maxNodes, Bound: boundOf(nd.prio, tick, opt.Upper)}
		}
		if opt.MaxMemory > 0 && int64(len(nodes))*strictNodeBytes > opt.MaxMemory {
			return nil, &StrictLimitError{MaxNodes: settled, MaxMemory: opt.MaxMemory, Bound: boundOf(nd.prio, tick, opt.Upper)}
		}
		if settled&1023 == 0 && opt.Stop != nil {
			select {
			case <-opt.Stop:
				return nil, &StrictStoppedError{Nodes: settled, Bound: boundOf(nd.prio, tick, opt.Upper)}
			default:
			}
		}
		cf := nd.conf
		// Compute choices: start a valid operation, or wait (-1).
		opChoices := []int{-1}
		if cf.op < 0 {
			for k := range ops {
				if probe := cf; !applyOp(&probe, ops[k]) {
					continue
				}
				us, m := uses(&cf, k)
				ok := true
				for _, l := range us[:m] {
					if cf.loc[l] == lCPU || cf.loc[l] == lPrefetching {
						ok = false
					}
				}
				if ok {
					opChoices = append(opChoices, k)
				}
			}
		}
		// Link choices: start an offload (stage*2) or a prefetch (stage*2+1), or wait (-1).
		trChoices := []int{-1}
		if cf.tr < 0 && !opt.NoOffload {
			for l := 0; l <= n; l++ {
				if cf.acts[l] == uint8(verify.None) {
					continue
				}
				if sz, _ := tensorOf(&cf, l); sz == 0 {
					continue
				}
				switch cf.loc[l] {
				case lGPU:
					if cf.fresh>>l&1 == 0 {
						trChoices = append(trChoices, 2*l)
					}
				case lCPU:
					trChoices = append(trChoices, 2*l+1)
				}
			}
		}
		for _, k := range opChoices {
			for _, j := range trChoices {
				if k >= 0 && j >= 0 && opDur(k).isZero() {
					// At one instant verify/combined.Check ends an operation of no duration
					// before it starts a transfer: the transfer starts from the next
					// configuration, at the same time.
					continue
				}
				next := cf
				if k >= 0 {
					next.op, next.opLeft = int8(k), opDur(k)
					us, m := uses(&cf, k)
					for _, l := range us[:m] {
						next.fresh &^= 1 << l // read: waited for
					}
				}
				if j >= 0 {
					l := j / 2
					_, full := tensorOf(&next, l)
					next.tr, next.trLeft, next.orphan = int8(j), trTicks(l, full), false
					if j%2 == 0 {
						next.loc[l] = lOffloading
					} else {
						next.loc[l] = lPrefetching
					}
				}
				if next.op < 0 && next.tr < 0 {
					continue // nothing under way: nothing would ever happen
				}
				if k < 0 && cf.op < 0 && next.tr < 0 || j < 0 && cf.tr < 0 && next.op < 0 {
					continue
				}
				if memory(&next) > budget {
					continue
				}
				advance(c, &next, nd.time, ops, n, func(cf2 sconf, t2 tk) {
					nn := snode{conf: cf2, time: t2, parent: i, startOp: k, startTr: j}
					if cf2.t == 0 && cf2.op < 0 {
						nn.final, nn.prio = true, t2.add(cf2.trLeft)
					} else {
						nn.prio = t2.add(estimate(&cf2))
					}
					push(nn)
				}, uses)
			}
		}
	}
	return &StrictResult{Nodes: settled, NoBetter: opt.Upper > 0}, nil
}

// advance runs cf from time t to its next event, processes the ends there and calls emit
// with each configuration that follows (one per choice of the tensors released then).
func advance(c *instances.Chain, cf *sconf, t tk, ops []schedule.Op, n int, emit func(sconf, tk), uses func(*sconf, int) ([3]int, int)) {
	d := cf.opLeft // the caller starts an operation or a transfer: one of them is under way
	if cf.op < 0 || cf.tr >= 0 && cf.trLeft.less(d) {
		d = cf.trLeft
	}
	next := *cf
	t = t.add(d)
	var eligible []int
	if next.op >= 0 {
		next.opLeft = next.opLeft.sub(d)
	}
	if next.tr >= 0 {
		next.trLeft = next.trLeft.sub(d)
	}
	if next.op >= 0 && next.opLeft.isZero() {
		k := int(next.op)
		us, m := uses(&next, k)
		before := next.acts
		if !applyOp(&next, ops[k]) {
			panic("oracle: a started operation is not valid at its end")
		}
		for l := 0; l <= n; l++ {
			if next.acts[l] != before[l] {
				if next.tr >= 0 && int(next.tr)/2 == l && !next.orphan {
					next.orphan = true // its tensor is consumed or replaced
				}
				next.loc[l] = lGPU
				next.fresh &^= 1 << l
			}
		}
		next.op, next.opLeft = -1, tk{}
		for _, l := range us[:m] {
			if next.acts[l] == before[l] && next.loc[l] == lHeld {
				eligible = append(eligible, l) // a reader of a held tensor ended
			}
		}
	}
	if next.tr >= 0 && next.trLeft.isZero() {
		l := int(next.tr) / 2
		if !next.orphan {
			if next.tr%2 == 0 {
				next.loc[l] = lHeld
				readerRuns := false
				if next.op >= 0 {
					us, m := uses(&next, int(next.op))
					for _, u := range us[:m] {
						readerRuns = readerRuns || u == l
					}
				}
				if !readerRuns {
					eligible = append(eligible, l)
				}
			} else {
				next.loc[l] = lGPU
				next.fresh |= 1 << l
			}
		}
		next.tr, next.trLeft, next.orphan = -1, tk{}, false
	}
	// Each eligible held tensor is released now or held for a later reader.
	var rec func(i int, cf sconf)
	rec = func(i int, cf sconf) {
		if i == len(eligible) {
			emit(cf, t)
			return
		}
		rec(i+1, cf)
		cf.loc[eligible[i]] = lCPU
		rec(i+1, cf)
	}
	rec(0, next)
}

// applyOp runs op on cf's stored tensors and gradient as verify.RematState.Apply does (004
// Table 1, SPEC §1) and reports whether op is valid there; cf is unchanged when it is not.
// (TestStrictOneLever checks the search without transfers against oracle.Remat, which uses
// Apply itself.)
func applyOp(cf *sconf, op schedule.Op) bool {
	l := op.Stage
	if cf.t == 0 {
		return false
	}
	none, plain, full := uint8(verify.None), uint8(verify.Plain), uint8(verify.Full)
	prev := cf.acts[l-1]
	switch op.Kind {
	case schedule.Fck, schedule.Fn, schedule.Fall:
		if l > int(cf.t) || prev == none || op.Kind == schedule.Fn && prev != plain {
			return false
		}
		cur := cf.acts[l]
		if cur == full || cur == plain && op.Kind != schedule.Fall {
			return false
		}
		if op.Kind == schedule.Fn {
			cf.acts[l-1] = none
		}
		if op.Kind == schedule.Fall {
			cf.acts[l] = full
		} else {
			cf.acts[l] = plain
		}
		return true
	case schedule.B:
		if int(cf.t) != l || cf.acts[l] != full || prev == none {
			return false
		}
		cf.acts[l] = none
		if prev == plain {
			cf.acts[l-1] = none
		}
		cf.t = int8(l - 1)
		return true
	}
	return false
}

// commonTick returns q such that q·r is an integer for every r, with every q·r below
// 2^maxTickBits, and whether some q·r is 2^52 or more (fine ticks).
func commonTick(rs []*big.Rat) (*big.Rat, bool, error) {
	q := big.NewInt(1)
	for _, r := range rs {
		d := r.Denom()
		g := new(big.Int).GCD(nil, nil, q, d)
		q.Mul(q, new(big.Int).Quo(d, g))
	}
	tick := new(big.Rat).SetInt(q)
	limit := new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), maxTickBits))
	coarse := new(big.Rat).SetInt64(1 << 52)
	fine := false
	for _, r := range rs {
		q := new(big.Rat).Mul(r, tick)
		if q.Cmp(limit) > 0 {
			return nil, false, fmt.Errorf("oracle: durations with no common tick below 2^%d (%v s)", maxTickBits, r.FloatString(6))
		}
		fine = fine || q.Cmp(coarse) >= 0
	}
	return tick, fine, nil
}

// rebuildStrict turns the path to the final node into a schedule with dependencies, replays
// it with verify/combined.Check and checks that the makespans agree.
func rebuildStrict(c *instances.Chain, budget int64, beta float64, ops []schedule.Op, nodes []snode, final int, tick *big.Rat, settled int) (*StrictResult, error) {
	type item struct {
		op    bool
		k     int // operation index into ops, or transfer code
		start tk
		acts  [MaxStrictStages + 1]uint8 // what is stored when it starts
	}
	var path []int
	for i := final; i >= 0; i = nodes[i].parent {
		path = append(path, i)
	}
	var items []item
	for p := len(path) - 1; p >= 1; p-- {
		parent, child := &nodes[path[p]], &nodes[path[p-1]]
		if child.startOp >= 0 {
			items = append(items, item{true, child.startOp, parent.time, parent.conf.acts})
		}
		if child.startTr >= 0 {
			items = append(items, item{false, child.startTr, parent.time, parent.conf.acts})
		}
	}
	sch := &schedule.Combined{}
	var opEnds []tk
	var trEnds []tk
	opTicks := func(op schedule.Op) tk {
		u := c.Stage(op.Stage).UF
		if op.Kind == schedule.B {
			u = c.Stage(op.Stage).UB
		}
		return tkOf(new(big.Rat).Mul(new(big.Rat).SetFloat64(u), tick).Num())
	}
	b := new(big.Rat).SetFloat64(beta)
	lastPrefetch := map[schedule.Tensor]int{}
	waited := map[int]bool{}
	for _, it := range items {
		if it.op {
			op := ops[it.k]
			var wait []int
			var prevEnd tk
			if len(opEnds) > 0 {
				prevEnd = opEnds[len(opEnds)-1]
			}
			if prevEnd.less(it.start) {
				for j := len(trEnds) - 1; j >= 0; j-- {
					if trEnds[j] == it.start {
						wait = append(wait, j)
						break
					}
				}
			}
			// The first operation using a prefetched tensor waits for its prefetch (it has
			// ended by then): Check bounds an offload's readers by it.
			for _, l := range []int{op.Stage - 1, op.Stage} {
				if l < 0 || l > c.Len() || it.acts[l] == uint8(verify.None) {
					continue
				}
				tn := schedule.Tensor{Stage: l, Full: it.acts[l] == uint8(verify.Full) && l > 0}
				if j, ok := lastPrefetch[tn]; ok && !waited[j] {
					waited[j] = true
					if len(wait) == 0 || wait[0] != j {
						wait = append(wait, j)
					}
				}
			}
			sch.Ops = append(sch.Ops, schedule.CombinedOp{Op: op, Wait: wait})
			opEnds = append(opEnds, it.start.add(opTicks(op)))
			continue
		}
		l := it.k / 2
		full := it.acts[l] == uint8(verify.Full) && l > 0
		tn := schedule.Tensor{Stage: l, Full: full}
		kind := schedule.Offload
		if it.k%2 == 1 {
			kind = schedule.Prefetch
		}
		after := -1
		var prevEnd tk
		if len(trEnds) > 0 {
			prevEnd = trEnds[len(trEnds)-1]
		}
		// The latest operation that has ended by the start (the transfer waits for it, which
		// also orders it after its tensor's producer).
		for k := len(opEnds) - 1; k >= 0; k-- {
			if !it.start.less(opEnds[k]) {
				after = k
				break
			}
		}
		if prevEnd.less(it.start) && (after < 0 || opEnds[after] != it.start) {
			return nil, fmt.Errorf("oracle: rebuilding the strict schedule: a transfer starts at tick %v, after the link's %v and no operation ends then", it.start, prevEnd)
		}
		sz := c.SizeA(l)
		if full {
			sz = c.Stage(l).ABar
		}
		d := tkOf(new(big.Rat).Mul(new(big.Rat).Quo(new(big.Rat).SetInt64(sz), b), tick).Num())
		sch.Transfers = append(sch.Transfers, schedule.CombinedTransfer{Kind: kind, Tensor: tn, After: after})
		trEnds = append(trEnds, it.start.add(d))
		if kind == schedule.Prefetch {
			lastPrefetch[tn] = len(sch.Transfers) - 1
		}
	}
	rep, err := combined.Check(c, budget, beta, sch)
	if err != nil {
		return nil, fmt.Errorf("oracle: the optimal strict schedule found does not validate: %w (ops %v, transfers %v)", err, sch.Ops, sch.Transfers)
	}
	want := new(big.Rat).Quo(new(big.Rat).SetInt(nodes[final].prio.big()), tick)
	if rep.Exact.Cmp(want) != 0 {
		return nil, fmt.Errorf("oracle: the optimal strict schedule replays at %s, the search says %s", rep.Exact.RatString(), want.RatString())
	}
	combined.Stamp(sch, rep)
	return &StrictResult{Feasible: true, Makespan: want, Schedule: sch, Report: rep, Nodes: settled}, nil
}

// boundOf is p ticks in seconds, rounded down, and at most upper when upper is positive (the
// search drops what cannot finish by upper, so past it p proves only upper).
func boundOf(p tk, tick *big.Rat, upper float64) float64 {
	r := new(big.Rat).Quo(new(big.Rat).SetInt(p.big()), tick)
	f, _ := r.Float64()
	if new(big.Rat).SetFloat64(f).Cmp(r) > 0 {
		f = math.Nextafter(f, 0)
	}
	if upper > 0 && f > upper {
		f = upper
	}
	return f
}
