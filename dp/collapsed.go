package dp

import (
	"fmt"
	"math"

	"github.com/memsched/memsched/instances"
)

// CollapsedExact is a lower bound on C_FL, and so on the optimum of 004's model (by 004
// Lemma 4.4, which makes C_FL that optimum), with C_MP's O(n²) rows plus, per checkpoint that
// can float to a larger one, O(n²) more — not C_FL's O(n³) (docs/dp.md, "C_FL collapsed").
//
// C_FL differs from C_MP where the right part of a split starts from a checkpoint a^{s'-1}
// and ends with it floated to a^{t'-1} (t' > s', ω_a^{t'-1} ≥ ω_a^{s'-1} by Cor. 4.5), leaving
// B^{t'-1} … B^{s'} to the checkpoint outside. Dropping every operation on the stages below t'
// from such a part leaves a valid sequence of the sub-chain t'..ℓ from a checkpoint a^{t'-1},
// shorter by at least Σ_{k=s'}^{t'-1} u_f^k (each of those stages runs at least once) and
// within the same memory beside its checkpoint (the part always holds its floating checkpoint,
// of size ≥ ω_a^{s'-1}, below t'). With Lemma 4.4 for that sub-chain,
//
//	G(s', t', ℓ, m) ≥ Σ_{k=s'}^{t'-1} u_f^k + G(t', t', ℓ, m).                        (★)
//
// When ω_a^{t'-1} = ω_a^{s'-1}, (★) loses no memory, and the split (r, s', t') is at least
// C_MP's split at t'. When ω_a^{t'-1} > ω_a^{s'-1} (k = s'−1 is a "source"), (★) would charge
// the whole part the smaller checkpoint; instead the part keeps C_FL's phases, and only its
// sub-parts are relaxed. So, with P(s, t) ≤ G(s, s, t) (checkpoint a^{s-1}, δ^t, B^t … B^s)
// and, for each source k and ω_a^{t-1} > ω_a^k, S_k(t, ℓ) ≤ G(k+1, t, ℓ):
//
//	P(s, s, m)    = u_f^s + u_b^s                                 if m ≥ m_all^{s,s}
//	P(s, t, m)    = min( u_f^s + P(s+1, t, m − ω_ā^s) + u_b^s      if m ≥ m_all^{s,t},
//	                     R_s(t', t, m) + P(s, t'−1, m) for s < t' ≤ t )
//	R_s(t', t, m) = min( Σ_{j=s}^{t'-1} u_f^j + P(t', t, m − ω_a^{t'-1})    if m ≥ n(s, t', t),
//	                     Σ_{j=s}^{k} u_f^j + S_k(t', t, m − ω_a^k)
//	                       for sources s ≤ k < t'−1 with ω_a^k < ω_a^{t'-1}
//	                       if m ≥ n(s, t', t) and m ≥ ω_δ^t + m_fwd(s, k+1) )
//	S_k(t, ℓ, x)  = min( Σ_{j=k+1}^{t-1} u_f^j + P(t, ℓ, x + ω_a^k − w(k, t))  (float first, then (★))
//	                       if x ≥ ω_δ^ℓ + ω_a^{k+1} + o_f^{k+1},
//	                     R_{k+1}(t'', ℓ, x) + S_k(t, t''−1, x) for t < t'' ≤ ℓ )  (a phase from a^k)
//	w(k, t)       = min{ω_a^j : k < j < t, ω_a^k ≤ ω_a^j ≤ ω_a^{t-1}}   (where the float may land)
//	n(s, t', t)   = max(ω_δ^t + ω_a^s + o_f^s, min_{t'≤x≤t} ω_δ^x + max_{s<j<t'} ω_a^{j-1} + ω_a^j + o_f^j)
//
// R_s bounds the right part of a split from a^{s-1} that ends at t' (C_FL's X): from a^{t'-1}
// itself, or from a smaller source floated there (a part from a checkpoint of a^{t'-1}'s size
// is at least the first, by (★)). m_fwd(s, s') is the split's forward peak (C_MP's m_ck
// without δ); n is what every candidate for t' must fit: F_ck^s with δ^t, and each F_∅^j
// (s < j < t') in the split's forward (with δ^t) or in a float of the right part (with some
// δ^x, t' ≤ x ≤ t). P(1, L+1, M − ω_a^0) ≤ C_FL bounds the optimum.
//
// With many sources (DenseNet: every layer of a dense block is smaller than the next) the S_k
// cost as much as C_FL; then, on chains C_FL can take, they are not built and a source's part
// is bounded by (★) with its checkpoint charged ω_a^k (initSources).
//
// Where ω_a is non-increasing on 1..L and ω_δ^t ≤ ω_δ^x for x ≤ t (GPT-2 and BERT: every block
// output the same size) there is no source and n(s, t', t) is C_MP's m_ck^{s,t',t}: P is C_MP,
// so persistent sequences are optimal there (the remark after 004 Thm 4.7, with equal sizes
// and δ made explicit). Elsewhere P may lie below C_MP.
type CollapsedExact struct {
	p *PersistentExact
}

