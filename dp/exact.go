package dp

import (
	"fmt"
	"math"
	"runtime"
	"sync/atomic"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
)

// DefaultMaxBreakpoints caps the breakpoints one sub-chain's frontier may hold in the exact
// tables (ExactOptions.MaxBreakpoints = 0).
const DefaultMaxBreakpoints = 1 << 16

// DefaultMaxTotal caps the breakpoints of a whole exact table (20 bytes each: about 1.3 GiB).
const DefaultMaxTotal = 1 << 26

// ExactOptions control the exact (slot-free) tables.
type ExactOptions struct {
	// MaxBreakpoints caps the breakpoints of any one sub-chain's frontier (0:
	// DefaultMaxBreakpoints); above it the fill stops with a *BreakpointError, so that the
	// caller falls back to slots explicitly.
	MaxBreakpoints int
	// MaxTotal caps the breakpoints of the whole table (0: DefaultMaxTotal).
	MaxTotal int
	// Cutoff, when positive, is an upper bound on the optimal makespan at the table's budget
	// (e.g. a verified sequence's): values that cannot be part of a sequence of makespan ≤
	// Cutoff are dropped as they are built (cutoff), which keeps the table small. The table
	// then answers only that budget, and only where its makespan is ≤ Cutoff; Frontier is
	// not the whole frontier.
	Cutoff float64
	// MaxMemory caps the table's memory in bytes (0: DefaultMaxMemory): the fixed part (one
	// frontier header per sub-chain, the state index) is checked before anything is allocated
	// (*TooLargeError), and the breakpoints may fill the rest (a *BreakpointError past it).
	MaxMemory int64
	// Stop, when closed, stops the fill between rows: the constructor returns ErrStopped.
	Stop <-chan struct{}
	// MaxSpan, when positive, fills only the sub-chains (s, t) of at most MaxSpan stages
	// (t − s < MaxSpan), which depend on no longer one: a banded table for callers that read
	// short sub-chains only (the pipeline's parts). The others are left empty — no sequence —
	// and the whole chain's answers (Solve, Frontier) are then meaningless.
	MaxSpan int
}

// breakpointBytes is the memory of one stored breakpoint (int64 memory, float64 value, int32
// argument), paretoBytes of one frontier's header (three slices).
const (
	breakpointBytes = 20
	paretoBytes     = 72
)

// memoryCaps applies opt.MaxMemory to an exact table whose fixed part takes fixed bytes:
// a *TooLargeError when the fixed part alone is above it, else opt with MaxTotal lowered to the
// breakpoints the rest can hold.
func memoryCaps(opt ExactOptions, table string, fixed int64) (ExactOptions, error) {
	limit := memoryLimit(opt.MaxMemory)
	if fixed > limit {
		return opt, &TooLargeError{Table: table, Bytes: fixed, Limit: limit,
			Hint: "use the slotted algorithm (without --exact) or raise --max-memory"}
	}
	total := opt.MaxTotal
	if total <= 0 {
		total = DefaultMaxTotal
	}
	opt.MaxTotal = int(min(int64(total), (limit-fixed)/breakpointBytes))
	return opt, nil
}

// BreakpointError reports that an exact table outgrew its cap: the frontiers have too many
// breakpoints for the exact algorithm, and the caller should use slots.
type BreakpointError struct {
	S, T, L int // the sub-chain whose frontier overflowed (L: its δ, floating only)
	Count   int // its breakpoints, or the table's when Total
	Cap     int
	Total   bool
}

func (e *BreakpointError) Error() string {
	if e.Total {
		return fmt.Sprintf("dp: exact: the table holds more than %d breakpoints in all; use slots", e.Cap)
	}
	return fmt.Sprintf("dp: exact: the frontier of sub-chain (%d, %d) has %d breakpoints, above the cap %d; use slots", e.S, e.T, e.Count, e.Cap)
}

// ExactStats describe the size of an exact table.
type ExactStats struct {
	// Frontiers is the number of sub-chain frontiers; Breakpoints their breakpoints in all;
	// MaxBreakpoints the largest one; Top the breakpoints of the whole chain's frontier.
	Frontiers, Breakpoints, MaxBreakpoints, Top int
}

