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

// RandomTiny draws the small-chain population of SPEC §6's property tests (the combined
// lever's DP, strategies and relaxation MILP are all checked on it against the exhaustive
// search): L ≤ 5 (2 to 6 stages with the loss), integer sizes in [1, 6] with ā ≥ a, δ drawn on
// every third draw k and overheads on every fourth, integer times in [0, 3], the loss stage's
// output and gradient 0.
func RandomTiny(r *rand.Rand, k int) *Chain {
	c := Random(r, RandomParams{Stages: 2 + r.IntN(5), MaxSize: 6, MaxTime: 3, Integer: true,
		WithABar: true, WithDelta: k%3 == 0, WithOverheads: k%4 == 0})
	last := &c.Stages[len(c.Stages)-1]
	last.A, last.ABar, last.Delta = 0, 0, 0
	return c
}

// Scaled returns a copy of c with every size (a^0, δ^0, a, ā, δ, o_f, o_b, w) multiplied by f
// and the times unchanged: the same chain at another scale (bytes and GiB, f = 2^30), whose
// optima are the same times. It panics if a size would pass MaxBytes (a programmer error).
func (c *Chain) Scaled(f int64) *Chain {
	mul := func(x int64) int64 {
		y, ok := MulBytes(x, f)
		if !ok || f < 1 {
			panic(fmt.Sprintf("instances: Scaled(%d) of %q: a size leaves [0, MaxBytes]", f, c.Name))
		}
		return y
	}
	s := c.Clone()
	s.A0, s.Delta0 = mul(s.A0), mul(s.Delta0)
	for i := range s.Stages {
		st := &s.Stages[i]
		st.A, st.ABar, st.Delta, st.OF, st.OB, st.W = mul(st.A), mul(st.ABar), mul(st.Delta), mul(st.OF), mul(st.OB), mul(st.W)
	}
	return s
}

// realUnit is a GPT-2 block's forward in seconds (`gen zoo gpt2`): RealDurations' unit.
const realUnit = 0.07222110612382165

// RealDurations returns a copy of c with every duration × 0.0722211… (a GPT-2 block's forward
// in seconds) × a factor in [1, 1.125) drawn from r (u_f then u_b, stage by stage), and beta
// divided by that unit, so that transfers keep their length against the compute: float
// seconds that share no coarse tick, as a measured profile's do. The tests of the exhaustive
// search of strict schedules (verify/oracle.Strict) and of what it referees take random tiny
// chains so, besides their integer form.
func RealDurations(c *Chain, beta float64, r *rand.Rand) (*Chain, float64) {
	c = c.Clone()
	for i := range c.Stages {
		st := &c.Stages[i]
		st.UF *= realUnit * (1 + r.Float64()/8)
		st.UB *= realUnit * (1 + r.Float64()/8)
	}
	return c, beta / realUnit
}
