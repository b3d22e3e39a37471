package rematoffload

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/memsched/memsched/dp"
	hact "github.com/memsched/memsched/heuristics/actoffload"
	"github.com/memsched/memsched/heuristics/checkpoint"
	"github.com/memsched/memsched/instances"
	act "github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
)

// Options tune the strategies.
type Options struct {
	// Slots is the slot count of the C_MP tables they read (0: dp.DefaultSlots); the slot
	// size is about budget/Slots whatever table budget they need.
	Slots int
	// Deadline, when set, bounds the search: the C_MP tables stop at it (dp.ErrStopped), and
	// the improvement loops return their best plan so far once it has passed (zero: none).
	Deadline time.Time
	// MaxMemory caps each C_MP table's estimated memory (0: dp.DefaultMaxMemory):
	// RematThenOffload's table at a larger budget uses fewer slots to stay within it.
	MaxMemory int64
}

// maxMemory is o.MaxMemory or the tables' default.
func (o Options) maxMemory() int64 {
	if o.MaxMemory > 0 {
		return o.MaxMemory
	}
	return dp.DefaultMaxMemory
}

// ErrPartial says that the deadline stopped a strategy after it had a plan that fits: the
// plan returned with it is the best found before the deadline, not the strategy's answer.
// Without a plan the strategy returns dp.ErrStopped.
var ErrPartial = errors.New("rematoffload: stopped at the deadline; the plan is the best found before it")

// passed reports whether o's deadline has passed.
func (o Options) passed() bool { return !o.Deadline.IsZero() && time.Now().After(o.Deadline) }

// stop returns a channel closed at o's deadline (nil without one: never closed) for the
// tables' Stop option, and the function that releases its timer.
func (o Options) stop() (<-chan struct{}, func()) {
	if o.Deadline.IsZero() {
		return nil, func() {}
	}
	ch := make(chan struct{})
	if o.passed() {
		close(ch) // already: no race with a timer that fires in another goroutine
		return ch, func() {}
	}
	t := time.AfterFunc(time.Until(o.Deadline), func() { close(ch) })
	return ch, func() { t.Stop() }
}

func (o Options) slots() int {
	if o.Slots > 0 {
		return o.Slots
	}
	return dp.DefaultSlots
}

// maxCandidates bounds the budgets RematThenOffload tries.
const maxCandidates = 24

// storeAllPeak is the peak memory of storing everything (F_all^1 … B^1).
func storeAllPeak(c *instances.Chain) (int64, error) {
	r, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
	return r.Peak, err
}

// RematThenOffload starts from rotor's optimum (C_MP) and lets the link pay for more memory:
// for the budget itself and for the budgets above it where C_MP's makespan improves (up to
// the store-all peak, at most maxCandidates of them), it takes C_MP's sequence for that larger
// budget, reads it as a plan of the combined class (its top-level checkpoints are the
// segments' inputs) and offloads checkpoints one at a time, the one that shortens the fluid
// makespan most (or, while the plan does not fit the real budget, brings it closest), while
// that helps — offloads the link carries without idle cost nothing in the fluid model. It
// returns the plan with the shortest fluid makespan, nil when none fits. With no offload it
// is C_MP's own sequence, so it is never worse than rematerialization alone. Past o.Deadline
// it returns the best plan so far with ErrPartial (dp.ErrStopped while the table is built).
func RematThenOffload(c *instances.Chain, budget int64, beta float64, o Options) (*schedule.CombinedPlan, error) {
	peak, err := storeAllPeak(c)
	if err != nil {
		return nil, err
	}
	top := max(budget, peak)
	// The table at top with the slot size of a table at budget.
	slots := int(min(int64(8*o.slots()), int64(o.slots())*ceilDiv(top, max(budget, 1))))
	if w := dp.PersistentSlotsWithin(c.Len(), slots, o.maxMemory()); w > 0 && w < slots {
		slots = w // coarser, still feasible (sizes rounded up); 0: NewPersistent refuses
	}
	stop, release := o.stop()
	defer release()
	tab, err := dp.NewPersistent(c, top, dp.Options{Slots: slots, Stop: stop, MaxMemory: o.MaxMemory})
	if err != nil {
		return nil, err
	}
	cands := []int64{budget}
	var above []int64
	for _, pt := range tab.Frontier() {
		if pt.Budget > budget && pt.Budget <= top {
			above = append(above, pt.Budget)
		}
	}
	for k := 0; k < min(len(above), maxCandidates); k++ {
		cands = append(cands, above[k*len(above)/min(len(above), maxCandidates)])
	}
	f := newFluid(c, budget, beta)
	var best *schedule.CombinedPlan
	bestMs := math.Inf(1)
	for _, b := range cands {
		if o.passed() {
			return best, partial(best)
		}
		r, err := tab.Solve(b)
		if err != nil {
			return nil, err
		}
		if !r.Feasible {
			continue
		}
		p, err := schedule.PlanOf(c.Len(), r.Sequence)
		if err != nil {
			return nil, fmt.Errorf("rematoffload: C_MP's sequence is not of the combined class: %w", err)
		}
		p, res, stopped := offloadGreedily(f, p, o)
		if res.ok && res.makespan < bestMs {
			best, bestMs = p, res.makespan
		}
		if stopped {
			return best, partial(best)
		}
	}
	return best, nil
}

