package milp

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/memsched/memsched/model"
)

// Tolerances used by Solve to re-check what a backend returns.
const (
	// FeasTol is the feasibility tolerance on bounds, rows and integrality (relative to a
	// bound's magnitude and to a row's largest term when they exceed 1, see model.Check).
	FeasTol = 1e-6
	// ObjTol is the relative tolerance between the reported and the recomputed objective.
	ObjTol = 1e-6
)

// Solve validates m, solves it with s and re-checks the result: every returned point must
// satisfy m within FeasTol (model.Check: relative to each bound and to each row's largest
// term), its objective must match the backend's within ObjTol, an Optimal status must come with
// a point and a bound must not lie beyond the point's objective. An answer that fails the check
// is refused: the result has Status SolverError, no solution and no bound, and Refused holds the
// evidence (what the backend claimed, which row, bound or integrality its point violates and by
// how much) — a solve outcome like any other, never an error and never a solution. Solve
// returns an error only when the solve could not run (bad model, bad start point, a backend
// failure). A deadline on ctx caps the time limit (DeadlineParams); a solve that cannot start
// before it has status TimeLimit.
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
	if why := recheck(m, res); why != "" {
		return refuse(res, why), nil
	}
	if res.HasSolution {
		res.Gap = RelGap(res.Objective, res.Bound, true)
	}
	return res, nil
}

// recheck returns why res cannot be believed for m, or "" (and then sets res.Objective to the
// value its point gives).
func recheck(m *model.Model, res *Result) string {
	if res.Status == Optimal && !res.HasSolution {
		return "optimal without a solution"
	}
	if !res.HasSolution {
		return ""
	}
	if len(res.Values) != m.NumVars() {
		// A backend bug (e.g. a presolve that drops columns): refused, not a panic in Check.
		return fmt.Sprintf("returned %d values for %d variables", len(res.Values), m.NumVars())
	}
	rep := m.Check(res.Values)
	if err := rep.Err(FeasTol); err != nil {
		return "infeasible point: " + strings.TrimPrefix(err.Error(), "model: ")
	}
	if d := math.Abs(rep.Objective - res.Objective); d > ObjTol*math.Max(1, math.Abs(rep.Objective)) {
		return fmt.Sprintf("reported objective %.10g but its point evaluates to %.10g", res.Objective, rep.Objective)
	}
	res.Objective = rep.Objective
	sense, _, _ := m.Objective()
	if !math.IsNaN(res.Bound) && !math.IsInf(res.Bound, 0) {
		slack := ObjTol * math.Max(1, math.Abs(res.Objective))
		if (sense == model.Minimize && res.Bound > res.Objective+slack) || (sense == model.Maximize && res.Bound < res.Objective-slack) {
			return fmt.Sprintf("reported bound %.10g on the wrong side of objective %.10g", res.Bound, res.Objective)
		}
	}
	return ""
}

// refuse turns a backend's answer that failed the re-check into a SolverError result that
// keeps the evidence and what the backend claimed, and nothing the backend said.
func refuse(res *Result, why string) *Result {
	claim := res.Status.String()
	if res.HasSolution {
		claim += fmt.Sprintf(", objective %.10g", res.Objective)
	}
	return &Result{
		Status:  SolverError,
		Bound:   math.NaN(),
		Gap:     math.Inf(1),
		Wall:    res.Wall,
		Nodes:   res.Nodes,
		Solver:  res.Solver,
		Refused: fmt.Sprintf("%s claimed %s; refused: %s", res.Solver, claim, why),
	}
}