// NewCollapsedExact fills the table of P in bytes (breakpoints, as PersistentExact) for
// budgets up to budget bytes (a^0 included). It returns a *BreakpointError when a frontier
// outgrows opt's caps.
func NewCollapsedExact(c *instances.Chain, budget int64, opt ExactOptions) (*CollapsedExact, error) {
	p, err := newPersistentExact(c, budget, opt, collapsed)
	if err != nil {
		return nil, err
	}
	return &CollapsedExact{p: p}, nil
}

// Collapsed returns the table of P for p's budget, sharing p's rows wherever they are P's:
// row (s, t) of P reads only rows inside s..t, and there its candidates are C_MP's when ω_a is
// non-increasing on s..t−1 and ω_δ on s+1..t (then w(s', t') = ω_a^{t'-1} and n = m_ck), so
// only the other rows are computed (ResNet-1001: the n rows (1, ·), a^1 being smaller than
// a^2; GPT-2: none). p must be a C_MP table (NewPersistentExact); P is pruned by p's cutoff, or
// by opt.Cutoff when that is lower (a shared row keeps more than P needs, never less).
func (p *PersistentExact) Collapsed(opt ExactOptions) (*CollapsedExact, error) {
	if p.rec != recCMP {
		panic("dp: Collapsed needs a C_MP table")
	}
	q := &PersistentExact{c: p.c, bc: newBytesChain(p.c), budget: p.budget, avail: p.avail, n: p.n, rec: collapsed}
	if q.avail < 0 {
		return &CollapsedExact{p: q}, nil
	}
	// The rows' headers are shared or new, so the fixed part is at most the table's own.
	opt, err := memoryCaps(opt, fmt.Sprintf("exact C_FL collapsed on %d stages", q.n), persistentExactFixedBytes(p.c, collapsed))
	if err != nil {
		return nil, err
	}
	q.bc.fillMinDelta()
	q.initSources()
	ub := opt.Cutoff
	if p.cut != nil && (!(ub > 0) || ub > p.cut.ub) {
		ub = p.cut.ub
	}
	q.cut = newCutoff(q.bc.uf, q.bc.ub, ub)
	n, bc := q.n, q.bc
	// runA[k]: the last index e with ω_a^k ≥ … ≥ ω_a^e; runD likewise for ω_δ.
	runA, runD := make([]int, n+2), make([]int, n+2)
	runA[n], runD[n], runD[n+1] = n, n, n+1
	for k := n - 1; k >= 0; k-- {
		runA[k], runD[k] = k, k
		if bc.a[k] >= bc.a[k+1] {
			runA[k] = runA[k+1]
		}
		if bc.d[k] >= bc.d[k+1] {
			runD[k] = runD[k+1]
		}
	}
	shared := func(s, t int) bool { return s == t || t-1 <= runA[s] && t <= runD[s+1] }
	q.rows = make([]pareto, len(p.rows))
	for s := 1; s <= n; s++ {
		for t := s; t <= n; t++ {
			if shared(s, t) {
				q.rows[q.rowOf(s, t)] = p.rows[p.rowOf(s, t)]
			}
		}
	}
	if err := q.fill(opt, shared); err != nil {
		return nil, err
	}
	return &CollapsedExact{p: q}, nil
}

