package dp

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify/combined"
)

// Inner selects how the combined DP minimizes over a segment's persistent backward sequences.
type Inner uint8

const (
	// InnerAuto is InnerExact in exact mode and InnerRestricted with slots.
	InnerAuto Inner = iota
	// InnerExact: rotor's recursion extended by the backlog of prefetches (the Pareto set of
	// time and leftover backlog of every persistent sequence): the exact optimum of the class
	// (SPEC §6). Exponential in the worst case: small chains.
	InnerExact
	// InnerRestricted: the sequence is C_MP's best with the whole backlog reserved for the
	// whole segment (no idle inside it): a restriction of the class, so its value is an upper
	// bound on the class optimum (SPEC §6, "safe restriction").
	InnerRestricted
)

func (i Inner) String() string {
	switch i {
	case InnerExact:
		return "exact"
	case InnerRestricted:
		return "restricted"
	}
	return "auto"
}

// CombinedOptions control Combined.
type CombinedOptions struct {
	// Slots is the number of memory units the budget is divided into (0: DefaultSlots); sizes
	// are rounded up, the budget and the link's capacity during each operation down.
	Slots int
	// Exact uses 1-byte units: exact for integer sizes when β·u is a whole number of bytes for
	// every operation (else the link's capacity is rounded down and the result says so).
	Exact bool
	// LinkSlots, when positive and below Slots, rounds the queued offload and prefetch
	// backlog of each state up to budget/LinkSlots bytes (a multiple of the unit): a coarser
	// grid for the link than for memory, which the state space shrinks with (a restriction:
	// every plan still fits and the value stays an upper bound).
	LinkSlots int
	// Inner is the minimization over persistent backward sequences.
	Inner Inner
	// NoOffload keeps every input (the class is then C_MP's); NoRecompute makes every segment
	// F_all^s (only offloading).
	NoOffload, NoRecompute bool
	// FreeTurn optimizes verify/combined.FluidFreeTurn's model: no idle at the turn, a
	// relaxation of strict timing whose optimum bounds the strict schedules of the class.
	FreeTurn bool
	// MaxStates caps the states of the search (0: DefaultMaxCombinedStates); above it the DP
	// stops with an error suggesting fewer slots.
	MaxStates int
	// Incumbent, when positive, is a makespan already reached (certify: the fluid makespan of
	// a plan from another grid): states that cannot beat it are pruned, and when no plan of
	// the grid has a value below it the result is not Feasible and says NoBetter.
	Incumbent float64
	// Deadline, when set, stops the search with ErrDeadline once it has passed: the slotted
	// C_MP table is stopped between its blocks, the exact inner table every few thousand
	// entries, the search every pofoCheckEvery states (a level of a long chain holds
	// millions): the caller's time limit holds within milliseconds.
	Deadline time.Time
	// MaxMemory caps the memory of the DP's tables (0: DefaultMaxMemory): the slotted C_MP
	// table, sized before it is built (*TooLargeError), and the exact inner table and the
	// states, counted as they grow (a *TooLargeError saying how far they got).
	MaxMemory int64
	// RequireExactLink returns at once, with ExactLink false and nothing searched, when β·u
	// is not a whole number of units for every operation: for callers that use the result
	// only when the link is exact (the class bound).
	RequireExactLink bool
}

// ErrTooManyStates reports that the combined DP outgrew CombinedOptions.MaxStates.
var ErrTooManyStates = errors.New("dp: combined: too many states")

// ErrDeadline reports that the combined DP passed CombinedOptions.Deadline.
var ErrDeadline = errors.New("dp: combined: deadline passed")

// DefaultMaxCombinedStates is the default cap on the combined DP's states (about 100 bytes
// each), and of the exact inner table's points.
const DefaultMaxCombinedStates = 20_000_000

// CombinedResult is the combined DP's answer.
type CombinedResult struct {
	// Feasible is false when no plan of the (discretized) class fits.
	Feasible bool
	Plan     *schedule.CombinedPlan
	// Value is the DP's makespan in the fluid model of its discretized chain (seconds); Fluid
	// is verify/combined.Fluid's exact evaluation of Plan on the real chain, Fluid ≤ Value
	// (equal in exact mode with an exact link).
	Value float64
	Fluid combined.FluidResult
	// SlotSize is the unit in bytes (1: exact); ExactLink says β·u was a whole number of units
	// for every operation; Inner the minimization used (never InnerAuto).
	SlotSize  int64
	ExactLink bool
	Inner     Inner
	// States is the number of states the search kept, Created the number it made (before
	// dominated ones were dropped).
	States, Created int
	// NoBetter: no plan of the grid has a value below CombinedOptions.Incumbent.
	NoBetter bool
}

