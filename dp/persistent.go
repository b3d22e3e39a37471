package dp

import (
	"cmp"
	"fmt"
	"math"
	"runtime"
	"sync/atomic"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
)

// Persistent is the table of rotor's dynamic program for memory-persistent sequences
// (004 §4.4, Thm 4.8, Alg. 3), computed once for a budget and usable for every smaller one.
//
// C_MP(s, t, m) is the least makespan to back-propagate stages s..t when a^{s-1} is stored
// outside m (as a^{s-1} or ā^{s-1}), δ^t is stored inside m, and m slots are available:
//
//	C_MP(s, s, m) = u_f^s + u_b^s                       if m ≥ m_all^{s,s}, else ∞
//	C_MP(s, t, m) = min( C_all(s, t, m) if m ≥ m_all^{s,t},
//	                     min_{s<s'≤t} C_ck(s, s', t, m) if m ≥ m_ck^{s,s',t} )
//	C_all(s, t, m)     = u_f^s + C_MP(s+1, t, m − ω_ā^s) + u_b^s
//	C_ck(s, s', t, m)  = Σ_{k=s}^{s'-1} u_f^k + C_MP(s', t, m − ω_a^{s'-1}) + C_MP(s, s'−1, m)
//	m_all^{s,t}        = max(ω_δ^t + ω_ā^s + o_f^s, ω_δ^s + ω_ā^s + ω_δ^{s-1} + o_b^s)
//	m_ck^{s,s',t}      = ω_δ^t + max(ω_a^s + o_f^s, max_{s<j<s'} ω_a^{j-1} + ω_a^j + o_f^j)
//
// m_ck is SPEC §1's exact per-split check: the split s' runs F_ck^s F_∅^{s+1} … F_∅^{s'-1}
// only, whereas the printed m_∅^{s,t} checks every forward step up to t and so misses
// persistent sequences (docs/dp.md). The whole chain is C_MP(1, L+1, M − ω_a^0).
type Persistent struct {
	c      *instances.Chain
	sc     *slotted
	budget int64 // bytes, a^0 included
	m      int   // slots available beside a^0
	n      int
	row    []int32 // row index of (s, t), s ≤ t, at (s-1)*n + (t-1)
	// rows[r] is row r's values, a slice of one of allocChunks' chunks: one slice of 1.9 GB
	// took 1.9 s to allocate on a loaded machine, where nothing reads Stop (and computing a
	// row's place from r and the chunk size slowed the fill by 2–8 %).
	rows  [][]float64
	minOK []int32 // per row, the least m with a finite value (m+1 if none)
	// ends holds, per row, its value at the last budget of each block of pruneBlock budgets
	// (the least value of the block): a compact copy of the table that the block test reads
	// instead of the rows themselves, which do not stay in cache.
	ends    []float64
	nBlocks int
	workers int
	// adjoint restricts F_all^s to run right before B^s (revolve's AD model, see NewRevolve).
	adjoint bool
}

// NewPersistent fills the C_MP table of c for budget bytes (a^0 included) under opt.
func NewPersistent(c *instances.Chain, budget int64, opt Options) (*Persistent, error) {
	return newPersistent(c, budget, opt, false)
}

// NewRevolve fills the table of revolve, the baseline of 004 §5.4: Griewank and Walther's
// optimal checkpointing for the adjoint (AD) model, in its heterogeneous form (003:
// Opt(i, ℓ, m) = min_j Σ_{k=i}^{j-1} u_f^k + Opt(j, ℓ, m − x_j) + Opt(i, j−1, m)), turned into
// valid sequences by storing only plain activations and running F_all^s right before each B^s.
// It is C_MP with the C_all branch allowed only for s = t, so memory is checked exactly as in
// 004's model and revolve's sequences always fit the budget.
func NewRevolve(c *instances.Chain, budget int64, opt Options) (*Persistent, error) {
	return newPersistent(c, budget, opt, true)
}