// Bound returns P at budget ≤ the table's budget (bytes, a^0 included): a lower bound on the
// optimal makespan, or feasible = false when P is infinite there, which proves that no
// sequence fits.
func (b *CollapsedExact) Bound(budget int64) (bound float64, feasible bool) {
	if budget > b.p.budget {
		panic("dp: budget above the collapsed table's")
	}
	m := budget - b.p.c.A0
	if m < 0 || b.p.avail < 0 {
		return math.Inf(1), false
	}
	v := b.p.row(1, b.p.n).value(m)
	return v, !math.IsInf(v, 1)
}

// Frontier returns P's makespan-versus-budget steps up to the table's budget.
func (b *CollapsedExact) Frontier() []Point { return b.p.Frontier() }

// Stats returns the size of the table.
func (b *CollapsedExact) Stats() ExactStats { return b.p.Stats() }

// fillMinDelta fills minD: minD[s*(n+1)+t] = min_{s≤x≤t} ω_δ^x for s ≤ t.
func (b *bytesChain) fillMinDelta() {
	n := b.n
	b.minD = make([]int64, (n+1)*(n+1))
	for t := 0; t <= n; t++ {
		v := b.d[t]
		for s := t; s >= 0; s-- {
			v = min(v, b.d[s])
			b.minD[s*(n+1)+t] = v
		}
	}
}

// collapsedSplits adds P's split candidates of row (s, t) to env.
func (p *PersistentExact) collapsedSplits(env *envelope, s, t int) {
	p.splitsFrom(env, s, t, s+1, func(t2 int) *pareto { return p.row(s, t2-1) })
}

// splitsFrom adds to env the candidates that start from a checkpoint a^{s-1} with δ^t stored:
// F_ck^s F_∅ … up to a^{s'-1}, the right part from s' ending at t' (t0 ≤ t' ≤ t, s < s' ≤ t')
// bounded as P's row explains, plus left(t'), the rest (P(s, t'−1) in P's rows, S_k(·, t'−1)
// in a phase of S_k).
func (p *PersistentExact) splitsFrom(env *envelope, s, t, t0 int, left func(t2 int) *pareto) {
	bc := p.bc
	first := bc.d[t] + bc.a[s] + bc.of[s] // F_ck^s with δ^t
	if first > p.avail {
		return
	}
	var moves int64 = -1 // max_{s<j<t'} ω_a^{j-1} + ω_a^j + o_f^j (-1: none yet)
	var fwd int64        // m_fwd(s, t')
	pre := 0.0
	act := env.src[:0] // sources s ≤ k < t'−1, with Σ_{j=s}^{k} u_f^j and m_fwd(s, k+1)
	for s2 := s + 1; s2 <= t; s2++ {
		if j := s2 - 1; j > s {
			moves = max(moves, bc.a[j-1]+bc.a[j]+bc.of[j])
		}
		fwd = bc.splitPeak(s, s2, fwd)
		pre += bc.uf[s2-1]
		need := first
		if moves >= 0 {
			need = max(need, bc.minD[s2*(bc.n+1)+t]+moves)
		}
		if need > p.avail {
			break // both terms only grow with t'
		}
		if s2 >= t0 {
			B := left(s2)
			// Sources below ω_a^{t'-1}: the part S_k(t', t) — or, for a source without its
			// table (initSources), (★) with the checkpoint charged ω_a^k. (Any other k has
			// ω_a^k ≥ ω_a^{t'-1}: no float from it reaches t'−1 unless at the same size.)
			w := bc.a[s2-1]
			for _, sp := range act {
				switch k := sp.k; {
				case bc.a[k] >= bc.a[s2-1]:
				case p.fam[k] == nil:
					w = min(w, bc.a[k])
				default:
					env.add(sp.pre, p.source(k, s2, t), bc.a[k], B, max(need, bc.d[t]+sp.fwd), int32(s2), false)
				}
			}
			env.add(pre, p.row(s2, t), w, B, need, int32(s2), false)
		}
		if k := s2 - 1; p.isSource[k] {
			act = append(act, sourcePart{k: k, pre: pre, fwd: fwd})
		}
	}
	env.src = act
}

