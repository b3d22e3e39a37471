package milp

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/memsched/memsched/model"
)

// Evidence is what memsched has verified about a model independently of any solver: the cost
// of a solution of the problem the model relaxes, checked by an independent validator. A
// minimization model's optimum cannot exceed it (a maximization model's cannot be below it).
type Evidence struct {
	// Value is that cost in the model's objective units; NaN when nothing is known.
	Value float64
	// What describes it for the report, e.g. "greedy-reserve schedule, period 77 s, validated".
	What string
}

// None is the absence of evidence.
func None() Evidence { return Evidence{Value: math.NaN()} }

func (e Evidence) known() bool { return !math.IsNaN(e.Value) && !math.IsInf(e.Value, 0) }

// Attempt records one solve of SolveGuarded.
type Attempt struct {
	Solver string `json:"solver"`
	// Safe says whether the attempt ran with the safer settings (tight tolerances, no presolve).
	Safe   bool    `json:"safe"`
	Status Status  `json:"status"`
	Bound  float64 `json:"-"`
	// Problem says why the attempt was not believed ("" when it was).
	Problem string `json:"problem,omitempty"`
}

// Guarded is the outcome of SolveGuarded: the believed result (Status SolverError with
// Evidence set when no attempt could be believed) and every attempt made.
type Guarded struct {
	*Result
	Attempts []Attempt
	// Contradiction explains a SolverError: what each attempt claimed against what was verified.
	Contradiction string
}

// SafeTol and SafeParams are the safer settings of a re-solve: feasibility tolerance 1e-9,
// presolve off.
const SafeTol = 1e-9

// SolveGuarded solves m, a relaxation of a problem for which ev is verified, and believes no
// claim that ev contradicts: "infeasible" while a verified solution exists, or a proven bound
// on the wrong side of its cost (beyond 1e-9 relative). A contradicted answer — or a point that
// milp.Solve refuses (Result.Refused) — is a solver failure: the solve is repeated with safer settings
// (FeasTol = 1e-9, presolve off), then with each other backend in solvers, default then safe.
// The first answer not contradicted is returned; if none is, the result has Status SolverError,
// no bound and no solution, and Contradiction holds the evidence — a wrong number is never
// returned. An error means no attempt could run at all.
func SolveGuarded(ctx context.Context, solvers []Solver, m *model.Model, p Params, ev Evidence) (*Guarded, error) {
	if len(solvers) == 0 {
		panic("milp: SolveGuarded without a solver")
	}
	sense, _, _ := m.Objective()
	g := &Guarded{}
	var lastErr error
	var claims []string
	for _, s := range solvers {
		for _, safe := range []bool{false, true} {
			if ctx.Err() != nil {
				break
			}
			q := p
			if safe {
				q.FeasTol, q.NoPresolve = SafeTol, true
			}
			a := Attempt{Solver: s.Name(), Safe: safe, Bound: math.NaN()}
			res, err := Solve(ctx, s, m, q)
			if err != nil {
				lastErr = err
				a.Status, a.Problem = SolverError, err.Error()
			} else {
				a.Status, a.Bound = res.Status, res.Bound
				a.Problem = res.Refused
				if a.Problem == "" {
					a.Problem = contradiction(res, sense, ev)
				}
			}
			g.Attempts = append(g.Attempts, a)
			if a.Problem == "" {
				g.Result = res
				return g, nil
			}
			claims = append(claims, fmt.Sprintf("%s%s: %s", a.Solver, map[bool]string{true: " (safe settings)"}[safe], a.Problem))
		}
	}
	if ctx.Err() != nil && len(claims) == 0 {
		return &Guarded{Result: stoppedResult(ctx, solvers[0].Name())}, nil
	}
	if len(claims) == 0 && lastErr != nil {
		return nil, lastErr
	}
	g.Result = &Result{Status: SolverError, Bound: math.NaN(), Gap: math.Inf(1), Solver: solvers[0].Name()}
	g.Contradiction = strings.Join(claims, "; ")
	if ev.What != "" {
		g.Contradiction += "; verified: " + ev.What
	}
	return g, nil
}

// contradiction returns why res cannot be believed given ev, or "".
func contradiction(res *Result, sense model.Sense, ev Evidence) string {
	if !ev.known() {
		return ""
	}
	switch res.Status {
	case Infeasible, InfeasibleOrUnbounded:
		return fmt.Sprintf("claims %s while a verified solution of cost %.10g exists", res.Status, ev.Value)
	case SolverError:
		return "solver error"
	}
	b := res.Bound
	if res.Status == Optimal && res.HasSolution && math.IsNaN(b) {
		b = res.Objective
	}
	if math.IsNaN(b) || math.IsInf(b, 0) {
		return ""
	}
	tol := 1e-9 * math.Max(1, math.Abs(ev.Value))
	if sense == model.Minimize && b > ev.Value+tol {
		return fmt.Sprintf("claims lower bound %.10g above a verified solution of cost %.10g", b, ev.Value)
	}
	if sense == model.Maximize && b < ev.Value-tol {
		return fmt.Sprintf("claims upper bound %.10g below a verified solution of value %.10g", b, ev.Value)
	}
	return ""
}
