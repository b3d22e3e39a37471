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

// ChainExactSolution is a solve of the chain-exact model (BuildChain), in seconds and bytes.
type ChainExactSolution struct {
	// Status is the solver's status; Optimal only when the solver proved it.
	Status milp.Status
	// Sequence is the incumbent as a sequence of 004's model, replayed by verify.Remat (no
	// deletes) within the budget before it is returned; nil without an incumbent.
	Sequence schedule.Sequence
	// Makespan and Peak are the replayed sequence's (Makespan = +Inf without one).
	Makespan float64
	Peak     int64
	// Bound is the solver's proven lower bound on the chain's optimum in seconds (−Inf if none,
	// +Inf when infeasible).
	Bound float64
	// Gap is the relative gap between Makespan and Bound (+Inf without an incumbent).
	Gap float64
	// Result is the raw solver result (model units).
	Result *milp.Result
}

// SolveChainExact builds the chain-exact MILP of c under budget bytes (BuildChain), solves it
// with s through milp.Solve (which re-checks the point) and replays the incumbent's sequence
// with verify.Remat. An incumbent that does not replay, exceeds the budget or whose makespan
// differs from the objective is an error, never a result.
func SolveChainExact(ctx context.Context, s milp.Solver, c *instances.Chain, budget int64, p milp.Params) (*ChainExactSolution, *ChainFormulation, error) {
	f, err := BuildChain(c, budget)
	if err != nil {
		return nil, nil, err
	}
	res, err := milp.Solve(ctx, s, f.Model, p)
	if err != nil {
		return nil, f, err
	}
	if res.HasSolution && p.FeasTol != milp.SafeTol {
		// The solver accepts rows violated within its tolerance (HiGHS: 1e-6 in model units,
		// about a kilobyte when the unit is a GiB): an incumbent whose replay exceeds the budget
		// by that much is re-solved once with the safer settings (SPEC §5).
		if _, err := f.replay(f.Sequence(res.Values)); err != nil {
			q := p
			q.FeasTol, q.NoPresolve = milp.SafeTol, true
			if res, err = milp.Solve(ctx, s, f.Model, q); err != nil {
				return nil, f, err
			}
		}
	}
	sol := &ChainExactSolution{Status: res.Status, Makespan: math.Inf(1), Bound: math.Inf(-1), Gap: math.Inf(1), Result: res}
	if !math.IsNaN(res.Bound) && !math.IsInf(res.Bound, 0) {
		sol.Bound = res.Bound * f.Units.Time
	}
	if res.Status == milp.Infeasible {
		sol.Bound = math.Inf(1)
	}
	if !res.HasSolution {
		return sol, f, nil
	}
	seq := f.Sequence(res.Values)
	rep, err := f.replay(seq)
	if err != nil {
		return nil, f, fmt.Errorf("checkmate: %s's incumbent: %w", res.Solver, err)
	}
	if d := math.Abs(rep.Makespan - res.Objective*f.Units.Time); d > milp.ObjTol*f.Units.Time*math.Max(1, math.Abs(res.Objective)) {
		return nil, f, fmt.Errorf("checkmate: replayed makespan %g s differs from the objective %g s", rep.Makespan, res.Objective*f.Units.Time)
	}
	sol.Sequence, sol.Makespan, sol.Peak = seq, rep.Makespan, rep.Peak
	sol.Gap = milp.RelGap(sol.Makespan, sol.Bound, true)
	return sol, f, nil
}

// replay checks seq with verify.Remat (004's model, no deletes) and the budget.
func (f *ChainFormulation) replay(seq schedule.Sequence) (verify.RematResult, error) {
	rep, err := verify.Remat(f.Chain, seq, verify.RematOptions{})
	if err != nil {
		return rep, fmt.Errorf("the sequence does not replay: %w", err)
	}
	if rep.Peak > f.Budget {
		return rep, fmt.Errorf("the sequence peaks at %d bytes, over the budget %d", rep.Peak, f.Budget)
	}
	return rep, nil
}