// Exact says the result is the exact optimum of the class: 1-byte units, an exact link and
// the exact inner minimization.
func (r CombinedResult) Exact() bool { return r.SlotSize == 1 && r.ExactLink && r.Inner == InnerExact }

// cstate is a state of the combined DP at the start of a level (SPEC §6): the stored input
// is a^{s-1} (full false) or ā^{s-1}; A units kept by the enclosing levels; P units queued
// for offload and still on the GPU; D units of enclosing inputs that must arrive during this
// level's backward operations and below; g the time spent so far by the enclosing levels
// (their forward steps and backward parts, which depend only on what is above).
type cstate struct {
	A, P, D int64
	g       float64
	full    bool
	// how it was reached: the parent state (level start pS, index pI) and its choice.
	pS, pI int32
	all    bool
	off    bool
	pt     int32 // point of the inner Pareto set (InnerExact), -1 otherwise
	m, qi  int64 // the inner call's room and backlog
}

// Combined is the dynamic program of SPEC §6 over the combined class (003's POFO,
// reconstructed): top-level segments, each F_all^s alone or F_ck^s F_∅^{s+1} … F_∅^e followed,
// after the rest of the chain, by a persistent sequence of s..e; each segment's input (and the
// loss stage's) kept or offloaded; in the fluid timing of SPEC §6. It searches forward over
// the levels: state (s, A, P, D, stored input), each choice of segment × keep or offload ×
// backward sequence running its forward steps with the first-in first-out rule and its
// backward part backwards in time from the backlog D, and passing the rest down. States of
// one level with no more kept, queued and backlogged units and no more time than another are
// dropped (the remaining cost is non-decreasing in each), as are unreachable ones (the search
// only creates reachable states).
//
// Memory is in units of q bytes: 1 in exact mode, budget/Slots otherwise, sizes rounded up,
// the budget and the link's capacity per operation rounded down, so that a plan the DP
// accepts fits in bytes and its fluid makespan in bytes is at most the DP's value. The plan
// is re-evaluated by verify/combined.Fluid on the real chain; in exact mode any difference is
// an internal error.
func Combined(c *instances.Chain, budget int64, beta float64, opt CombinedOptions) (CombinedResult, error) {
	if err := c.Validate(); err != nil {
		return CombinedResult{}, err
	}
	if budget < 0 {
		return CombinedResult{}, fmt.Errorf("dp: negative budget %d", budget)
	}
	if !(beta > 0) || math.IsInf(beta, 0) {
		return CombinedResult{}, fmt.Errorf("dp: bandwidth β = %g must be positive and finite", beta)
	}
	if opt.Slots < 0 {
		return CombinedResult{}, fmt.Errorf("dp: slots must be positive, got %d", opt.Slots)
	}
	limit := opt.MaxStates
	if limit <= 0 {
		limit = DefaultMaxCombinedStates
	}
	pc, tab, err := newPofoChain(c, budget, beta, opt)
	if errors.Is(err, ErrStopped) {
		return CombinedResult{}, fmt.Errorf("%w while its C_MP table was built", ErrDeadline)
	}
	if err != nil {
		return CombinedResult{}, err
	}
	if opt.RequireExactLink && !pc.exactLink {
		return CombinedResult{SlotSize: pc.q}, nil
	}
	inr := opt.Inner
	if inr == InnerAuto {
		inr = InnerRestricted
		if opt.Exact {
			inr = InnerExact
		}
	}
	var in *inner
	if inr == InnerExact || tab == nil {
		in = newInner(pc, limit)
		in.deadline, in.maxBytes = opt.Deadline, memoryLimit(opt.MaxMemory)
		if tab == nil {
			tab = innerTable{in}
		}
	}
	d := &pofoDP{c: pc, tab: tab, in: in, inner: inr, opt: opt, limit: limit, maxBytes: memoryLimit(opt.MaxMemory)}
	if pr, ok := tab.(persistentRows); ok && !opt.FreeTurn {
		d.initVM(pr.p)
	}
	res := CombinedResult{SlotSize: pc.q, ExactLink: pc.exactLink, Inner: inr}
	if pc.M < pc.a[0]+pc.d[pc.n] {
		return res, nil
	}
	plan, value, ok, err := d.run()
	if err != nil {
		return res, err
	}
	res.States, res.Created = d.states, d.pushed
	if !ok {
		res.NoBetter = d.opt.Incumbent > 0
		return res, nil
	}
	eval := combined.Fluid
	if opt.FreeTurn {
		eval = combined.FluidFreeTurn
	}
	fl, err := eval(c, budget, beta, plan)
	if err != nil {
		return res, fmt.Errorf("dp: internal error: the combined plan does not replay: %w", err)
	}
	// Among equal makespans prefer fewer transfers: keep an input instead of offloading it
	// wherever that costs nothing in the fluid model (ties are common, and every transfer
	// can only lengthen the strict schedule).
	for k := 0; k <= len(plan.Segments) && fl.Feasible; k++ {
		if k < len(plan.Segments) && !plan.Segments[k].Offload || k == len(plan.Segments) && !plan.OffloadLoss {
			continue
		}
		try := *plan
		try.Segments = append([]schedule.CombinedSegment(nil), plan.Segments...)
		if k < len(plan.Segments) {
			try.Segments[k].Offload = false
		} else {
			try.OffloadLoss = false
		}
		if f2, err := eval(c, budget, beta, &try); err == nil && f2.Feasible && f2.Exact.Cmp(fl.Exact) <= 0 {
			plan, fl = &try, f2
		}
	}
	if !fl.Feasible {
		return res, fmt.Errorf("dp: internal error: the combined plan %v does not fit the fluid model: %s", plan, fl.Reason)
	}
	if fl.Makespan > value*(1+1e-9)+1e-12 {
		return res, fmt.Errorf("dp: internal error: the fluid makespan %g of the plan is above the DP's %g", fl.Makespan, value)
	}
	if res.Exact() && math.Abs(fl.Makespan-value) > 1e-9*math.Max(1, value) {
		return res, fmt.Errorf("dp: internal error: exact DP value %g, fluid replay %g", value, fl.Makespan)
	}
	res.Feasible, res.Plan, res.Value, res.Fluid = true, plan, value, fl
	return res, nil
}

