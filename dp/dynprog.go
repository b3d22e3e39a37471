package dp

import (
	"fmt"
	"math"
	"sort"

	hact "github.com/memsched/memsched/heuristics/actoffload"
	act "github.com/memsched/memsched/instances/actoffload"
)

// ActOptions control DYNPROG's discretization (001 §5.3.2). The zero value uses DefaultSlots.
type ActOptions struct {
	// Slots is the number S of memory slots of M_GPU/S bytes each (0: DefaultSlots = 500).
	Slots int
	// Exact uses slots of q = gcd of every size and M_GPU bytes, so no size is rounded: exact
	// for integer instances (1-byte slots at worst: small sizes only).
	Exact bool
	// MaxMemory caps the DP's states in bytes (0: DefaultMaxMemory; dynprogStateBytes each,
	// counted as they are made: their number depends on the data); past it the DP stops with
	// a *TooLargeError.
	MaxMemory int64
	// Stop, when closed, stops the DP between operations: it returns ErrStopped.
	Stop <-chan struct{}
}

// DynProg is 001 §5.3's DYNPROG: the dynamic program chooses the set S of activations to
// offload, and the result is the no-wait ordered schedule that offloads exactly S (validated by
// verify/timed). Sizes are rounded UP to slots (001 §5.3.2). Among the DP's final states, the
// sets are tried by increasing DP value and the best of the first eight feasible schedules is
// returned. The DP runs first with the stricter cap Σ_{l<i}|x_l| during F_i (x_i stays while
// F_i reads it), then, if none of its sets runs, with the relaxation's cap; failing both it
// returns GREEDY. Feasible = false only when GREEDY finds nothing either.
func DynProg(p *act.Problem, o ActOptions) (*hact.Result, error) {
	for _, strict := range []bool{true, false} {
		d, err := newDynprog(p, o, false)
		if err != nil {
			return nil, err
		}
		d.strict = strict
		best, err := d.schedules(o)
		if err != nil || best.Feasible {
			return best, err
		}
	}
	// Neither DP found a set whose schedule runs: GREEDY's set, grown as needed.
	return hact.Greedy(p)
}

// schedules tries the DP's sets by increasing value and keeps the best validated schedule.
func (d *dynprog) schedules(o ActOptions) (*hact.Result, error) {
	finals, err := d.run(o)
	if err != nil {
		return nil, err
	}
	best := &hact.Result{}
	tried, feasible := map[string]bool{}, 0
	for _, f := range finals {
		if feasible == 8 || len(tried) == 64 {
			break
		}
		set := d.set(f)
		key := fmt.Sprint(set)
		if tried[key] {
			continue
		}
		tried[key] = true
		r, err := repair(d.p, set)
		if err != nil {
			return nil, err
		}
		if r.Feasible {
			feasible++
			if !best.Feasible || r.Report.Makespan < best.Report.Makespan {
				best = r
			}
		}
	}
	return best, nil
}

// repair schedules the ordered set and, while the schedule deadlocks, adds the lowest index not
// in the set (the relaxation may pick activations that are produced too late to make room).
func repair(p *act.Problem, set []int) (*hact.Result, error) {
	in := make([]bool, p.L()+1)
	for _, j := range set {
		in[j] = true
	}
	for next := 0; ; {
		r, err := hact.Ordered(p, set)
		if err != nil || r.Feasible {
			return r, err
		}
		for next <= p.L() && (in[next] || p.X[next] == 0) {
			next++
		}
		if next > p.L() {
			return r, nil
		}
		in[next] = true
		set = append(set, next)
	}
}

