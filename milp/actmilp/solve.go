package actmilp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/memsched/memsched/dp"
	heur "github.com/memsched/memsched/heuristics/actoffload"
	act "github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/milp"
)

// DefaultGap is the relative MIP gap Solve asks for when the caller gives none: "optimal" is
// meant as Problem 1's optimum, to compare with the exact branch and bound.
const DefaultGap = 1e-9

// SolveOptions configure Solve.
type SolveOptions struct {
	// Start is a validated schedule (the best heuristic's); its makespan is the model's Upper
	// and, cleaned of useless transfers, the solver's first incumbent. nil: none (then Upper is
	// Σu + 2Σ|x|/β and nothing guards the solver's word).
	Start     *heur.Result
	StartName string
	// Lower is a certified lower bound in seconds added to the model (T ≥ Lower), e.g. the
	// interruptible relaxation's; 0: none.
	Lower float64
	// Params go to the solver (a zero RelGap means DefaultGap; Start is set here).
	Params milp.Params
	// Plain builds the model without its valid inequalities (see Options.Plain).
	Plain bool
	// MaxMemory caps the model's estimated memory (Options.MaxMemory; 0: none): above it Solve
	// returns the *TooLargeError.
	MaxMemory int64
}

// Solution is a solve of the exact MILP, in seconds.
type Solution struct {
	// Status is the solver's (Optimal only when it proved it).
	Status milp.Status
	// Best is the best validated schedule: the re-timed incumbent, the no-wait schedule of its
	// link order, or the start, whichever is shortest; From names it.
	Best *heur.Result
	From string
	// Incumbent is the re-timed MILP incumbent (nil without one) and Guided the no-wait schedule
	// of its offload set and link order (the MILP-guided schedule; nil when it deadlocks).
	Incumbent, Guided *heur.Result
	// Bound is a proven lower bound on every schedule: the solver's dual bound (with the
	// formulation's T ≥ Lower and fluid windows inside it), +Inf when the model is infeasible,
	// NaN when the solver gave none that could be believed.
	Bound float64
	// Gap is (Best − Bound)/Best (+Inf without both).
	Gap float64
	// Guarded is the raw guarded solve (model units).
	Guarded *milp.Guarded
	// Formulation is the model solved; Seconds the wall time.
	Formulation *Formulation
	Seconds     float64
	// Note says what was not used and why.
	Note string
}

// Makespan returns the best validated makespan (+Inf without a schedule).
func (s *Solution) Makespan() float64 { return s.Best.Makespan() }

