package combinedlb

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/milp"
)

// Bound is a solve of the relaxation, in seconds.
type Bound struct {
	// Value is a proven lower bound on every schedule of the strict combined model: the
	// solver's dual bound (its optimum when Status is optimal), raised to Σ(u_f+u_b) when
	// below; +Inf when the relaxation is infeasible (no schedule fits); NaN when no answer
	// could be believed (Status solver-error).
	Value float64
	// Status is the solver's; Relaxation the relaxation's optimum when proven (else its best
	// point, NaN without one) — a number about the relaxation, not a schedule.
	Status     milp.Status
	Relaxation float64
	// Gap is the solver's relative gap on the relaxation.
	Gap float64
	// Own: Value is the solver's proven bound (raised to Σ(u_f+u_b)); false when the solver
	// gave none (stopped before one, or abandoned at the deadline: milp.Result.Abandoned) and
	// Value is Σ(u_f+u_b) alone.
	Own bool
	// SumU is Σ(u_f + u_b).
	SumU float64
	// Guarded is the guarded solve (model units); Formulation the model.
	Guarded     *milp.Guarded
	Formulation *Formulation
}

// Solve builds and solves the relaxation with milp.SolveGuarded: verified, when not NaN, is
// the makespan of a schedule validated by verify/combined (or verify/timed, or verify.Remat
// for a pure rematerialization sequence) — a bound above it or "infeasible" is not believed.
//
// maxMemory caps the model's estimated memory (Limits.MaxMemory; 0: none): above it Solve
// returns the *TooLargeError. A context done while the model is built gives status
// time-limit (or interrupted) with the value Σ(u_f+u_b), not an error.
func Solve(ctx context.Context, solvers []milp.Solver, c *instances.Chain, budget int64, beta float64, p milp.Params, verified float64, maxMemory int64) (*Bound, error) {
	f, err := BuildWithin(c, budget, beta, Limits{MaxMemory: maxMemory, Stop: ctx.Done()})
	if errors.Is(err, ErrStopped) {
		return &Bound{Status: milp.StoppedStatus(ctx), Value: c.ComputeTime(), Relaxation: math.NaN(), Gap: math.Inf(1), SumU: c.ComputeTime()}, nil
	}
	if err != nil {
		return nil, err
	}
	ev := milp.None()
	if !math.IsNaN(verified) && !math.IsInf(verified, 0) {
		ev = milp.Evidence{Value: f.Units.Secs(verified), What: fmt.Sprintf("a validated schedule of %.10g s", verified)}
	}
	if p.RelGap == 0 {
		p.RelGap = 1e-9
	}
	g, err := milp.SolveGuarded(ctx, solvers, f.Model, p, ev)
	if err != nil {
		return nil, err
	}
	b := &Bound{Status: g.Status, Guarded: g, Formulation: f, Value: math.NaN(), Relaxation: math.NaN(), Gap: g.Gap, SumU: c.ComputeTime()}
	switch {
	case g.Status == milp.Infeasible || g.Status == milp.InfeasibleOrUnbounded:
		b.Value = math.Inf(1)
	case g.Status == milp.SolverError:
	case !math.IsNaN(g.Bound) && !math.IsInf(g.Bound, 0):
		b.Value = math.Max(f.Seconds(g.Bound), b.SumU)
		b.Own = true
	default:
		b.Value = b.SumU
	}
	if g.HasSolution {
		b.Relaxation = f.Seconds(g.Objective)
	}
	return b, nil
}
