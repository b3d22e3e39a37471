package instances

import (
	"fmt"
	"math/rand/v2"
)

// RandomParams bound the chains Random draws.
type RandomParams struct {
	// Stages is the number of stages including the loss stage (≥ 1).
	Stages int
	// MaxSize bounds every size (a, ā, δ, overheads, weights), in bytes (≥ 1).
	MaxSize int64
	// MaxTime bounds every duration, in seconds (≥ 0).
	MaxTime float64
	// Integer draws integer sizes in [1, MaxSize] and integer times in [0, MaxTime], for
	// exact dynamic programs and exhaustive oracles on small instances.
	Integer bool
	// WithABar draws ā ≥ a (else ā = a); WithOverheads draws o_f, o_b (else 0); WithWeights
	// draws w (else 0); WithDelta draws δ independently of a (else δ = a).
	WithABar, WithOverheads, WithWeights, WithDelta bool
}

// Random draws a valid chain from r under p. It panics if p is out of range (a programmer
// error), which includes a MaxSize whose chain could total more than MaxBytes ((6·Stages+2)·
// MaxSize); the same seed always gives the same chain.
func Random(r *rand.Rand, p RandomParams) *Chain {
	if _, ok := MulBytes(int64(6*p.Stages+2), p.MaxSize); p.Stages < 1 || p.MaxSize < 1 || p.MaxTime < 0 || !ok {
		panic(fmt.Sprintf("instances: bad RandomParams %+v", p))
	}
	size := func(lo int64) int64 {
		if lo >= p.MaxSize {
			return p.MaxSize
		}
		return lo + r.Int64N(p.MaxSize-lo+1)
	}
	dur := func() float64 {
		if p.Integer {
			return float64(r.IntN(int(p.MaxTime) + 1))
		}
		return r.Float64() * p.MaxTime
	}
	c := &Chain{Name: "random"}
	c.A0 = size(1)
	c.Delta0 = c.A0
	if p.WithDelta {
		c.Delta0 = size(1)
	}
	for l := 1; l <= p.Stages; l++ {
		s := Stage{Name: fmt.Sprintf("s%d", l), UF: dur(), UB: dur(), A: size(1)}
		s.ABar, s.Delta = s.A, s.A
		if p.WithABar {
			s.ABar = size(s.A)
		}
		if p.WithDelta {
			s.Delta = size(1)
		}
		if p.WithOverheads {
			s.OF, s.OB = size(0), size(0)
		}
		if p.WithWeights {
			s.W = size(1)
		}
		c.Stages = append(c.Stages, s)
	}
	return c
}
