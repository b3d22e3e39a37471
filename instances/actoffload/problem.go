package actoffload

import (
	"fmt"
	"math"

	"github.com/memsched/memsched/instances"
)

// Problem is one instance of 001's Problem 1 in SPEC §2's indices. Sizes are bytes, times
// seconds.
//
// F_i (0 ≤ i ≤ L) reads x_i and writes x_{i+1}; B_i reads x_{i+1}, x_i and y_{i+1} and writes
// y_i; after B_i, x_{i+1} and y_{i+1} are freed. y_{L+1} is the loss gradient: it appears when
// B_L starts. x_0 is on the GPU at time 0. x_0..x_L may be offloaded (x_{L+1} has no forward
// reader after its producer, so offloading it can never free memory before B_L needs it).
type Problem struct {
	// X[i] = |x_i| for i = 0..L+1.
	X []int64
	// Y[i] = |y_i| for i = 0..L+1.
	Y []int64
	// UF[i], UB[i] are u_{F_i}, u_{B_i} for i = 0..L.
	UF, UB []float64
	// ExF[i], ExB[i] are the temporary memories ex_i^F, ex_i^B for i = 0..L.
	ExF, ExB []int64
	// MGPU is the GPU memory in bytes.
	MGPU int64
	// Beta is the link bandwidth in bytes per second (one transfer at a time, 001 (B)).
	Beta float64
}

// L returns L: the operations are F_0..F_L and B_L..B_0.
func (p *Problem) L() int { return len(p.UF) - 1 }

// Validate checks lengths and signs, and that M_GPU and the total of every size are at most
// instances.MaxBytes (so that sums such as MemB cannot overflow). It returns an error naming
// the first bad field.
func (p *Problem) Validate() error {
	n := len(p.UF)
	if n == 0 {
		return fmt.Errorf("actoffload: no operations")
	}
	if len(p.UB) != n || len(p.ExF) != n || len(p.ExB) != n {
		return fmt.Errorf("actoffload: UF, UB, ExF, ExB must have one entry per operation (L+1 = %d), got %d, %d, %d, %d",
			n, len(p.UF), len(p.UB), len(p.ExF), len(p.ExB))
	}
	if len(p.X) != n+1 || len(p.Y) != n+1 {
		return fmt.Errorf("actoffload: X and Y must have L+2 = %d entries, got %d and %d", n+1, len(p.X), len(p.Y))
	}
	if p.MGPU <= 0 {
		return fmt.Errorf("actoffload: memory M_GPU = %d must be positive", p.MGPU)
	}
	if !(p.Beta > 0) || math.IsInf(p.Beta, 0) {
		return fmt.Errorf("actoffload: bandwidth β = %g must be positive and finite", p.Beta)
	}
	for i := 0; i < n; i++ {
		if !(p.UF[i] >= 0) || !(p.UB[i] >= 0) || math.IsInf(p.UF[i]+p.UB[i], 0) {
			return fmt.Errorf("actoffload: operation %d: times u_F = %g, u_B = %g must be finite and ≥ 0", i, p.UF[i], p.UB[i])
		}
		if p.ExF[i] < 0 || p.ExB[i] < 0 {
			return fmt.Errorf("actoffload: operation %d: temporary memory ex^F = %d, ex^B = %d must be ≥ 0", i, p.ExF[i], p.ExB[i])
		}
	}
	for i := 0; i <= n; i++ {
		if p.X[i] < 0 || p.Y[i] < 0 {
			return fmt.Errorf("actoffload: |x_%d| = %d, |y_%d| = %d must be ≥ 0", i, p.X[i], i, p.Y[i])
		}
	}
	if p.MGPU > instances.MaxBytes {
		return fmt.Errorf("actoffload: memory M_GPU = %d B is above 2^60 B (1 EiB), the most memsched computes with", p.MGPU)
	}
	if _, ok := instances.SumBytes(append(append(append(append([]int64(nil), p.X...), p.Y...), p.ExF...), p.ExB...)...); !ok {
		return fmt.Errorf("actoffload: the sizes (every |x_i|, |y_i|, ex_i^F, ex_i^B) total more than 2^60 B (1 EiB), the most memsched computes with")
	}
	return nil
}

// Compute returns Σ_i (u_{F_i} + u_{B_i}), the makespan without any idle time.
func (p *Problem) Compute() float64 {
	var s float64
	for i := range p.UF {
		s += p.UF[i] + p.UB[i]
	}
	return s
}

// MemF returns m_{F_i} = ex_i^F + Σ_{j≤i+1} |x_j| (001 §3.2): the memory F_i needs on both
// devices together.
func (p *Problem) MemF(i int) int64 {
	m := p.ExF[i]
	for j := 0; j <= i+1; j++ {
		m += p.X[j]
	}
	return m
}

