package actoffload

import (
	"fmt"
	"math"
	"sort"

	act "github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify/timed"
)

// Result is a validated schedule, or Feasible = false when the decisions admit none.
type Result struct {
	Feasible bool
	Schedule *schedule.Timed
	Report   *timed.Report
	// Offloaded lists the indices of the activations moved, increasing.
	Offloaded []int
	// Stopped: a stop channel ended the heuristic before it had tried every candidate; the
	// schedule, if any, is the best of those it tried (GreedyUntil, VDNNUntil).
	Stopped bool
}

// closed reports whether stop is closed (never for nil).
func closed(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// Makespan returns the validated makespan, +Inf when infeasible.
func (r *Result) Makespan() float64 {
	if r == nil || !r.Feasible {
		return math.Inf(1)
	}
	return r.Report.Makespan
}

// where an activation is, in the simulation.
type xstate uint8

const (
	resident   xstate = iota // on the GPU, not moving
	offloading               // offload under way, still on the GPU
	offDone                  // offload ended, still read by F_j
	away                     // on the CPU only
	fetching                 // prefetch under way, |x| reserved
	back                     // prefetched
	skipped                  // its offload came too late (B_j had started): it stays
)

// sim is the event simulation behind NoWait and Exact. The compute operations are numbered
// k = 0..2n−1 (F_0..F_L then B_L..B_0, n = L+1); the link runs the transfers pushed on it in
// order. At every instant, ends are processed first, then the next compute operation starts if
// its inputs are there and its memory fits, then the next transfer starts if it may:
//   - an offload of x_j once F_{j−1} has produced it (and B_j has not started);
//   - a prefetch of x_j once x_j has left the GPU, when |x_j| fits now and every compute
//     operation from the next one to B_j still fits with x_j reserved — counting every x that
//     is on the CPU as absent unless the operation reads it — so that a prefetch never blocks
//     the operations that come before its reader.
type sim struct {
	p           *act.Problem
	n           int
	tol         float64
	xPre        []int64 // xPre[l] = Σ_{i<l} |x_i|
	now         float64
	mem, peak   int64
	k           int // next compute operation
	running     bool
	opEnd       float64
	fDone       []bool
	st          []xstate
	linkBusy    bool
	linkEnd     float64
	cur         schedule.ActTransfer
	pending     *schedule.ActTransfer
	ops         []schedule.TimedOp
	trs         []schedule.ActTransfer
	offBytes    int64 // volume offloaded so far
	awayPending int64 // volume offloaded but not yet prefetched
	dead        bool
	// stop, when closed, ends the simulation (stopped, and dead): checked every simCheckEvery
	// steps, a step costing up to O(n) (prefetchSafe), so that a 20 001-stage chain's
	// simulation — seconds — stops within milliseconds.
	stop    <-chan struct{}
	steps   int
	stopped bool
}

// simCheckEvery is how many steps of run pass between two looks at the stop channel.
const simCheckEvery = 64

func newSim(p *act.Problem) *sim {
	n := p.L() + 1
	s := &sim{p: p, n: n, xPre: make([]int64, n+2), fDone: make([]bool, n), st: make([]xstate, n+1)}
	var scale float64
	for i := 0; i < n; i++ {
		scale += p.UF[i] + p.UB[i]
	}
	for l, x := range p.X {
		s.xPre[l+1] = s.xPre[l] + x
		scale += 2 * float64(x) / p.Beta
	}
	s.tol = 1e-12 * math.Max(scale, 1)
	s.mem = p.X[0]
	s.peak = s.mem
	return s
}

func (s *sim) clone() *sim {
	c := *s
	c.fDone = append([]bool(nil), s.fDone...)
	c.st = append([]xstate(nil), s.st...)
	c.ops = append([]schedule.TimedOp(nil), s.ops...)
	c.trs = append([]schedule.ActTransfer(nil), s.trs...)
	if s.pending != nil {
		q := *s.pending
		c.pending = &q
	}
	return &c
}

func (s *sim) dur(j int) float64 { return float64(s.p.X[j]) / s.p.Beta }

// op returns the compute operation k: its index i and direction.
func (s *sim) op(k int) (i int, backward bool) {
	if k < s.n {
		return k, false
	}
	return 2*s.n - 1 - k, true
}

func (s *sim) done() bool {
	return s.k == 2*s.n && !s.running && !s.linkBusy && s.pending == nil
}

// present reports whether x_l is on the GPU and staying there.
func (s *sim) present(l int) bool {
	return s.st[l] == resident || s.st[l] == back || s.st[l] == skipped
}

func (s *sim) alloc(b int64) {
	s.mem += b
	s.peak = max(s.peak, s.mem)
}

func (s *sim) tryOp() bool {
	if s.running || s.k == 2*s.n {
		return false
	}
	p := s.p
	i, bw := s.op(s.k)
	var add int64
	if !bw {
		add = p.X[i+1] + p.ExF[i]
	} else {
		if !s.present(i) || !s.present(i+1) {
			return false
		}
		add = p.Y[i] + p.ExB[i]
		if i == s.n-1 {
			add += p.Y[i+1]
		}
	}
	if s.mem+add > p.MGPU {
		return false
	}
	s.alloc(add)
	u := p.UF[i]
	if bw {
		u = p.UB[i]
	}
	s.ops = append(s.ops, schedule.TimedOp{Backward: bw, Index: i, Start: s.now})
	s.running, s.opEnd = true, s.now+u
	return true
}

// prefetchSafe checks the operations from the next one to B_j with x_j reserved.
func (s *sim) prefetchSafe(j int) bool {
	p := s.p
	if s.mem+p.X[j] > p.MGPU {
		return false
	}
	// absPre[l] = Σ_{i<l, x_i away, i ≠ j} |x_i|.
	absPre := make([]int64, s.n+2)
	for l := 0; l <= s.n; l++ {
		absPre[l+1] = absPre[l]
		if l != j && s.st[l] == away {
			absPre[l+1] += p.X[l]
		}
	}
	last := 2*s.n - 1 - j
	for k := s.k; k <= last; k++ {
		i, bw := s.op(k)
		var use int64
		if !bw {
			use = p.ExF[i] + s.xPre[i+2] - absPre[i+2]
		} else {
			use = p.ExB[i] + p.Y[i] + p.Y[i+1] + s.xPre[i+2] - absPre[i+2]
			// The inputs x_i, x_{i+1} are there when B_i runs.
			for _, l := range []int{i, i + 1} {
				if l != j && s.st[l] == away {
					use += p.X[l]
				}
			}
		}
		if k == s.k && s.running {
			continue
		}
		// x_j is counted in xPre: every operation from the next one on has i+1 ≥ j, since
		// x_j has left the GPU, so F_j has ended.
		if use > p.MGPU {
			return false
		}
	}
	return true
}

func (s *sim) tryTransfer() bool {
	if s.linkBusy || s.pending == nil {
		return false
	}
	t := *s.pending
	j := t.Index
	switch t.Kind {
	case schedule.Offload:
		if kb := 2*s.n - 1 - j; s.k > kb || (s.k == kb && s.running) {
			// B_j has started: x_j could no longer come back in time, so it stays.
			s.st[j], s.pending = skipped, nil
			return true
		}
		if j > 0 && !s.fDone[j-1] {
			return false
		}
		s.st[j] = offloading
		s.offBytes += s.p.X[j]
		s.awayPending += s.p.X[j]
	case schedule.Prefetch:
		if s.st[j] == skipped {
			s.pending = nil
			return true
		}
		if s.st[j] != away || !s.prefetchSafe(j) {
			return false
		}
		s.st[j] = fetching
		s.alloc(s.p.X[j])
		s.awayPending -= s.p.X[j]
	}
	t.Start = s.now
	s.trs = append(s.trs, t)
	s.cur, s.linkBusy, s.linkEnd, s.pending = t, true, s.now+s.dur(j), nil
	return true
}

func (s *sim) release(j int) {
	s.st[j] = away
	s.mem -= s.p.X[j]
}

// complete processes every end at or before now.
func (s *sim) complete() {
	p := s.p
	if s.running && s.opEnd <= s.now+s.tol {
		s.running = false
		i, bw := s.op(s.k)
		s.k++
		if !bw {
			s.mem -= p.ExF[i]
			s.fDone[i] = true
			if s.st[i] == offDone {
				s.release(i)
			}
		} else {
			s.mem -= p.ExB[i] + p.X[i+1] + p.Y[i+1]
		}
	}
	if s.linkBusy && s.linkEnd <= s.now+s.tol {
		s.linkBusy = false
		j := s.cur.Index
		if s.cur.Kind == schedule.Offload {
			s.st[j] = offDone
			if s.fDone[j] {
				s.release(j)
			}
		} else {
			s.st[j] = back
		}
	}
}

// run advances the simulation until it is done, dead, or (when decide) the link is idle with
// no transfer waiting for it: then the caller pushes the next transfer or stops.
func (s *sim) run(decide bool) {
	for !s.dead {
		if s.steps++; s.stop != nil && s.steps%simCheckEvery == 0 && closed(s.stop) {
			s.dead, s.stopped = true, true
			return
		}
		for s.tryOp() || s.tryTransfer() {
		}
		if s.done() || (decide && !s.linkBusy && s.pending == nil) {
			return
		}
		next := math.Inf(1)
		if s.running {
			next = s.opEnd
		}
		if s.linkBusy {
			next = math.Min(next, s.linkEnd)
		}
		if math.IsInf(next, 1) {
			s.dead = true
			return
		}
		s.now = math.Max(s.now, next)
		s.complete()
	}
}

// push queues the next transfer on the link and runs until the link is free again.
func (s *sim) push(t schedule.ActTransfer) {
	s.pending = &t
	s.run(true)
}

// finish runs to the end with no more transfers.
func (s *sim) finish() {
	s.run(false)
}

// result validates a finished simulation.
func (s *sim) result() (*Result, error) {
	if s.dead || !s.done() {
		return &Result{Stopped: s.stopped}, nil
	}
	sch := &schedule.Timed{Ops: s.ops, Transfers: s.trs}
	rep, err := timed.Check(s.p, sch)
	if err != nil {
		return nil, fmt.Errorf("actoffload: no-wait schedule fails validation (bug): %w", err)
	}
	r := &Result{Feasible: true, Schedule: sch, Report: rep}
	for j := 0; j < s.n; j++ {
		if s.st[j] == back {
			r.Offloaded = append(r.Offloaded, j)
		}
	}
	return r, nil
}

// checkOrder rejects orders that are not a sequence of offloads each followed later by one
// prefetch of the same transferable activation.
func checkOrder(p *act.Problem, order []schedule.ActTransfer) error {
	n := p.L() + 1
	state := make([]int, n)
	for _, t := range order {
		if t.Index < 0 || t.Index >= n {
			return fmt.Errorf("actoffload: transfer %v: only x_0..x_%d can move", t, n-1)
		}
		switch {
		case t.Kind == schedule.Offload && state[t.Index] == 0:
			state[t.Index] = 1
		case t.Kind == schedule.Prefetch && state[t.Index] == 1:
			state[t.Index] = 2
		default:
			return fmt.Errorf("actoffload: transfer %v out of place (each x is offloaded once, then prefetched once)", t)
		}
	}
	for j, st := range state {
		if st == 1 {
			return fmt.Errorf("actoffload: x_%d offloaded but never prefetched", j)
		}
	}
	return nil
}

// NoWait returns the no-wait schedule (001 Prop. 1) that runs the transfers of order on the
// link in that order (start times ignored), validated by verify/timed. An offload that the
// link reaches only after B_j has started is dropped with its prefetch (x_j stays on the GPU;
// Result.Offloaded lists what actually moved). It returns Feasible = false when the order
// deadlocks (a compute operation can never fit, or a transfer can never start). Bad orders
// are errors.
func NoWait(p *act.Problem, order []schedule.ActTransfer) (*Result, error) {
	return noWaitUntil(p, order, nil)
}

// noWaitUntil is NoWait ended when stop closes: no schedule, Stopped set.
func noWaitUntil(p *act.Problem, order []schedule.ActTransfer, stop <-chan struct{}) (*Result, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := checkOrder(p, order); err != nil {
		return nil, err
	}
	s := newSim(p)
	s.stop = stop
	s.run(true)
	for _, t := range order {
		if s.dead {
			break
		}
		s.push(t)
	}
	s.finish()
	return s.result()
}

// OrderedTransfers returns the ordered link sequence of 001 §4.1 for the offload set: offloads
// by increasing index, then prefetches by decreasing index. Zero-size activations are left out
// (moving them changes nothing).
func OrderedTransfers(p *act.Problem, set []int) []schedule.ActTransfer {
	var idx []int
	seen := map[int]bool{}
	for _, j := range set {
		if !seen[j] && p.X[j] > 0 {
			seen[j] = true
			idx = append(idx, j)
		}
	}
	sort.Ints(idx)
	order := make([]schedule.ActTransfer, 0, 2*len(idx))
	for _, j := range idx {
		order = append(order, schedule.ActTransfer{Kind: schedule.Offload, Index: j})
	}
	for k := len(idx) - 1; k >= 0; k-- {
		order = append(order, schedule.ActTransfer{Kind: schedule.Prefetch, Index: idx[k]})
	}
	return order
}

// Ordered is NoWait on OrderedTransfers(p, set).
func Ordered(p *act.Problem, set []int) (*Result, error) {
	return NoWait(p, OrderedTransfers(p, set))
}

// orderedUntil is Ordered ended when stop closes (noWaitUntil).
func orderedUntil(p *act.Problem, set []int, stop <-chan struct{}) (*Result, error) {
	return noWaitUntil(p, OrderedTransfers(p, set), stop)
}
