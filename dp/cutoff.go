package dp

import "math"

// cutoff prunes an exact table for one budget by an upper bound ub on the makespan at that
// budget (the makespan of a verified sequence; ExactOptions.Cutoff). A sub-chain state
// G(s, t, ℓ) (C_MP's row (s, ℓ) is G(s, s, ℓ)) is only ever part of a sequence that also runs,
// outside the state,
//
//	ctx(s, t, ℓ) = Σ_{k∉[t,ℓ]} (u_f^k + u_b^k) + [ℓ < L+1] Σ_{k=s}^{ℓ} u_f^k
//
// (every other stage's forward and backward once; and when ℓ is not the loss stage, the
// forward over s..ℓ that produced δ^ℓ before the state began). So its values above
// ub − ctx(s, t, ℓ) cannot be part of a sequence of makespan ≤ ub, and the table drops them
// (they read +∞). The thresholds are consistent — for every candidate of every recurrence,
// ctx(sub-state) ≤ ctx(state) + the candidate's other terms (each at least its sub-chain's
// Σ u_f, Σ u_b) — so by induction over the fill, every value at or under its threshold is
// computed exactly, and the top row is exact wherever it is ≤ ub.
type cutoff struct {
	ub      float64
	n       int
	pf, pfb []float64 // prefix sums of u_f and of u_f + u_b over stages 1..k
}

// newCutoff returns nil (no pruning) unless ub is positive and finite; uf and ub are the
// stages' durations, indexed 1..n.
func newCutoff(uf, ubk []float64, ub float64) *cutoff {
	if !(ub > 0) || math.IsInf(ub, 1) {
		return nil
	}
	n := len(uf) - 1
	c := &cutoff{ub: ub, n: n, pf: make([]float64, n+1), pfb: make([]float64, n+1)}
	for k := 1; k <= n; k++ {
		c.pf[k] = c.pf[k-1] + uf[k]
		c.pfb[k] = c.pfb[k-1] + uf[k] + ubk[k]
	}
	return c
}

// limit is the largest value of state (s, t, ℓ) kept: ub − ctx(s, t, ℓ), loosened by a relative
// 1e-9 of ub so that the sums' rounding never drops a value that is needed.
func (c *cutoff) limit(s, t, l int) float64 {
	ctx := c.pfb[c.n] - (c.pfb[l] - c.pfb[t-1])
	if l < c.n {
		ctx += c.pf[l] - c.pf[s-1]
	}
	return c.ub*(1+1e-9) - ctx
}

// truncate drops the breakpoints of p whose value is above v (a prefix: values decrease).
func (p *pareto) truncate(v float64) {
	i := 0
	for i < len(p.val) && p.val[i] > v {
		i++
	}
	if i == 0 {
		return
	}
	k := copy(p.mem, p.mem[i:])
	copy(p.val, p.val[i:])
	copy(p.arg, p.arg[i:])
	p.mem, p.val, p.arg = p.mem[:k], p.val[:k], p.arg[:k]
}