// MemB returns m_{B_i} = ex_i^B + |y_i| + |y_{i+1}| + Σ_{j≤i+1} |x_j| (001 §3.2).
func (p *Problem) MemB(i int) int64 {
	m := p.ExB[i] + p.Y[i] + p.Y[i+1]
	for j := 0; j <= i+1; j++ {
		m += p.X[j]
	}
	return m
}

// Needs returns m_k − M_GPU for every operation k = 0..2n−1 (F_0..F_L, then B_L..B_0), in
// O(n): MemF and MemB are O(n) each, and a loop over them was quadratic (seconds on a
// 20 001-stage chain, before anything could check a deadline).
func (p *Problem) Needs() []int64 {
	n := p.L() + 1
	need := make([]int64, 2*n)
	var xs int64 // Σ_{j ≤ i+1} |x_j|
	for i := 0; i < n; i++ {
		if i == 0 {
			xs = p.X[0]
		}
		xs += p.X[i+1]
		need[i] = p.ExF[i] + xs - p.MGPU
		need[2*n-1-i] = p.ExB[i] + p.Y[i] + p.Y[i+1] + xs - p.MGPU
	}
	return need
}

// Peak returns M_peak = max_i max(m_{F_i}, m_{B_i}): the memory needed without offloading.
func (p *Problem) Peak() int64 {
	var peak, xs int64
	for i := 0; i <= p.L(); i++ {
		if i == 0 {
			xs = p.X[0]
		}
		xs += p.X[i+1]
		peak = max(peak, p.ExF[i]+xs, p.ExB[i]+p.Y[i]+p.Y[i+1]+xs)
	}
	return peak
}

// MinMemory returns the smallest M_GPU for which some schedule exists when every activation
// that is not an operation's input or output may be on the CPU: max over operations of the
// operation's own inputs, outputs and temporary memory (x_i + x_{i+1} + ex^F for F_i;
// x_i + x_{i+1} + y_i + y_{i+1} + ex^B for B_i).
func (p *Problem) MinMemory() int64 {
	var m int64
	for i := 0; i <= p.L(); i++ {
		m = max(m, p.X[i]+p.X[i+1]+p.ExF[i], p.X[i]+p.X[i+1]+p.Y[i]+p.Y[i+1]+p.ExB[i])
	}
	return m
}

// FromChain maps a chain profile (SPEC §1) to Problem 1 (SPEC §2). With the chain's stages
// ℓ = 1..N (N = Len(), the loss last), operation i = 0..L = N−1 is stage ℓ = i+1:
//
//	x_0 = a^0 (the input, on the GPU from time 0 until B_0 ends), x_i = ā^i for i ≥ 1
//	(everything B^i needs from the forward); y_i = δ^i (y_{L+1} = δ^N, the loss gradient);
//	u_{F_i} = u_f^{i+1}, u_{B_i} = u_b^{i+1}; ex_i^F = o_f^{i+1}, ex_i^B = o_b^{i+1}.
//
// The input may be offloaded like any other activation (001 offloads x_0 first).
func FromChain(c *instances.Chain, mgpu int64, beta float64) (*Problem, error) {
	n := c.Len()
	if n == 0 {
		return nil, fmt.Errorf("actoffload: chain %q has no stages", c.Name)
	}
	p := &Problem{
		X: make([]int64, n+1), Y: make([]int64, n+1),
		UF: make([]float64, n), UB: make([]float64, n),
		ExF: make([]int64, n), ExB: make([]int64, n),
		MGPU: mgpu, Beta: beta,
	}
	p.X[0] = c.A0
	for l := 0; l <= n; l++ {
		p.Y[l] = c.SizeDelta(l)
	}
	for i := 0; i < n; i++ {
		s := c.Stage(i + 1)
		p.X[i+1] = s.ABar
		p.UF[i], p.UB[i] = s.UF, s.UB
		p.ExF[i], p.ExB[i] = s.OF, s.OB
	}
	return p, p.Validate()
}

// ToChain is the inverse of FromChain: a chain whose FromChain is p (ā = a = x, δ = y).
func (p *Problem) ToChain(name string) *instances.Chain {
	c := &instances.Chain{Name: name, A0: p.X[0], Delta0: p.Y[0]}
	for i := 0; i <= p.L(); i++ {
		c.Stages = append(c.Stages, instances.Stage{
			Name: fmt.Sprintf("op%d", i),
			UF:   p.UF[i], UB: p.UB[i],
			A: p.X[i+1], ABar: p.X[i+1], Delta: p.Y[i+1],
			OF: p.ExF[i], OB: p.ExB[i],
		})
	}
	return c
}