// bytesChain is the chain's sizes in bytes, indexed like slotted's.
type bytesChain struct {
	n          int
	uf, ub     []float64
	a, abar, d []int64
	of, ob     []int64
	minD       []int64 // min_{s≤x≤t} ω_δ^x at s*(n+1)+t (collapsed tables only)
}

func newBytesChain(c *instances.Chain) *bytesChain {
	n := c.Len()
	b := &bytesChain{n: n, uf: make([]float64, n+1), ub: make([]float64, n+1), a: make([]int64, n+1),
		abar: make([]int64, n+1), d: make([]int64, n+1), of: make([]int64, n+1), ob: make([]int64, n+1)}
	b.a[0], b.abar[0], b.d[0] = c.A0, c.A0, c.Delta0
	for l := 1; l <= n; l++ {
		st := c.Stage(l)
		b.uf[l], b.ub[l] = st.UF, st.UB
		b.a[l], b.abar[l], b.d[l], b.of[l], b.ob[l] = st.A, st.ABar, st.Delta, st.OF, st.OB
	}
	return b
}

// splitPeak is slotted.splitPeak in bytes.
func (b *bytesChain) splitPeak(s, s2 int, prev int64) int64 {
	if s2 == s+1 {
		return b.a[s] + b.of[s]
	}
	j := s2 - 1
	return max(prev, b.a[j-1]+b.a[j]+b.of[j])
}

// caps checks a finished frontier against the options.
type caps struct {
	row, total int
	stats      ExactStats
	// shared, when set, counts the breakpoints of every worker filling the same table, so
	// that the total cap holds for the table and not per worker.
	shared *atomic.Int64
}

func newCaps(opt ExactOptions) *caps {
	c := &caps{row: opt.MaxBreakpoints, total: opt.MaxTotal}
	if c.row <= 0 {
		c.row = DefaultMaxBreakpoints
	}
	if c.total <= 0 {
		c.total = DefaultMaxTotal
	}
	return c
}

func (c *caps) check(p *pareto, s, t, l int) error {
	n := len(p.mem)
	c.stats.Frontiers++
	c.stats.Breakpoints += n
	c.stats.MaxBreakpoints = max(c.stats.MaxBreakpoints, n)
	if n > c.row {
		return &BreakpointError{S: s, T: t, L: l, Count: n, Cap: c.row}
	}
	total := c.stats.Breakpoints
	if c.shared != nil {
		total = int(c.shared.Add(int64(n)))
	}
	if total > c.total {
		return &BreakpointError{Count: total, Cap: c.total, Total: true}
	}
	return nil
}

// PersistentExact is the C_MP recurrence of Persistent (004 Thm 4.8, with SPEC §1's per-split
// memory check) in bytes, without slots: each row C_MP(s, t, ·) is kept as its breakpoints,
// the Pareto set of (memory, makespan) pairs. C_MP(s, t, ·) is a non-increasing step function
// of m; the candidates of the recurrence are sums of shifted step functions, and the row is
// their lower envelope (envelope), so the table is exact at every budget up to the one it is
// built for, and its top row is the whole makespan-versus-budget frontier.
type PersistentExact struct {
	c      *instances.Chain
	bc     *bytesChain
	budget int64
	avail  int64 // budget − ω_a^0
	n      int
	rows   []pareto // rowOf(s, t)
	stats  ExactStats
	rec    recurrence
	cut    *cutoff // nil: every value kept
	// fam[k] holds S_k(t, ℓ) at t*(n+1)+ℓ for each source k (collapsed tables only; nil for
	// a source without its table); isSource[k] says that some later ω_a^j (j < n) is larger.
	fam      [][]pareto
	isSource []bool
}

// recurrence selects the variant of the C_MP recurrence a table fills.
type recurrence uint8

func (r recurrence) String() string {
	switch r {
	case adjoint:
		return "revolve"
	case collapsed:
		return "C_FL collapsed"
	}
	return "C_MP"
}

