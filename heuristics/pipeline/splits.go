package pipeline

import (
	"math"
	"sort"

	pl "github.com/memsched/memsched/instances/pipeline"
)

// Uniform returns the cut of stages 1..L into S = min(P, L) parts of equal layer counts, the
// first L mod S parts one layer longer (numpy.array_split's convention; Megatron requires L
// divisible by S). The loss stage joins the last part.
func Uniform(p *pl.Problem) []int {
	L := p.L()
	S := min(p.GPUs, L)
	cuts := make([]int, S)
	e := 0
	for k := range cuts {
		e += L / S
		if k < L%S {
			e++
		}
		cuts[k] = e
	}
	return cuts
}

// Balanced returns the cut of stages 1..L into S = min(P, L) parts whose largest Σ(u_f + u_b)
// (the loss stage with the last part) is least: the equal-time split an engineer computes from
// a profile, memory and transfers aside (chains on chains; ties to the earliest cut).
//
// D[g][i], the least largest part of stages i..L on g parts, is min over the first part's end
// e of max(w(i, e), D[g−1][e+1]), where w(i, e) never decreases with e and D[g−1][e+1] never
// increases (one stage fewer never needs a larger part: times are ≥ 0, and float sums of
// prefixes keep both monotone), so the minimum sits where the two cross: two binary searches
// per entry, O(S·L·log L) instead of the O(S·L²) scan (3.3 s on 20 001 stages, 8 GPUs), with
// the scan's ties (the earliest e attaining it; TestBalancedMatchesScan).
func Balanced(p *pl.Problem) []int { return BalancedCuts(p, min(p.GPUs, p.L())) }

// BalancedCuts is Balanced on S parts, 1 ≤ S ≤ L (the exact planner's seed, dp/pipeline, cuts
// the chain so on min(P, L) GPUs).
func BalancedCuts(p *pl.Problem, S int) []int {
	L := p.L()
	t := prefixTimes(p)
	w := func(s, e int) float64 {
		if e == L {
			return t[L+1] - t[s-1]
		}
		return t[e] - t[s-1]
	}
	D := make([][]float64, S+1)
	arg := make([][]int, S+1)
	for g := 1; g <= S; g++ {
		D[g], arg[g] = make([]float64, L+2), make([]int, L+2)
		for i := 1; i <= L; i++ {
			D[g][i] = math.Inf(1)
			if g == 1 {
				D[g][i], arg[g][i] = w(i, L), L
				continue
			}
			lo, hi := i, L-g+1
			if lo > hi {
				continue
			}
			next := D[g-1]
			// x: the first e at which the first part is at least the rest (hi+1: none).
			x := lo + sort.Search(hi-lo+1, func(k int) bool { return w(i, lo+k) >= next[lo+k+1] })
			best := math.Inf(1)
			if x <= hi {
				best = w(i, x)
			}
			if x > lo {
				best = min(best, next[x]) // max(w(i, x−1), next[x]) = next[x]
			}
			// Left of x the value is next[e+1], which never increases: the earliest e there
			// attaining best, if any; else x itself (right of x the value never decreases;
			// when x > hi, best is next[hi+1] and the search finds e ≤ hi).
			e := lo + sort.Search(x-lo, func(k int) bool { return next[lo+k+1] <= best })
			D[g][i], arg[g][i] = best, e
		}
	}
	cuts := make([]int, 0, S)
	for i, g := 1, S; g >= 1; g-- {
		e := arg[g][i]
		cuts = append(cuts, e)
		i = e + 1
	}
	return cuts
}

// prefixTimes returns t[ℓ] = Σ_{i≤ℓ} (u_f^i + u_b^i) for ℓ = 0..L+1.
func prefixTimes(p *pl.Problem) []float64 {
	t := make([]float64, p.L()+2)
	for l := 1; l <= p.L()+1; l++ {
		st := p.Chain.Stage(l)
		t[l] = t[l-1] + st.UF + st.UB
	}
	return t
}
