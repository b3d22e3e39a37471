package pipeline

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/instances"
	pl "github.com/memsched/memsched/instances/pipeline"
	"github.com/memsched/memsched/schedule"
	vpl "github.com/memsched/memsched/verify/pipeline"
)

// Options control the planner. The zero value stores everything and searches until done.
type Options struct {
	// Remat lets each GPU run a persistent 004 sequence of its part (rematerialization inside
	// the stages, SPEC §7): the fastest that fits its GPU with its in-flight micro-batches.
	// False stores everything.
	Remat bool
	// Slots is the discretization of the recomputation tables: 0 builds them exact in bytes
	// (rotor's C_MP as breakpoints, dp.PersistentExact), falling back to dp.DefaultSlots slots
	// when their frontiers outgrow the caps (Result.Note says so); > 0 divides M into that
	// many slots (sizes rounded up, so what the tables find fits in bytes, and a second table
	// rounded down for the bound).
	Slots int
	// Exact refuses the fallback to slots: an error instead.
	Exact bool
	// MaxMemory caps the memory of each table (0: dp's default, 2 GiB).
	MaxMemory int64
	// Deadline, when not zero, stops the search there: it returns its best plan and a lower
	// bound instead of a proven optimum. Stop does the same when closed.
	Deadline time.Time
	Stop     <-chan struct{}
}

// Result is the planner's answer. Its plan has been replayed by verify/pipeline.
type Result struct {
	// Feasible is false when no contiguous plan of the class fits (proven when Complete).
	Feasible bool
	Plan     *schedule.Pipeline
	// Makespan and Replay are the validator's figures for Plan.
	Makespan float64
	Replay   *vpl.Result
	// Bound is a lower bound on the makespan of every contiguous allocation on at most P GPUs
	// with each part's sequence in the class (store-all, or persistent 004 sequences); +Inf
	// when none fits. Equal to Makespan when Optimal.
	Bound float64
	// Optimal reports that Makespan is the optimum of that class (the search finished and,
	// with slotted tables, the slots cost nothing: the bound meets the plan).
	Optimal bool
	// Complete reports that the search finished (every allocation decided); Searched that
	// it started (its tables were built before a stop).
	Complete, Searched bool
	// Nodes is the number of partial allocations the search bounded; GPUs the S of the plan.
	Nodes int
	// Exact is true when the rematerialization tables were exact in bytes (or no tables were
	// needed); SlotSize is their slot in bytes otherwise.
	Exact    bool
	SlotSize int64
	// Note says why the tables fell back to slots, or why the search stopped early.
	Note string
	// Reason says why an allocation given to Evaluate does not fit.
	Reason string
}

// deadlineStop returns o with its deadline as a stop channel too, for the dp tables, which
// watch only that (closed at the deadline or when o.Stop closes), and the function that
// releases its timer and watcher (call it when done).
func (o Options) deadlineStop() (Options, func()) {
	if o.Deadline.IsZero() {
		return o, func() {}
	}
	// Two closers (the timer and the caller's stop) race: the timer's function may already
	// run when t.Stop returns false, so the channel is closed once, through closeStop.
	stop := make(chan struct{})
	var once sync.Once
	closeStop := func() { once.Do(func() { close(stop) }) }
	t := time.AfterFunc(time.Until(o.Deadline), closeStop)
	done := make(chan struct{}) // the caller returned: the watcher ends too
	if o.Stop != nil {
		outer := o.Stop
		go func() {
			select {
			case <-outer:
				t.Stop()
				closeStop()
			case <-stop:
			case <-done:
			}
		}()
	}
	o.Stop = stop
	return o, func() {
		t.Stop()
		close(done)
	}
}