const (
	recCMP    recurrence = iota // C_MP (004 Thm 4.8, SPEC §1's per-split check)
	adjoint                     // revolve: C_all only for s = t (NewRevolve)
	collapsed                   // C_MP relaxed to bound C_FL from below (NewCollapsedExact)
)

// NewPersistentExact fills the exact C_MP table for budgets up to budget bytes (a^0 included).
// It returns a *BreakpointError when a frontier outgrows opt's caps.
func NewPersistentExact(c *instances.Chain, budget int64, opt ExactOptions) (*PersistentExact, error) {
	return newPersistentExact(c, budget, opt, recCMP)
}

// NewRevolveExact is NewRevolve's table (revolve's AD-model schedules, C_all only at s = t)
// in bytes, without slots.
func NewRevolveExact(c *instances.Chain, budget int64, opt ExactOptions) (*PersistentExact, error) {
	return newPersistentExact(c, budget, opt, adjoint)
}

func newPersistentExact(c *instances.Chain, budget int64, opt ExactOptions, rec recurrence) (*PersistentExact, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if budget < 0 {
		return nil, fmt.Errorf("dp: negative budget %d", budget)
	}
	n := c.Len()
	p := &PersistentExact{c: c, bc: newBytesChain(c), budget: budget, avail: budget - c.A0, n: n, rec: rec}
	if p.avail < 0 {
		return p, nil
	}
	opt, err := memoryCaps(opt, fmt.Sprintf("exact %s on %d stages", rec, n), persistentExactFixedBytes(c, rec))
	if err != nil {
		return nil, err
	}
	if rec == collapsed {
		p.bc.fillMinDelta()
		p.initSources()
	}
	p.cut = newCutoff(p.bc.uf, p.bc.ub, opt.Cutoff)
	p.rows = make([]pareto, n*(n+1)/2)
	var skip func(s, t int) bool
	if opt.MaxSpan > 0 {
		skip = func(s, t int) bool { return t-s >= opt.MaxSpan }
	}
	if err := p.fill(opt, skip); err != nil {
		return nil, err
	}
	return p, nil
}

// fill computes every row of the table but those for which have(s, t) is true (nil: none),
// which the caller has set.
func (p *PersistentExact) fill(opt ExactOptions, have func(s, t int) bool) error {
	n := p.n
	// The wavefront of Persistent. Each worker has its own envelope, arena and caps.
	workers := max(1, min(runtime.GOMAXPROCS(0), n))
	errs := make([]error, workers)
	cps := make([]*caps, workers)
	envs := make([]envelope, workers)
	ars := make([]arena, workers)
	var shared atomic.Int64
	for w := range cps {
		cps[w] = newCaps(opt)
		cps[w].shared = &shared
	}
	wavefront(n, workers, func(w, s, t int) bool {
		if stopped(opt.Stop) {
			errs[w] = ErrStopped
			return false
		}
		env := &envs[w]
		if have == nil || !have(s, t) {
			p.fillRow(env, s, t)
			if p.cut != nil {
				env.cur.truncate(p.cut.limit(s, s, t))
			}
			if err := cps[w].check(&env.cur, s, t, 0); err != nil {
				errs[w] = err
				return false
			}
			p.rows[p.rowOf(s, t)] = ars[w].keep(&env.cur)
		}
		if p.fam != nil && s >= 2 && p.fam[s-1] != nil {
			if err := p.fillSources(env, &ars[w], cps[w], s-1, t); err != nil {
				errs[w] = err
				return false
			}
		}
		return true
	})
	var st ExactStats
	for w := range cps {
		if errs[w] != nil {
			return errs[w]
		}
		c := cps[w].stats
		st.Frontiers += c.Frontiers
		st.Breakpoints += c.Breakpoints
		st.MaxBreakpoints = max(st.MaxBreakpoints, c.MaxBreakpoints)
	}
	if st.Breakpoints > cps[0].total {
		return &BreakpointError{Count: st.Breakpoints, Cap: cps[0].total, Total: true}
	}
	st.Top = len(p.row(1, n).mem)
	p.stats = st
	return nil
}

