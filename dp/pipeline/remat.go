package pipeline

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memsched/memsched/dp"
	pl "github.com/memsched/memsched/instances/pipeline"
	"github.com/memsched/memsched/schedule"
)

// rematCosts is the class of persistent 004 sequences inside the parts (SPEC §7,
// "Rematerialization inside a stage"): GPU k runs every micro-batch with one persistent
// sequence of its part [s, e], its input a^{s−1} kept outside, the next GPU playing a zero-cost
// loss stage v = e+1 (or the chain's loss stage L+1 on the last GPU).
//
// The recurrence is C_MP's (004 Thm 4.8) along the sequence's spine — the sub-chains (p, v)
// that contain the part's end — with what the forward phase leaves stored kept apart: a
// persistent sequence of (p, v) either runs F_all^p, the spine from p+1 with ā^p held, and
// B^p, or runs F_ck^p F_∅^{p+1} … F_∅^{s'−1}, the spine from s' with a^{s'−1} held, and then
// the left sub-chain (p, s'−1) — a C_MP sub-chain of the chain (dp tables). The items the spine
// stores are exactly what a micro-batch holds between its forward and its backward (held),
// and the others in flight hold as much while it runs. So for each p the spine's options are
// kept as a step function of the budget m (in units of q bytes: the C_MP table's slots, or
// bytes) whose values are the Pareto sets of (held bytes, time): Opt_p(m) = the sequences of
// (p, v) that fit m beside a^{p−1}. On GPU k with n in flight, part [s, e] fits with the
// option (m, held) when
//
//	W + n·a^{s−1} + (n−1)·held + m·q ≤ M,
//
// and the part's backward is the least time of those options minus Σ u_f (a persistent
// sequence's forward phase runs each forward once). The loss gradient δ^v is not there in the
// forward phase (SPEC §7 counts it from the start of the backward), so the spine's forward
// checks leave it out. Sizes are rounded up to units (what the table finds fits in bytes), or
// down for the lower table, whose values bound the class's from below.
type rematCosts struct {
	p     *pl.Problem
	L     int
	lower bool
	q     int64
	mmax  int64 // the largest budget in units: ⌊M/q⌋
	// sizes in units, index 0..L+1
	A, Abar, D, OF, OB []int64
	// held sizes in bytes
	ab, abarb []int64
	uf, ub    []float64
	// left[(s−1)*(L+1)+t−1]: the breakpoints of C_MP(s, t, ·) in units
	left   []frontier
	exact  *dp.PersistentExact
	slots  *dp.Persistent
	ns     []int
	nix    map[int]int
	f      []float64 // at (s−1)*L + e−1
	b      []float64 // at ((s−1)*L + e−1)*len(ns) + index of n; +Inf: nothing fits
	mu     sync.Mutex
	spines map[int][]stepFn // the spine tables kept for sequences (upper costs only)
	// sMin[e], when set, is the first stage of the longest part ending at e worth answering;
	// upper the upper bound it comes from (+Inf: none).
	sMin  []int
	upper float64
	// stop and deadline end the fill early (ErrStopped).
	stop     <-chan struct{}
	deadline time.Time
}

// frontier is a non-increasing step function: val[i] from mem[i] to the next breakpoint.
type frontier struct {
	mem []int64
	val []float64
}

// entry is one option of a spine: held bytes and time, and how it is made.
type entry struct {
	held int64
	t    float64
	// cand: −2 the base (loss stage), −1 F_all^p, s' ≥ 1 the split at s'; sub and subE the
	// breakpoint and entry of the spine it continues with.
	cand, sub, subE int32
}

// stepFn is a spine's options as a step function of the budget: lists[i] from m[i] on.
type stepFn struct {
	m     []int64
	lists [][]entry
}

// inFlightCounts returns the distinct in-flight counts of the positions of pipelines of 1..maxS
// GPUs, ascending.
func inFlightCounts(p *pl.Problem, maxS int) []int {
	seen := map[int]bool{}
	var ns []int
	for S := 1; S <= maxS; S++ {
		for k := 0; k < S; k++ {
			if n := p.InFlight(k, S); !seen[n] {
				seen[n] = true
				ns = append(ns, n)
			}
		}
	}
	sort.Ints(ns)
	return ns
}