// Plan returns the contiguous allocation on at most P GPUs with the least makespan of one
// iteration under the problem's schedule (SPEC §7), each GPU storing everything or, with
// Remat, running the fastest persistent 004 sequence of its part that fits it.
//
// It is a branch and bound over allocations, for each S ≤ min(P, L): parts are chosen from
// the last GPU to the first, a partial plan is bounded by the larger of the fill-and-drain
// bound of its unchosen prefix (prefixBound) plus its chosen suffix, and the simulation of the
// whole pipeline with the prefix's GPUs given zero durations (sim.run), and each complete
// allocation is simulated exactly. The makespan only grows with each GPU's durations and a
// GPU's memory depends on its part and its in-flight count alone, so each part's least
// backward that fits is the only choice worth making per part.
//
// The plan returned is replayed by verify/pipeline; a replay that disagrees with the search
// (makespan relative 1e-9, or a GPU over M) is an error — a bug, never a result.
func Plan(p *pl.Problem, o Options) (*Result, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	o, release := o.deadlineStop()
	defer release()
	maxS := min(p.GPUs, p.L())
	// With recomputation, the store-all optimum (a fast search) is a plan of the class and
	// bounds the part lengths the recomputation tables need (classCosts).
	ub := math.Inf(1)
	var seed []int
	var seedRes *Result // seed completed and replayed
	if o.Remat {
		so := o
		so.Remat = false
		sa, err := Plan(p, so)
		if err != nil {
			return nil, err
		}
		if sa.Feasible {
			ub, seed, seedRes = sa.Makespan, sa.Plan.Cuts(), sa
		}
		// The time-balanced cut with each part's fastest sequence: often far better than
		// storing everything, and the tables then need shorter parts only.
		sr, v, err := rematSeed(p, o, maxS, newSim(p.MicroBatches, p.Schedule))
		if err != nil && !errors.Is(err, ErrStopped) {
			return nil, err
		}
		if sr != nil && v < ub {
			ub, seed, seedRes = v, sr.Plan.Cuts(), sr
		}
	}
	up, lo, exact, q, note, err := classCosts(p, o, maxS, ub)
	var s *search
	if err == nil {
		s, err = newSearch(p, o, up, lo, maxS)
	}
	if errors.Is(err, ErrStopped) {
		// Stopped before the tables were complete: the first plan found (storing everything,
		// or the seed with recomputation), and the busiest GPU's share of the work, a bound
		// with no table (the stop has fired: nothing longer can run; the lever's fill-drain
		// bound is computed apart, leverpl.Bounds).
		res := &Result{Note: "stopped before the recomputation tables were complete", Bound: workBound(p, maxS)}
		if ev := seedRes; ev != nil {
			// The seed as completed when it was found (completing it again built its parts'
			// tables a second time, past the limit: a minute on 2001 stages).
			res.Feasible, res.Plan, res.Makespan, res.Replay = true, ev.Plan, ev.Makespan, ev.Replay
			res.Bound = min(res.Bound, ev.Makespan)
			res.Exact, res.SlotSize = ev.Exact, ev.SlotSize
		}
		return res, nil
	}
	if err != nil {
		return nil, err
	}
	// Start from the balanced split of every S (the least-time cut, heuristics' equal-time
	// split) so that pruning bites from the first node.
	// Each is O(S·L²) (a second for all S on 2001 stages): past the limit the rest are skipped,
	// and an S whose fill-drain bound was not computed is bounded by its work per GPU.
	for S := 1; S <= maxS; S++ {
		if S > 1 && s.poll.StoppedNow() {
			break
		}
		if cuts := s.balanced(S); cuts != nil {
			s.leaf(cuts)
		}
	}
	if seed != nil {
		s.leaf(seed)
	}
	type cand struct {
		S  int
		lb float64
	}
	var cs []cand
	for S := 1; S <= maxS; S++ {
		if s.poll.StoppedNow() {
			cs = append(cs, cand{S, workBound(p, S)})
			continue
		}
		cs = append(cs, cand{S, fillDrainBound(p, s.lo, S)})
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].lb < cs[j].lb })
	for _, c := range cs {
		if c.lb >= s.inc {
			break
		}
		if s.stopped() {
			s.open = min(s.open, c.lb)
			continue
		}
		s.runS(c.S)
	}
	res := &Result{Nodes: s.nodes, Exact: exact, SlotSize: q, Complete: !s.poll.Halted(), Searched: true, Note: note}
	res.Bound = min(s.inc, s.open, s.leafLo)
	if math.IsInf(s.inc, 1) {
		return res, nil
	}
	plan := schedule.NewContiguous(s.best)
	S := len(s.best)
	for k := range plan.Parts {
		pt := &plan.Parts[k]
		seq, err := up.sequence(pt.First, pt.Last, p.InFlight(k, S))
		if err != nil {
			return nil, err
		}
		pt.Sequence = seq
	}
	rep, err := vpl.Replay(p, plan)
	if err != nil {
		return nil, fmt.Errorf("pipeline: internal error: the plan %v does not replay: %w", plan, err)
	}
	if !rep.Fits() {
		return nil, fmt.Errorf("pipeline: internal error: the plan %v does not fit: %w", plan, rep.Violation)
	}
	if math.Abs(rep.Makespan-s.inc) > 1e-9*math.Max(1, s.inc) {
		return nil, fmt.Errorf("pipeline: internal error: the search's makespan %g, replayed %g (plan %v)", s.inc, rep.Makespan, plan)
	}
	res.Feasible, res.Plan, res.Makespan, res.Replay = true, plan, rep.Makespan, rep
	// Optimal: nothing left open and no explored allocation below the plan, even with the
	// lower tables. The bound is then the replayed makespan itself (the search's sum and the
	// replay's may differ in the last bit).
	res.Optimal = res.Complete && min(s.open, s.leafLo) >= s.inc
	if res.Optimal {
		res.Bound = rep.Makespan
	} else {
		res.Bound = min(res.Bound, rep.Makespan)
	}
	return res, nil
}