// fillRow builds row (s, t) in env.cur: the lower envelope of C_all and the splits.
func (p *PersistentExact) fillRow(env *envelope, s, t int) {
	bc := p.bc
	if p.cut != nil {
		env.startUnder(p.avail, p.cut.limit(s, s, t))
	} else {
		env.start(p.avail)
	}
	mAll := max(bc.d[t]+bc.abar[s]+bc.of[s], bc.d[s]+bc.abar[s]+bc.d[s-1]+bc.ob[s])
	if s == t {
		if mAll <= p.avail {
			env.cur.push(mAll, bc.uf[s]+bc.ub[s], 0)
		}
		return
	}
	if p.rec != adjoint {
		env.add(bc.uf[s]+bc.ub[s], p.row(s+1, t), bc.abar[s], nil, mAll, 0, false)
	}
	if p.rec == collapsed {
		p.collapsedSplits(env, s, t)
		return
	}
	var fwd int64
	pre := 0.0
	for s2 := s + 1; s2 <= t; s2++ {
		fwd = bc.splitPeak(s, s2, fwd)
		pre += bc.uf[s2-1]
		need := bc.d[t] + fwd
		if need > p.avail {
			break
		}
		env.add(pre, p.row(s2, t), bc.a[s2-1], p.row(s, s2-1), need, int32(s2), false)
	}
}

// persistentExactFixedBytes is the memory of newPersistentExact's frontier headers for c (the
// breakpoints come on top, within the caps) and, for C_FL collapsed, of its δ minima and its
// source tables' headers (initSources); keep it next to the table.
func persistentExactFixedBytes(c *instances.Chain, rec recurrence) int64 {
	n := c.Len()
	b := satMul(float64(n), float64(n+1), paretoBytes/2) + satMul(float64(n+1), 4)
	if rec == collapsed {
		b += satMul(float64(n+1), float64(n+1), 8)
		if k := collapsedSources(newBytesChain(c)); k > 0 {
			b += satMul(float64(k), float64(n+1), float64(n+1), paretoBytes)
		}
	}
	return b
}

func (p *PersistentExact) rowOf(s, t int) int { return (s-1)*p.n - (s-1)*(s-2)/2 + (t - s) }

func (p *PersistentExact) row(s, t int) *pareto { return &p.rows[p.rowOf(s, t)] }

// Stats returns the size of the table.
func (p *PersistentExact) Stats() ExactStats { return p.stats }

// Solve returns the best persistent sequence for budget ≤ the table's budget, exact in bytes,
// replayed by verify.Remat as in Persistent.Solve.
func (p *PersistentExact) Solve(budget int64) (Result, error) {
	if budget > p.budget {
		return Result{}, fmt.Errorf("dp: budget %d above the table's %d", budget, p.budget)
	}
	res := Result{Budget: budget, SlotSize: 1}
	m := budget - p.c.A0
	if m < 0 || p.avail < 0 {
		return res, nil
	}
	top := p.row(1, p.n)
	i := top.at(m)
	if i < 0 {
		return res, nil
	}
	seq := make(schedule.Sequence, 0, 4*p.n)
	p.rebuild(&seq, 1, p.n, m)
	return check(p.c, seq, top.val[i], budget, res)
}

func (p *PersistentExact) rebuild(seq *schedule.Sequence, s, t int, m int64) {
	if s == t {
		*seq = append(*seq, schedule.Op{Kind: schedule.Fall, Stage: s}, schedule.Op{Kind: schedule.B, Stage: s})
		return
	}
	r := p.row(s, t)
	s2 := int(r.arg[r.at(m)])
	if s2 == 0 {
		*seq = append(*seq, schedule.Op{Kind: schedule.Fall, Stage: s})
		p.rebuild(seq, s+1, t, m-p.bc.abar[s])
		*seq = append(*seq, schedule.Op{Kind: schedule.B, Stage: s})
		return
	}
	*seq = append(*seq, schedule.Op{Kind: schedule.Fck, Stage: s})
	for j := s + 1; j < s2; j++ {
		*seq = append(*seq, schedule.Op{Kind: schedule.Fn, Stage: j})
	}
	p.rebuild(seq, s2, t, m-p.bc.a[s2-1])
	p.rebuild(seq, s, s2-1, m)
}