// errSpineTooLarge is an exact spine table past maxSpineEntries: the caller falls back to slots.
var errSpineTooLarge = errors.New("pipeline: the exact recomputation tables hold too many options; use slots")

// maxSpineEntries caps the options one spine table holds (32 bytes each: 128 MiB).
const maxSpineEntries = 1 << 22

// newRematCosts builds the class's costs (and the lower ones when slotted): exact in bytes
// when slots is 0, else with that many slots over M.
func newRematCosts(p *pl.Problem, o Options, slots, maxS int, sMin []int, ub float64, wantLower bool) (up, lo partCosts, exact bool, q int64, err error) {
	c := p.Chain
	budget := p.Memory + c.A0 // the C_MP tables then cover M beside a^{s−1} for every s
	// The left sub-chains lie inside the parts the tables answer: a banded C_MP table is
	// enough (exact mode; the slotted one is filled whole).
	span := 0
	if sMin != nil {
		span = 1
		for e := 1; e < len(sMin); e++ {
			span = max(span, e-sMin[e]+1)
		}
	}
	if slots == 0 {
		t, err := dp.NewPersistentExact(c, budget, dp.ExactOptions{MaxMemory: o.MaxMemory, Stop: o.Stop, MaxSpan: span})
		if errors.Is(err, dp.ErrStopped) {
			return nil, nil, false, 0, ErrStopped
		}
		if err != nil {
			return nil, nil, false, 0, err
		}
		u, err := buildRemat(p, o, maxS, sMin, ub, false, 1, func(s, tt int) frontier {
			if span > 0 && tt-s >= span {
				return frontier{}
			}
			mem, val := t.SubFrontier(s, tt)
			return frontier{mem, val}
		})
		if err != nil {
			return nil, nil, false, 0, err
		}
		u.exact = t
		return u, nil, true, 1, nil
	}
	do := dp.Options{Slots: slots, MaxMemory: o.MaxMemory, Stop: o.Stop}
	tu, err := dp.NewPersistent(c, budget, do)
	if errors.Is(err, dp.ErrStopped) {
		return nil, nil, false, 0, ErrStopped
	}
	if err != nil {
		return nil, nil, false, 0, err
	}
	q = tu.SlotSize()
	var tl *dp.Persistent
	if wantLower {
		if tl, err = dp.NewPersistentLower(c, budget, do); errors.Is(err, dp.ErrStopped) {
			return nil, nil, false, 0, ErrStopped
		} else if err != nil {
			return nil, nil, false, 0, err
		}
		if tl.SlotSize() != q {
			return nil, nil, false, 0, fmt.Errorf("pipeline: internal error: slot sizes %d and %d", q, tl.SlotSize())
		}
	}
	u, err := buildRemat(p, o, maxS, sMin, ub, false, q, rowFrontier(tu))
	if err != nil {
		return nil, nil, false, 0, err
	}
	u.slots = tu
	if !wantLower {
		return u, nil, false, q, nil
	}
	l, err := buildRemat(p, o, maxS, sMin, ub, true, q, rowFrontier(tl))
	if err != nil {
		return nil, nil, false, 0, err
	}
	return u, l, false, q, nil
}

// rowFrontier reads C_MP(s, t, ·) of a slotted table as breakpoints.
func rowFrontier(t *dp.Persistent) func(s, t int) frontier {
	return func(s, tt int) frontier {
		var f frontier
		row := t.SubRow(s, tt)
		for m, v := range row {
			if math.IsInf(v, 1) || len(f.val) > 0 && v >= f.val[len(f.val)-1] {
				continue
			}
			f.mem = append(f.mem, int64(m))
			f.val = append(f.val, v)
		}
		return f
	}
}

func buildRemat(p *pl.Problem, o Options, maxS int, sMin []int, ub float64, lower bool, q int64, left func(s, t int) frontier) (*rematCosts, error) {
	rc := newRematSizes(p, lower, q, left)
	rc.sMin, rc.upper = sMin, ub
	rc.stop, rc.deadline = o.Stop, o.Deadline
	if err := rc.fill(maxS); err != nil {
		return nil, err
	}
	return rc, nil
}

