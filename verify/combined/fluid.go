package combined

import (
	"fmt"
	"math"
	"math/big"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
)

// FluidResult is the fluid model's verdict on a plan (SPEC §6).
type FluidResult struct {
	// Feasible is false when some operation does not fit even once the link has moved every
	// byte it can (Reason says which).
	Feasible bool
	Reason   string
	// Makespan is computation plus idle, in seconds; Exact is the same as an exact rational.
	Makespan float64
	Exact    *big.Rat
	// Compute is Σ of the operations' durations (recomputations included); Idle the rest.
	Compute, Idle float64
	// Offloaded is the number of tensors offloaded, OffloadedBytes their size.
	Offloaded      int
	OffloadedBytes int64
}

// level is one nesting level of a plan: a top-level segment, or the loss stage (last).
type level struct {
	x         schedule.Tensor
	size      int64
	off       bool
	fwd, bwd  []int // indices into the plan's compute stream
	start     int   // first stage
	lastStage int
}

// plainStream is a plan's compute stream replayed without any offloading by verify.Remat's
// rules: each operation's memory (everything stored, outputs and overhead) and duration.
type plainStream struct {
	ops    schedule.Sequence
	mem    []int64
	dur    []float64
	levels []level
}

// replay builds the compute stream of p on c, checks the plan's structure and replays the
// stream with verify.RematState.Apply.
func replay(c *instances.Chain, p *schedule.CombinedPlan) (*plainStream, error) {
	n := c.Len()
	L := n - 1
	next := 1
	var prev *schedule.CombinedSegment
	st := &plainStream{}
	for k := range p.Segments {
		g := p.Segments[k]
		if g.Start != next {
			return nil, fmt.Errorf("segment %d starts at stage %d, want %d (segments cover 1..%d in order)", k+1, g.Start, next, L)
		}
		if g.End < g.Start || g.End > L {
			return nil, fmt.Errorf("segment %d: stages %d..%d out of 1..%d", k+1, g.Start, g.End, L)
		}
		if g.All && g.End != g.Start {
			return nil, fmt.Errorf("segment %d: an F_all segment has one stage, got %d..%d", k+1, g.Start, g.End)
		}
		if g.All && len(g.Backward) > 0 {
			return nil, fmt.Errorf("segment %d: an F_all segment's backward part is B^%d, no sequence", k+1, g.Start)
		}
		if !g.All {
			if len(g.Backward) == 0 {
				return nil, fmt.Errorf("segment %d: F_ck segment %d..%d has no backward sequence", k+1, g.Start, g.End)
			}
			for _, o := range g.Backward {
				if o.Kind == schedule.Del || o.Stage < g.Start || o.Stage > g.End {
					return nil, fmt.Errorf("segment %d: backward operation %v outside stages %d..%d", k+1, o, g.Start, g.End)
				}
			}
			if last := g.Backward[len(g.Backward)-1]; last != (schedule.Op{Kind: schedule.B, Stage: g.Start}) {
				return nil, fmt.Errorf("segment %d: the backward sequence ends with %v, want B^%d", k+1, last, g.Start)
			}
		}
		x := g.Input(prev)
		st.levels = append(st.levels, level{x: x, size: tensorSize(c, x), off: g.Offload, start: g.Start, lastStage: g.End})
		prev = &p.Segments[k]
		next = g.End + 1
	}
	if next != n {
		return nil, fmt.Errorf("the segments end at stage %d, want %d (the loss stage %d is not a segment)", next-1, L, n)
	}
	x := p.LossInput()
	if len(p.Segments) == 0 {
		x = schedule.Tensor{}
	}
	st.levels = append(st.levels, level{x: x, size: tensorSize(c, x), off: p.OffloadLoss, start: n, lastStage: n})
	st.ops = p.Ops(n)
	// Assign the operations to the levels: forward steps in order, then F_all^{L+1}, B^{L+1},
	// then the backward parts innermost first.
	i := 0
	for k := range p.Segments {
		for range p.Segments[k].Forward() {
			st.levels[k].fwd = append(st.levels[k].fwd, i)
			i++
		}
	}
	K := len(p.Segments)
	st.levels[K].fwd = []int{i}
	st.levels[K].bwd = []int{i + 1}
	i += 2
	for k := K - 1; k >= 0; k-- {
		for range p.Segments[k].BackwardOps() {
			st.levels[k].bwd = append(st.levels[k].bwd, i)
			i++
		}
	}
	s := verify.InitialState(c)
	st.mem, st.dur = make([]int64, len(st.ops)), make([]float64, len(st.ops))
	for j, op := range st.ops {
		m, d, err := s.Apply(c, op)
		if err != nil {
			return nil, fmt.Errorf("operation %d (%v): %v", j+1, op, err)
		}
		st.mem[j], st.dur[j] = m, d
	}
	if s.T != 0 {
		return nil, fmt.Errorf("the stream ends before δ^0 (current gradient δ^%d)", s.T)
	}
	return st, nil
}