// newPofoChain discretizes c. With slots it also fills rotor's table (Persistent) at the same
// slot size for the restricted inner minimization; in exact mode the table is nil (inner's).
func newPofoChain(c *instances.Chain, budget int64, beta float64, opt CombinedOptions) (*pofoChain, persistentTable, error) {
	n := c.Len()
	pc := &pofoChain{n: n}
	var tab persistentTable
	var buildTable func() error // the slotted C_MP table, built once the link is known
	if opt.Exact {
		bc := newBytesChain(c)
		pc.q, pc.M = 1, budget
		pc.uf, pc.ub, pc.a, pc.abar, pc.d, pc.of, pc.ob = bc.uf, bc.ub, bc.a, bc.abar, bc.d, bc.of, bc.ob
	} else {
		// The table's budget is budget + ω_a^0 so that it covers every room up to the whole
		// budget in slots (a level's input may be smaller than a^0, which can leave), plus
		// what the link can move during the forward pass when the virtual-memory bound
		// (vmBound) reads it; the slots grow with it so that the slot size stays budget/S.
		top := budget + c.A0
		slots := cmp.Or(opt.Slots, DefaultSlots)
		if !opt.FreeTurn && opt.Inner != InnerExact {
			var fwd float64
			for l := 1; l <= n; l++ {
				fwd += c.Stage(l).UF
			}
			extra := math.Min(math.Ceil(beta*fwd), float64(4*top))
			slots = int(math.Ceil(float64(slots) * (float64(top) + extra) / float64(top)))
			top += int64(extra)
		}
		dopt := Options{Slots: slots, MaxMemory: opt.MaxMemory}
		sc, _, err := discretize(c, top, dopt)
		if err != nil {
			return nil, nil, err
		}
		pc.q, pc.M = sc.q, budget/sc.q
		pc.uf, pc.ub = sc.uf, sc.ub
		conv := func(v []int) []int64 {
			out := make([]int64, len(v))
			for i, x := range v {
				out[i] = int64(x)
			}
			return out
		}
		pc.a, pc.abar, pc.d, pc.of, pc.ob = conv(sc.a), conv(sc.abar), conv(sc.d), conv(sc.of), conv(sc.ob)
		if opt.Inner != InnerExact {
			buildTable = func() error {
				if !opt.Deadline.IsZero() {
					stop, release := deadlineStop(opt.Deadline)
					defer release()
					dopt.Stop = stop
				}
				p, err := NewPersistent(c, top, dopt)
				if tl := (*TooLargeError)(nil); errors.As(err, &tl) && tl.slotted {
					return pofoTooLarge(tl, cmp.Or(opt.Slots, DefaultSlots), slots, n)
				}
				if err != nil {
					return err
				}
				tab = persistentRows{p}
				return nil
			}
		}
	}
	pc.beta = beta / float64(pc.q)
	pc.perUnit = float64(pc.q) / beta
	pc.cf, pc.cb = make([]int64, n+1), make([]int64, n+1)
	pc.exactLink = true
	capOf := func(u float64) int64 {
		x := beta * u / float64(pc.q)
		f := math.Floor(x)
		if f != x || f > 1<<52 {
			pc.exactLink = false
		}
		return int64(math.Min(f, 1<<52))
	}
	for l := 1; l <= n; l++ {
		pc.cf[l], pc.cb[l] = capOf(pc.uf[l]), capOf(pc.ub[l])
	}
	if buildTable != nil && (pc.exactLink || !opt.RequireExactLink) {
		if err := buildTable(); err != nil {
			return nil, nil, err
		}
	}
	return pc, tab, nil
}

