package pipeline

import (
	"math"

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
func Balanced(p *pl.Problem) []int {
	L := p.L()
	S := min(p.GPUs, L)
	t := prefixTimes(p)
	w := func(s, e int) float64 {
		if e == L {
			return t[L+1] - t[s-1]
		}
		return t[e] - t[s-1]
	}
	// D[g][i]: the least largest part time of stages i..L on g parts.
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
			for e := i; e <= L-g+1; e++ {
				if v := max(w(i, e), D[g-1][e+1]); v < D[g][i] {
					D[g][i], arg[g][i] = v, e
				}
			}
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