// partial is the error of a strategy stopped at its deadline with best in hand: ErrPartial,
// or dp.ErrStopped when it had no plan that fits yet.
func partial(best *schedule.CombinedPlan) error {
	if best == nil {
		return fmt.Errorf("%w before any plan fitted", dp.ErrStopped)
	}
	return ErrPartial
}

// offloadGreedily offloads the plan's inputs one at a time, each time the one that helps
// most, until none helps or o's deadline has passed (each try replays the plan: on a long
// chain a round takes seconds); stopped says the deadline ended it.
func offloadGreedily(f *fluid, p *schedule.CombinedPlan, o Options) (_ *schedule.CombinedPlan, _ fluidResult, stopped bool) {
	cur := f.eval(p)
	for {
		var next *schedule.CombinedPlan
		nextRes := cur
		for k := 0; k <= len(p.Segments); k++ {
			if o.passed() {
				return p, cur, true
			}
			q := flip(p, k, true)
			if q == nil {
				continue
			}
			r := f.eval(q)
			if better(r, nextRes) {
				next, nextRes = q, r
			}
		}
		if next == nil {
			return p, cur, false
		}
		p, cur = next, nextRes
	}
}

// better says whether a is an improvement on b: a plan that fits beats one that does not, a
// shorter makespan beats a longer one, and among plans that do not fit the one closer to
// fitting is better.
func better(a, b fluidResult) bool {
	switch {
	case a.ok && !b.ok:
		return true
	case a.ok && b.ok:
		return a.makespan < b.makespan*(1-1e-12)
	case !a.ok && !b.ok:
		return a.short < b.short*(1-1e-12)
	}
	return false
}

