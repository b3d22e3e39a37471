package graphsim

import (
	"fmt"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
)

// Result is what a replay measured.
type Result struct {
	// Cost is the total compute time Σ C_i over every computation, in seconds.
	Cost float64
	// Peak is the largest memory in bytes during any computation: fixed memory, every output
	// present, the node's own output and its transient memory.
	Peak int64
	// Computations is the number of node computations (n plus the recomputations).
	Computations int
}

// Replay checks s on g under budget bytes and returns its cost and peak. Rules: stage 0 keeps
// nothing; each stage computes distinct nodes in ascending order, none whose output is already
// present; every dependency of a computed node is present (kept or computed earlier in the stage
// and not yet freed); memory during each computation is at most budget; a stage keeps only
// outputs present at the end of the previous stage; every node is computed at least once. An
// output is freed right after its last use in the stage (its own computation or a later reader)
// unless the next stage keeps it; a kept output that the stage never uses stays to its end.
//
// g must validate: its sizes then total at most instances.MaxBytes, so the memory sums cannot
// overflow.
func Replay(g *instances.Graph, s *schedule.GraphSchedule, budget int64) (Result, error) {
	if err := g.Validate(); err != nil {
		return Result{}, fmt.Errorf("graphsim: %w", err)
	}
	n := g.Len()
	var res Result
	users := g.Users()
	done := make([]bool, n)
	var present map[int]bool // outputs present at the end of the previous stage
	for t, st := range s.Stages {
		var next []int
		if t+1 < len(s.Stages) {
			next = s.Stages[t+1].Keep
		}
		keepNext := map[int]bool{}
		for _, i := range next {
			if i < 0 || i >= n {
				return res, fmt.Errorf("graphsim: stage %d keeps node %d, out of range", t+1, i)
			}
			keepNext[i] = true
		}
		cur := map[int]bool{}
		for _, i := range st.Keep {
			if i < 0 || i >= n {
				return res, fmt.Errorf("graphsim: stage %d keeps node %d, out of range", t, i)
			}
			if !present[i] {
				return res, fmt.Errorf("graphsim: stage %d keeps %s, which was not present at the end of stage %d", t, g.Nodes[i].Name, t-1)
			}
			if cur[i] {
				return res, fmt.Errorf("graphsim: stage %d keeps %s twice", t, g.Nodes[i].Name)
			}
			cur[i] = true
		}
		computed := map[int]bool{}
		for _, k := range st.Compute {
			computed[k] = true
		}
		touched := map[int]bool{}
		mem := g.Fixed
		for i := range cur {
			mem += g.Nodes[i].Size
		}
		for p, k := range st.Compute {
			if k < 0 || k >= n {
				return res, fmt.Errorf("graphsim: stage %d computes node %d, out of range", t, k)
			}
			if p > 0 && k <= st.Compute[p-1] {
				return res, fmt.Errorf("graphsim: stage %d computes %s out of order or twice", t, g.Nodes[k].Name)
			}
			nd := g.Nodes[k]
			if cur[k] {
				return res, fmt.Errorf("graphsim: stage %d computes %s while its output is present", t, nd.Name)
			}
			for _, d := range nd.Deps {
				if !cur[d] {
					return res, fmt.Errorf("graphsim: stage %d computes %s without its input %s", t, nd.Name, g.Nodes[d].Name)
				}
			}
			if m := mem + nd.Size + nd.Temp; m > budget {
				return res, fmt.Errorf("graphsim: stage %d computing %s needs %d bytes, over the budget %d", t, nd.Name, m, budget)
			} else if m > res.Peak {
				res.Peak = m
			}
			mem += nd.Size
			cur[k] = true
			done[k] = true
			res.Cost += nd.Cost
			res.Computations++
			touched[k] = true
			for _, d := range nd.Deps {
				touched[d] = true
			}
			// Free what this computation used for the last time in this stage.
			for _, i := range append([]int{k}, nd.Deps...) {
				if keepNext[i] || !cur[i] {
					continue
				}
				last := true
				for _, j := range users[i] {
					if j > k && computed[j] {
						last = false
						break
					}
				}
				if last {
					delete(cur, i)
					mem -= g.Nodes[i].Size
				}
			}
		}
		for i := range keepNext {
			if !cur[i] {
				return res, fmt.Errorf("graphsim: stage %d keeps %s, which was not present at the end of stage %d", t+1, g.Nodes[i].Name, t)
			}
		}
		present = cur
	}
	for i, d := range done {
		if !d {
			return res, fmt.Errorf("graphsim: node %s is never computed", g.Nodes[i].Name)
		}
	}
	return res, nil
}
