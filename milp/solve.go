package milp

import (
	"context"
	"fmt"
	"math"

	"github.com/memsched/memsched/model"
)

// Tolerances used by Solve to re-check what a backend returns.
const (
	// FeasTol is the feasibility tolerance on bounds, rows and integrality (relative to the
	// side's magnitude when it exceeds 1, see model.Check).
	FeasTol = 1e-6
	// ObjTol is the relative tolerance between the reported and the recomputed objective.
	ObjTol = 1e-6
)

// Solve validates m, solves it with s and re-checks the result: every returned point must
// satisfy m within FeasTol, its objective must match the backend's within ObjTol, and an
// Optimal status must come with a point. A result that fails the check is an error naming the
// violation — never handed back as a solution. Solve outcomes (infeasible, limits) are statuses.
// A deadline on ctx caps the time limit (DeadlineParams); a solve that cannot start before it
// has status TimeLimit.
func Solve(ctx context.Context, s Solver, m *model.Model, p Params) (*Result, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if p.Start != nil && len(p.Start) != m.NumVars() {
		return nil, fmt.Errorf("milp: start point has %d values for %d columns", len(p.Start), m.NumVars())
	}
	p, ok := DeadlineParams(ctx, p)
	if !ok || ctx.Err() != nil {
		return stoppedResult(ctx, s.Name()), nil
	}
	res, err := s.Solve(ctx, m, p)
	if err != nil {
		return nil, err
	}
	if res.Solver == "" {
		res.Solver = s.Name()
	}
	if res.Status == Optimal && !res.HasSolution {
		return nil, fmt.Errorf("milp: %s reported optimal without a solution", res.Solver)
	}
	if !res.HasSolution {
		return res, nil
	}
	if len(res.Values) != m.NumVars() {
		// A backend bug (e.g. a presolve that drops columns): an error, not a panic in Check.
		return nil, fmt.Errorf("milp: %s returned %d values for %d variables", res.Solver, len(res.Values), m.NumVars())
	}
	rep := m.Check(res.Values)
	if err := rep.Err(FeasTol); err != nil {
		return nil, fmt.Errorf("milp: %s returned an infeasible point: %w", res.Solver, err)
	}
	if d := math.Abs(rep.Objective - res.Objective); d > ObjTol*math.Max(1, math.Abs(rep.Objective)) {
		return nil, fmt.Errorf("milp: %s reported objective %g but its point evaluates to %g", res.Solver, res.Objective, rep.Objective)
	}
	res.Objective = rep.Objective
	sense, _, _ := m.Objective()
	if !math.IsNaN(res.Bound) && !math.IsInf(res.Bound, 0) {
		slack := ObjTol * math.Max(1, math.Abs(res.Objective))
		if (sense == model.Minimize && res.Bound > res.Objective+slack) || (sense == model.Maximize && res.Bound < res.Objective-slack) {
			return nil, fmt.Errorf("milp: %s reported bound %g on the wrong side of objective %g", res.Solver, res.Bound, res.Objective)
		}
	}
	res.Gap = RelGap(res.Objective, res.Bound, true)
	return res, nil
}
