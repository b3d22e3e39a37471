package checkmate

import (
	"context"
	"fmt"
	"math"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
)

// ChainSolution is a solve of a chain through its graph (instances.GraphFromChain).
type ChainSolution struct {
	*Solution
	// Sequence is the incumbent as a rematerialization sequence of the free-delete variant
	// (SPEC §1): every forward is F_all, every free of the graph a Del. It is replayed by
	// verify.Remat with FreeDelete before it is returned; nil without an incumbent.
	Sequence schedule.Sequence
	// Makespan and Peak are the replayed sequence's.
	Makespan float64
	Peak     int64
}

// SolveChain solves Checkmate's model on the graph of chain c (instances.GraphFromChain) under
// budget bytes and maps the incumbent to a sequence replayed by verify.Remat.
//
// What it optimises (docs/checkmate.md): a forward keeps ā^ℓ whenever it keeps anything, and an
// output may be dropped after its last use. Its schedules are schedules of the free-delete
// variant, so its optimum is ≥ the free-delete oracle's; it equals it when ā = a (tested), and
// it is ≤ the default (no-delete) oracle's in that case. With ā > a it may exceed both. It
// returns an error when the loss gradient δ^{L+1} has a size (the graph's "dloss" source then
// relaxes holding it; such sequences would not replay).
func SolveChain(ctx context.Context, s milp.Solver, c *instances.Chain, budget int64, p milp.Params) (*ChainSolution, error) {
	if d := c.SizeDelta(c.Len()); d != 0 {
		return nil, fmt.Errorf("checkmate: chain %q has a loss gradient of %d bytes; the graph model needs δ^{L+1} = 0", c.Name, d)
	}
	g := instances.GraphFromChain(c)
	sol, _, err := Solve(ctx, s, g, budget, p)
	if err != nil {
		return nil, err
	}
	out := &ChainSolution{Solution: sol, Makespan: math.Inf(1)}
	if sol.Schedule == nil {
		return out, nil
	}
	seq := ChainSequence(c, g, sol.Schedule)
	opt := verify.RematOptions{FreeDelete: true}
	rep, err := verify.Remat(c, seq, opt)
	if err != nil {
		return nil, fmt.Errorf("checkmate: the schedule mapped to a sequence does not replay: %w", err)
	}
	if rep.Peak > budget {
		return nil, fmt.Errorf("checkmate: the mapped sequence peaks at %d bytes, over the budget %d", rep.Peak, budget)
	}
	out.Sequence, out.Makespan, out.Peak = seq, rep.Makespan, rep.Peak
	return out, nil
}

// ChainSequence maps a staged schedule on g = GraphFromChain(c) (with δ^{L+1} = 0) to a
// sequence of the free-delete variant: F^ℓ computed becomes F_all^ℓ, B^ℓ stays B^ℓ, and every
// forward output the graph frees (graphsim's rule: after its last use in the stage unless the
// next stage keeps it, or at the end of the stage when it was kept but unused) becomes Del^ℓ, unless B^ℓ already removed it. Forwards of stages
// already back-propagated and recomputed backwards are left out (they feed nothing), so the sequence never costs more.
func ChainSequence(c *instances.Chain, g *instances.Graph, s *schedule.GraphSchedule) schedule.Sequence {
	L1 := c.Len()
	users := g.Users()
	var seq schedule.Sequence
	state := verify.InitialState(c)
	apply := func(op schedule.Op) {
		seq = append(seq, op)
		if _, _, err := state.Apply(c, op); err != nil {
			panic("checkmate: mapped sequence: " + err.Error())
		}
	}
	for t, st := range s.Stages {
		keepNext := map[int]bool{}
		if t+1 < len(s.Stages) {
			for _, i := range s.Stages[t+1].Keep {
				keepNext[i] = true
			}
		}
		cur := map[int]bool{}
		for _, i := range st.Keep {
			cur[i] = true
		}
		comp := map[int]bool{}
		for _, k := range st.Compute {
			comp[k] = true
		}
		for _, k := range st.Compute {
			if k < L1 {
				// A forward of a stage already back-propagated feeds nothing (a zero-cost
				// recomputation the solver was free to add): leave it out.
				if k+1 <= state.T {
					apply(schedule.Op{Kind: schedule.Fall, Stage: k + 1})
				}
			} else if l := 2*L1 - k; l == state.T {
				apply(schedule.Op{Kind: schedule.B, Stage: l})
			} // else: a recomputed backward, which feeds nothing either

			cur[k] = true
			for _, i := range append([]int{k}, g.Nodes[k].Deps...) {
				if keepNext[i] || !cur[i] {
					continue
				}
				last := true
				for _, j := range users[i] {
					if j > k && comp[j] {
						last = false
					}
				}
				if !last {
					continue
				}
				delete(cur, i)
				if i < L1 && state.Acts[i+1] != verify.None {
					apply(schedule.Op{Kind: schedule.Del, Stage: i + 1})
				}
			}
		}
		// Outputs kept into this stage, never used in it and not kept further end with it.
		for i := 0; i < L1; i++ {
			if cur[i] && !keepNext[i] && state.Acts[i+1] != verify.None {
				apply(schedule.Op{Kind: schedule.Del, Stage: i + 1})
			}
		}
	}
	return seq
}