// newRematSizes sets the sizes in units and the left sub-chains' frontiers.
func newRematSizes(p *pl.Problem, lower bool, q int64, left func(s, t int) frontier) *rematCosts {
	c := p.Chain
	L := p.L()
	rc := &rematCosts{p: p, L: L, lower: lower, q: q, mmax: p.Memory / q, spines: map[int][]stepFn{}, upper: math.Inf(1)}
	n := L + 2
	rc.A, rc.Abar, rc.D, rc.OF, rc.OB = make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	rc.ab, rc.abarb = make([]int64, n), make([]int64, n)
	rc.uf, rc.ub = make([]float64, n), make([]float64, n)
	unit := func(x int64) int64 {
		if lower {
			return x / q
		}
		return (x + q - 1) / q
	}
	for l := 0; l <= L+1; l++ {
		rc.ab[l] = c.SizeA(l)
		rc.abarb[l] = c.SizeA(l)
		rc.D[l] = unit(c.SizeDelta(l))
		if l > 0 {
			st := c.Stage(l)
			rc.abarb[l] = st.ABar
			rc.OF[l], rc.OB[l] = unit(st.OF), unit(st.OB)
			rc.uf[l], rc.ub[l] = st.UF, st.UB
		}
		rc.A[l], rc.Abar[l] = unit(rc.ab[l]), unit(rc.abarb[l])
	}
	rc.left = make([]frontier, (L+1)*(L+1))
	for s := 1; s <= L; s++ {
		for t := s; t <= L; t++ {
			rc.left[(s-1)*(L+1)+t-1] = left(s, t)
		}
	}
	return rc
}

// fill computes every part's costs for the in-flight counts of pipelines of 1..maxS GPUs.
func (rc *rematCosts) fill(maxS int) error {
	p, L := rc.p, rc.L
	rc.ns = inFlightCounts(p, maxS)
	rc.nix = map[int]int{}
	for i, n := range rc.ns {
		rc.nix[n] = i
	}
	rc.f = make([]float64, L*L)
	rc.b = make([]float64, L*L*len(rc.ns))
	// One spine table per part end e, independent of the others: spread over the cores.
	ends := make(chan int, L)
	for e := L; e >= 1; e-- {
		ends <- e
	}
	close(ends)
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	for range max(1, min(runtime.GOMAXPROCS(0), L)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for e := range ends {
				if failed.Load() != nil {
					continue
				}
				if rc.halted() {
					err := error(ErrStopped)
					failed.CompareAndSwap(nil, &err)
					continue
				}
				opt, err := rc.spine(e)
				if err != nil {
					failed.CompareAndSwap(nil, &err)
					continue
				}
				for s := 1; s <= e; s++ {
					rc.f[(s-1)*L+e-1] = rc.forward(s, e)
					for i, n := range rc.ns {
						t := math.Inf(1)
						if s >= rc.from(e) {
							t, _, _ = rc.query(opt, s, e, n)
						}
						rc.b[((s-1)*L+e-1)*len(rc.ns)+i] = t - rc.f[(s-1)*L+e-1]
					}
				}
			}
		}()
	}
	wg.Wait()
	if e := failed.Load(); e != nil {
		return *e
	}
	return nil
}

// ErrStopped is the tables' answer to a stop or a deadline before they were complete.
var ErrStopped = errors.New("pipeline: stopped before the recomputation tables were complete")

func (rc *rematCosts) halted() bool {
	if rc.stop != nil {
		select {
		case <-rc.stop:
			return true
		default:
		}
	}
	return !rc.deadline.IsZero() && time.Now().After(rc.deadline)
}

// caps returns the time and held bytes past which a spine option is of no use: tcap = ub/m
// (a GPU runs its part m times, so a part slower than that is in no plan at least as fast as
// the upper bound ub, as for from), and hcap = M/(n−1) for the least in-flight count n ≥ 2 of
// the positions (an option holding more does not fit there), with keepLast when a position
// holds one micro-batch (it needs the fastest option, whatever it holds).
func (rc *rematCosts) caps() (tcap float64, hcap int64, keepLast bool) {
	tcap = math.Inf(1)
	if !math.IsInf(rc.upper, 1) {
		tcap = rc.upper / float64(rc.p.MicroBatches) * (1 + 1e-9)
	}
	hcap = rc.p.Memory
	for _, n := range rc.ns {
		if n == 1 {
			keepLast = true
		} else {
			hcap = rc.p.Memory / int64(n-1)
			break
		}
	}
	return tcap, hcap, keepLast
}

