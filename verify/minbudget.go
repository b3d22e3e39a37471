package verify

import "github.com/memsched/memsched/instances"

// MinBudget returns the smallest budget (bytes, everything counted) in which some valid
// sequence runs, for 004's model without deletion. a^0 can never be recomputed and B^1 needs
// it, so it stays stored throughout; the cheapest way to run B^ℓ is then to rebuild a^{ℓ-1}
// from a^0 with F_ck^1 F_∅^2 … F_∅^{ℓ-1}, run F_all^ℓ and B^ℓ, while δ^ℓ is held:
//
//	M_min = max( ω_a^0 + ω_δ^{L+1},
//	             max_ℓ max( F_ck^1:        ω_a^0 + ω_δ^ℓ + ω_a^1 + o_f^1            (ℓ ≥ 2)
//	                        F_∅^j, 2≤j<ℓ:  ω_a^0 + ω_δ^ℓ + ω_a^{j-1} + ω_a^j + o_f^j
//	                        F_all^ℓ:       ω_a^0 + ω_δ^ℓ + [ω_a^{ℓ-1}] + ω_ā^ℓ + o_f^ℓ
//	                        B^ℓ:           ω_a^0 + ω_δ^ℓ + [ω_a^{ℓ-1}] + ω_ā^ℓ + ω_δ^{ℓ-1} + o_b^ℓ ))
//
// where [ω_a^{ℓ-1}] is counted only for ℓ ≥ 2 (for ℓ = 1 the input is a^0 itself). Every term
// is forced (an operation's input and output coexist while it runs), so no sequence does
// better; the exhaustive oracle confirms it on random chains (verify/oracle tests,
// docs/remat-model.md).
func MinBudget(c *instances.Chain) int64 {
	n := c.Len()
	a0 := c.A0
	best := a0 + c.SizeDelta(n)
	up := func(m int64) {
		if m > best {
			best = m
		}
	}
	for l := 1; l <= n; l++ {
		d := c.SizeDelta(l)
		st := c.Stage(l)
		in := int64(0)
		if l >= 2 {
			s1 := c.Stage(1)
			up(a0 + d + s1.A + s1.OF)
			for j := 2; j < l; j++ {
				sj := c.Stage(j)
				up(a0 + d + c.SizeA(j-1) + sj.A + sj.OF)
			}
			in = c.SizeA(l - 1)
		}
		up(a0 + d + in + st.ABar + st.OF)
		up(a0 + d + in + st.ABar + c.SizeDelta(l-1) + st.OB)
	}
	return best
}
