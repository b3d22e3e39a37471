package checkmate

import (
	"context"
	"fmt"
	"math"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify/graphsim"
)

// Solution is the outcome of a solve, in seconds and bytes.
type Solution struct {
	// Status is the solver's status; Optimal only when the solver proved it.
	Status milp.Status
	// Schedule is the incumbent read from (R, S), replayed by graphsim; nil without one.
	Schedule *schedule.GraphSchedule
	// Cost and Peak are the replayed schedule's total compute time and peak memory
	// (Cost = +Inf without a schedule).
	Cost float64
	Peak int64
	// Bound is the solver's proven lower bound on the optimum in seconds (−Inf if none).
	Bound float64
	// Gap is the relative gap between Cost and Bound (+Inf without a schedule).
	Gap float64
	// Result is the raw solver result (model units).
	Result *milp.Result
}

// Solve builds the MILP for g under budget bytes, solves it with s through milp.Solve (which
// re-checks the point against the model) and replays the incumbent's schedule with graphsim.
// An incumbent that does not replay is an error, never a result.
func Solve(ctx context.Context, s milp.Solver, g *instances.Graph, budget int64, p milp.Params) (*Solution, *Formulation, error) {
	f, err := Build(g, budget)
	if err != nil {
		return nil, nil, err
	}
	res, err := milp.Solve(ctx, s, f.Model, p)
	if err != nil {
		return nil, f, err
	}
	sol := &Solution{Status: res.Status, Cost: math.Inf(1), Bound: math.Inf(-1), Gap: math.Inf(1), Result: res}
	if !math.IsNaN(res.Bound) && !math.IsInf(res.Bound, 0) {
		sol.Bound = res.Bound * f.Units.Time
	}
	if res.Status == milp.Infeasible {
		sol.Bound = math.Inf(1)
	}
	if !res.HasSolution {
		return sol, f, nil
	}
	sched := f.Schedule(res.Values)
	rep, err := graphsim.Replay(g, sched, budget)
	if err != nil {
		return nil, f, fmt.Errorf("checkmate: %s's incumbent does not replay: %w", res.Solver, err)
	}
	sol.Schedule, sol.Cost, sol.Peak = sched, rep.Cost, rep.Peak
	if d := math.Abs(rep.Cost - res.Objective*f.Units.Time); d > milp.ObjTol*f.Units.Time*math.Max(1, math.Abs(res.Objective)) {
		return nil, f, fmt.Errorf("checkmate: replayed cost %g s differs from the objective %g s", rep.Cost, res.Objective*f.Units.Time)
	}
	sol.Gap = milp.RelGap(sol.Cost, sol.Bound, true)
	return sol, f, nil
}
