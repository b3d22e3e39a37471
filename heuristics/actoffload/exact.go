package actoffload

import (
	"encoding/binary"
	"math"

	act "github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/schedule"
)

// ExactStatus says how far Exact got.
type ExactStatus int

const (
	// Optimal: the returned schedule is the best no-wait schedule over every offload set and
	// link order (or Feasible = false: no schedule exists below the cutoff).
	Optimal ExactStatus = iota
	// NodeLimit: the search stopped early; the schedule is the best found, not proven.
	NodeLimit
	// Stopped: ExactOptions.Stop closed; the schedule is the best found, not proven.
	Stopped
)

// NoWaitInfeasible is the status a caller reports when Exact finished without a schedule but
// nothing proved Problem 1 infeasible (EventSearch did not finish): no no-wait schedule exists.
const NoWaitInfeasible = "no-wait-infeasible"

func (s ExactStatus) String() string {
	switch s {
	case Optimal:
		return "optimal"
	case Stopped:
		return "time-limit"
	}
	return "node-limit"
}

// ExactOptions tunes Exact. The zero value searches everything.
type ExactOptions struct {
	// Cutoff: only schedules with makespan < Cutoff are sought (0: +Inf). With a cutoff, a
	// result with Feasible = false and status Optimal proves that none is shorter.
	Cutoff float64
	// LowerBound: stop as soon as a schedule reaches it (a certified bound, e.g. Prop. 3 or
	// the fractional optimum). 0: Prop. 3.
	LowerBound float64
	// MaxNodes bounds the search (0: 10⁷ nodes).
	MaxNodes int
	// Stop ends the search when it is closed (a deadline; checked every 1024 nodes).
	Stop <-chan struct{}
	// MaxStates bounds the table of states already searched (0: 2²⁰ states, about 150 MB on
	// 80 operations); past it, states are no longer recorded (the search stays exact, only
	// slower).
	MaxStates int
}

// Exact searches every offload set and every order of the transfers on the link — offloads and
// prefetches interleaved freely — scheduling each no-wait (the simulation of NoWait), by depth-
// first branch and bound. A node is pruned when its lower bound reaches the best makespan:
// the compute left (from the running or next operation), the link work left (prefetches of
// what is on the CPU, plus twice the volume still missing to reach M_peak − M_GPU, 001 Prop. 2,
// over β), and the backward time after the lowest activation still to come back.
//
// Two reductions keep it exact among no-wait schedules:
//   - Equal sizes: for candidates i < j with |x_i| = |x_j|, an order where O(j) precedes O(i)
//     need only be searched when P(j) precedes O(i) too (the exchange argument of
//     docs/act-offload.md, "Order of transfers": swapping the two offloads' slots keeps the
//     link's intervals and only moves releases earlier). So O(i) is not pushed while such an
//     x_j is offloaded and not yet prefetched.
//   - Transpositions: the simulation's future depends only on its state at a decision point
//     (where each activation is, the next operation and whether it runs, the clock and the
//     running operation's end, up to the simulation's time tolerance), so a state reached a
//     second time — typically by the same transfers in another order — is not searched again.
//
// The result is optimal among no-wait schedules, which is the optimum of Problem 1 by 001
// Prop. 1 as far as the no-wait scheduler's prefetch rule (never block an operation before the
// prefetched activation's reader) loses nothing. Exponential: for small instances only.
func Exact(p *act.Problem, o ExactOptions) (*Result, ExactStatus, error) {
	if err := p.Validate(); err != nil {
		return nil, Optimal, err
	}
	if p.MinMemory() > p.MGPU {
		// No schedule at all: an operation's own inputs, outputs and temporaries exceed M_GPU
		// with every other activation away. The search proved it only by exhausting its nodes
		// or the time (offload-act --algo all on a 40-stage chain 10 % below that: the whole
		// --time-limit, 60 s, and "none found").
		return &Result{}, Optimal, nil
	}
	e := &exact{p: p, n: p.L() + 1, need: max(0, p.Peak()-p.MGPU), best: math.Inf(1), searchBudget: searchBudget{max: o.MaxNodes, stop: o.Stop}}
	if o.Cutoff > 0 {
		e.best = o.Cutoff
	}
	if e.max == 0 {
		e.max = 10_000_000
	}
	e.maxStates = o.MaxStates
	if e.maxStates == 0 {
		e.maxStates = 1 << 20
	}
	e.seen = make(map[string]struct{})
	e.lb = math.Max(p.Compute(), 2*float64(e.need)/p.Beta)
	if o.LowerBound > e.lb {
		e.lb = o.LowerBound
	}
	e.tailB = make([]float64, e.n+1)
	for i := 0; i < e.n; i++ {
		e.tailB[i+1] = e.tailB[i] + p.UB[i]
	}
	e.restOps = make([]float64, 2*e.n+1)
	for k := 2*e.n - 1; k >= 0; k-- {
		i := k
		u := 0.0
		if k < e.n {
			u = p.UF[i]
		} else {
			u = p.UB[2*e.n-1-k]
		}
		e.restOps[k] = e.restOps[k+1] + u
	}
	_, tail, ok, err := p.WholeWindowsUntil(o.Stop)
	if err != nil {
		return &Result{}, Stopped, nil // the windows alone take minutes on a long chain
	}
	if ok {
		e.tail = tail
	}
	s := newSim(p)
	// The simulations stop too (their clones inherit the channel): on a long chain one node
	// is a replay of thousands of operations, and 1024 of them between two looks at the
	// channel take minutes. A stopped simulation ends the search as Stopped, never as a
	// proof.
	s.stop = o.Stop
	s.run(true)
	e.dfs(s)
	status := Optimal
	switch {
	case e.interrupted:
		status = Stopped
	case e.stopped:
		status = NodeLimit
	}
	if e.sol == nil {
		return &Result{}, status, nil
	}
	r, err := e.sol.result()
	return r, status, err
}

