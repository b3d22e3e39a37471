package dp

// The link deficit (issue 31's stop of 2026-11-29, evening). The link credit lets β·s bytes be
// away during an operation that starts at s. But the bytes away are tensors the sequence holds,
// each offloaded after it was produced: if the first pass holds nothing but a^0 before
// producing ā^j at r_j, the link cannot start before r_j on anything but a^0. With W_{<j} the
// bytes held that were produced before r_j, an operation o that starts at s while j is held
// has at most W_{<j} + β·(s − r_j) bytes away (the tensors produced before r_j, and what the
// link moves after it), so
//
//	mem(o) ≤ M + β·s − d,   d = max(0, max_j (β·r_j − W_{<j}))   over the tensors j held,
//
// the deficit of the link: what β·s overstates. In the first pass (phase L+1) the tensors held
// are the stores made so far, r_j ≥ Σ_{k≤j} u_f (the compute through F^j), and d only grows
// as they are made (a floating checkpoint that moves on is replaced by a later one, whose
// term is larger: W_{<j} is the same). So the states of phase L+1 carry a deficit level: the
// table below refines C_FL's phase-(L+1) states G(s, t, L+1) and H(s, t, L+1) by the deficit
// of the stores above them, rounded down to one of a few levels (a lower d only relaxes).
// Every first run of a forward and B^{L+1} fits, besides its credit, in its s-side credit less
// the level; the states of the earlier phases are the plain table's (without the deficit:
// a relaxation). A state's value is not monotone in its memory once the deficit depends on it
// (more free memory is fewer bytes held, hence less to send early): each store's child is read
// at the level its parent's memory gives, only below the memory where the next level starts,
// and the frontier's closure carries the last value beyond (holding P phantom bytes more,
// which costs P on the GPU and saves at most P of deficit: a relaxation).

import (
	"errors"
	"math"
)

// deficitTable is the phase-(L+1) part of a link-credit table refined by the deficit, for one
// makespan T: x is F^1's budget at T (the plain table's frame), levels the deficit levels in
// bytes (levels[0] = 0, increasing), sfirst[j] the s-side credit of the first run of F^j in the
// table's bytes (as ref), sturn B^{L+1}'s, rel[j] ⌊β·Σ_{k≤j} u_f⌋.
type deficitTable struct {
	f      *FloatingExact
	x      int64
	levels []int64
	sfirst []int64
	sturn  int64
	rel    []int64
	cut    *cutoff
	g, h   [][]pareto // [level][s*(n+1)+t]
	ar     arena
	xar    arena
	env    envelope
	stop   <-chan struct{}
	x2     []pareto
	// room is how many breakpoints the levels may hold (the memory limit less the plain
	// table's), used what they hold so far.
	room, used int
}

func (d *deficitTable) key(s, t int) int { return s*(d.f.n+1) + t }

// turnMemory is B^{L+1}'s memory inside its state: δ^{L+1}, ā^{L+1}, δ^L and its overhead.
func (d *deficitTable) turnMemory() int64 {
	bc, n := d.f.bc, d.f.n
	return bc.d[n] + bc.abar[n] + bc.d[n-1] + bc.ob[n]
}

// need is an operation's memory inside a phase-(L+1) state at level k, normalized as the plain
// table's needs (to be ≤ the state's memory): its inside memory less its extra over the
// state's (ref − ref(state)), the extra its s-side credit less the level where that is lower.
func (d *deficitTable) need(inside, ref, sref, refState int64, k int) int64 {
	return inside - (min(ref, sref-d.levels[k]) - refState)
}

// threshold is the least memory of a state (frame base refState) at which a store of a
// tensor produced at rel, with drop bytes of the state's own checkpoint released at the store,
// puts the child at level k or above: β·r_j − W_{<j} ≥ levels[k], W_{<j} = x + refState − m − drop.
func (d *deficitTable) threshold(refState, rel, drop int64, k int) int64 {
	return d.x + refState - drop - rel + d.levels[k]
}

