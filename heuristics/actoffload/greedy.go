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
	return GreedyUntil(p, nil)
}

// GreedyUntil is Greedy ended when stop closes (checked before each prefix's schedule, O(n)
// each): Stopped is then set, and the result has no schedule (no prefix tried so far fits).
func GreedyUntil(p *act.Problem, stop <-chan struct{}) (*Result, error) {
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
		if closed(stop) {
			return &Result{Stopped: true}, nil
		}
		r, err := orderedUntil(p, set, stop)
		if err != nil || r.Feasible || r.Stopped || k == n {
			return r, err
		}
		set = append(set, k)
		k++
	}
}