// pofoNoBounds switches the incumbent and the lower bounds off (tests compare the searches).
var pofoNoBounds bool

type pofoDP struct {
	c     *pofoChain
	tab   persistentTable
	in    *inner
	inner Inner
	opt   CombinedOptions
	limit int
	// maxBytes caps the states' and the inner table's estimated memory.
	maxBytes int64
	layers   [][]cstate // by level start s = 1..n
	index    []map[ckey]int32
	packed   []*stateIndex // index by packed key when every unit count is below 2^20
	// freeMemo holds free's values, keyed by (A, s in D's place, full).
	freeMemo map[ckey]float64
	freeArr  []float64   // the same as an array over (s, A, full) when the budget has few units
	vm       [][]float64 // initVM's suffix minima, nil when lower uses free
	fwdCap   []int64     // Σ_{ℓ ≥ s} cf[ℓ]
	remF     []float64   // Σ_{ℓ ≥ s} u_f^ℓ
	rem      []float64   // Σ_{ℓ ≥ s} (u_f^ℓ + u_b^ℓ): what the levels from s on take at least
	ub       float64     // an upper bound on the optimum (a plan of the searched class)
	grain    int64       // P and D are rounded up to multiples of grain units
	states   int         // kept
	pushed   int         // created
}

// fwd runs one forward operation with the first-in first-out rule: need units besides the
// queue P; an excess waits for the link to send it (impossible beyond P). It returns the idle
// units and the queue once the operation has ended (add units joining the queue during it).
func fwd(need, M, P, add, cap int64) (idle, out int64, ok bool) {
	if need > M {
		return 0, 0, false
	}
	if ex := need + P - M; ex > 0 {
		idle, P = ex, P-ex
	}
	return idle, max(0, P+add-cap), true
}

// push adds a state to level s unless it cannot beat the incumbent upper bound (its time
// plus every remaining stage's forward and backward once) or a state with the same units
// and input already has no more time.
func (d *pofoDP) push(s int, st cstate) {
	d.pushed++
	if g := d.grain; g > 1 {
		st.P = (st.P + g - 1) / g * g
		st.D = (st.D + g - 1) / g * g
	}
	if !pofoNoBounds && (st.g+d.rem[s] > d.ub || st.g+d.lower(s, st.A, st.P, st.D, st.full) > d.ub) {
		return
	}
	if d.packed != nil {
		k := uint64(st.A)<<42 | uint64(st.P)<<22 | uint64(st.D)<<2
		if st.full {
			k |= 1
		}
		if i, ok := d.packed[s].get(k); ok {
			if st.g < d.layers[s][i].g {
				d.layers[s][i] = st
			}
			return
		}
		d.packed[s].put(k, int32(len(d.layers[s])))
		d.layers[s] = append(d.layers[s], st)
		return
	}
	k := ckey{st.A, st.P, st.D, st.full}
	if i, ok := d.index[s][k]; ok {
		if st.g < d.layers[s][i].g {
			d.layers[s][i] = st
		}
		return
	}
	d.index[s][k] = int32(len(d.layers[s]))
	d.layers[s] = append(d.layers[s], st)
}

// lower is a lower bound on what the levels from s on take with A units kept above, P
// queued for offload and the stored input ā^{s-1} (full) or a^{s-1}: initVM's bound when the
// table allows it, else free.
//
// With the fluid turn (not FreeTurn) there is a second bound: the P queued bytes leave before
// the turn and the D backlogged ones arrive after it, so the levels take at least
// max(Σ u_f, P·q/β) + max(Σ u_b, D·q/β) over ℓ ≥ s.
func (d *pofoDP) lower(s int, A, P, D int64, full bool) float64 {
	if d.vm == nil {
		return d.free(s, A, full)
	}
	c := d.c
	link := math.Max(d.remF[s], float64(P)*c.perUnit) + math.Max(d.rem[s]-d.remF[s], float64(D)*c.perUnit)
	xs := c.a[s-1]
	if full {
		xs = c.abar[s-1]
	}
	m0 := c.M - A - xs + d.fwdCap[s] - P
	switch {
	case m0 < 0:
		// Only with a coarse link grid: P rounded up can exceed what the GPU holds, and
		// the forward steps idle until it fits — at least −m0 units' worth.
		return max(link, d.vm[s][0]-float64(m0)*c.perUnit)
	case m0 >= int64(len(d.vm[s])):
		return link
	}
	return max(link, d.vm[s][m0]-float64(m0)*c.perUnit)
}