// tensorSize is |a^ℓ| or |ā^ℓ| (ā^0 is a^0).
func tensorSize(c *instances.Chain, t schedule.Tensor) int64 {
	if t.Full && t.Stage > 0 {
		return c.Stage(t.Stage).ABar
	}
	return c.SizeA(t.Stage)
}

func rat(x float64) *big.Rat  { return new(big.Rat).SetFloat64(x) }
func ratInt(x int64) *big.Rat { return new(big.Rat).SetInt64(x) }

// Fluid evaluates plan p on chain c under budget bytes (everything counted, a^0 included) and
// a link of beta bytes per second in the fluid model of SPEC §6, in exact rational arithmetic
// (every float64 input is taken as the exact binary fraction it is):
//
//   - Offloads run first-in first-out and as early as possible during the forward phase: a
//     segment's input joins the link's queue when its producer ends; a byte of it leaves GPU
//     memory once sent and once the segment's first forward (its reader) has ended. Memory is
//     checked at the start of each forward operation; when it would exceed the budget the
//     compute stream idles until the link has sent the excess (infeasible if the bytes
//     queued cannot free enough).
//   - At the turn (after F_all^{L+1}) the bytes still queued are sent with no computation
//     beside them.
//   - Prefetches run as late as possible, last-offloaded first: level by level from the
//     outside in, the backward part of a level is run backwards in time with the backlog q of
//     bytes that must arrive during it (0 for the outermost level). Before each operation o,
//     memory at the end of o — the operation's own, the kept inputs and the q bytes already
//     back — is checked; an excess is moved during an idle after o (q shrinks by it), then
//     q ← max(0, q − β·u(o)). What is left, plus the level's own input if it is offloaded, is
//     the next level's backlog; the loss stage's leftover is moved at the turn.
//
// Makespan = Σ durations + idle. The plan's structure and its compute stream are checked with
// verify.RematState.Apply; an invalid plan is an error.
func Fluid(c *instances.Chain, budget int64, beta float64, p *schedule.CombinedPlan) (FluidResult, error) {
	return fluid(c, budget, beta, p, false)
}

// FluidFreeTurn is Fluid with the turn free: the bytes still queued for offload after
// F_all^{L+1} and those that must be back before B^{L+1} move with no idle. SPEC §6 says the
// fluid makespan of a plan is at most the strict makespan of any schedule of it; that is false
// at the turn, where the fluid model idles while a strict schedule may run B^{L+1} and the
// backward operations beside the last offloads, or bring a tensor back before the turn
// (docs/remat-offload.md has a chain with fluid 13 s, strict 12 s). Without the turn's idle
// the model relaxes strict timing for the plan's decisions: the bound FluidFreeTurn gives,
// and its optimum over the class, hold for strict schedules of the class (argued in the docs,
// checked against every strict schedule of the tests).
func FluidFreeTurn(c *instances.Chain, budget int64, beta float64, p *schedule.CombinedPlan) (FluidResult, error) {
	return fluid(c, budget, beta, p, true)
}