// Frontier returns the exact makespan-versus-budget frontier up to the table's budget: each
// point is the least budget (bytes, a^0 included) at which its makespan is reached.
func (p *PersistentExact) Frontier() []Point {
	if p.avail < 0 {
		return nil
	}
	return paretoPoints(p.row(1, p.n), p.c.A0)
}

func paretoPoints(top *pareto, a0 int64) []Point {
	pts := make([]Point, len(top.mem))
	for i := range top.mem {
		pts[i] = Point{Budget: a0 + top.mem[i], Makespan: top.val[i]}
	}
	return pts
}

// FloatingExact is the C_FL recurrence of Floating (004 §4.3, re-derived: tables G and H,
// docs/dp.md) in bytes, without slots, each G(s, t, ℓ, ·) and H(s, t, ℓ, ·) kept as its
// breakpoints. By 004 Lemma 4.4 its top frontier is the exact optimum of 004's model at every
// budget up to the one it is built for.
type FloatingExact struct {
	c      *instances.Chain
	bc     *bytesChain
	budget int64
	avail  int64
	n      int
	idx    []int32 // (s, t, ℓ) → state, as Floating's
	g, h   []pareto
	stats  ExactStats
	cut    *cutoff // nil: every value kept
	// cred, when set, gives the operations extra budgets by phase (LinkCredit); nil: one
	// budget.
	cred *phaseCredit
	// thin, when positive, thins every frontier by thin seconds (pareto.thin; 0: exact): the
	// table's values are then lower bounds on C_FL's, not its optimum (LinkCreditOptions.Thin).
	thin float64
}

// phaseCredit is the budget each operation has above the table's budget, in bytes
// (LinkCredit): an operation of phase ℓ (004 Def. 4.2: δ^ℓ current) fits in the budget plus
// phase[ℓ] — B^{L+1} and every forward of phase L+1 run again plus phase[L+1] — except the
// first run of F^k in phase L+1, which fits in the budget plus first[k] (nil: phase[L+1]).
// Every extra in phase and first is ≥ 0; back may be below.
type phaseCredit struct {
	phase, first []int64
	// back, when set, is B^ℓ's own extra (its phase's otherwise): a backward does not move
	// in 004 Lemma 4.4's exchanges, so its budget need not be raised to a running maximum.
	back []int64
}

// ref is the extra budget of the forwards of a state (s, ·, ℓ): of phase ℓ, and for ℓ = L+1
// the first run of F^s (the state's first forward).
func (f *FloatingExact) ref(l, s int) int64 {
	switch {
	case f.cred == nil:
		return 0
	case l == f.n && f.cred.first != nil:
		return f.cred.first[s]
	}
	return f.cred.phase[l]
}

// NewFloatingExact fills the exact C_FL tables for budgets up to budget bytes (a^0
// included). It returns a *BreakpointError when a frontier outgrows opt's caps.
func NewFloatingExact(c *instances.Chain, budget int64, opt ExactOptions) (*FloatingExact, error) {
	return newFloatingExact(c, budget, opt, nil, 0)
}

// availOf is the most memory a state (s, ·, ℓ) is asked about: the table's budget (a^0 out)
// plus its extra. A state's values are indexed by that memory minus what the enclosing
// levels hold.
func (f *FloatingExact) availOf(l, s int) int64 { return f.avail + f.ref(l, s) }