func newPersistent(c *instances.Chain, budget int64, opt Options, adjoint bool) (*Persistent, error) {
	sc, m, err := discretize(c, budget, opt)
	if err != nil {
		return nil, err
	}
	n := c.Len()
	if n > math.MaxInt16 {
		return nil, fmt.Errorf("dp: %d stages is too many (at most %d)", n, math.MaxInt16)
	}
	if b, limit := persistentBytes(n, m), memoryLimit(opt.MaxMemory); b > limit {
		name := "C_MP (persistent)"
		if adjoint {
			name = "revolve"
		}
		k := slotsWithin(m, limit, func(k int) int64 { return persistentBytes(n, k) })
		return nil, &TooLargeError{Table: fmt.Sprintf("%s with %s on %d stages", name, slotsName(opt), n), Bytes: b, Limit: limit,
			Hint: slotsHint(k, "another algorithm (sequential, store-all)"), Slots: k, slotted: true}
	}
	p := &Persistent{c: c, sc: sc, budget: budget, m: m, n: n, workers: runtime.GOMAXPROCS(0), adjoint: adjoint}
	if m < 0 {
		return p, nil
	}
	if stopped(opt.Stop) {
		return nil, ErrStopped // before allocating: a big table takes seconds to zero
	}
	rows := n * (n + 1) / 2
	w := m + 1
	p.row = make([]int32, n*n)
	if _, p.rows = allocChunks(rows, w, cmp.Or(opt.chunkBytes, chunkBytes), opt.Stop); p.rows == nil {
		return nil, ErrStopped
	}
	p.minOK = make([]int32, rows)
	p.nBlocks = m/pruneBlock + 1
	p.ends = make([]float64, rows*p.nBlocks)
	k := int32(0)
	for s := 1; s <= n; s++ {
		for t := s; t <= n; t++ {
			p.row[(s-1)*n+(t-1)] = k
			k++
		}
	}
	// Order: blocks of colBlock(m) columns t ascending, then s descending (blockWavefront).
	// Row (s, t) needs (s', t) for s' > s, filled just before and still in cache, and
	// (s, s'−1) for s' ≤ t, contiguous in memory; fillRows reads each of the latter that lies
	// in an earlier block once for the whole block. (The diagonal order of 004 Alg. 3 touches
	// rows scattered over the whole table and is about twice as slow at 339 stages.) Blocks
	// go to the cores as a wavefront.
	workers := p.workers
	if (n+1)*(m+1) < 1<<14 {
		workers = 1
	}
	var stop atomic.Bool
	blockWavefront(n, colBlock(m), workers, func(_, s, t0, t1 int) bool {
		if stopped(opt.Stop) { // a select on a channel: nothing beside a row of (t1−t0)·(t−s)·m cells
			stop.Store(true)
			return false
		}
		p.fillRows(s, t0, t1)
		return true
	})
	if stop.Load() {
		return nil, ErrStopped
	}
	return p, nil
}

// PersistentBytes estimates the memory of the C_MP table (NewPersistent, NewRevolve) of n
// stages with slots slots (the budget beside a^0 is at most slots slots): per sub-chain (s, t),
// s ≤ t, a row of slots+1 values (float64) plus its block ends and its slice header, and the
// n² row index. 10002 stages with 500 slots: 208 GB.
func PersistentBytes(n, slots int) int64 { return persistentBytes(n, slots) }

// persistentBytes is the size of newPersistent's allocations for n stages and m slots; keep it
// next to them.
func persistentBytes(n, m int) int64 {
	rows := float64(n) * float64(n+1) / 2
	w := float64(m + 1)
	blocks := float64(m/pruneBlock + 1)
	return satMul(rows, w, 8) + satMul(rows, blocks, 8) + satMul(float64(n), float64(n), 4) + satMul(rows, 4+24)
}

func (p *Persistent) rowOf(s, t int) int { return int(p.row[(s-1)*p.n+(t-1)]) }

func (p *Persistent) slice(r int) []float64 { return p.rows[r] }