// addLevels adds the candidate c + child_k'(m − off) for every level k' ≥ k, each below the
// memory where the next level starts (thresholds th(k')).
func (d *deficitTable) addLevels(c float64, child func(k int) *pareto, off, lo int64, id int32, k int, th func(k int) int64) {
	hi := d.env.hi
	for k2 := k; k2 < len(d.levels); k2++ {
		top := hi
		if k2+1 < len(d.levels) {
			top = min(hi, th(k2+1)-1)
		}
		if k2 > k && th(k2) > hi {
			break // this level and the ones above start past every memory asked
		}
		if top < lo {
			continue
		}
		d.env.hi = top
		d.env.add(c, child(k2), off, nil, lo, id, false)
		d.env.hi = hi
	}
}

// fill builds the levels' states of phase L+1, r = n … 1.
func (d *deficitTable) fill() error {
	f, bc, n := d.f, d.f.bc, d.f.n
	l := n
	K := len(d.levels)
	d.g, d.h = make([][]pareto, K), make([][]pareto, K)
	for k := range d.g {
		d.g[k], d.h[k] = make([]pareto, (n+1)*(n+1)), make([]pareto, (n+1)*(n+1))
	}
	d.x2 = make([]pareto, n+1)
	env := &d.env
	for r := n; r >= 1; r-- {
		for k := K - 1; k >= 0; k-- {
			if stopped(d.stop) {
				return ErrStopped
			}
			d.xar.reset()
			refR := f.ref(l, r)
			// X(t2, m) = min_{r < s2 ≤ t2} Σ_{j=r}^{s2−1} u_f^j + G_k'(s2, t2, m − ω_a^{s2−1}): F_ck^r
			// F_∅ … F_∅^{s2−1}, each a first run, then a^{s2−1} stored at level k'.
			for t2 := r + 1; t2 <= l; t2++ {
				lim := math.Inf(1)
				if d.cut != nil {
					lim = math.Inf(-1)
					for t := r; t < t2; t++ {
						lim = max(lim, d.cut.limit(r, t, l)-f.row(f.g, r, t, t2-1).least())
					}
				}
				env.startUnder(f.availOf(l, r), lim)
				var fwd int64
				pre := 0.0
				for s2 := r + 1; s2 <= t2; s2++ {
					j := s2 - 1
					inside := bc.a[r] + bc.of[r]
					if j > r {
						inside = bc.a[j-1] + bc.a[j] + bc.of[j]
					}
					fwd = max(fwd, d.need(bc.d[l]+inside, f.ref(l, j), d.sfirst[j], refR, k))
					pre += bc.uf[j]
					if fwd > f.availOf(l, r) {
						break
					}
					th := func(k2 int) int64 { return d.threshold(refR, d.rel[j], 0, k2) }
					child := func(k2 int) *pareto { return &d.g[k2][d.key(s2, t2)] }
					d.addLevels(pre, child, bc.a[j]-(f.ref(l, s2)-refR), fwd, int32(s2), k, th)
				}
				env.cur.thin(f.thin)
				d.x2[t2] = d.xar.keep(&env.cur)
			}
			for t := r; t <= l; t++ {
				startCell(env, f.availOf(l, r), d.cut, r, t, l)
				if t == r {
					// F_all^r (a first run) … B^r; B^{L+1} when r = L+1, capped by the level too.
					fall := d.need(bc.d[l]+bc.abar[r]+bc.of[r], refR, d.sfirst[r], refR, k)
					bShift := f.cred.phase[r] - refR
					if f.cred.back != nil {
						bShift = f.cred.back[r] - refR
					}
					bneed := bc.d[r] + bc.abar[r] + bc.d[r-1] + bc.ob[r] - bShift
					if r == l {
						bneed = max(bneed, bc.d[r]+bc.abar[r]+bc.d[r-1]+bc.ob[r]-(d.sturn-d.levels[k]-refR))
					}
					need := max(fall, bneed)
					base := bc.uf[r] + bc.ub[r]
					if l == r {
						if need <= f.availOf(l, r) {
							env.cur.push(need, base, 0)
						}
					} else {
						th := func(k2 int) int64 { return d.threshold(refR, d.rel[r], 0, k2) }
						child := func(k2 int) *pareto { return &d.g[k2][d.key(r+1, r+1)] }
						d.addLevels(base, child, bc.abar[r]-(f.ref(l, r+1)-refR), need, 0, k, th)
					}
				}
				for t2 := t + 1; t2 <= l; t2++ {
					env.addShifted(0, &d.x2[t2], 0, f.row(f.g, r, t, t2-1), -(f.ref(t2-1, r) - refR), 0, int32(t2), true)
				}
				if err := d.keep(&d.h[k][d.key(r, t)], r, t); err != nil {
					return err
				}
			}
			for t := r; t <= l; t++ {
				s := r
				refS := f.ref(l, s)
				startCell(env, f.availOf(l, s), d.cut, s, t, l)
				env.add(0, &d.h[k][d.key(s, t)], 0, nil, 0, int32(s), false)
				// Float the checkpoint from s−1 to r2−1 (F_∅ moves, first runs; their own
				// memory without the level: the checkpoint they drop is no longer held).
				pre := 0.0
				var moves int64
				for r2 := s + 1; r2 <= t; r2++ {
					j := r2 - 1
					moves = max(moves, bc.d[l]+bc.a[j-1]+bc.a[j]+bc.of[j]-(f.ref(l, j)-refS))
					pre += bc.uf[j]
					if bc.a[r2-1] < bc.a[s-1] {
						continue
					}
					shift := bc.a[r2-1] - bc.a[s-1]
					th := func(k2 int) int64 { return d.threshold(refS, d.rel[j], bc.a[s-1], k2) }
					child := func(k2 int) *pareto { return &d.h[k2][d.key(r2, t)] }
					d.addLevels(pre, child, shift-(f.ref(l, r2)-refS), max(moves-bc.a[s-1], shift, 0), int32(r2), k, th)
				}
				if err := d.keep(&d.g[k][d.key(s, t)], s, t); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// keep stores the envelope as state (s, t, L+1)'s frontier in dst, cut at the cutoff's limit
// and thinned as the plain table's: errDeficitRoom past the levels' room.
func (d *deficitTable) keep(dst *pareto, s, t int) error {
	cur := &d.env.cur
	if d.cut != nil {
		cur.truncate(d.cut.limit(s, t, d.f.n))
	}
	cur.thin(d.f.thin)
	if d.used += len(cur.mem); d.used > d.room {
		return errDeficitRoom
	}
	*dst = d.ar.keep(cur)
	return nil
}

// errDeficitRoom says that a deficit table outgrew the memory limit beside the plain table it
// refines: like a stop, what the tables before it proved stands.
var errDeficitRoom = errors.New("dp: link deficit: its levels outgrow the memory limit")

// top is the whole chain's value at level 0 at memory m (+∞ when nothing fits).
func (d *deficitTable) top(m int64) float64 {
	return d.g[0][d.key(1, 1)].value(m)
}

// deficitFits says whether makespan T fits the link-credit table f (built for a makespan of
// at least T, its F^1 budget at T being x bytes) once its phase-(L+1) states carry the link
// deficit (levels of width β·Σu_f/deficitLevels). sfirst[j] and sturn are the s-side credits
// of the first run of F^j and of B^{L+1} in f's bytes (as its ref), pf the prefix sums of u_f.
func deficitFits(f *FloatingExact, x int64, T, beta float64, sfirst []int64, sturn int64, pf []float64, opt ExactOptions) (bool, error) {
	n := f.n
	d := &deficitTable{f: f, x: x, sfirst: sfirst, sturn: sturn, stop: opt.Stop, rel: make([]int64, n+1)}
	// Its room: the memory limit less the plain table (its fixed part and breakpoints) and the
	// levels' frontier headers (G and H of each phase-(L+1) state at each level).
	headers := satMul(float64(deficitLevels), 2, float64(n+1), float64(n+1), paretoBytes)
	d.room = int((memoryLimit(opt.MaxMemory)-floatingExactFixedBytes(n)-headers)/breakpointBytes) - f.stats.Breakpoints
	if d.room < 0 {
		return false, errDeficitRoom
	}
	for j := 1; j <= n; j++ {
		d.rel[j] = awayBytes(beta, pf[j])
	}
	m := x - f.c.A0
	if m < 0 {
		return false, nil
	}
	// Levels up to the most deficit at which B^{L+1} can still fit within m (above it no
	// sequence fits), and at most what the link moves over the first pass.
	most := min(awayBytes(beta, pf[n]), m+sturn-d.turnMemory())
	width := max(1, most/(deficitLevels-1))
	d.levels = make([]int64, deficitLevels)
	for k := range d.levels {
		d.levels[k] = int64(k) * width
	}
	d.cut = newCutoff(f.bc.uf, f.bc.ub, T)
	if err := d.fill(); err != nil {
		return false, err
	}
	return d.top(min(m, f.avail)) <= T*(1+1e-12), nil
}

// DeficitMaxStages is the most stages on which LinkCredit adds the link's deficit: its tables
// cost about the levels squared, halved, times the credit table's last phase, and grow as
// n³ — DenseNet-121 (65 stages) at 10 %, 12 GB/s took 7 s a table for no gain, where
// ResNet-152 (53 stages) takes 0.1–0.8 s.
const DeficitMaxStages = 60

// deficitLevels is how many deficit levels deficitFits keeps: a deficit is rounded down to a
// multiple of β·Σu_f/deficitLevels.
const deficitLevels = 16

// deficitBisect returns the largest makespan a search on [lo, hi] proves does not fit (fits
// says whether one does, with the link's deficit; nothing below lo fits), at least lo: upwards
// from lo in steps growing fourfold from 10⁻⁵ of it, then a bisection in the last step, so
// that a deficit that moves the bound by little costs few tables (each is as large as the
// credit table's last phase times its levels, squared). Where nothing below hi = upper
// fitted, one probe just below upper (by wholeCloseTol) decides whether upper's schedule is
// optimal. Stopped (ErrStopped), or out of room (errDeficitRoom), the makespan proved so far.
//
// loFails says that lo is known not to fit (the whole-tensor bisection's lower end, which
// fits no whole-tensor table, let alone one with the deficit): its probe is skipped.
func deficitBisect(lo, hi, upper float64, loFails bool, fits func(T float64) (bool, error)) (float64, error) {
	var failed error
	// probe is fits(t); stop says that the search ends there, with what it proved.
	probe := func(t float64) (ok, stop bool) {
		ok, err := fits(t)
		if err != nil && !errors.Is(err, ErrStopped) && !errors.Is(err, errDeficitRoom) {
			failed = err
		}
		return ok, err != nil
	}
	if !loFails {
		if ok, stop := probe(lo); ok || stop {
			return lo, failed
		}
	}
	for step := 1e-5 * lo; lo+step < hi; step *= 4 {
		t := lo + step
		ok, stop := probe(t)
		if stop {
			return lo, failed
		}
		if ok {
			if step <= 1e-5*lo {
				return lo, nil // it moves the bound by less than 10⁻⁵: not worth its tables
			}
			hi = t
			break
		}
		lo = t
	}
	for k := 0; k < 24 && hi-lo > 1e-6*hi; k++ {
		mid := lo + (hi-lo)/2
		ok, stop := probe(mid)
		if stop {
			return lo, failed
		}
		if ok {
			hi = mid
		} else {
			lo = mid
		}
	}
	if t := upper * (1 - wholeCloseTol); hi == upper && hi-lo <= 1e-6*hi && t > lo {
		if ok, stop := probe(t); stop {
			return lo, failed
		} else if !ok {
			lo = t
		}
	}
	return lo, nil
}