// from returns the first stage of the longest part ending at e that the tables answer: parts
// that start before cannot be in a plan faster than the search's upper bound (sMin).
func (rc *rematCosts) from(e int) int {
	if rc.sMin == nil {
		return 1
	}
	return rc.sMin[e]
}

// end returns the spine's last stage for a part ending at e, and whether it is the zero-cost
// stand-in for the next GPU.
func (rc *rematCosts) end(e int) (int, bool) {
	if e == rc.L {
		return rc.L + 1, false
	}
	return e + 1, true
}

// forward returns Σ u_f over the part.
func (rc *rematCosts) forward(s, e int) float64 {
	v, virtual := rc.end(e)
	if virtual {
		v = e
	}
	f := 0.0
	for l := s; l <= v; l++ {
		f += rc.uf[l]
	}
	return f
}

// spine returns Opt_p for p = from(e)..v of the parts ending at e (index p), or
// errSpineTooLarge past maxSpineEntries options.
func (rc *rematCosts) spine(e int) ([]stepFn, error) { return rc.spineStop(e, true) }

// spineStop is spine, watching the stop and deadline or not (a plan's sequences are rebuilt
// whatever the time: the search that chose them has finished).
func (rc *rematCosts) spineStop(e int, stoppable bool) ([]stepFn, error) {
	v, virtual := rc.end(e)
	opt := make([]stepFn, v+1)
	// The base: the loss stage v, F_all^v then B^v (δ^v only from B^v's start).
	if virtual {
		if need := rc.D[e]; need <= rc.mmax {
			opt[v] = stepFn{m: []int64{need}, lists: [][]entry{{{cand: -2}}}}
		}
	} else {
		need := max(rc.Abar[v]+rc.OF[v], rc.D[v]+rc.Abar[v]+rc.D[v-1]+rc.OB[v])
		if need <= rc.mmax {
			opt[v] = stepFn{m: []int64{need}, lists: [][]entry{{{held: rc.abarb[v], t: rc.uf[v] + rc.ub[v], cand: -2}}}}
		}
	}
	sw := &sweeper{}
	sw.tcap, sw.hcap, sw.keepLast = rc.caps()
	total := 0
	for p := v - 1; p >= rc.from(e); p-- {
		if stoppable && rc.halted() {
			return nil, ErrStopped
		}
		cands := sw.cands[:0]
		cands = append(cands, cand{kind: -1, x: rc.Abar[p], xb: rc.abarb[p],
			need: max(rc.Abar[p]+rc.OF[p], rc.D[p]+rc.Abar[p]+rc.D[p-1]+rc.OB[p]),
			c:    rc.uf[p] + rc.ub[p], sub: &opt[p+1]})
		var fwd int64
		pre := 0.0
		for s2 := p + 1; s2 <= v; s2++ {
			if s2 == p+1 {
				fwd = rc.A[p] + rc.OF[p]
			} else {
				j := s2 - 1
				fwd = max(fwd, rc.A[j-1]+rc.A[j]+rc.OF[j])
			}
			pre += rc.uf[s2-1]
			if fwd > rc.mmax {
				break
			}
			lf := &rc.left[(p-1)*(rc.L+1)+s2-2]
			if len(lf.mem) == 0 {
				continue
			}
			cands = append(cands, cand{kind: int32(s2), x: rc.A[s2-1], xb: rc.ab[s2-1], need: fwd, c: pre, sub: &opt[s2], left: lf})
		}
		sw.cands = cands
		opt[p] = sw.sweep(rc.mmax)
		for _, l := range opt[p].lists {
			total += len(l)
		}
		if total > maxSpineEntries {
			return nil, errSpineTooLarge
		}
	}
	return opt, nil
}

// cand is one candidate of the recurrence at p: x units (xb bytes) held from here on, the
// spine sub from the next stage with m − x, the left sub-chain at m, a constant time c, all
// from the budget need on.
type cand struct {
	kind  int32
	x, xb int64
	need  int64
	c     float64
	sub   *stepFn
	left  *frontier
	// sweep pointers
	si, li int
}

type sweeper struct {
	cands  []cand
	events []event
	buf    []entry
	// tcap and hcap drop options no query can use (rematCosts.caps).
	tcap     float64
	hcap     int64
	keepLast bool
}

