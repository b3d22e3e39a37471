package actoffload

import "math/rand/v2"

// Random draws a small instance for property tests: L+1 = n operations, sizes in [0, 9]·unit
// (y and the temporary memories in [0, 3]·unit on a third of the indices), times in [0, 3],
// β in [1, 4]·unit per second, and M_GPU at one of five points from the smallest feasible
// memory to M_peak. The same generator serves byte scale (unit = 1) and GiB scale; the same
// seed always gives the same instance.
func Random(r *rand.Rand, n int, unit int64) *Problem {
	p := &Problem{
		X: make([]int64, n+1), Y: make([]int64, n+1),
		UF: make([]float64, n), UB: make([]float64, n), ExF: make([]int64, n), ExB: make([]int64, n),
		Beta: float64(unit) * float64(1+r.IntN(4)),
	}
	for i := range p.X {
		p.X[i] = unit * int64(r.IntN(10))
		if r.IntN(3) == 0 {
			p.Y[i] = unit * int64(r.IntN(4))
		}
	}
	for i := 0; i < n; i++ {
		p.UF[i], p.UB[i] = float64(r.IntN(4)), float64(r.IntN(4))
		if r.IntN(3) == 0 {
			p.ExF[i] = unit * int64(r.IntN(4))
		}
		if r.IntN(3) == 0 {
			p.ExB[i] = unit * int64(r.IntN(4))
		}
	}
	lo, hi := p.MinMemory(), p.Peak()
	p.MGPU = max(1, lo+(hi-lo)*int64(r.IntN(5))/4)
	return p
}