// flip returns a copy of p with level k's input (k = len(Segments): the loss stage's)
// offloaded or kept, nil when it already is or the input is empty.
func flip(p *schedule.CombinedPlan, k int, off bool) *schedule.CombinedPlan {
	q := *p
	q.Segments = append([]schedule.CombinedSegment(nil), p.Segments...)
	if k == len(p.Segments) {
		if p.OffloadLoss == off {
			return nil
		}
		q.OffloadLoss = off
		return &q
	}
	if p.Segments[k].Offload == off {
		return nil
	}
	q.Segments[k].Offload = off
	return &q
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// maxWindow is the most segments OffloadThenRemat merges into one recomputed segment at once.
const maxWindow = 8

// OffloadThenRemat starts from an activation-offloading schedule and recomputes where the link
// is the bottleneck: it takes the offload set of 001's GREEDY (heuristics/actoffload; every
// activation when GREEDY finds nothing) as a plan that stores everything (F_all segments), and
// repeatedly applies the move that shortens the fluid makespan most among: merging up to
// maxWindow consecutive segments that include an idle level — a level where the link makes
// the compute stream wait — into one F_ck segment recomputed by C_MP's best sequence for the
// room left (its interior inputs are then neither stored nor moved), and keeping or offloading
// one level's input. While the plan does not fit, every window is tried and the move that
// brings it closest to fitting is taken. It returns the best plan, nil when none fits. Past
// o.Deadline it returns the plan so far with ErrPartial (dp.ErrStopped while the table is
// built or before a plan fits).
func OffloadThenRemat(c *instances.Chain, budget int64, beta float64, o Options) (*schedule.CombinedPlan, error) {
	n := c.Len()
	L := n - 1
	p := &schedule.CombinedPlan{}
	for l := 1; l <= L; l++ {
		p.Segments = append(p.Segments, schedule.CombinedSegment{Start: l, End: l, All: true})
	}
	ap, err := act.FromChain(c, budget, beta)
	if err != nil {
		return nil, err
	}
	stop, release := o.stop()
	defer release()
	g, err := hact.GreedyUntil(ap, stop)
	if err != nil {
		return nil, err
	}
	if g.Stopped {
		return nil, partial(nil)
	}
	set := map[int]bool{}
	if g.Feasible {
		for _, j := range g.Offloaded {
			set[j] = true
		}
	} else {
		for j := 0; j <= L; j++ {
			set[j] = true
		}
	}
	// x_j is the input of stage j+1 (x_0 = a^0, x_j = ā^j), x_L the loss stage's.
	for k := range p.Segments {
		p.Segments[k].Offload = set[k] && ap.X[k] > 0
	}
	p.OffloadLoss = set[L] && ap.X[L] > 0
	tab, err := dp.NewPersistent(c, budget+c.A0, dp.Options{Slots: o.slots(), Stop: stop, MaxMemory: o.MaxMemory})
	if err != nil {
		return nil, err
	}
	f := newFluid(c, budget, beta)
	cur := f.eval(p)
	stopped := false
	for iter := 0; iter < 4*n && !stopped; iter++ {
		lv := levelsOf(c, p)
		var next *schedule.CombinedPlan
		nextRes := cur
		try := func(q *schedule.CombinedPlan) {
			// Each try replays the plan: the deadline is checked before each (a round on a
			// long chain takes seconds); the round's best move so far is still taken.
			if q == nil || stopped {
				return
			}
			if stopped = o.passed(); stopped {
				return
			}
			if r := f.eval(q); better(r, nextRes) {
				next, nextRes = q, r
			}
		}
		K := len(p.Segments)
		for i := 0; i < K; i++ {
			for j := i; j < min(K, i+maxWindow); j++ {
				if cur.ok {
					idle := false
					for k := i; k <= j; k++ {
						idle = idle || cur.idle[k] > 0
					}
					if !idle {
						continue
					}
				}
				try(merge(c, budget, tab, p, lv, i, j))
			}
		}
		for k := 0; k <= K; k++ {
			try(flip(p, k, !offloaded(p, k)))
		}
		if next == nil {
			break
		}
		p, cur = next, nextRes
	}
	switch {
	case stopped && !cur.ok:
		return nil, partial(nil)
	case stopped:
		return p, ErrPartial
	case !cur.ok:
		return nil, nil
	}
	return p, nil
}

func offloaded(p *schedule.CombinedPlan, k int) bool {
	if k == len(p.Segments) {
		return p.OffloadLoss
	}
	return p.Segments[k].Offload
}

// merge replaces segments i..j of p by one F_ck segment over their stages, recomputed by
// C_MP's best sequence in the room the kept inputs above leave; nil when none fits or the
// window is a single F_ck segment already.
func merge(c *instances.Chain, budget int64, tab *dp.Persistent, p *schedule.CombinedPlan, lv []level, i, j int) *schedule.CombinedPlan {
	if i == j && !p.Segments[i].All {
		return nil
	}
	var kept int64
	for k := 0; k < i; k++ {
		if !lv[k].off {
			kept += lv[k].size
		}
	}
	s, e := p.Segments[i].Start, p.Segments[j].End
	seq, _, ok := tab.Sub(s, e, budget-kept-lv[i].size)
	if !ok {
		return nil
	}
	q := *p
	q.Segments = append(append(append([]schedule.CombinedSegment(nil), p.Segments[:i]...),
		schedule.CombinedSegment{Start: s, End: e, Offload: p.Segments[i].Offload, Backward: seq}), p.Segments[j+1:]...)
	return &q
}