// sweep returns the lower envelope of the candidates: at every budget where one of them
// changes, the Pareto set (held ascending, time strictly descending) of all their options.
func (sw *sweeper) sweep(mmax int64) stepFn {
	// The budgets where a candidate changes, as events (budget, candidate), in order: its
	// need, each breakpoint of its spine shifted by what it holds, each of its left sub-chain
	// (a change below its need takes effect at its need).
	ev := sw.events[:0]
	for i := range sw.cands {
		c := &sw.cands[i]
		c.si, c.li = -1, -1
		if len(c.sub.m) == 0 || c.need > mmax {
			continue
		}
		ev = append(ev, event{c.need, int32(i)})
		for _, m := range c.sub.m {
			if m+c.x <= mmax && m+c.x > c.need {
				ev = append(ev, event{m + c.x, int32(i)})
			}
		}
		if c.left != nil {
			for _, m := range c.left.mem {
				if m <= mmax && m > c.need {
					ev = append(ev, event{m, int32(i)})
				}
			}
		}
	}
	sort.Slice(ev, func(i, j int) bool {
		if ev[i].m != ev[j].m {
			return ev[i].m < ev[j].m
		}
		return ev[i].c < ev[j].c
	})
	sw.events = ev
	// Every candidate's options only get better as m grows (its spine's lists are cumulative
	// Pareto sets, its left sub-chain's time does not increase), so the envelope at m is the
	// envelope at the previous budget merged with the options of the candidates that changed
	// there.
	var out stepFn
	var acc []entry
	for i := 0; i < len(ev); {
		m := ev[i].m
		changed := false
		for ; i < len(ev) && ev[i].m == m; i++ {
			if i > 0 && ev[i-1].m == m && ev[i-1].c == ev[i].c {
				continue // the same candidate twice at m
			}
			c := &sw.cands[ev[i].c]
			for c.si+1 < len(c.sub.m) && c.sub.m[c.si+1]+c.x <= m {
				c.si++
			}
			if c.si < 0 {
				continue
			}
			lv := 0.0
			if c.left != nil {
				for c.li+1 < len(c.left.mem) && c.left.mem[c.li+1] <= m {
					c.li++
				}
				if c.li < 0 {
					continue
				}
				lv = c.left.val[c.li]
			}
			buf := sw.buf[:0]
			for ei, en := range c.sub.lists[c.si] {
				if t := c.c + en.t + lv; t <= sw.tcap {
					buf = append(buf, entry{held: c.xb + en.held, t: t, cand: c.kind, sub: int32(c.si), subE: int32(ei)})
				}
			}
			sw.buf = buf
			var kept bool
			acc, kept = mergePareto(acc, buf)
			if kept {
				acc = sw.capHeld(acc)
			}
			changed = changed || kept
		}
		if changed {
			out.m = append(out.m, m)
			out.lists = append(out.lists, acc)
		}
	}
	return out
}

// capHeld drops the options that hold more than hcap: no GPU with two micro-batches or more in
// flight can use them, and a GPU with one wants the fastest option only, the list's last
// (kept when keepLast). The parents only add held bytes and a constant time, so what is
// dropped here could never be chosen above either.
func (sw *sweeper) capHeld(l []entry) []entry {
	i := sort.Search(len(l), func(k int) bool { return l[k].held > sw.hcap })
	if i == len(l) {
		return l
	}
	if sw.keepLast && i < len(l)-1 {
		l[i] = l[len(l)-1]
		return l[:i+1]
	}
	if !sw.keepLast {
		return l[:i]
	}
	return l
}

// event is a budget at which candidate c of a sweep changes.
type event struct {
	m int64
	c int32
}

// mergePareto returns the Pareto set (held ascending, time strictly descending) of two lists
// sorted that way, and whether it keeps an entry of b: a when it does not, else a new slice.
func mergePareto(a, b []entry) ([]entry, bool) {
	i, j := 0, 0
	for ; j < len(b); j++ {
		// Is b[j] dominated by a (an entry with held ≤ and time ≤)?
		for i < len(a) && a[i].held <= b[j].held {
			i++
		}
		if i == 0 || a[i-1].t > b[j].t {
			break
		}
	}
	if j == len(b) {
		return a, false
	}
	out := make([]entry, 0, len(a)+len(b))
	i, j = 0, 0
	for i < len(a) || j < len(b) {
		var en entry
		if j >= len(b) || i < len(a) && (a[i].held < b[j].held || a[i].held == b[j].held && a[i].t <= b[j].t) {
			en = a[i]
			i++
		} else {
			en = b[j]
			j++
		}
		if len(out) == 0 || en.t < out[len(out)-1].t {
			out = append(out, en)
		}
	}
	return out, true
}