// InterruptibleBound returns the larger of Fractional and DYNPROG's optimum with every size
// rounded DOWN (and every window
// widened), +Inf when no set is feasible even so: a certified lower bound on the makespan of
// every schedule of Problem 2 (interruptible transfers, 001 §5) and hence of Problem 1.
//
// What the DP minimizes, for each set S (docs/act-offload.md): by 001 Lemma 3 an optimal
// schedule is ordered, so the bytes C(t) that have streamed out and not back rise to
// V_S = Σ_{j∈S}|x_j| and fall back to 0, at rate ≤ β, which takes 2 V_S/β; and while operation
// k runs C(t) ∈ [m_k − M_GPU, c_k(S)] with c_{F_i}(S) = Σ_{l≤i, l∈S}|x_l| and
// c_{B_i}(S) = Σ_{l<i, l∈S}|x_l| (memory is released no earlier than streamed; what an
// operation reads cannot be away). The DP runs the forward F_0..F_L forwards in time and the
// backward B_0..B_L backwards in time in one pass over i, as 001 Alg. 1 does, keeping for each
// state (Σ_{l≤i, l∈S}|x_l|, the most bytes C can have reached at each front) the least idle
// time; a front idles only when C cannot climb to the next window in time. Further relaxed,
// C may drop at will inside each front and the fronts meet freely between F_L and B_L. The
// value of S is max(Σu + idle, 2 V_S/β).
//
// DynProg (sizes rounded up) uses the stricter cap Σ_{l<i, l∈S}|x_l| during F_i, since x_i
// leaves memory only after F_i in Problem 1.
func InterruptibleBound(p *act.Problem, o ActOptions) (float64, error) {
	d, err := newDynprog(p, o, true)
	if err != nil {
		return 0, err
	}
	finals, err := d.run(o)
	if err != nil {
		return 0, err
	}
	if len(finals) == 0 {
		return math.Inf(1), nil
	}
	// The fluid relaxation (no set) also relaxes Problem 2, and keeps the window's lower
	// ends that this DP lets go: the larger of the two is certified.
	return math.Max(d.states[len(d.states)-1][finals[0]].value, p.Fractional()), nil
}

type dpKey struct {
	vlo, vhi int64
	fhi, bhi float64
}

type dpState struct {
	key    dpKey
	idle   float64
	value  float64 // final states only
	parent int32
	take   bool
}