// chunkBytes is about the size of one of allocChunks' chunks: small enough that Stop is read
// every few milliseconds while a table of gigabytes is allocated, large enough that their
// count stays small.
const chunkBytes = 32 << 20

// allocChunks allocates rows rows of w float64 in chunks of about chunk bytes (a whole
// number of rows, at least one), reading stop before each, and returns the chunks and each
// row's slice; nil when stop was closed. The allocation of a large slice zeroes it (or faults
// its pages in) and cannot be interrupted; in chunks, a table stopped while it is allocated
// ends within one chunk.
func allocChunks(rows, w, chunk int, stop <-chan struct{}) (chunks, rowv [][]float64) {
	per := max(chunk/(8*w), 1)
	rowv = make([][]float64, 0, rows)
	for left := rows; left > 0; left -= per {
		if stopped(stop) {
			return nil, nil
		}
		k := min(left, per)
		c := make([]float64, k*w)
		chunks = append(chunks, c)
		for i := 0; i < k; i++ {
			rowv = append(rowv, c[i*w:(i+1)*w:(i+1)*w])
		}
	}
	return chunks, rowv
}

// colBlock is the width of the blocks of columns t that fillRows fills together: 16 where
// the block's rows (s, t) of m+1 budgets fit in 32 KiB (an L1 data cache), else 8. Wider
// blocks read each left row (s, s'−1) once for more columns, but once the rows they write
// leave L1 that gain is lost (measured on ResNet-1001, 337 stages: 16 columns beat 8 at 200
// slots, not at 500).
func colBlock(m int) int {
	if maxColBlock*(m+1)*8 <= 32<<10 {
		return maxColBlock
	}
	return 8
}

const maxColBlock = 16

// pruneBlock is the width of the blocks of budgets that split skips when a split's lower
// bound on the block cannot beat the row's current values.
const pruneBlock = 32

// fillRows computes rows (s, t), max(s, t0) ≤ t < t1 ≤ t0 + maxColBlock, for every m, once every
// row (s', t) with s' > s and every row (s, t') with t' < t0 is filled.
//
// Each row's candidates are evaluated in the recurrence's order: C_all, then the splits s'
// ascending. The splits s' ≤ t0 come first for every row of the block, one s' at a time for
// all t, so that their left row (s, s'−1), in an earlier block and no longer in cache, is
// read once for the block instead of once per column; the splits s' > t0 then run row by row,
// t ascending, since their left rows are rows of this call.
//
// The fill keeps values only: the argument of a state (which branch or split reaches it) is
// found again by argmin when a sequence is rebuilt, which visits O(n) states, so that the fill
// neither stores nor moves an argument per state.
func (p *Persistent) fillRows(s, t0, t1 int) {
	sc := p.sc
	first := max(s, t0)
	for t := first; t < t1; t++ {
		p.start(s, t)
	}
	// live[t−t0]: row (s, t) still has splits that fit (the forward steps of s' only grow
	// with s', so once d^t + fwd exceeds the budget, no later split fits either).
	var live [maxColBlock]bool
	fwd, pre, s2 := 0, 0.0, s+1
	if s < t0 {
		n := 0
		for t := t0; t < t1; t++ {
			live[t-t0] = true
			n++
		}
		for ; s2 <= t0 && n > 0; s2++ {
			fwd = sc.splitPeak(s, s2, fwd)
			pre += sc.uf[s2-1]
			// Rows (s, t) and (s2, t) are consecutive in t; the left row is the block's.
			lr := p.leftRow(s, s2)
			r0, q0 := p.rowOf(s, t0)-t0, p.rowOf(s2, t0)-t0
			for t := t0; t < t1; t++ {
				if !live[t-t0] {
					continue
				}
				if need := sc.d[t] + fwd; need <= p.m {
					p.splitRows(r0+t, q0+t, &lr, need, pre)
				} else {
					live[t-t0] = false
					n--
				}
			}
		}
	}
	for t := first; t < t1; t++ {
		if s < t0 && !live[t-t0] {
			p.finish(s, t)
			continue
		}
		f, pr := fwd, pre
		for s3 := s2; s3 <= t; s3++ {
			f = sc.splitPeak(s, s3, f)
			pr += sc.uf[s3-1]
			need := sc.d[t] + f
			if need > p.m {
				break
			}
			p.split(s, s3, t, need, pr)
		}
		p.finish(s, t)
	}
}