func newFloatingExact(c *instances.Chain, budget int64, opt ExactOptions, cred *phaseCredit, thin float64) (*FloatingExact, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if budget < 0 {
		return nil, fmt.Errorf("dp: negative budget %d", budget)
	}
	n := c.Len()
	if n > MaxFloatingStages {
		return nil, fmt.Errorf("dp: floating: %d stages is too many (at most %d); use the persistent algorithm", n, MaxFloatingStages)
	}
	f := &FloatingExact{c: c, bc: newBytesChain(c), budget: budget, avail: budget - c.A0, n: n, cred: cred, thin: thin}
	if f.avail < 0 {
		return f, nil
	}
	opt, err := memoryCaps(opt, fmt.Sprintf("exact C_FL on %d stages", n), floatingExactFixedBytes(n))
	if err != nil {
		return nil, err
	}
	f.idx = make([]int32, (n+1)*(n+1)*(n+1))
	k := int32(0)
	for i := range f.idx {
		f.idx[i] = -1
	}
	for s := 1; s <= n; s++ {
		for t := s; t <= n; t++ {
			for l := t; l <= n; l++ {
				f.idx[f.key(s, t, l)] = k
				k++
			}
		}
	}
	f.g, f.h = make([]pareto, k), make([]pareto, k)
	f.cut = newCutoff(f.bc.uf, f.bc.ub, opt.Cutoff)
	// Cell (r, ℓ) fills X(r, ·, ℓ), H(r, ·, ℓ) and G(r, ·, ℓ): it reads G(s', ·, ℓ) for s' > r
	// (cells (s', ℓ)), H(r', ·, ℓ) for r' ≥ r, and G(r, ·, ℓ') for ℓ' < ℓ (cells (r, ℓ')) —
	// the dependencies of C_MP's rows, so the same wavefront runs the cells on all cores.
	workers := max(1, min(runtime.GOMAXPROCS(0), n))
	ws := make([]floatingWorker, workers)
	var shared atomic.Int64
	for w := range ws {
		ws[w] = floatingWorker{cp: newCaps(opt), x: make([]pareto, n+1), stop: opt.Stop}
		ws[w].cp.shared = &shared
	}
	wavefront(n, workers, func(w, r, l int) bool {
		if stopped(opt.Stop) {
			ws[w].err = ErrStopped
			return false
		}
		ws[w].err = f.fillCell(&ws[w], r, l)
		return ws[w].err == nil
	})
	var st ExactStats
	for w := range ws {
		if ws[w].err != nil {
			return nil, ws[w].err
		}
		c := ws[w].cp.stats
		st.Frontiers += c.Frontiers
		st.Breakpoints += c.Breakpoints
		st.MaxBreakpoints = max(st.MaxBreakpoints, c.MaxBreakpoints)
	}
	if total := ws[0].cp.total; st.Breakpoints > total {
		return nil, &BreakpointError{Count: st.Breakpoints, Cap: total, Total: true}
	}
	st.Top = len(f.row(f.g, 1, 1, n).mem)
	f.stats = st
	return f, nil
}

// floatingWorker is one core's scratch space for FloatingExact's cells.
type floatingWorker struct {
	env envelope
	ar  arena
	xar arena // X's breakpoints, needed only within a cell
	cp  *caps
	x   []pareto // X(t', ·) for the current (r, ℓ)
	err error
	// stop is the table's Stop channel, also checked inside a cell: one cell merges O(n²)
	// frontiers (DenseNet-121's link-credit tables: seconds per cell under load).
	stop <-chan struct{}
}

