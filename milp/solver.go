package milp

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/memsched/memsched/model"
)

// Status says why a solve stopped. It is separate from what solution exists (Result.HasSolution):
// a time limit may stop a solve with or without an incumbent.
type Status int

const (
	// NotSolved: the solver did not run or returned no status.
	NotSolved Status = iota
	// Optimal: the incumbent is optimal within the requested gap.
	Optimal
	// Infeasible: the model has no feasible point.
	Infeasible
	// Unbounded: the objective is unbounded in the optimization direction.
	Unbounded
	// InfeasibleOrUnbounded: the solver proved one of the two without telling which.
	InfeasibleOrUnbounded
	// TimeLimit: the time limit was reached.
	TimeLimit
	// IterationLimit: an iteration or node limit was reached.
	IterationLimit
	// Interrupted: the context was cancelled or the solver was interrupted.
	Interrupted
	// SolverError: the solver failed numerically or internally; no result can be trusted.
	SolverError
)

var statusNames = [...]string{
	NotSolved:             "not-solved",
	Optimal:               "optimal",
	Infeasible:            "infeasible",
	Unbounded:             "unbounded",
	InfeasibleOrUnbounded: "infeasible-or-unbounded",
	TimeLimit:             "time-limit",
	IterationLimit:        "iteration-limit",
	Interrupted:           "interrupted",
	SolverError:           "solver-error",
}

// String returns the status as used in JSON output (e.g. "time-limit").
func (s Status) String() string {
	if s < 0 || int(s) >= len(statusNames) {
		return fmt.Sprintf("Status(%d)", int(s))
	}
	return statusNames[s]
}

// MarshalText writes String().
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads what MarshalText writes, so that reports read back.
func (s *Status) UnmarshalText(b []byte) error {
	for i, n := range statusNames {
		if n == string(b) {
			*s = Status(i)
			return nil
		}
	}
	return fmt.Errorf("milp: unknown status %q", b)
}

// Params are solve options. The zero value works: no time limit, the solver's default gap,
// its default threads, no log.
type Params struct {
	// TimeLimit stops the solve after this wall time (0: none).
	TimeLimit time.Duration
	// RelGap is the relative MIP gap at which to stop (0: solver default).
	RelGap float64
	// Threads caps the solver's threads (0: solver default).
	Threads int
	// Seed is the solver's random seed (0: solver default).
	Seed int
	// FeasTol is the primal and MIP feasibility tolerance (0: solver default, 1e-6 for HiGHS).
	// SolveGuarded tightens it when a solver's answer contradicts a verified schedule.
	FeasTol float64
	// NoPresolve turns the solver's presolve off (safer, slower).
	NoPresolve bool
	// Start is a start point, one value per column in column order (nil: none). A backend
	// that can takes it as its first incumbent when it is feasible (HiGHS: Highs_setSolution;
	// a MIP solve then never ends without a solution at least as good); one that cannot
	// ignores it and says so in Log. It is a hint only: nothing is believed because of it.
	Start []float64
	// Log receives the solver's log; nil silences it.
	Log io.Writer
	// Progress, when not nil, receives a MIP's incumbent objective, dual bound and relative gap
	// (model units; ±Inf while unknown) during the solve, from a goroutine of the backend's,
	// a few times per second at most. A backend that cannot report progress never calls it.
	// Progress is for display: nothing is believed because of it.
	Progress func(incumbent, bound, gap float64)
}

// Result is what a solve produced.
type Result struct {
	// Status says why the solver stopped.
	Status Status
	// HasSolution says whether Values holds a feasible point (the incumbent).
	HasSolution bool
	// Objective is the incumbent's objective (meaningful when HasSolution).
	Objective float64
	// Bound is the best proven bound on the optimum (a lower bound when minimizing);
	// ±Inf when none is known.
	Bound float64
	// Gap is the relative gap |Objective − Bound| / max(|Objective|, tiny); +Inf without incumbent.
	Gap float64
	// Values holds one value per model variable, in column order, when HasSolution.
	Values []float64
	// RowDuals and ColDuals are the dual values of the rows and the reduced costs of the
	// columns, in the solver's sign convention for minimization (∂objective/∂rhs), when the
	// model is an LP solved to optimality by a backend that reports them; nil otherwise. They
	// are never trusted: SafeLPBound turns them into a rigorous bound whatever their error.
	RowDuals, ColDuals []float64
	// Wall is the solve's wall time.
	Wall time.Duration
	// Nodes is the number of branch-and-bound nodes (0 for LPs or when unknown).
	Nodes int64
	// Solver names the backend that produced the result.
	Solver string
	// Abandoned: the context ended and the backend did not return within its grace after
	// (HiGHS polls the clock and its interrupt only between the steps of some phases: presolve
	// passes, the MIP's setup, seconds each on a big model under load). The result then has
	// Status TimeLimit or Interrupted and nothing of the solver's: the caller's deadline holds,
	// and the abandoned run ends on its own at its next poll.
	Abandoned bool
	// Refused, when not empty, is why milp.Solve did not believe the backend's answer: what the
	// backend claimed and the re-check's evidence (the row, bound or integrality its point
	// violates and by how much, or the objective its point does not give). The result then has
	// Status SolverError, no solution and no bound.
	Refused string
}

// Solver is a MILP backend. Solve returns an error only when the solve could not run
// (bad model, library failure); every outcome of a run, including infeasibility and limits,
// is a Status in the Result.
//
// Backends do not check their solutions: callers use the package function Solve, which does.
type Solver interface {
	Name() string
	Solve(ctx context.Context, m *model.Model, p Params) (*Result, error)
}
