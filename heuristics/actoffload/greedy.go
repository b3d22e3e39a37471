package actoffload

import (
	act "github.com/memsched/memsched/instances/actoffload"
)

// Greedy is 001 §4.2's GREEDY: the no-wait, eager, ordered schedule that offloads x_0..x_k
// entirely, k the smallest index with Σ_{i≤k}|x_i| ≥ M_peak − M_GPU (Thm 2's optimal
// fractional volume, rounded up to whole activations). Nothing moves when M_peak ≤ M_GPU.
//
// Rounding to whole activations can leave an early operation without room (its own inputs
// cannot leave); then k grows until the schedule is feasible, and Feasible = false only when
// no prefix works.
func Greedy(p *act.Problem) (*Result, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	need := p.Peak() - p.MGPU
	n := p.L() + 1
	var set []int
	var vol int64
	k := 0
	for ; k < n && vol < need; k++ {
		set = append(set, k)
		vol += p.X[k]
	}
	for {
		r, err := Ordered(p, set)
		if err != nil || r.Feasible || k == n {
			return r, err
		}
		set = append(set, k)
		k++
	}
}
