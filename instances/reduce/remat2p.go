package reduce

import (
	"fmt"

	"github.com/memsched/memsched/instances"
)

// RematTwoPartition is the reduction of 004 Thm 3.6 from 2-Partition to Remat(L, M). For
// values x_1..x_n with Σ x_k = 2V it builds a chain of L+1 = 2n+2 stages (indices re-read
// from the damaged extraction, docs/dp.md):
//
//	stage 2k−1 (k = 1..n): u_f = ω_a = x_k;   stage 2k (k = 1..n): u_f = ω_a = 0;
//	stage 2n+1:            u_f = ω_a = V;     stage 2n+2 (loss):   u_f = ω_a = 0;
//	ω_a^0 = 0, ω_ā = ω_δ = ω_a, no overheads, u_b = 1 for every stage (U_B = 2n+2),
//
// with budget M = 3V. A sequence of makespan T = 4V + U_B exists iff the values split into
// two halves of sum V: the forward costs 3V, and ā^{2k−1} can be kept through B^{2n+1} only
// for a set of sum ≤ V, so the other half (sum ≥ V) is recomputed.
func RematTwoPartition(xs []int64) (c *instances.Chain, budget int64, target float64, err error) {
	if len(xs) == 0 {
		return nil, 0, 0, fmt.Errorf("reduce: 2-partition needs at least one value")
	}
	sum, err := sumValues("2-partition", xs)
	if err != nil {
		return nil, 0, 0, err
	}
	if sum%2 != 0 {
		return nil, 0, 0, fmt.Errorf("reduce: 2-partition values sum to %d, which is odd", sum)
	}
	v := sum / 2
	n := len(xs)
	c = &instances.Chain{Name: fmt.Sprintf("remat 2-partition n=%d V=%d", n, v)}
	add := func(name string, size int64) {
		c.Stages = append(c.Stages, instances.Stage{Name: name, UF: float64(size), UB: 1, A: size, ABar: size, Delta: size})
	}
	for k, x := range xs {
		add(fmt.Sprintf("x%d", k+1), x)
		add(fmt.Sprintf("z%d", k+1), 0)
	}
	add("V", v)
	add("loss", 0)
	if err := c.Validate(); err != nil { // sizes total 9V: refused above instances.MaxBytes
		return nil, 0, 0, fmt.Errorf("reduce: 2-partition values sum to %d: %w", sum, err)
	}
	return c, 3 * v, float64(4*v + int64(len(c.Stages))), nil
}
