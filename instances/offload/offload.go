// Package offload holds weight-offloading problems (002, SPEC §3): layers with forward and
// backward times, weight and activation sizes, a GPU memory and a full-duplex link bandwidth.
package offload

import (
	"fmt"
	"math"

	"github.com/memsched/memsched/instances"
)

// Layer is layer i of 002's model: times in seconds, sizes in bytes.
type Layer struct {
	UF, UB float64
	W, A   int64 // |w_i| and |a^i|
}

// Problem is OFF(L, M_GPU, β): Layers[i-1] is layer i.
type Problem struct {
	Layers []Layer
	// A0 is |a^0|, the input of the iteration: it stays on the GPU throughout (B_1 needs it),
	// so it is part of every operation's memory and of the memory between operations (SPEC §3).
	A0   int64
	MGPU int64
	Beta float64 // bytes per second, each direction
}

// L returns the number of layers.
func (p *Problem) L() int { return len(p.Layers) }

// Layer returns layer i (1-based).
func (p *Problem) Layer(i int) Layer { return p.Layers[i-1] }

// ActsPrefix returns acts with acts[i] = Σ_{k=0..i} |a^k| for i = 0..L (a^0 included), for
// callers that need every prefix.
func (p *Problem) ActsPrefix() []int64 {
	acts := make([]int64, p.L()+1)
	acts[0] = p.A0
	for i := 1; i <= p.L(); i++ {
		acts[i] = acts[i-1] + p.Layers[i-1].A
	}
	return acts
}

// Acts returns Σ_{k=0..i} |a^k| (the input a^0 included).
func (p *Problem) Acts(i int) int64 {
	s := p.A0
	for k := 1; k <= i; k++ {
		s += p.Layers[k-1].A
	}
	return s
}

// OpMemory is M_{F_i} = |w_i| + Σ_{k=0..i}|a^k| or M_{B_i} = 2|w_i| + Σ_{k=0..i}|a^k| (002 eq. 1
// with the input a^0, SPEC §3): the memory of the operation itself, other layers' weights
// excluded.
func (p *Problem) OpMemory(i int, backward bool) int64 {
	w := p.Layers[i-1].W
	if backward {
		w *= 2
	}
	return w + p.Acts(i)
}

// Validate checks the problem's numbers: non-negative finite values, a positive memory and
// bandwidth, and the memory and the total of every size at most instances.MaxBytes (so that
// sums such as OpMemory's 2|w_i| + Σ|a^k| cannot overflow).
func (p *Problem) Validate() error {
	if len(p.Layers) == 0 {
		return fmt.Errorf("offload: no layers")
	}
	if p.MGPU <= 0 || !(p.Beta > 0) || math.IsInf(p.Beta, 0) {
		return fmt.Errorf("offload: memory %d and bandwidth %g must be positive", p.MGPU, p.Beta)
	}
	if p.A0 < 0 {
		return fmt.Errorf("offload: input size a0 = %d is negative", p.A0)
	}
	if p.MGPU > instances.MaxBytes {
		return fmt.Errorf("offload: memory %d B is above 2^60 B (1 EiB), the most memsched computes with", p.MGPU)
	}
	total, ok := instances.SumBytes(p.A0)
	if !ok {
		return fmt.Errorf("offload: input size a0 = %d is above 2^60 B (1 EiB), the most memsched computes with", p.A0)
	}
	for i, l := range p.Layers {
		if l.W < 0 || l.A < 0 || !(l.UF >= 0) || !(l.UB >= 0) || math.IsInf(l.UF+l.UB, 0) {
			return fmt.Errorf("offload: layer %d: negative or non-finite value %+v", i+1, l)
		}
		if total, ok = instances.SumBytes(total, l.W, l.A); !ok {
			return fmt.Errorf("offload: layer %d: the sizes (a0, every |w_i| and |a^i|) total more than 2^60 B (1 EiB), the most memsched computes with", i+1)
		}
	}
	return nil
}

// FromChain maps a chain to 002's model: layer i = stage i with |w_i| = w, |a^i| = a, u_F = uf,
// u_B = ub, and |a^0| = the chain's input.a. 002 §7 checkpoints every layer: only its input a^{i-1} stays from F_i to B_i, and the
// layer's intermediates (ā − a, recomputed inside B_i) are left out of the model — its M_GPU is
// the device memory minus that transient (002 §7: "M_GPU used for simulation is smaller than
// 16GB"); see TransientMemory. A last stage without weights (the loss) is folded away, as 002 §3
// neglects the loss operation.
func FromChain(c *instances.Chain, mgpu int64, beta float64) (*Problem, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	p := &Problem{MGPU: mgpu, Beta: beta, A0: c.A0}
	stages := c.Stages
	if n := len(stages); n > 1 && stages[n-1].W == 0 {
		stages = stages[:n-1]
	}
	for _, s := range stages {
		p.Layers = append(p.Layers, Layer{UF: s.UF, UB: s.UB, W: s.W, A: s.A})
	}
	return p, p.Validate()
}

// TransientMemory returns the largest ā − a + o_b over the chain's stages: the memory a layer's
// recomputed intermediates take during its backward, which 002's M_GPU excludes. Pass
// device memory − TransientMemory(c) as M_GPU to reproduce 002 §7's setting.
func TransientMemory(c *instances.Chain) int64 {
	var m int64
	for _, s := range c.Stages {
		m = max(m, s.ABar-s.A+s.OB)
	}
	return m
}
