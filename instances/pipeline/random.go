package pipeline

import (
	"math"
	"math/rand/v2"

	"github.com/memsched/memsched/instances"
)

// RandomTiny draws the small-instance population of the pipeline's property tests (the
// planners against verify/pipeline's exhaustive referee): a tiny chain of instances.RandomTiny
// (L ≤ 5, integer sizes in [1, 6], integer times in [0, 3]) with integer weights in [0, 3] on
// every other draw k, P in 1..4, m in 1..6, the schedule 1F1B or GPipe, β ∈ {+Inf, 1, 2, 4}
// bytes per second (transfer times are then exact in float64), and M between a quarter of and
// the whole store-all need of one GPU holding the chain, so that some instances fit nowhere,
// some only on several GPUs. The same r and k always give the same instance.
func RandomTiny(r *rand.Rand, k int) *Problem {
	c := instances.RandomTiny(r, k)
	if k%2 == 1 {
		for i := range c.Stages {
			c.Stages[i].W = int64(r.IntN(4))
		}
	}
	for c.Len() < 2 {
		c = instances.RandomTiny(r, k)
	}
	p := &Problem{Chain: c, GPUs: 1 + r.IntN(4), MicroBatches: 1 + r.IntN(6), Schedule: Schedules[r.IntN(2)]}
	p.Bandwidth = []float64{math.Inf(1), 1, 2, 4}[r.IntN(4)]
	need := StoreAllCosts(c, 1, p.L()).Memory(p.MicroBatches)
	p.Memory = max(1, need/4+r.Int64N(need-need/4+1))
	return p
}

// Scaled returns a copy of p with every size, the memory and the bandwidth multiplied by f:
// the same instance at another scale (bytes and GiB, f = 2^30), with the same times.
func (p *Problem) Scaled(f int64) *Problem {
	q := *p
	q.Chain = p.Chain.Scaled(f)
	m, ok := instances.MulBytes(p.Memory, f)
	if !ok {
		panic("pipeline: Scaled: the memory leaves [0, MaxBytes]")
	}
	q.Memory = m
	q.Bandwidth = p.Bandwidth * float64(f)
	return &q
}