// Solve builds the exact MILP of p, starts the solver from opt.Start, and returns the best
// validated schedule and the proven bound. Every incumbent is re-timed from its decisions and
// validated by verify/timed (Retime); nothing the solver says stands against a verified
// schedule: milp.SolveGuarded re-solves with safer settings (then the other backends) when it
// claims infeasibility or a bound above the start's makespan. An error means the model could
// not be built or no solver could run, or a solver's incumbent did not validate (a defect).
func Solve(ctx context.Context, solvers []milp.Solver, p *act.Problem, opt SolveOptions) (*Solution, error) {
	t0 := time.Now()
	sol := &Solution{Best: &heur.Result{}, Bound: math.NaN(), Gap: math.Inf(1)}
	if p.MinMemory() > p.MGPU {
		sol.Status, sol.Bound = milp.Infeasible, math.Inf(1)
		sol.Note = fmt.Sprintf("an operation needs %d bytes with every other activation away, over M_GPU = %d", p.MinMemory(), p.MGPU)
		return sol, nil
	}
	o := Options{Lower: opt.Lower, Plain: opt.Plain, MaxMemory: opt.MaxMemory, Stop: ctx.Done()}
	if opt.Start != nil && opt.Start.Feasible {
		o.Upper = opt.Start.Report.Makespan
		sol.Best, sol.From = opt.Start, opt.StartName
	}
	f, err := Build(p, o)
	if errors.Is(err, ErrStopped) {
		// The deadline (or Ctrl-C) came before the model was complete: no solve, no bound,
		// the start schedule stands.
		sol.Status = milp.StoppedStatus(ctx)
		sol.Seconds = time.Since(t0).Seconds()
		sol.Note = fmt.Sprintf("stopped while building the model (%d operations) after %.1f s, before any solve", p.L()+1, sol.Seconds)
		return sol, nil
	}
	if err != nil {
		return nil, err
	}
	sol.Formulation = f
	params := opt.Params
	if params.RelGap == 0 {
		params.RelGap = DefaultGap
	}
	ev := milp.None()
	if sol.Best.Feasible {
		clean, err := f.Clean(sol.Best.Schedule)
		if err != nil {
			return nil, err
		}
		x, err := f.Point(clean)
		if err != nil {
			return nil, err
		}
		params.Start = x
		ev = milp.Evidence{Value: f.Units.Secs(sol.Best.Report.Makespan),
			What: fmt.Sprintf("%s schedule, makespan %.10g s, validated by verify/timed", opt.StartName, sol.Best.Report.Makespan)}
	}
	g, err := milp.SolveGuarded(ctx, solvers, f.Model, params, ev)
	if err != nil {
		return nil, err
	}
	sol.Guarded, sol.Status = g, g.Status
	if g.Contradiction != "" {
		sol.Note = "solver failure: " + g.Contradiction
	}
	if g.Abandoned {
		sol.Note += "; the solver did not stop at the deadline and was abandoned: nothing of its run is used"
	}
	switch {
	case g.Status == milp.Infeasible || g.Status == milp.InfeasibleOrUnbounded:
		// Believed only without evidence (SolveGuarded): no start schedule either.
		sol.Bound = math.Inf(1)
	case !math.IsNaN(g.Bound) && !math.IsInf(g.Bound, 0):
		sol.Bound = g.Bound * f.Units.Time
	}
	if g.HasSolution {
		inc, err := f.Retime(g.Values)
		if err != nil {
			return nil, fmt.Errorf("actmilp: %s's incumbent: %w", g.Solver, err)
		}
		if d := inc.Report.Makespan - g.Objective*f.Units.Time; d > 1e-6*math.Max(1, g.Objective)*f.Units.Time {
			return nil, fmt.Errorf("actmilp: %s's incumbent re-times to %.10g s, above its objective %.10g s", g.Solver, inc.Report.Makespan, g.Objective*f.Units.Time)
		}
		sol.Incumbent = inc
		if guided, err := heur.NoWait(p, f.Order(g.Values)); err == nil && guided.Feasible {
			sol.Guided = guided
		}
		for _, c := range []struct {
			r    *heur.Result
			name string
		}{{inc, "milp incumbent (re-timed)"}, {sol.Guided, "milp-guided (no-wait on its link order)"}} {
			if c.r != nil && c.r.Feasible && (!sol.Best.Feasible || c.r.Report.Makespan < sol.Best.Report.Makespan*(1-1e-12)) {
				sol.Best, sol.From = c.r, c.name
			}
		}
	}
	if sol.Best.Feasible {
		bound := sol.Bound
		if !math.IsNaN(bound) && bound > sol.Best.Report.Makespan*(1+1e-9) {
			return nil, fmt.Errorf("actmilp: %s's bound %.10g s is above a verified schedule of %.10g s", g.Solver, bound, sol.Best.Report.Makespan)
		}
		if !math.IsNaN(bound) {
			sol.Bound = math.Min(bound, sol.Best.Report.Makespan)
			sol.Gap = milp.RelGap(sol.Best.Report.Makespan, sol.Bound, true)
		}
		if sol.Status == milp.Optimal && sol.Best.Report.Makespan > sol.Bound*(1+1e-6) {
			// The solver's optimum is within its gap of the bound, not at it.
			sol.Note += fmt.Sprintf("; optimal within the relative gap %.2g", params.RelGap)
		}
	}
	sol.Seconds = time.Since(t0).Seconds()
	return sol, nil
}

// BestHeuristic returns the shortest validated schedule of GREEDY, DYNPROG (500 slots) and
// VDNN, with its name — the start Solve is given by default. Feasible is false when none has
// a schedule.
func BestHeuristic(p *act.Problem) (*heur.Result, string, error) {
	return BestHeuristicUntil(p, nil)
}

// BestHeuristicUntil is BestHeuristic ended when stop closes (each heuristic stops at it,
// DYNPROG between operations): the best of what finished before it.
func BestHeuristicUntil(p *act.Problem, stop <-chan struct{}) (*heur.Result, string, error) {
	best, name := &heur.Result{}, ""
	try := func(n string, r *heur.Result, err error) error {
		if err != nil {
			return err
		}
		if r.Feasible && (!best.Feasible || r.Report.Makespan < best.Report.Makespan) {
			best, name = r, n
		}
		return nil
	}
	r, err := heur.GreedyUntil(p, stop)
	if err := try("greedy", r, err); err != nil {
		return nil, "", err
	}
	r, err = dp.DynProg(p, dp.ActOptions{Stop: stop})
	if errors.Is(err, dp.ErrStopped) {
		r, err = &heur.Result{Stopped: true}, nil
	}
	if err := try("dynprog", r, err); err != nil {
		return nil, "", err
	}
	r, err = heur.VDNNUntil(p, heur.VDNNBoth, stop)
	if err := try("vdnn", r, err); err != nil {
		return nil, "", err
	}
	return best, name, nil
}