// fillCell fills X(r, ·, ℓ), then H(r, t, ℓ) and G(r, t, ℓ) for r ≤ t ≤ ℓ.
func (f *FloatingExact) fillCell(wk *floatingWorker, r, l int) error {
	bc, cut, env, ar, x := f.bc, f.cut, &wk.env, &wk.ar, wk.x
	wk.xar.reset()
	// X(t', m) = min_{r < s' ≤ t'} Σ_{j=r}^{s'-1} u_f^j + G(s', t', ℓ, m − ω_a^{s'-1}),
	// for m ≥ the split's forward peak with δ^ℓ.
	for t2 := r + 1; t2 <= l; t2++ {
		if stopped(wk.stop) {
			return ErrStopped
		}
		// X(t2) is only read by H(r, t, ℓ), t < t2, next to G(r, t, t2−1).
		lim := math.Inf(1)
		if cut != nil {
			lim = math.Inf(-1)
			for t := r; t < t2; t++ {
				lim = max(lim, cut.limit(r, t, l)-f.row(f.g, r, t, t2-1).least())
			}
		}
		env.startUnder(f.availOf(l, r), lim)
		var fwd int64
		pre := 0.0
		for s2 := r + 1; s2 <= t2; s2++ {
			// Step F^{s2−1} fits in its own extra: relative to F^r's, ref(ℓ, s2−1) − ref(ℓ, r)
			// more (0 outside phase L+1's first runs).
			fwd = max(fwd, bc.splitPeak(r, s2, 0)-(f.ref(l, s2-1)-f.ref(l, r)))
			pre += bc.uf[s2-1]
			need := bc.d[l] + fwd
			if need > f.availOf(l, r) {
				break
			}
			env.add(pre, f.row(f.g, s2, t2, l), bc.a[s2-1]-(f.ref(l, s2)-f.ref(l, r)), nil, need, int32(s2), false)
		}
		env.cur.thin(f.thin)
		x[t2] = wk.xar.keep(&env.cur)
	}
	for t := r; t <= l; t++ {
		if stopped(wk.stop) {
			return ErrStopped
		}
		startCell(env, f.availOf(l, r), cut, r, t, l)
		if t == r {
			// F_all^r runs in phase ℓ, B^r in phase r (B^{L+1}: phase[L+1]).
			bShift := int64(0)
			if f.cred != nil {
				bShift = f.cred.phase[r] - f.ref(l, r)
				if f.cred.back != nil {
					bShift = f.cred.back[r] - f.ref(l, r)
				}
			}
			need := max(bc.d[l]+bc.abar[r]+bc.of[r], bc.d[r]+bc.abar[r]+bc.d[r-1]+bc.ob[r]-bShift)
			base := bc.uf[r] + bc.ub[r]
			if l == r {
				if need <= f.availOf(l, r) {
					env.cur.push(need, base, 0)
				}
			} else {
				env.add(base, f.row(f.g, r+1, r+1, l), bc.abar[r]-(f.ref(l, r+1)-f.ref(l, r)), nil, need, 0, false)
			}
		}
		for t2 := t + 1; t2 <= l; t2++ {
			// The left part runs in phases t2−1 … t, with their budgets.
			env.addShifted(0, &x[t2], 0, f.row(f.g, r, t, t2-1), -(f.ref(t2-1, r) - f.ref(l, r)), 0, int32(t2), true)
		}
		if cut != nil {
			env.cur.truncate(cut.limit(r, t, l))
		}
		if err := wk.cp.check(&env.cur, r, t, l); err != nil {
			return err
		}
		env.cur.thin(f.thin)
		f.h[f.idx[f.key(r, t, l)]] = ar.keep(&env.cur)
	}
	for t := r; t <= l; t++ {
		s := r
		startCell(env, f.availOf(l, s), cut, s, t, l)
		env.add(0, f.row(f.h, s, t, l), 0, nil, 0, int32(s), false)
		// Float the (plain) checkpoint from s-1 to r2-1, s < r2 ≤ t.
		pre := 0.0
		var moves int64
		for r2 := s + 1; r2 <= t; r2++ {
			j := r2 - 1
			moves = max(moves, bc.d[l]+bc.a[j-1]+bc.a[j]+bc.of[j]-(f.ref(l, j)-f.ref(l, s)))
			pre += bc.uf[j]
			if bc.a[r2-1] < bc.a[s-1] {
				continue // Cor. 4.5: a checkpoint only floats to a larger or equal size
			}
			shift := bc.a[r2-1] - bc.a[s-1]
			env.add(pre, f.row(f.h, r2, t, l), shift-(f.ref(l, r2)-f.ref(l, s)), nil, max(moves-bc.a[s-1], shift, 0), int32(r2), false)
		}
		if cut != nil {
			env.cur.truncate(cut.limit(s, t, l))
		}
		if err := wk.cp.check(&env.cur, s, t, l); err != nil {
			return err
		}
		env.cur.thin(f.thin)
		f.g[f.idx[f.key(s, t, l)]] = ar.keep(&env.cur)
	}
	return nil
}

