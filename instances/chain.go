package instances

// Stage is one stage ℓ of a chain (004 §3, SPEC §1). Sizes are bytes, times seconds.
type Stage struct {
	// Name labels the stage in reports (e.g. "conv1", "loss").
	Name string
	// UF and UB are the durations u_f^ℓ of F^ℓ and u_b^ℓ of B^ℓ, in seconds.
	UF, UB float64
	// A is ω_a^ℓ, the size of the plain output a^ℓ of F^ℓ.
	A int64
	// ABar is ω_ā^ℓ, the size of ā^ℓ: everything B^ℓ needs from the forward, a^ℓ included,
	// so ABar ≥ A.
	ABar int64
	// Delta is ω_δ^ℓ, the size of δ^ℓ, the input gradient of B^ℓ.
	Delta int64
	// OF and OB are the temporary overheads o_f^ℓ of F^ℓ and o_b^ℓ of B^ℓ, in bytes.
	OF, OB int64
	// W is the size of the stage's weights |w_ℓ| in bytes (used by weight offloading, 002).
	W int64
}

// Chain is a sequential network profile: stages 1..L+1, the last one being the loss stage
// (whose costs may be zero), plus the input a^0 and its gradient δ^0 (SPEC §1).
//
// Stages[i] is stage ℓ = i+1. The loss gradient δ^{L+1} has size Stages[L].Delta.
type Chain struct {
	// Name labels the chain; measured profiles record machine and library versions here.
	Name string
	// A0 is ω_a^0, the size of the input a^0.
	A0 int64
	// Delta0 is ω_δ^0, the size of δ^0 (the gradient with respect to the input).
	Delta0 int64
	// Stages are stages 1..L+1 in order; the last is the loss stage.
	Stages []Stage
}

// Len returns the number of stages including the loss stage (L+1).
func (c *Chain) Len() int { return len(c.Stages) }

// ComputeTime returns Σ_ℓ (u_f^ℓ + u_b^ℓ): every rematerialization sequence runs each forward
// and backward at least once, so it bounds every makespan of 004's model from below.
func (c *Chain) ComputeTime() float64 {
	var s float64
	for _, st := range c.Stages {
		s += st.UF + st.UB
	}
	return s
}

// Stage returns stage ℓ (1-based, 1 ≤ ℓ ≤ Len()). It panics when ℓ is out of range.
func (c *Chain) Stage(l int) *Stage {
	if l < 1 || l > len(c.Stages) {
		panic("instances: stage index out of range")
	}
	return &c.Stages[l-1]
}

// SizeA returns ω_a^ℓ for 0 ≤ ℓ ≤ Len() (ℓ = 0 is the input a^0).
func (c *Chain) SizeA(l int) int64 {
	if l == 0 {
		return c.A0
	}
	return c.Stage(l).A
}

// SizeDelta returns ω_δ^ℓ for 0 ≤ ℓ ≤ Len() (ℓ = 0 is δ^0, ℓ = Len() the loss gradient).
func (c *Chain) SizeDelta(l int) int64 {
	if l == 0 {
		return c.Delta0
	}
	return c.Stage(l).Delta
}

// Clone returns a deep copy of c.
func (c *Chain) Clone() *Chain {
	d := *c
	d.Stages = append([]Stage(nil), c.Stages...)
	return &d
}