// search is the state of one branch and bound.
type search struct {
	p      *pl.Problem
	o      Options
	up, lo *table // the class's costs, and lower ones for the bound (the same table when exact)
	sim    *sim
	nodes  int
	poll   dp.Poll // o.Stop and o.Deadline, read every 64 nodes
	// inc is the best makespan found (upper costs), best its cuts; open the least bound of a
	// subtree left unexplored by a stop; leafLo the least lower-cost makespan of an explored
	// allocation (where the slotted tables' rounding may leave a gap).
	inc, open, leafLo float64
	best              []int
	// the partial plan: GPU k's cut e_k, durations, cut times.
	cuts     []int
	f, b     []float64
	fl, bl   []float64
	cf, cb   []float64
	prefixLo [][]float64
	// the relaxation's durations and cuts (relaxed)
	zf, zb, zcf, zcb []float64
}

func (s *search) stopped() bool { return s.poll.Stopped() }

// balanced returns the cuts of S parts with the least max_k (F_k + B_k) (store-all times at
// the upper costs' in-flight counts, fitting), nil when none fits: a chains-on-chains DP.
func (s *search) balanced(S int) []int {
	t, p := s.up, s.p
	L := t.L
	if S > L {
		return nil
	}
	inf := math.Inf(1)
	// D[g][i]: stages i..L on the last g GPUs.
	D := make([][]float64, S+1)
	arg := make([][]int, S+1)
	for g := 1; g <= S; g++ {
		D[g], arg[g] = make([]float64, L+2), make([]int, L+2)
		n := p.InFlight(S-g, S)
		for i := 1; i <= L; i++ {
			D[g][i] = inf
			if g == 1 {
				f, b := t.at(i, L, n)
				D[g][i], arg[g][i] = f+b, L
				continue
			}
			for e := i; e <= L-g+1; e++ {
				f, b := t.at(i, e, n)
				if v := max(f+b, D[g-1][e+1]); v < D[g][i] {
					D[g][i], arg[g][i] = v, e
				}
			}
		}
	}
	if math.IsInf(D[S][1], 1) {
		return nil
	}
	cuts := make([]int, 0, S)
	i := 1
	for g := S; g >= 1; g-- {
		e := arg[g][i]
		cuts = append(cuts, e)
		i = e + 1
	}
	return cuts
}

// leaf simulates a complete allocation and keeps it if it is the best.
func (s *search) leaf(cuts []int) {
	S := len(cuts)
	f, b, fl, bl := make([]float64, S), make([]float64, S), make([]float64, S), make([]float64, S)
	cf, cb := make([]float64, S), make([]float64, S)
	first := 1
	for k, e := range cuts {
		n := s.p.InFlight(k, S)
		f[k], b[k] = s.up.at(first, e, n)
		fl[k], bl[k] = s.lo.at(first, e, n)
		if math.IsInf(b[k], 1) {
			return
		}
		if k+1 < S {
			cf[k], cb[k] = s.p.CutTimes(e)
		}
		first = e + 1
	}
	s.nodes++
	v := s.sim.run(f, b, cf, cb, 0, 0, 0)
	if v < s.inc {
		s.inc, s.best = v, append([]int(nil), cuts...)
	}
	if s.lo != s.up {
		s.leafLo = min(s.leafLo, s.sim.run(fl, bl, cf, cb, 0, 0, 0))
	}
}

