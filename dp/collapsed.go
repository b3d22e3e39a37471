package dp

import (
	"math"

	"github.com/memsched/memsched/instances"
)

// CollapsedExact is a lower bound on C_FL, and so on the optimum of 004's model (by 004
// Lemma 4.4, which makes C_FL that optimum), with the size of C_MP's table: O(n²) rows instead
// of C_FL's O(n³) (docs/dp.md, "C_FL collapsed").
//
// C_FL differs from C_MP in one place: the right part of a split may start from a checkpoint
// a^{s'-1} and end with it floated to a^{t'-1} (t' ≥ s', ω_a^{t'-1} ≥ ω_a^{s'-1} by Cor. 4.5),
// so that B^{t'-1} … B^{s'} are left to the checkpoint outside. Dropping every operation on the
// stages below t' from such a part leaves a valid sequence of the sub-chain t'..ℓ from a
// checkpoint a^{t'-1}, shorter by at least Σ_{k=s'}^{t'-1} u_f^k (each of those stages runs at
// least once) and within the same memory beside its checkpoint (the part always holds its
// floating checkpoint, of size ≥ ω_a^{s'-1}, below t'). With Lemma 4.4 for that sub-chain,
// G(s', t', ℓ, m) ≥ Σ_{k=s'}^{t'-1} u_f^k + G(t', t', ℓ, m), and C_FL's split (r, s', t') is at
// least C_MP's split at t' with the checkpoint charged ω_a^{s'-1} instead of ω_a^{t'-1}. So
//
//	P(s, s, m) = u_f^s + u_b^s                              if m ≥ m_all^{s,s}
//	P(s, t, m) = min( u_f^s + P(s+1, t, m − ω_ā^s) + u_b^s  if m ≥ m_all^{s,t},
//	                  min_{s<t'≤t} Σ_{k=s}^{t'-1} u_f^k + P(t', t, m − w(s, t')) + P(s, t'−1, m)
//	                                                        if m ≥ n(s, t', t) )
//	w(s, t')    = min_{s≤k<t'} ω_a^k                          (the smallest checkpoint s'−1 can be)
//	n(s, t', t) = max(ω_δ^t + ω_a^s + o_f^s, min_{t'≤x≤t} ω_δ^x + max_{s<j<t'} ω_a^{j-1} + ω_a^j + o_f^j)
//
// n is what every candidate s' must fit at least: F_ck^s with δ^t, and each F_∅^j (s < j < t')
// either in the split's forward (with δ^t) or in a float of the right part (with some δ^x,
// t' ≤ x ≤ t). P ≤ G(1, 1, L+1, ·) = C_FL, and P(1, L+1, M − ω_a^0) bounds the optimum.
//
// Where ω_a is non-increasing on 1..L and ω_δ^t ≤ ω_δ^x for x ≤ t (GPT-2 and BERT: every block
// output the same size), w(s, t') = ω_a^{t'-1} and n(s, t', t) is C_MP's m_ck^{s,t',t}: P is
// C_MP, so persistent sequences are optimal there (the remark after 004 Thm 4.7, with equal
// sizes and δ made explicit). Elsewhere P may lie below C_MP.
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
	if p.rec != cmp {
		panic("dp: Collapsed needs a C_MP table")
	}
	q := &PersistentExact{c: p.c, bc: newBytesChain(p.c), budget: p.budget, avail: p.avail, n: p.n, rec: collapsed}
	if q.avail < 0 {
		return &CollapsedExact{p: q}, nil
	}
	q.bc.fillMinDelta()
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
	bc := p.bc
	first := bc.d[t] + bc.a[s] + bc.of[s] // F_ck^s with δ^t
	if first > p.avail {
		return
	}
	w := bc.a[s]
	var moves int64 = -1 // max_{s<j<t'} ω_a^{j-1} + ω_a^j + o_f^j (-1: none yet)
	pre := 0.0
	for s2 := s + 1; s2 <= t; s2++ {
		if j := s2 - 1; j > s {
			moves = max(moves, bc.a[j-1]+bc.a[j]+bc.of[j])
		}
		w = min(w, bc.a[s2-1])
		pre += bc.uf[s2-1]
		need := first
		if moves >= 0 {
			need = max(need, bc.minD[s2*(bc.n+1)+t]+moves)
		}
		if need > p.avail {
			break // both terms only grow with t'
		}
		env.add(pre, p.row(s2, t), w, p.row(s, s2-1), need, int32(s2), false)
	}
}