type exact struct {
	p        *act.Problem
	n        int
	need     int64
	best, lb float64
	tailB    []float64 // tailB[j] = Σ_{i<j} u_{B_i}
	restOps  []float64 // restOps[k] = time of compute operations k..2n−1
	tail     []float64 // tail[k]: least time from the start of operation k to the end (WholeWindows)
	sol      *sim
	searchBudget
	found     bool
	seen      map[string]struct{}
	maxStates int
	key       []byte
}

// visited records s's decision state and reports whether it was recorded already. Times are
// keyed on a grid of the simulation's tolerance, so that the same transfers added in another
// order (t + d_a + d_b against t + d_b + d_a) meet.
func (e *exact) visited(s *sim) bool {
	k := e.key[:0]
	for _, st := range s.st {
		k = append(k, byte(st))
	}
	run := byte(0)
	if s.running {
		run = 1
	}
	k = append(k, run)
	k = binary.LittleEndian.AppendUint32(k, uint32(s.k))
	k = binary.LittleEndian.AppendUint64(k, uint64(s.offBytes))
	k = binary.LittleEndian.AppendUint64(k, uint64(math.Round(s.now/s.tol)))
	if s.running {
		k = binary.LittleEndian.AppendUint64(k, uint64(math.Round(s.opEnd/s.tol)))
	}
	e.key = k
	if _, ok := e.seen[string(k)]; ok {
		return true
	}
	if len(e.seen) < e.maxStates {
		e.seen[string(k)] = struct{}{}
	}
	return false
}

func (e *exact) bound(s *sim) float64 {
	lb := s.now + e.restOps[s.k]
	if s.k < 2*e.n && e.tail != nil {
		lb = math.Max(lb, s.now+e.tail[s.k])
	}
	if s.running {
		lb = s.opEnd + e.restOps[s.k+1]
		if e.tail != nil {
			lb = math.Max(lb, s.opEnd-e.opDur(s.k)+e.tail[s.k])
		}
	}
	var pre float64
	jmin := -1
	for j := e.n - 1; j >= 0; j-- {
		if s.st[j] == away || s.st[j] == offDone || s.st[j] == offloading {
			pre += s.dur(j)
			jmin = j
		}
	}
	link := s.now + pre
	if jmin >= 0 {
		lb = math.Max(lb, link+e.tailB[jmin+1])
	}
	if miss := e.need - s.offBytes; miss > 0 {
		link += 2 * float64(miss) / e.p.Beta
	}
	return math.Max(lb, link)
}

func (e *exact) leaf(s *sim) {
	if s.done() && s.now < e.best {
		e.best, e.sol = s.now, s
		if e.best <= e.lb*(1+1e-12) {
			e.found = true
		}
	}
}

func (e *exact) dfs(s *sim) {
	if s.stopped {
		e.stopped, e.interrupted = true, true
	}
	if e.found || e.stopped || s.dead {
		return
	}
	if s.done() {
		e.leaf(s)
		return
	}
	if e.spend() {
		return
	}
	if e.bound(s) >= e.best || e.visited(s) {
		return
	}
	if s.awayPending == 0 && s.offBytes >= e.need {
		c := s.clone()
		c.finish()
		if c.stopped {
			e.stopped, e.interrupted = true, true
			return
		}
		e.leaf(c)
	}
	for j := e.n - 1; j >= 0; j-- {
		if s.st[j] == away || s.st[j] == offDone {
			c := s.clone()
			c.push(schedule.ActTransfer{Kind: schedule.Prefetch, Index: j})
			e.dfs(c)
		}
	}
	for j := 0; j < e.n; j++ {
		if kb := 2*e.n - 1 - j; s.st[j] != resident || e.p.X[j] == 0 || s.k > kb || (s.k == kb && s.running) {
			continue
		}
		if 2*float64(s.offBytes+e.p.X[j])/e.p.Beta >= e.best || twinAway(e.p.X, s.st, j) {
			continue
		}
		c := s.clone()
		c.push(schedule.ActTransfer{Kind: schedule.Offload, Index: j})
		e.dfs(c)
	}
}

// opDur returns the duration of compute operation k.
func (e *exact) opDur(k int) float64 {
	if k < e.n {
		return e.p.UF[k]
	}
	return e.p.UB[2*e.n-1-k]
}