// runS searches the allocations on S GPUs.
func (s *search) runS(S int) {
	s.cuts = make([]int, S)
	s.f, s.b, s.fl, s.bl = make([]float64, S), make([]float64, S), make([]float64, S), make([]float64, S)
	s.cf, s.cb = make([]float64, S), make([]float64, S)
	s.prefixLo = prefixBound(s.p, s.lo, S)
	s.cuts[S-1] = s.p.L()
	s.dfs(S, S-1, 0)
}

// child is a choice of the first stage of GPU k's part with its bound.
type child struct {
	first int
	bound float64
}

// dfs chooses GPU k's part, which ends at s.cuts[k]; GPUs k+1..S−1 are chosen and suf is
// max_{j>k} (A'_j + m·t_j) over them, A' measured from GPU k+1's start (lower costs).
func (s *search) dfs(S, k int, suf float64) {
	p, m := s.p, float64(s.p.MicroBatches)
	e := s.cuts[k]
	n := p.InFlight(k, S)
	var kids []child
	lo := k + 1
	if k == 0 {
		lo = 1
	}
	for first := lo; first <= e; first++ {
		if k == 0 && first != 1 {
			break
		}
		f, b := s.up.at(first, e, n)
		fl, bl := s.lo.at(first, e, n)
		if math.IsInf(bl, 1) {
			continue
		}
		s.f[k], s.b[k], s.fl[k], s.bl[k] = f, b, fl, bl
		if k+1 < S {
			s.cf[k], s.cb[k] = p.CutTimes(e)
		}
		if k == 0 {
			s.nodes++
			if !math.IsInf(b, 1) {
				v := s.sim.run(s.f, s.b, s.cf, s.cb, 0, 0, 0)
				if v < s.inc {
					s.inc = v
					s.best = append(s.best[:0], s.cuts...)
				}
			}
			if s.lo != s.up {
				s.leafLo = min(s.leafLo, s.sim.run(s.fl, s.bl, s.cf, s.cb, 0, 0, 0))
			}
			continue
		}
		// Bound with the lower costs: prefix stages 1..first−1 on GPUs 0..k−1.
		tl := fl + bl
		suf2 := m * tl
		if k+1 < S {
			suf2 = max(suf2, tl+cutCost(p, e)+suf)
		}
		bd := max(s.prefixLo[k][first-1], s.lo.tlo[first-1]+cutCost(p, first-1)+suf2)
		if bd >= s.inc {
			continue
		}
		s.nodes++
		bd = max(bd, s.relaxed(S, k, first))
		if bd >= s.inc {
			continue
		}
		kids = append(kids, child{first, bd})
	}
	sort.SliceStable(kids, func(i, j int) bool { return kids[i].bound < kids[j].bound })
	for i, c := range kids {
		if c.bound >= s.inc {
			break
		}
		if s.stopped() {
			for _, c2 := range kids[i:] {
				s.open = min(s.open, c2.bound)
			}
			return
		}
		first := c.first
		f, b := s.up.at(first, e, n)
		fl, bl := s.lo.at(first, e, n)
		s.f[k], s.b[k], s.fl[k], s.bl[k] = f, b, fl, bl
		if k+1 < S {
			s.cf[k], s.cb[k] = p.CutTimes(e)
		}
		tl := fl + bl
		suf2 := m * tl
		if k+1 < S {
			suf2 = max(suf2, tl+cutCost(p, e)+suf)
		}
		s.cuts[k-1] = first - 1
		s.dfs(S, k-1, suf2)
	}
}