type dynprog struct {
	p      *act.Problem
	n      int
	q      int64
	lower  bool
	strict bool    // cap Σ_{l<i} during F_i (x_i stays while F_i reads it)
	beta   float64 // slots per second
	states [][]dpState
	// per operation i: forward and backward windows' lower ends (slots) and x_i rounded.
	dF, dB   []float64
	xlo, xhi []int64
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func newDynprog(p *act.Problem, o ActOptions, lower bool) (*dynprog, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	n := p.L() + 1
	d := &dynprog{p: p, n: n, lower: lower}
	switch {
	case o.Exact:
		q := p.MGPU
		for _, v := range [][]int64{p.X, p.Y, p.ExF, p.ExB} {
			for _, x := range v {
				q = gcd(q, x)
			}
		}
		d.q = q
	default:
		s := o.Slots
		if s == 0 {
			s = DefaultSlots
		}
		if s < 0 {
			return nil, fmt.Errorf("dp: slots = %d must be positive", s)
		}
		d.q = max(1, (p.MGPU+int64(s)-1)/int64(s))
	}
	q := d.q
	d.beta = p.Beta / float64(q)
	d.dF, d.dB = make([]float64, n), make([]float64, n)
	d.xlo, d.xhi = make([]int64, n), make([]int64, n)
	needs := p.Needs()
	for i := 0; i < n; i++ {
		d.xlo[i], d.xhi[i] = p.X[i]/q, (p.X[i]+q-1)/q
		if !lower {
			d.xlo[i] = d.xhi[i]
		}
		round := func(need int64) float64 {
			if need <= 0 {
				return 0
			}
			if lower {
				return float64(need / q)
			}
			return float64((need + q - 1) / q)
		}
		d.dF[i] = round(needs[i])
		d.dB[i] = round(needs[2*n-1-i])
	}
	return d, nil
}

// advance moves a front through one operation of window [dmin, c] and duration u: hi is the
// most bytes C can have reached at the front (C may always be lower: the relaxation lets data
// come back at will, which keeps one number per front). The front idles when even hi misses
// the window; hi is rounded up to whole slots, which only relaxes.
func (d *dynprog) advance(hi, dmin, c, u float64) (nhi, idle float64, ok bool) {
	if dmin > c {
		return 0, 0, false
	}
	if hi < dmin {
		idle = (dmin - hi) / d.beta
		hi = dmin
	}
	hi = math.Min(c, hi+d.beta*u)
	return math.Ceil(hi - 1e-9), idle, true
}

// dynprogStateBytes is the memory of one DP state (dpState) with its share of the index map
// that deduplicates the states of an operation; keep it next to run.
const dynprogStateBytes = 56 + 48

// run fills the tables and returns the final states sorted by value; it stops with
// ErrStopped when o.Stop closes and with a *TooLargeError when the states pass o.MaxMemory.
func (d *dynprog) run(o ActOptions) ([]int, error) {
	d.states = make([][]dpState, d.n+1)
	d.states[0] = []dpState{{parent: -1}}
	limit := memoryLimit(o.MaxMemory)
	var kept int64 // states kept so far
	for i := 0; i < d.n; i++ {
		if stopped(o.Stop) {
			return nil, ErrStopped
		}
		index := map[dpKey]int{}
		var next []dpState
		for si, s := range d.states[i] {
			for _, take := range []bool{false, true} {
				if take && d.p.X[i] == 0 {
					continue
				}
				k := s.key
				// B_i reads x_i: only data before i may be away (c = V_{i−1}).
				bhi, ib, ok := d.advance(k.bhi, d.dB[i], float64(k.vhi), d.p.UB[i])
				if !ok {
					continue
				}
				capF := float64(k.vhi) // F_i may stream x_i out while reading it
				if take {
					k.vlo += d.xlo[i]
					k.vhi += d.xhi[i]
				}
				if !d.strict {
					capF = float64(k.vhi)
				}
				fhi, ifw, ok := d.advance(k.fhi, d.dF[i], capF, d.p.UF[i])
				if !ok {
					continue
				}
				k.fhi, k.bhi = fhi, bhi
				idle := s.idle + ib + ifw
				if j, seen := index[k]; seen {
					if idle < next[j].idle {
						next[j].idle, next[j].parent, next[j].take = idle, int32(si), take
					}
					continue
				}
				index[k] = len(next)
				next = append(next, dpState{key: k, idle: idle, parent: int32(si), take: take})
			}
		}
		if b := satMul(float64(kept+int64(len(next))), dynprogStateBytes); b > limit {
			return nil, &TooLargeError{Table: fmt.Sprintf("DYNPROG (%d operations, slots of %d B)", d.n, d.q), Bytes: b, Limit: limit,
				Hint: "use fewer --slots or raise --max-memory"}
		}
		d.states[i+1] = pruneDominated(next)
		kept += int64(len(d.states[i+1]))
	}
	last := d.states[d.n]
	compute := d.p.Compute()
	order := make([]int, len(last))
	for j := range last {
		k := last[j].key
		last[j].value = math.Max(compute+last[j].idle, 2*float64(k.vlo)/d.beta)
		order[j] = j
	}
	sort.SliceStable(order, func(a, b int) bool { return last[order[a]].value < last[order[b]].value })
	return order, nil
}

// pruneDominated drops every state that another with the same volumes dominates: at least as high at
// both fronts with no more idle (a higher front only has more choices later).
func pruneDominated(states []dpState) []dpState {
	sort.SliceStable(states, func(a, b int) bool {
		ka, kb := states[a].key, states[b].key
		if ka.vlo != kb.vlo {
			return ka.vlo < kb.vlo
		}
		if ka.vhi != kb.vhi {
			return ka.vhi < kb.vhi
		}
		if states[a].idle != states[b].idle {
			return states[a].idle < states[b].idle
		}
		if ka.fhi != kb.fhi {
			return ka.fhi > kb.fhi
		}
		return ka.bhi > kb.bhi
	})
	out := states[:0]
	group := 0
	for _, s := range states {
		if len(out) > group && (out[group].key.vlo != s.key.vlo || out[group].key.vhi != s.key.vhi) {
			group = len(out)
		}
		dominated := false
		for _, t := range out[group:] {
			if t.key.fhi >= s.key.fhi && t.key.bhi >= s.key.bhi {
				dominated = true
				break
			}
		}
		if !dominated {
			out = append(out, s)
		}
	}
	return out
}

// set rebuilds the offload set of final state f.
func (d *dynprog) set(f int) []int {
	var set []int
	for i := d.n; i > 0; i-- {
		s := d.states[i][f]
		if s.take {
			set = append(set, i-1)
		}
		f = int(s.parent)
	}
	sort.Ints(set)
	return set
}