// startCell starts env for state (s, t, ℓ), under the cutoff's limit when there is one.
func startCell(env *envelope, avail int64, cut *cutoff, s, t, l int) {
	if cut != nil {
		env.startUnder(avail, cut.limit(s, t, l))
	} else {
		env.start(avail)
	}
}

// floatingExactFixedBytes is the memory of NewFloatingExact's state index and frontier headers
// (G and H) for n stages, and of one X buffer per core; keep it next to the table.
func floatingExactFixedBytes(n int) int64 {
	states := float64(n) * float64(n+1) * float64(n+2) / 6
	workers := float64(max(1, min(runtime.GOMAXPROCS(0), n)))
	return satMul(float64(n+1), float64(n+1), float64(n+1), 4) + satMul(states, 2*paretoBytes) + satMul(workers, float64(n+1), paretoBytes)
}

func (f *FloatingExact) key(s, t, l int) int { return (s*(f.n+1)+t)*(f.n+1) + l }

func (f *FloatingExact) row(tab []pareto, s, t, l int) *pareto { return &tab[f.idx[f.key(s, t, l)]] }

// Stats returns the size of the tables (G and H).
func (f *FloatingExact) Stats() ExactStats { return f.stats }

// Solve returns an optimal sequence for budget ≤ the table's budget, exact in bytes, replayed
// by verify.Remat as in Persistent.Solve.
func (f *FloatingExact) Solve(budget int64) (Result, error) {
	if budget > f.budget {
		return Result{}, fmt.Errorf("dp: budget %d above the table's %d", budget, f.budget)
	}
	res := Result{Budget: budget, SlotSize: 1}
	m := budget - f.c.A0
	if m < 0 || f.avail < 0 {
		return res, nil
	}
	top := f.row(f.g, 1, 1, f.n)
	i := top.at(m)
	if i < 0 {
		return res, nil
	}
	seq := make(schedule.Sequence, 0, 4*f.n)
	f.rebuildG(&seq, 1, 1, f.n, m)
	return check(f.c, seq, top.val[i], budget, res)
}

func (f *FloatingExact) rebuildG(seq *schedule.Sequence, s, t, l int, m int64) {
	g := f.row(f.g, s, t, l)
	r := int(g.arg[g.at(m)])
	if r == s {
		f.rebuildH(seq, s, t, l, m)
		return
	}
	for j := s; j < r; j++ {
		*seq = append(*seq, schedule.Op{Kind: schedule.Fn, Stage: j})
	}
	f.rebuildH(seq, r, t, l, m-(f.bc.a[r-1]-f.bc.a[s-1])+(f.ref(l, r)-f.ref(l, s)))
}

func (f *FloatingExact) rebuildH(seq *schedule.Sequence, r, t, l int, m int64) {
	h := f.row(f.h, r, t, l)
	a := h.arg[h.at(m)]
	s2, t2 := int(a>>16), int(a&0xffff)
	if a == 0 {
		*seq = append(*seq, schedule.Op{Kind: schedule.Fall, Stage: r})
		if l > r {
			f.rebuildG(seq, r+1, r+1, l, m-f.bc.abar[r]+(f.ref(l, r+1)-f.ref(l, r)))
		}
		*seq = append(*seq, schedule.Op{Kind: schedule.B, Stage: r})
		return
	}
	*seq = append(*seq, schedule.Op{Kind: schedule.Fck, Stage: r})
	for j := r + 1; j < s2; j++ {
		*seq = append(*seq, schedule.Op{Kind: schedule.Fn, Stage: j})
	}
	f.rebuildG(seq, s2, t2, l, m-f.bc.a[s2-1]+(f.ref(l, s2)-f.ref(l, r)))
	f.rebuildG(seq, r, t, t2-1, m+(f.ref(t2-1, r)-f.ref(l, r)))
}

// Frontier returns the exact optimal makespan-versus-budget frontier up to the table's budget.
func (f *FloatingExact) Frontier() []Point {
	if f.avail < 0 {
		return nil
	}
	return paretoPoints(f.row(f.g, 1, 1, f.n), f.c.A0)
}