// start sets row (s, t) to its first candidate: u_f^s + u_b^s where it fits if s = t, C_all
// otherwise (+∞ for revolve, which has no C_all for s < t).
func (p *Persistent) start(s, t int) {
	sc := p.sc
	out := p.slice(p.rowOf(s, t))
	mAll := max(sc.d[t]+sc.abar[s]+sc.of[s], sc.d[s]+sc.abar[s]+sc.d[s-1]+sc.ob[s])
	// The row is written whole here, +∞ where the candidate does not fit: the table is not
	// set to +∞ beforehand, so that its pages are first touched by the workers of the fill.
	from := p.m + 1
	switch {
	case s == t:
		from = min(mAll, from)
		for m := from; m <= p.m; m++ {
			out[m] = sc.uf[s] + sc.ub[s]
		}
	case !p.adjoint:
		sub := p.rowOf(s+1, t)
		off := sc.abar[s]
		in := p.slice(sub)
		base := sc.uf[s] + sc.ub[s]
		from = min(max(mAll, int(p.minOK[sub])+off), from)
		for m := from; m <= p.m; m++ {
			out[m] = base + in[m-off]
		}
	}
	inf := math.Inf(1)
	for m := range out[:from] {
		out[m] = inf
	}
}

// finish records row (s, t)'s least finite budget and its block ends, read by later splits.
func (p *Persistent) finish(s, t int) {
	r := p.rowOf(s, t)
	out := p.slice(r)
	ok := p.m + 1
	for m := 0; m <= p.m; m++ {
		if !math.IsInf(out[m], 1) {
			ok = m
			break
		}
	}
	p.minOK[r] = int32(ok)
	ends := p.ends[r*p.nBlocks : (r+1)*p.nBlocks]
	for k := range ends {
		ends[k] = out[min((k+1)*pruneBlock-1, p.m)]
	}
}

// split lowers row (s, t) to the split C_ck(s, s2, t, m) = pre + C_MP(s2, t, m − ω_a^{s2−1})
// + C_MP(s, s2−1, m) for m ≥ need, where it is smaller (pre = Σ_{k=s}^{s2−1} u_f^k).
func (p *Persistent) split(s, s2, t, need int, pre float64) {
	lr := p.leftRow(s, s2)
	p.splitRows(p.rowOf(s, t), p.rowOf(s2, t), &lr, need, pre)
}

// leftRow is what the splits s2 of rows (s, ·) share: the left row (s, s2−1) with its least
// finite budget and block ends, and the offset ω_a^{s2−1} of their right rows.
type leftRow struct {
	B, Bend []float64
	bLast   float64 // Bend's last value: B at the top budget
	ok, off int
}

func (p *Persistent) leftRow(s, s2 int) leftRow {
	left := p.rowOf(s, s2-1)
	bend := p.ends[left*p.nBlocks : (left+1)*p.nBlocks]
	return leftRow{B: p.slice(left), Bend: bend, bLast: bend[len(bend)-1], ok: int(p.minOK[left]), off: p.sc.a[s2-1]}
}