// sourcePart is a source k reached from a checkpoint a^{s-1}: the forward's time and peak.
type sourcePart struct {
	k   int
	pre float64
	fwd int64
}

// source returns S_k(t, ℓ).
func (p *PersistentExact) source(k, t, l int) *pareto { return &p.fam[k][t*(p.n+1)+l] }

// fillSources fills S_k(t, ℓ) for every t with k+2 ≤ t ≤ ℓ and ω_a^{t-1} > ω_a^k. It runs in
// cell (k+1, ℓ) of the wavefront, after row (k+1, ℓ): it reads the rows (t', ℓ) for t' > k+1,
// filled before in column ℓ, and S_k(t, ℓ') for ℓ' < ℓ, from earlier columns.
func (p *PersistentExact) fillSources(env *envelope, ar *arena, cp *caps, k, l int) error {
	bc := p.bc
	for t := k + 2; t <= l; t++ {
		if bc.a[t-1] <= bc.a[k] {
			continue
		}
		if p.cut != nil {
			env.startUnder(p.avail, p.cut.limit(k+1, t, l))
		} else {
			env.start(p.avail)
		}
		// Float first to a^{j}, ω_a^k ≤ ω_a^j ≤ ω_a^{t-1}, then (★).
		w := int64(math.MaxInt64)
		pre := 0.0
		for j := k + 1; j < t; j++ {
			pre += bc.uf[j]
			if a := bc.a[j]; a >= bc.a[k] && a <= bc.a[t-1] {
				w = min(w, a)
			}
		}
		env.add(pre, p.row(t, l), w-bc.a[k], nil, bc.d[l]+bc.a[k+1]+bc.of[k+1], 0, false)
		// A phase from a^k: F_ck^{k+1} …, a right part ending at t'' > t, then S_k(t, t''−1).
		p.splitsFrom(env, k+1, l, t+1, func(t2 int) *pareto { return p.source(k, t, t2-1) })
		if p.cut != nil {
			env.cur.truncate(p.cut.limit(k+1, t, l))
		}
		if err := cp.check(&env.cur, k+1, t, l); err != nil {
			return err
		}
		*p.source(k, t, l) = ar.keep(&env.cur)
	}
	return nil
}

// maxSources is the most sources for which a collapsed table builds the S_k: each S_k has
// O(n²) states of O(n) candidates, so with many sources (DenseNet: every layer of a dense
// block) P would cost as much as C_FL itself; maxSourceBytes caps the S_k's frontier headers
// (72 B per state: 8 MiB per source on ResNet-1001, 72 MiB at 1000 stages).
var maxSources = 16

const maxSourceBytes = 512 << 20

// sources returns the sources k of bc (some later ω_a^j, j < n, is larger), descending.
func sources(bc *bytesChain) []int {
	var src []int
	top := int64(math.MinInt64) // max_{k<j<n} ω_a^j
	for k := bc.n - 2; k >= 1; k-- {
		top = max(top, bc.a[k+1])
		if top > bc.a[k] {
			src = append(src, k)
		}
	}
	return src
}

// collapsedSources returns how many source tables S_k a collapsed table on bc builds: all
// of them, or none when there are more than maxSources or their headers would take more than
// maxSourceBytes (then P charges every such part its source's size, (★)).
func collapsedSources(bc *bytesChain) int {
	n, k := bc.n, len(sources(bc))
	if k > maxSources || float64(k)*float64((n+1)*(n+1))*paretoBytes > maxSourceBytes {
		return 0
	}
	return k
}

// initSources marks the sources and allocates their S_k (collapsedSources).
func (p *PersistentExact) initSources() {
	n := p.n
	p.fam = make([][]pareto, n+1)
	p.isSource = make([]bool, n+1)
	src := sources(p.bc)
	for _, k := range src {
		p.isSource[k] = true
	}
	if collapsedSources(p.bc) == 0 {
		return
	}
	for _, k := range src {
		p.fam[k] = make([]pareto, (n+1)*(n+1))
	}
}