// initVM fills the virtual-memory bound. The operations of the levels from s on are a
// persistent sequence of stages s..n (their forward steps, F_all^n B^n, their backward
// parts), and at any instant what they hold on the GPU plus what of theirs is away is at most
// M − A + V, V being their bytes sent so far: at most the link's capacity during their
// forward steps, Σ_{ℓ ≥ s} cf[ℓ] units, plus β·I for an idle I, minus the P queued bytes of
// the levels above, which go first. So they take at least
// min_{I ≥ 0} I + C_MP(s, n, M − A − |x| + Σ cf − P + β·I), which is
// vm[s][m0] − m0·q/β with vm[s][m] = min_{m' ≥ m} C_MP(s, n, m') + m'·q/β (suffix minima of
// rotor's row, read once). Offloads stop at the turn in the fluid model; with FreeTurn the
// queued bytes vanish there and the bound does not hold (free is used).
func (d *pofoDP) initVM(p *Persistent) {
	c := d.c
	n := c.n
	d.fwdCap = make([]int64, n+2)
	d.remF = make([]float64, n+2)
	for s := n; s >= 1; s-- {
		d.fwdCap[s] = d.fwdCap[s+1] + c.cf[s]
		d.remF[s] = d.remF[s+1] + c.uf[s]
	}
	d.vm = make([][]float64, n+1)
	r := persistentRows{p}
	for s := 1; s <= n; s++ {
		row := make([]float64, p.m+1)
		best := math.Inf(1)
		for m := p.m; m >= 0; m-- {
			best = math.Min(best, r.value(s, n, int64(m))+float64(m)*c.perUnit)
			row[m] = best
		}
		d.vm[s] = row
	}
}

// free is a lower bound on what the levels from s on take with A units kept above and the
// stored input ā^{s-1} (full) or a^{s-1}: their optimum with an infinitely fast link (every
// offload and prefetch free, so nothing queued or backlogged, and no input kept), which the
// fluid model's monotonicity in β, P and D makes admissible. Memoized; +Inf when nothing
// fits.
func (d *pofoDP) free(s int, A int64, full bool) (best float64) {
	k := ckey{A: A, D: int64(s), full: full}
	fi := -1
	if d.freeArr != nil && A >= 0 && A <= d.c.M {
		fi = (s*(int(d.c.M)+1)+int(A))*2 + b2i(full)
		if v := d.freeArr[fi]; !math.IsNaN(v) {
			return v
		}
	} else if v, ok := d.freeMemo[k]; ok {
		return v
	}
	defer func() {
		if fi >= 0 {
			d.freeArr[fi] = best
		} else {
			d.freeMemo[k] = best
		}
	}()
	c := d.c
	n := c.n
	xs := c.a[s-1]
	if full {
		xs = c.abar[s-1]
	}
	room := c.M - A - xs
	kept := int64(0)
	if d.opt.NoOffload || xs == 0 {
		kept = xs
	}
	best = math.Inf(1)
	if s == n {
		if A+xs+c.abar[n]+c.of[n]+c.d[n] <= c.M && c.abar[n]+c.d[n]+c.d[n-1]+c.ob[n] <= room {
			best = c.uf[n] + c.ub[n]
		}
		return best
	}
	if A+xs+c.abar[s]+c.of[s]+c.d[n] <= c.M && c.abar[s]+c.d[s]+c.d[s-1]+c.ob[s] <= room {
		best = c.uf[s] + c.ub[s] + d.free(s+1, A+kept, true)
	}
	if !d.opt.NoRecompute && A+xs+c.a[s]+c.of[s]+c.d[n] <= c.M {
		pre := c.uf[s]
		for e := s; e < n; e++ {
			if e > s {
				if A+kept+c.a[e-1]+c.a[e]+c.of[e]+c.d[n] > c.M {
					break
				}
				pre += c.uf[e]
			}
			if pre >= best {
				break
			}
			v := d.tab.value(s, e, room)
			if math.IsInf(v, 1) || pre+v >= best {
				continue
			}
			best = min(best, pre+v+d.free(e+1, A+kept, false))
		}
	}
	return best
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

type ckey struct {
	A, P, D int64
	full    bool
}

// prune keeps, among the states of one level, those no other dominates: same stored input,
// A, P, D and time all no larger. States are taken by increasing time; one is dominated when
// a kept one has A, P and D no larger, which a 2-D Fenwick tree over (A, P) holding the least
// D answers in O(log²) (O(N log² N) for the level).
func prune(states []cstate) []cstate {
	order := make([]int32, len(states))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(x, y int32) int {
		a, b := &states[x], &states[y]
		switch {
		case a.g != b.g:
			return cmp.Compare(a.g, b.g)
		case a.A != b.A:
			return cmp.Compare(a.A, b.A)
		case a.P != b.P:
			return cmp.Compare(a.P, b.P)
		}
		return cmp.Compare(a.D, b.D)
	})
	as, ps := make([]int64, 0, len(states)), make([]int64, 0, len(states))
	for i := range states {
		as, ps = append(as, states[i].A), append(ps, states[i].P)
	}
	as, ps = uniq(as), uniq(ps)
	var trees [2]*minTree2
	out := make([]cstate, 0, len(states)/4)
	for _, x := range order {
		st := &states[x]
		k := 0
		if st.full {
			k = 1
		}
		if trees[k] == nil {
			trees[k] = newMinTree2(len(as), len(ps))
		}
		i, _ := slices.BinarySearch(as, st.A)
		j, _ := slices.BinarySearch(ps, st.P)
		if trees[k].min(i, j) <= st.D {
			continue
		}
		trees[k].lower(i, j, st.D)
		out = append(out, *st)
	}
	return out
}