// query returns the least time of part [s, e]'s options that fit a GPU with n in flight, with
// the breakpoint and entry that reach it (+Inf, −1, −1 when none fits).
func (rc *rematCosts) query(opt []stepFn, s, e, n int) (float64, int, int) {
	var w int64
	for l := s; l <= e; l++ {
		w += rc.p.Chain.Stage(l).W
	}
	if e == rc.L {
		w += rc.p.Chain.Stage(rc.L + 1).W
	}
	best, bi, be := math.Inf(1), -1, -1
	a := rc.ab[s-1]
	// B = M − W − n·a^{s−1}, in bytes (exact, without overflow: every term is at most 2^60).
	B := rc.p.Memory - w
	if a > 0 && int64(n) > B/a+1 {
		return best, bi, be
	}
	B -= int64(n) * a
	if B < 0 {
		return best, bi, be
	}
	fn := &opt[s]
	for i, m := range fn.m {
		if m > B/rc.q {
			break
		}
		room := B - m*rc.q // for (n−1)·held
		list := fn.lists[i]
		// the last entry whose held fits: time decreases along the list
		j := len(list) - 1
		if n > 1 {
			lim := room / int64(n-1)
			j = sort.Search(len(list), func(k int) bool { return list[k].held > lim }) - 1
		}
		if j >= 0 && list[j].t < best {
			best, bi, be = list[j].t, i, j
		}
	}
	return best, bi, be
}

func (rc *rematCosts) cost(s, e, n int) (float64, float64, bool) {
	i := (s-1)*rc.L + e - 1
	b := rc.b[i*len(rc.ns)+rc.nix[n]]
	return rc.f[i], b, !math.IsInf(b, 1)
}

// sequence rebuilds the part's fastest sequence that fits (the spine table of e built again).
func (rc *rematCosts) sequence(s, e, n int) (schedule.Sequence, error) {
	if rc.lower {
		panic("pipeline: the lower table has no sequences")
	}
	rc.mu.Lock()
	opt, ok := rc.spines[e]
	if !ok {
		var err error
		if opt, err = rc.spineStop(e, false); err != nil {
			rc.mu.Unlock()
			return nil, err
		}
		rc.spines[e] = opt
	}
	rc.mu.Unlock()
	_, bi, be := rc.query(opt, s, e, n)
	if bi < 0 {
		return nil, fmt.Errorf("pipeline: internal error: part [%d–%d] with %d in flight has no sequence", s, e, n)
	}
	var seq schedule.Sequence
	rc.rebuild(&seq, opt, s, e, bi, be)
	return seq, nil
}

// rebuild appends the spine sequence of option (bi, be) of Opt_p.
func (rc *rematCosts) rebuild(seq *schedule.Sequence, opt []stepFn, p, e, bi, be int) {
	en := opt[p].lists[bi][be]
	m := opt[p].m[bi]
	switch {
	case en.cand == -2:
		v, _ := rc.end(e) // the stand-in for the next GPU too: F_all sends a^e, B receives δ^e
		*seq = append(*seq, schedule.Op{Kind: schedule.Fall, Stage: v}, schedule.Op{Kind: schedule.B, Stage: v})
	case en.cand == -1:
		*seq = append(*seq, schedule.Op{Kind: schedule.Fall, Stage: p})
		rc.rebuild(seq, opt, p+1, e, int(en.sub), int(en.subE))
		*seq = append(*seq, schedule.Op{Kind: schedule.B, Stage: p})
	default:
		s2 := int(en.cand)
		*seq = append(*seq, schedule.Op{Kind: schedule.Fck, Stage: p})
		for j := p + 1; j < s2; j++ {
			*seq = append(*seq, schedule.Op{Kind: schedule.Fn, Stage: j})
		}
		rc.rebuild(seq, opt, s2, e, int(en.sub), int(en.subE))
		if rc.exact != nil {
			*seq = append(*seq, rc.exact.SubSequence(p, s2-1, m)...)
		} else {
			*seq = append(*seq, rc.slots.SubSequence(p, s2-1, int(m))...)
		}
	}
}