// relaxed bounds the partial plan whose GPU k starts at stage first (GPUs k..S−1 chosen, lower
// costs) by simulating it with GPUs 0..k−1 at zero durations and free links among them, GPU
// k's forwards released after Σ_{ℓ<first} u_f and the cut's transfer, and Σ_{ℓ<first} u_b
// still to run after its last backward (sim.run).
func (s *search) relaxed(S, k, first int) float64 {
	if len(s.zf) != S {
		s.zf, s.zb, s.zcf, s.zcb = make([]float64, S), make([]float64, S), make([]float64, S), make([]float64, S)
	}
	for j := 0; j < S; j++ {
		if j < k {
			s.zf[j], s.zb[j], s.zcf[j], s.zcb[j] = 0, 0, 0, 0
		} else {
			s.zf[j], s.zb[j], s.zcf[j], s.zcb[j] = s.fl[j], s.bl[j], s.cf[j], s.cb[j]
		}
	}
	cf0, cb0 := s.p.CutTimes(first - 1)
	s.zcf[k-1], s.zcb[k-1] = cf0, cb0
	return s.sim.run(s.zf, s.zb, s.zcf, s.zcb, k, s.lo.ulf[first-1]+cf0, s.lo.ulb[first-1])
}

// newSearch builds the search's tables of part durations (the class's costs up, and lo for
// its bound when they differ).
func newSearch(p *pl.Problem, o Options, up, lo partCosts, maxS int) (*search, error) {
	tu, err := newTable(p, up, maxS, o)
	if err != nil {
		return nil, err
	}
	s := &search{p: p, o: o, up: tu, lo: tu, sim: newSim(p.MicroBatches, p.Schedule),
		inc: math.Inf(1), open: math.Inf(1), leafLo: math.Inf(1),
		poll: dp.Poll{Stop: o.Stop, Deadline: o.Deadline, Every: 64}}
	if lo != nil {
		if s.lo, err = newTable(p, lo, maxS, o); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// fillDrainBounds returns fillDrainBound(p, d, S) for S = 1..maxS (index S) in one pass: with
// every part at its sums the durations do not depend on the in-flight count, so layer g of
// the DP (the last g GPUs) is the same for every S and D(S, 1) is read after layer S —
// O(maxS·L²) steps instead of O(maxS²·L²), the same values bit for bit
// (TestFillDrainBoundsOnePass). The poll is read once per row.
func fillDrainBounds(p *pl.Problem, d sumDurations, maxS int, poll *dp.Poll) ([]float64, error) {
	out := make([]float64, maxS+1)
	err := fillDrainLayers(p, d, maxS, func(int) int { return 0 }, poll, func(g int, v float64) { out[g] = v })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// workBound is m·Σ(u_f + u_b)/maxS: some GPU of a plan on at most maxS GPUs runs at least
// that (a bound with no table, for a search stopped before its tables were built).
func workBound(p *pl.Problem, maxS int) float64 {
	var work float64
	for l := 1; l <= p.L()+1; l++ {
		work += p.Chain.Stage(l).UF + p.Chain.Stage(l).UB
	}
	return float64(p.MicroBatches) * work / float64(maxS)
}

// FillDrainBound returns the least fill-and-drain bound (fillDrainBound) over 1..min(P, L)
// GPUs with every part at Σ(u_f + u_b), memory aside: a lower bound on the makespan of every
// contiguous plan on at most P GPUs under either schedule, whatever each part stores or
// recomputes (recomputation only adds time, transfers are counted). It takes
// O(min(P, L)·L²) steps (fillDrainBounds): past MaxFillDrainSteps it returns
// ErrFillDrainTooLong, and o's stop or deadline stops it (ErrStopped).
func FillDrainBound(p *pl.Problem, o Options) (float64, error) {
	S := float64(min(p.GPUs, p.L()))
	if L := float64(p.L()); S*L*L/2 > MaxFillDrainSteps {
		return 0, ErrFillDrainTooLong
	}
	q := *p
	q.Memory = instances.MaxBytes
	ds, err := fillDrainBounds(&q, newSumDurations(p), min(p.GPUs, p.L()), &dp.Poll{Stop: o.Stop, Deadline: o.Deadline})
	if err != nil {
		return 0, err
	}
	b := math.Inf(1)
	for _, v := range ds[1:] {
		b = min(b, v)
	}
	return b, nil
}

// MaxFillDrainSteps caps FillDrainBound's work: about a second (8 GPUs on 11 000 stages).
const MaxFillDrainSteps = 5e8

// ErrFillDrainTooLong says that FillDrainBound would take more than MaxFillDrainSteps.
var ErrFillDrainTooLong = errors.New("pipeline: the fill-and-drain bound would take more than 5·10⁸ steps on this chain")