// uniq sorts v and drops repeats.
func uniq(v []int64) []int64 {
	slices.Sort(v)
	out := v[:0]
	for i, x := range v {
		if i == 0 || x != v[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// minTree2 is a 2-D Fenwick tree of prefix minima: lower(i, j, v) sets cell (i, j) to at
// most v; min(i, j) is the least value over cells (i', j') with i' ≤ i and j' ≤ j.
type minTree2 struct {
	n, m int
	t    []int64
}

func newMinTree2(n, m int) *minTree2 {
	t := &minTree2{n: n, m: m, t: make([]int64, n*m)}
	for i := range t.t {
		t.t[i] = math.MaxInt64
	}
	return t
}

func (t *minTree2) lower(i, j int, v int64) {
	for x := i + 1; x <= t.n; x += x & -x {
		row := t.t[(x-1)*t.m:]
		for y := j + 1; y <= t.m; y += y & -y {
			if v < row[y-1] {
				row[y-1] = v
			}
		}
	}
}

func (t *minTree2) min(i, j int) int64 {
	v := int64(math.MaxInt64)
	for x := i + 1; x > 0; x -= x & -x {
		row := t.t[(x-1)*t.m:]
		for y := j + 1; y > 0; y -= y & -y {
			v = min(v, row[y-1])
		}
	}
	return v
}

// pofoCheckEvery is how many states of a level the search expands between two looks at the
// deadline and the memory (milliseconds of work; a level can hold millions).
const pofoCheckEvery = 1 << 10

// cstateBytes estimates the memory of one kept state (its fields and its share of the level's
// slice and index).
const cstateBytes = 112

// check returns ErrDeadline once the deadline has passed and a *TooLargeError once the states
// and the inner table take more than the memory limit, at level s.
func (d *pofoDP) check(s int) error {
	if passed(d.opt.Deadline) {
		return fmt.Errorf("%w at level %d of %d", ErrDeadline, s, d.c.n)
	}
	if err := d.innerErr(s); err != nil {
		return err
	}
	if b := int64(d.states+d.pending(s)) * cstateBytes; b > d.maxBytes {
		return &TooLargeError{Table: fmt.Sprintf("combined DP's states (%d at level %d of %d)", d.states+d.pending(s), s, d.c.n),
			Bytes: b, Limit: d.maxBytes, AtLeast: true, Hint: "use fewer --slots or a coarser --link-slots, or raise --max-memory"}
	}
	return nil
}

// pending counts the states created for the levels after s, not yet pruned.
func (d *pofoDP) pending(s int) int {
	k := 0
	for l := s + 1; l < len(d.layers); l++ {
		k += len(d.layers[l])
	}
	return k
}

// innerErr says why the exact inner table stopped (the deadline, the memory), nil while it
// runs.
func (d *pofoDP) innerErr(s int) error {
	switch {
	case d.in == nil:
		return nil
	case d.in.stopped:
		return fmt.Errorf("%w at level %d of %d, while the exact inner table was filled", ErrDeadline, s, d.c.n)
	case d.in.tooBig:
		return &TooLargeError{Table: fmt.Sprintf("combined DP's exact inner table (%d entries, %d points)", len(d.in.memo), d.in.size),
			Bytes: d.in.innerBytes(), Limit: d.in.maxBytes, AtLeast: true,
			Hint: "use --slots N (the restricted inner minimization) or raise --max-memory"}
	}
	return nil
}

// run searches the levels and rebuilds the best plan.
func (d *pofoDP) run() (*schedule.CombinedPlan, float64, bool, error) {
	c := d.c
	n := c.n
	d.layers = make([][]cstate, n+1)
	d.index = make([]map[ckey]int32, n+1)
	if c.M < 1<<20 {
		d.packed = make([]*stateIndex, n+1)
		for s := range d.packed {
			d.packed[s] = newStateIndex()
		}
	} else {
		for s := range d.index {
			d.index[s] = map[ckey]int32{}
		}
	}
	d.freeMemo = map[ckey]float64{}
	if c.M < 1<<16 {
		d.freeArr = make([]float64, (n+1)*(int(c.M)+1)*2)
		for i := range d.freeArr {
			d.freeArr[i] = math.NaN()
		}
	}
	d.grain = 1
	if slots := cmp.Or(d.opt.Slots, DefaultSlots); !d.opt.Exact && d.opt.LinkSlots > 0 && d.opt.LinkSlots < slots {
		d.grain = int64((slots + d.opt.LinkSlots - 1) / d.opt.LinkSlots)
	}
	d.rem = make([]float64, n+2)
	for s := n; s >= 1; s-- {
		d.rem[s] = d.rem[s+1] + c.uf[s] + c.ub[s]
	}
	d.ub = math.Inf(1)
	if v := d.tab.value(1, n, c.M-c.a[0]); !math.IsInf(v, 1) && !d.opt.NoRecompute {
		// Keeping every input is C_MP, a plan of the class: its value bounds the optimum.
		d.ub = v * (1 + 1e-9)
	}
	if err := d.innerErr(1); err != nil { // the exact inner table filled for the whole chain
		return nil, 0, false, err
	}
	if d.opt.Incumbent > 0 {
		d.ub = min(d.ub, d.opt.Incumbent)
	}
	d.push(1, cstate{pS: -1, pI: -1})
	bestG := math.Inf(1)
	if d.opt.Incumbent > 0 {
		bestG = d.opt.Incumbent // only a plan below it is an answer
	}
	bestI := -1
	var bestOff bool
	offs := []bool{false, true}
	if d.opt.NoOffload {
		offs = offs[:1]
	}
	for s := 1; s <= n; s++ {
		d.index[s] = nil
		if d.packed != nil {
			d.packed[s] = nil
		}
		d.layers[s] = prune(d.layers[s])
		d.states += len(d.layers[s])
		if d.states > d.limit {
			return nil, 0, false, fmt.Errorf("%w: more than %d; use fewer slots", ErrTooManyStates, d.limit)
		}
		for i, st := range d.layers[s] {
			if i%pofoCheckEvery == 0 {
				if err := d.check(s); err != nil {
					return nil, 0, false, err
				}
			}
			xs := c.a[s-1]
			if st.full {
				xs = c.abar[s-1]
			}
			room := c.M - st.A - xs // beside the kept inputs and this level's own input
			for _, off := range offs {
				if off && xs == 0 {
					continue // nothing to free
				}
				kept, moved := xs, int64(0)
				if off {
					kept, moved = 0, xs
				}
				if s == n {
					// The loss stage: F_all^{L+1}, the turn, B^{L+1}.
					i1, p1, ok := fwd(st.A+xs+c.abar[n]+c.of[n]+c.d[n], c.M, st.P, moved, c.cf[n])
					if !ok {
						continue
					}
					i2, q, ok := back(c.abar[n]+c.d[n]+c.d[n-1]+c.ob[n], room, st.D+moved, c.cb[n])
					if !ok {
						continue
					}
					turn := p1 + q
					if d.opt.FreeTurn {
						turn = 0
					}
					g := st.g + c.uf[n] + c.ub[n] + float64(i1+i2+turn)*c.perUnit
					if g < bestG {
						bestG, bestI, bestOff = g, i, off
					}
					continue
				}
				// F_all^s alone.
				if i1, p1, ok := fwd(st.A+xs+c.abar[s]+c.of[s]+c.d[n], c.M, st.P, moved, c.cf[s]); ok {
					if i2, q, ok := back(c.abar[s]+c.d[s]+c.d[s-1]+c.ob[s], room, st.D, c.cb[s]); ok {
						d.push(s+1, cstate{A: st.A + kept, P: p1, D: q + moved, full: true,
							g: st.g + c.uf[s] + c.ub[s] + float64(i1+i2)*c.perUnit, pS: int32(s), pI: int32(i), all: true, off: off, pt: -1})
					}
				}
				if d.opt.NoRecompute {
					continue
				}
				// F_ck^s F_∅^{s+1} … F_∅^e, then a persistent sequence of s..e.
				idle, P, ok := fwd(st.A+xs+c.a[s]+c.of[s]+c.d[n], c.M, st.P, moved, c.cf[s])
				pre := c.uf[s]
				for e := s; ok && e < n; e++ {
					if e > s {
						var i1 int64
						i1, P, ok = fwd(st.A+kept+c.a[e-1]+c.a[e]+c.of[e]+c.d[n], c.M, P, 0, c.cf[e])
						if !ok {
							break
						}
						idle += i1
						pre += c.uf[e]
					}
					// σ runs every stage of s..e forward and backward at least once, so the
					// child takes at least g + pre + Σ_{ℓ ≥ s}(u_f + u_b), which only grows with e.
					if !pofoNoBounds && st.g+pre+d.rem[s] > d.ub {
						break
					}
					base := st.g + pre + float64(idle)*c.perUnit
					next := cstate{A: st.A + kept, P: P, pS: int32(s), pI: int32(i), off: off, pt: -1}
					if d.inner == InnerExact {
						pts := d.in.points(s, e, room, st.D)
						if err := d.innerErr(s); err != nil {
							return nil, 0, false, err
						}
						if d.in.over {
							return nil, 0, false, fmt.Errorf("%w: the exact inner table holds more than %d points; use the restricted inner minimization or fewer slots", ErrTooManyStates, d.limit)
						}
						for k, p := range pts {
							nx := next
							nx.D, nx.g, nx.pt, nx.m, nx.qi = p.qout+moved, base+p.time, int32(k), room, st.D
							d.push(e+1, nx)
						}
						continue
					}
					m := room - st.D
					v := d.tab.value(s, e, m)
					if math.IsInf(v, 1) {
						continue
					}
					moves := int64(math.Min(math.Floor(v*c.beta), 1<<52))
					next.D, next.g, next.m, next.qi = max(0, st.D-moves)+moved, base+v, m, 0
					d.push(e+1, next)
				}
			}
		}
	}
	// The inner table may have stopped after the last check: its entries since are incomplete.
	if err := d.innerErr(n); err != nil {
		return nil, 0, false, err
	}
	if bestI < 0 {
		return nil, 0, false, nil
	}
	// Rebuild: walk the parents from the loss level's state.
	plan := &schedule.CombinedPlan{OffloadLoss: bestOff}
	s, i := n, bestI
	for s > 1 {
		st := d.layers[s][i]
		ps := int(st.pS)
		g := schedule.CombinedSegment{Start: ps, End: s - 1, All: st.all, Offload: st.off}
		if !st.all {
			if st.pt >= 0 {
				d.in.appendSeq(&g.Backward, ps, s-1, st.m, st.qi, int(st.pt))
			} else {
				d.tab.appendSeq(&g.Backward, ps, s-1, st.m)
			}
		}
		plan.Segments = append([]schedule.CombinedSegment{g}, plan.Segments...)
		s, i = ps, int(st.pI)
	}
	return plan, bestG, true, nil
}

// pofoTooLarge restates a refusal of pofo's inner C_MP table in the caller's slots: that
// table has the caller's slots widened by what the link can move during the forward pass
// (up to 5×; user slots → inner slots = ⌈user·f⌉), so the most inner slots that fit, k, are
// ⌊k·user/inner⌋ of the caller's (⌈⌊k·user/inner⌋·f⌉ ≤ k since inner ≥ user·f). Without
// it, --slots 100 was refused as "C_MP with 500 slots; use --slots 127 or fewer".
func pofoTooLarge(tl *TooLargeError, user, inner, n int) *TooLargeError {
	e := *tl
	e.Table = fmt.Sprintf("C_MP (persistent) inside pofo with %d slots (--slots %d, widened to cover what the link moves during the forward pass) on %d stages", inner, user, n)
	e.Slots = int(int64(tl.Slots) * int64(user) / int64(inner))
	e.Hint = slotsHint(e.Slots, "another algorithm")
	return &e
}