// splitRows is split on rows r = (s, t) and right = (s2, t), with lr the left row (s, s2−1).
func (p *Persistent) splitRows(r, right int, lr *leftRow, need int, pre float64) {
	mhi := p.m
	off := lr.off
	lo := max(need, int(p.minOK[right])+off, lr.ok)
	if lo > mhi {
		return
	}
	out, A, B := p.slice(r), p.slice(right), lr.B
	// Rows are non-increasing in m, so on [b0, b1) (blocks aligned on multiples of
	// pruneBlock) the split is at least pre + A[j] + B[b1−1] for any j ≥ b1−1−off, here the
	// last budget of j's block (ends, in cache), and on the whole range at least
	// pre + A[mhi] + B[mhi] (the ends of the last blocks). out is non-increasing too, at most
	// out[b0] on the block: a block where out[b0] is already at or under the block's bound
	// cannot change, and from the first block where it is at or under the whole range's
	// bound, none can.
	Aend, Bend := p.ends[right*p.nBlocks:(right+1)*p.nBlocks], lr.Bend
	bound := pre + Aend[len(Aend)-1] + lr.bLast
	// Consecutive blocks that pass go to the kernel as one run (one call, one tail).
	run, b0 := -1, lo
	for b0 <= mhi {
		ob := out[b0]
		if ob <= bound {
			break
		}
		b1 := min((b0/pruneBlock+1)*pruneBlock, mhi+1)
		if ob <= pre+Aend[(b1-1-off)/pruneBlock]+Bend[(b1-1)/pruneBlock] {
			if run >= 0 {
				minPlus(pre, A[run-off:b0-off], B[run:b0], out[run:b0])
				run = -1
			}
		} else if run < 0 {
			run = b0
		}
		b0 = b1
	}
	if run >= 0 {
		minPlus(pre, A[run-off:b0-off], B[run:b0], out[run:b0])
	}
}

// Result is a schedule found by a dynamic program, already replayed by verify.Remat.
type Result struct {
	// Feasible is false when no sequence of the searched class fits the budget.
	Feasible bool
	// Makespan and Peak are the simulator's figures for Sequence (seconds, bytes).
	Makespan float64
	Peak     int64
	Sequence schedule.Sequence
	// Budget is the budget in bytes (a^0 included); SlotSize the discretization in bytes.
	Budget   int64
	SlotSize int64
}

// Solve returns the best persistent sequence for budget ≤ the table's budget. The sequence is
// replayed by verify.Remat: a makespan that disagrees with the table (relative 1e-9) or a peak
// above budget is returned as an error — a bug, never a result.
func (p *Persistent) Solve(budget int64) (Result, error) {
	if budget > p.budget {
		return Result{}, fmt.Errorf("dp: budget %d above the table's %d", budget, p.budget)
	}
	res := Result{Budget: budget, SlotSize: p.sc.q}
	avail := budget - p.c.A0
	if avail < 0 || p.m < 0 {
		return res, nil
	}
	m := int(avail / p.sc.q)
	if m > p.m {
		m = p.m
	}
	top := p.rowOf(1, p.n)
	want := p.slice(top)[m]
	if math.IsInf(want, 1) {
		return res, nil
	}
	seq := make(schedule.Sequence, 0, 4*p.n)
	p.rebuild(&seq, 1, p.n, m)
	return check(p.c, seq, want, budget, res)
}

// rebuild appends OptRecP(s, t, m) (004 Alg. 4) to seq.
func (p *Persistent) rebuild(seq *schedule.Sequence, s, t, m int) {
	if s == t {
		*seq = append(*seq, schedule.Op{Kind: schedule.Fall, Stage: s}, schedule.Op{Kind: schedule.B, Stage: s})
		return
	}
	s2 := p.argmin(s, t, m)
	if s2 == 0 {
		*seq = append(*seq, schedule.Op{Kind: schedule.Fall, Stage: s})
		p.rebuild(seq, s+1, t, m-p.sc.abar[s])
		*seq = append(*seq, schedule.Op{Kind: schedule.B, Stage: s})
		return
	}
	*seq = append(*seq, schedule.Op{Kind: schedule.Fck, Stage: s})
	for j := s + 1; j < s2; j++ {
		*seq = append(*seq, schedule.Op{Kind: schedule.Fn, Stage: j})
	}
	p.rebuild(seq, s2, t, m-p.sc.a[s2-1])
	p.rebuild(seq, s, s2-1, m)
}

