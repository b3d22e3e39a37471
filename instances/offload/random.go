package offload

import "math/rand/v2"

// Random draws a small integer instance with L layers for tests: u_F ∈ 1..4, u_B ∈ 1..6,
// |w| ∈ 1..9, |a| ∈ 0..3, β ∈ 1..6, and M_GPU between the largest operation plus three of the
// largest weights (room for L2L's buffers) and that plus every weight — so offloading is
// sometimes needed and always possible. The same r gives the same instance.
func Random(r *rand.Rand, L int) *Problem {
	p := &Problem{Beta: float64(1 + r.IntN(6))}
	var maxW, maxOp, sumW int64
	for i := 0; i < L; i++ {
		l := Layer{UF: float64(1 + r.IntN(4)), UB: float64(1 + r.IntN(6)), W: int64(1 + r.IntN(9)), A: int64(r.IntN(4))}
		p.Layers = append(p.Layers, l)
		maxW = max(maxW, l.W)
		sumW += l.W
	}
	for i := 1; i <= L; i++ {
		maxOp = max(maxOp, p.OpMemory(i, true))
	}
	p.MGPU = maxOp + 3*maxW + r.Int64N(sumW+1)
	return p
}