func fluid(c *instances.Chain, budget int64, beta float64, p *schedule.CombinedPlan, freeTurn bool) (FluidResult, error) {
	if err := c.Validate(); err != nil {
		return FluidResult{}, err
	}
	if !(beta > 0) || math.IsInf(beta, 0) {
		return FluidResult{}, fmt.Errorf("combined: bandwidth β = %g must be positive and finite", beta)
	}
	st, err := replay(c, p)
	if err != nil {
		return FluidResult{}, fmt.Errorf("combined: invalid plan: %v", err)
	}
	res := FluidResult{}
	for _, lv := range st.levels {
		if lv.off {
			res.Offloaded++
			res.OffloadedBytes += lv.size
		}
	}
	// The link moves β·u bytes during an operation of duration u. When that is a whole number
	// for every stage (integer instances), every quantity below is a whole number of bytes and
	// the model runs in int64; otherwise in rationals. Both are exact.
	b := rat(beta)
	n := c.Len()
	link := make([][2]int64, n+1) // bytes moved during F^ℓ, B^ℓ
	integral := budget <= 1<<52
	for l := 1; l <= n && integral; l++ {
		for k, u := range []float64{c.Stage(l).UF, c.Stage(l).UB} {
			// β·u is exact when the rounding error of the product (by fused multiply-add)
			// is zero.
			x := beta * u
			if x != math.Trunc(x) || x > 1<<44 || math.FMA(beta, u, -x) != 0 {
				integral = false
				break
			}
			link[l][k] = int64(x)
		}
	}
	var m model
	if integral {
		m = &intModel{M: budget}
	} else {
		m = &ratModel{M: ratInt(budget), b: b}
	}
	moved := func(i int) { // the link during operation i
		if integral {
			k := 0
			if st.ops[i].Kind == schedule.B {
				k = 1
			}
			m.sub(link[st.ops[i].Stage][k])
		} else {
			m.subRat(new(big.Rat).Mul(b, rat(st.dur[i])))
		}
	}
	// Forward phase: m holds the bytes queued for offload and still on the GPU.
	var away int64 // bytes of offloaded inputs of enclosing levels (their part is queued)
	for _, lv := range st.levels {
		for j, i := range lv.fwd {
			// Plain memory minus the offloaded inputs (theirs is queued), the level's own
			// input in full during its first forward.
			mem := st.mem[i] - away
			if lv.off && j > 0 {
				mem -= lv.size
			}
			if short := m.fit(mem); short != "" {
				res.Reason = fmt.Sprintf("%v (operation %d) needs %s B more than the budget beyond what is queued for offload", st.ops[i], i+1, short)
				return res, nil
			}
			if lv.off && j == 0 {
				m.add(lv.size)
			}
			moved(i)
		}
		if lv.off {
			away += lv.size
		}
	}
	// The turn: what is still queued goes out with no computation beside it.
	m.flush(freeTurn)
	// Backward phase, outermost level first, each run backwards in time; m now holds the
	// backlog of bytes that must arrive during the operations still to be visited.
	away = 0
	for _, lv := range st.levels {
		for j := len(lv.bwd) - 1; j >= 0; j-- {
			i := lv.bwd[j]
			if short := m.fit(st.mem[i] - away); short != "" {
				res.Reason = fmt.Sprintf("%v (operation %d) needs %s B more than the budget even with nothing arriving during it", st.ops[i], i+1, short)
				return res, nil
			}
			moved(i)
		}
		if lv.off {
			m.add(lv.size)
			away += lv.size
		}
	}
	m.flush(freeTurn) // the loss stage's leftover arrives at the turn
	compute := new(big.Rat)
	if integral {
		// Σu = Σ (β·u)/β exactly.
		var sum int64
		for _, op := range st.ops {
			k := 0
			if op.Kind == schedule.B {
				k = 1
			}
			sum += link[op.Stage][k]
		}
		compute.SetFrac64(sum, 1)
		compute.Quo(compute, b)
	} else {
		for _, d := range st.dur {
			compute.Add(compute, rat(d))
		}
	}
	it := new(big.Rat).Quo(m.idle(), b)
	res.Exact = new(big.Rat).Add(compute, it)
	res.Feasible = true
	res.Makespan, _ = res.Exact.Float64()
	res.Compute, _ = compute.Float64()
	res.Idle, _ = it.Float64()
	return res, nil
}

// model is the link's bookkeeping in the fluid model, exact in int64 or in rationals: a
// quantity x of bytes (queued for offload in the forward phase, still to arrive in the
// backward phase) and the idle so far, in bytes moved with the compute stream waiting.
type model interface {
	// fit checks an operation using mem bytes besides x against the budget M: an excess is
	// moved while the compute stream idles (x shrinks by it); if x cannot cover it, fit
	// returns the bytes missing.
	fit(mem int64) string
	add(v int64)
	sub(v int64)       // the link moves v bytes: x ← max(0, x − v)
	subRat(v *big.Rat) // the same, v rational
	flush(free bool)   // everything left moves, with the compute stream waiting unless free
	idle() *big.Rat
}

type intModel struct{ M, x, id int64 }

func (m *intModel) fit(mem int64) string {
	if ex := mem + m.x - m.M; ex > 0 {
		if ex > m.x {
			return fmt.Sprint(ex - m.x)
		}
		m.id += ex
		m.x -= ex
	}
	return ""
}
func (m *intModel) add(v int64)       { m.x += v }
func (m *intModel) sub(v int64)       { m.x = max(0, m.x-v) }
func (m *intModel) subRat(v *big.Rat) { panic("combined: rational link in the integer model") }
func (m *intModel) flush(free bool) {
	if !free {
		m.id += m.x
	}
	m.x = 0
}
func (m *intModel) idle() *big.Rat { return ratInt(m.id) }

type ratModel struct {
	M, b  *big.Rat
	x, id big.Rat
}

func (m *ratModel) fit(mem int64) string {
	tot := new(big.Rat).Add(ratInt(mem), &m.x)
	if tot.Cmp(m.M) > 0 {
		ex := tot.Sub(tot, m.M)
		if ex.Cmp(&m.x) > 0 {
			return new(big.Rat).Sub(ex, &m.x).FloatString(0)
		}
		m.id.Add(&m.id, ex)
		m.x.Sub(&m.x, ex)
	}
	return ""
}
func (m *ratModel) add(v int64) { m.x.Add(&m.x, ratInt(v)) }
func (m *ratModel) sub(v int64) { m.subRat(ratInt(v)) }
func (m *ratModel) subRat(v *big.Rat) {
	m.x.Sub(&m.x, v)
	if m.x.Sign() < 0 {
		m.x.SetInt64(0)
	}
}
func (m *ratModel) flush(free bool) {
	if !free {
		m.id.Add(&m.id, &m.x)
	}
	m.x.SetInt64(0)
}
func (m *ratModel) idle() *big.Rat { return new(big.Rat).Set(&m.id) }