// argmin returns which candidate of the recurrence reaches C_MP(s, t, m) (finite, s < t): 0
// for C_all, s' for the split C_ck(s, s', t, m). The candidates are evaluated in the fill's
// order (C_all, then s' ascending) with its very expressions, and the first one equal to the
// stored value is the one the fill would have recorded with a strict comparison: every earlier
// candidate is larger, and none that the fill pruned can be smaller. So the sequences are
// those of an argument table, without one.
func (p *Persistent) argmin(s, t, m int) int {
	sc := p.sc
	v := p.slice(p.rowOf(s, t))[m]
	if !p.adjoint {
		mAll := max(sc.d[t]+sc.abar[s]+sc.of[s], sc.d[s]+sc.abar[s]+sc.d[s-1]+sc.ob[s])
		if off := sc.abar[s]; m >= mAll && m >= off && sc.uf[s]+sc.ub[s]+p.slice(p.rowOf(s+1, t))[m-off] == v {
			return 0
		}
	}
	fwd := 0
	pre := 0.0
	for s2 := s + 1; s2 <= t; s2++ {
		fwd = sc.splitPeak(s, s2, fwd)
		pre += sc.uf[s2-1]
		if m < sc.d[t]+fwd {
			break
		}
		off := sc.a[s2-1]
		if m >= off && pre+p.slice(p.rowOf(s2, t))[m-off]+p.slice(p.rowOf(s, s2-1))[m] == v {
			return s2
		}
	}
	panic(fmt.Sprintf("dp: no candidate reaches C_MP(%d, %d, %d) = %g", s, t, m, v))
}

// check replays seq and compares it with the table's makespan and the budget.
func check(c *instances.Chain, seq schedule.Sequence, want float64, budget int64, res Result) (Result, error) {
	sim, err := verify.Remat(c, seq, verify.RematOptions{})
	if err != nil {
		return Result{}, fmt.Errorf("dp: internal error: the sequence does not replay: %w", err)
	}
	if math.Abs(sim.Makespan-want) > 1e-9*math.Max(1, math.Abs(want)) {
		return Result{}, fmt.Errorf("dp: internal error: table makespan %g, replayed %g", want, sim.Makespan)
	}
	if sim.Peak > budget {
		return Result{}, fmt.Errorf("dp: internal error: replayed peak %d above budget %d", sim.Peak, budget)
	}
	res.Feasible, res.Makespan, res.Peak, res.Sequence = true, sim.Makespan, sim.Peak, seq
	return res, nil
}

// Point is one step of a makespan-versus-budget frontier.
type Point struct {
	// Budget is the smallest budget in bytes (a^0 included, at slot granularity) at which
	// Makespan is reached.
	Budget   int64
	Makespan float64
}

// Frontier returns, from the one table, the budgets at which the best persistent makespan
// improves, in increasing budget order (each point is valid up to the next one).
func (p *Persistent) Frontier() []Point {
	if p.m < 0 {
		return nil
	}
	return frontier(p.slice(p.rowOf(1, p.n)), p.c.A0, p.sc.q)
}

// frontier turns the top row of a table (makespan per slot count m) into the points where the
// makespan improves; slot count m needs a budget of a^0 + m·q bytes.
func frontier(row []float64, a0, q int64) []Point {
	var pts []Point
	for m, v := range row {
		if math.IsInf(v, 1) || len(pts) > 0 && v >= pts[len(pts)-1].Makespan {
			continue
		}
		pts = append(pts, Point{Budget: a0 + int64(m)*q, Makespan: v})
	}
	return pts
}

// SolvePersistent fills the table for budget and returns its best persistent sequence.
func SolvePersistent(c *instances.Chain, budget int64, opt Options) (Result, error) {
	p, err := NewPersistent(c, budget, opt)
	if err != nil {
		return Result{}, err
	}
	return p.Solve(budget)
}
