// Package milptest is the conformance suite every milp backend runs, in the spirit of
// MathOptInterface's Test module: small LP/MILP problems with known answers, solved in memory
// and after round trips through the file formats. A backend's test file calls Run with a
// constructor and its Capabilities; a missing capability skips the cases that need it, naming
// the capability, never the backend.
package milptest

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/model"
)

// Capabilities describe what a backend can do; each flag documents why a case needs it.
type Capabilities struct {
	// Integer: the backend handles integer and binary variables (branch and bound).
	Integer bool
	// ProvesUnbounded: the backend reports Unbounded (or InfeasibleOrUnbounded) rather than
	// failing when the objective is unbounded.
	ProvesUnbounded bool
	// InfiniteIntegers: the backend accepts integer variables with an infinite bound (an
	// enumerating referee cannot).
	InfiniteIntegers bool
}

// RoundTrip transforms a model the way a file format would (write, then read back).
type RoundTrip struct {
	Name string
	Via  func(*model.Model) (*model.Model, error)
}

// Config is what Run needs from a backend's test.
type Config struct {
	Caps Capabilities
	// RoundTrips are applied, each in its own subtest, besides the in-memory solve.
	RoundTrips []RoundTrip
	// Tol is the absolute/relative objective tolerance (default 1e-6).
	Tol float64
}

// Run solves every problem of Problems with solvers from newSolver, in memory and through each
// round trip, through milp.Solve (so every returned point is re-checked against the model).
func Run(t *testing.T, newSolver func() (milp.Solver, error), cfg Config) {
	t.Helper()
	trips := append([]RoundTrip{{Name: "memory", Via: func(m *model.Model) (*model.Model, error) { return m, nil }}}, cfg.RoundTrips...)
	for _, p := range Problems() {
		for _, rt := range trips {
			t.Run(p.Name+"/"+rt.Name, func(t *testing.T) {
				if why := skip(p, cfg.Caps); why != "" {
					t.Skip(why)
				}
				s, err := newSolver()
				if err != nil {
					t.Fatalf("new solver: %v", err)
				}
				m, err := rt.Via(p.Build())
				if err != nil {
					t.Fatalf("%s: %v", rt.Name, err)
				}
				res, err := milp.Solve(context.Background(), s, m, milp.Params{})
				if err != nil {
					t.Fatalf("solve: %v", err)
				}
				if msg := Compare(p, res, cfg.Tol); msg != "" {
					t.Error(msg)
				}
			})
		}
	}
}

func skip(p Problem, c Capabilities) string {
	switch {
	case p.Integer && !c.Integer:
		return "needs capability Integer"
	case p.Status == milp.Unbounded && !c.ProvesUnbounded:
		return "needs capability ProvesUnbounded"
	case p.InfiniteIntegers && !c.InfiniteIntegers:
		return "needs capability InfiniteIntegers"
	}
	return ""
}

// Compare returns "" when res is the expected outcome of p, else what differs. It is exported
// so that the suite's own tests can check that wrong answers are caught.
func Compare(p Problem, res *milp.Result, tol float64) string {
	if tol == 0 {
		tol = 1e-6
	}
	if res.Refused != "" {
		return fmt.Sprintf("%s: %s", p.Name, res.Refused)
	}
	switch p.Status {
	case milp.Unbounded:
		if res.Status != milp.Unbounded && res.Status != milp.InfeasibleOrUnbounded {
			return fmt.Sprintf("%s: status %v, want unbounded", p.Name, res.Status)
		}
		return ""
	case milp.Infeasible:
		if res.Status != milp.Infeasible && res.Status != milp.InfeasibleOrUnbounded {
			return fmt.Sprintf("%s: status %v, want infeasible", p.Name, res.Status)
		}
		if res.HasSolution {
			return fmt.Sprintf("%s: infeasible but a solution was returned", p.Name)
		}
		return ""
	}
	if res.Status != p.Status {
		return fmt.Sprintf("%s: status %v, want %v", p.Name, res.Status, p.Status)
	}
	if !res.HasSolution {
		return fmt.Sprintf("%s: optimal without a solution", p.Name)
	}
	if math.Abs(res.Objective-p.Objective) > tol*math.Max(1, math.Abs(p.Objective)) {
		return fmt.Sprintf("%s: objective %.10g, want %.10g", p.Name, res.Objective, p.Objective)
	}
	return ""
}
