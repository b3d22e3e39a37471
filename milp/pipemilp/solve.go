package pipemilp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	dpl "github.com/memsched/memsched/dp/pipeline"
	"github.com/memsched/memsched/dp/pipepack"
	pl "github.com/memsched/memsched/instances/pipeline"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/model"
	"github.com/memsched/memsched/schedule"
	vpl "github.com/memsched/memsched/verify/pipeline"
)

// DefaultGap is the relative MIP gap the solves ask for when the caller gives none: the
// models' optima are compared with exact searches.
const DefaultGap = 1e-9

// Solution is a solve of one of the models, in seconds.
type Solution struct {
	// Status is the solver's (after milp.SolveGuarded).
	Status milp.Status
	// Plan is the best verified plan: the incumbent's allocation completed and replayed (the
	// contiguous model: each part storing everything, or with Remat its fastest persistent
	// sequence that fits, dp/pipeline.Evaluate; the allocation model: run with
	// dp/pipepack.Actions), or the start's when better; nil without either. From names it.
	Plan   *schedule.Pipeline
	Replay *vpl.Result
	From   string
	// Feasible says Plan fits every GPU; Makespan is its replayed makespan (NaN without a
	// plan) and Period its steady-state period (dp/pipepack.Period).
	Feasible bool
	Makespan float64
	Period   float64
	// Value is the model's objective at the incumbent (NaN without one): the makespan (the
	// contiguous model; exact when it stores everything), the period, or the makespan bound.
	Value float64
	// Bound is a proven lower bound on the model's objective over its scope: the solver's
	// dual bound (its optimum when Status is optimal), +Inf when the model is infeasible
	// (believed only when no verified plan contradicts it), NaN when no answer could be
	// believed.
	Bound float64
	// Gap is the relative gap between Value and Bound.
	Gap     float64
	Guarded *milp.Guarded
	Solver  string
	Seconds float64
	// Note says what was not used or not believed, and why. Rejected says why the solver's
	// incumbent was not used although the model is exact (it does not fit in bytes, or
	// replays above its value: the solver's tolerances, or a defect); "" when it was.
	Note     string
	Rejected string
}

// ContiguousSolveOptions configure SolveContiguous.
type ContiguousSolveOptions struct {
	// Remat solves the relaxation of every sequence per part (ContiguousOptions.Remat).
	Remat bool
	// Start is a contiguous allocation (its parts' last stages), e.g. the exact planner's:
	// completed and replayed, it is the solver's first incumbent and the evidence that guards
	// its answers (a bound above its makespan, or "infeasible", is a solver failure). nil:
	// none.
	Start []int
	// Params go to the solver (a zero RelGap means DefaultGap).
	Params    milp.Params
	MaxMemory int64
}

// evaluate completes and replays a contiguous allocation.
func evaluate(p *pl.Problem, cuts []int, remat bool) (*dpl.Result, error) {
	return dpl.Evaluate(p, cuts, dpl.Options{Remat: remat})
}

// SolveContiguous builds and solves the contiguous model of p. Its optimum is the least
// makespan over contiguous allocations on at most P GPUs with every part storing everything
// (a lower bound for every sequence per part with Remat); every incumbent is completed and
// replayed by verify/pipeline. An error means the model could not be built (a
// *TooLargeError), no solver could run, or a replay contradicts the model (a defect).
func SolveContiguous(ctx context.Context, solvers []milp.Solver, p *pl.Problem, o ContiguousSolveOptions) (*Solution, error) {
	t0 := time.Now()
	f, err := BuildContiguous(p, ContiguousOptions{Remat: o.Remat, MaxMemory: o.MaxMemory})
	if err != nil {
		return nil, err
	}
	sol := &Solution{Makespan: math.NaN(), Period: math.NaN(), Value: math.NaN(), Bound: math.NaN(), Gap: math.Inf(1)}
	params := o.Params
	if params.RelGap == 0 {
		params.RelGap = DefaultGap
	}
	ev := milp.None()
	var start *dpl.Result
	if o.Start != nil {
		start, err = evaluate(p, o.Start, o.Remat)
		if err != nil {
			return nil, err
		}
		if start.Feasible {
			ev = milp.Evidence{Value: f.Units.Secs(start.Makespan),
				What: fmt.Sprintf("plan %v, makespan %.10g s, replayed by verify/pipeline", start.Plan, start.Makespan)}
			if x, err := f.Point(o.Start); err == nil && f.Model.Check(x).Feasible(milp.FeasTol) {
				params.Start = x
			}
		}
	}
	g, err := solveInto(ctx, solvers, f.Model, params, ev, f.Units.Time, sol)
	if err != nil {
		return nil, err
	}
	if g.HasSolution {
		sol.Value = f.Makespan(g.Values)
		cuts, err := f.Cuts(g.Values)
		if err != nil {
			return nil, fmt.Errorf("pipemilp: %s's incumbent: %w", g.Solver, err)
		}
		inc, err := evaluate(p, cuts, o.Remat)
		if err != nil {
			return nil, err
		}
		if !o.Remat {
			// The model is exact: the incumbent fits and replays to at most its C.
			switch {
			case !inc.Feasible:
				sol.Rejected = fmt.Sprintf("%s's incumbent %v does not fit in bytes: %s", g.Solver, inc.Plan, inc.Reason)
			case inc.Makespan > sol.Value*(1+1e-6)+1e-9:
				sol.Rejected = fmt.Sprintf("%s's incumbent %v replays to %.10g s, above its C = %.10g s", g.Solver, inc.Plan, inc.Makespan, sol.Value)
			}
		}
		if sol.Rejected != "" {
			sol.Note = strings.TrimPrefix(sol.Note+"; not used: "+sol.Rejected, "; ")
		} else {
			sol.take(inc, "milp incumbent")
		}
	}
	if start != nil {
		sol.take(start, "start")
	}
	if err := sol.finish(p); err != nil {
		return nil, err
	}
	sol.Seconds = time.Since(t0).Seconds()
	return sol, nil
}

// take keeps r's plan when it is better than the current one.
func (s *Solution) take(r *dpl.Result, from string) {
	if r == nil || r.Plan == nil || r.Replay == nil {
		return
	}
	s.takePlan(r.Plan, r.Replay, r.Feasible, from)
}

func (s *Solution) takePlan(plan *schedule.Pipeline, rep *vpl.Result, feasible bool, from string) {
	better := s.Plan == nil || (feasible && !s.Feasible) || (feasible == s.Feasible && rep.Makespan < s.Makespan*(1-1e-12))
	if !better {
		return
	}
	s.Plan, s.Replay, s.Feasible, s.Makespan, s.From = plan, rep, feasible, rep.Makespan, from
}

// finish checks the bound against the verified plan and computes the gap.
func (s *Solution) finish(p *pl.Problem) error {
	if s.Plan != nil {
		per, err := pipepack.Period(p, s.Plan)
		if err != nil {
			return err
		}
		s.Period = per
	}
	if !math.IsNaN(s.Value) && !math.IsNaN(s.Bound) {
		s.Gap = milp.RelGap(s.Value, s.Bound, true)
	}
	return nil
}

// AllocationSolveOptions configure SolveAllocation.
type AllocationSolveOptions struct {
	Objective Objective
	Remat     bool
	// Evidence are verified plans of the model's scope (any allocation, run in any order):
	// each that fits p, replayed, bounds the optimum from above — its makespan (Makespan), its
	// period (Period) — and guards the solver's answers. Under !Remat only plans whose parts
	// store everything count.
	Evidence []*schedule.Pipeline
	Params   milp.Params
	// MaxMemory caps the model's estimated memory (0: none).
	MaxMemory int64
}

// SolveAllocation builds and solves the allocation model of p: a lower bound on the period
// or the makespan of every allocation (contiguous or not) in every order, with one
// micro-batch's memory. Its incumbent is turned into a plan, run with dp/pipepack's order and
// replayed with p's m micro-batches (it may not fit: the model charges one micro-batch).
func SolveAllocation(ctx context.Context, solvers []milp.Solver, p *pl.Problem, o AllocationSolveOptions) (*Solution, error) {
	t0 := time.Now()
	a, err := BuildAllocation(p, AllocationOptions{Objective: o.Objective, Remat: o.Remat, MaxMemory: o.MaxMemory})
	if err != nil {
		return nil, err
	}
	sol := &Solution{Makespan: math.NaN(), Period: math.NaN(), Value: math.NaN(), Bound: math.NaN(), Gap: math.Inf(1)}
	params := o.Params
	if params.RelGap == 0 {
		params.RelGap = DefaultGap
	}
	ev := milp.None()
	for _, plan := range o.Evidence {
		if plan == nil {
			continue
		}
		if !o.Remat && recomputes(plan) {
			continue
		}
		rep, err := vpl.Replay(p, plan)
		if err != nil {
			return nil, fmt.Errorf("pipemilp: evidence plan %v: %w", plan, err)
		}
		if !rep.Fits() {
			continue
		}
		v, what := rep.Makespan, "makespan"
		if o.Objective == Period {
			if v, err = pipepack.Period(p, plan); err != nil {
				return nil, err
			}
			what = "period"
		}
		if math.IsNaN(ev.Value) || a.Units.Secs(v) < ev.Value {
			ev = milp.Evidence{Value: a.Units.Secs(v), What: fmt.Sprintf("plan %v, %s %.10g s, replayed by verify/pipeline", plan, what, v)}
		}
	}
	g, err := solveInto(ctx, solvers, a.Model, params, ev, a.Units.Time, sol)
	if err != nil {
		return nil, err
	}
	if g.HasSolution {
		sol.Value = a.Value(g.Values)
		plan := pipepack.Alloc(a.Assignment(g.Values))
		if o.Objective == Period {
			per, err := pipepack.Period(p, plan)
			if err != nil {
				return nil, err
			}
			if per > sol.Value*(1+1e-6)+1e-9 {
				sol.Rejected = fmt.Sprintf("%s's incumbent %v has period %.10g s, above its T = %.10g s", g.Solver, plan, per, sol.Value)
				sol.Note = strings.TrimPrefix(sol.Note+"; "+sol.Rejected, "; ")
			}
		}
		out, rep, err := pipepack.Execute(p, plan)
		if err != nil {
			return nil, err
		}
		sol.takePlan(out, rep, rep.Fits(), "milp incumbent")
	}
	if err := sol.finish(p); err != nil {
		return nil, err
	}
	sol.Seconds = time.Since(t0).Seconds()
	return sol, nil
}

// recomputes reports whether a part of plan runs a sequence other than storing everything.
func recomputes(plan *schedule.Pipeline) bool {
	for _, pt := range plan.Parts {
		if len(pt.Sequence) == 0 {
			continue
		}
		end := pt.Last + 1
		want := 2 * (end - pt.First + 1)
		if len(pt.Sequence) != want {
			return true
		}
		for i, op := range pt.Sequence {
			l := pt.First + i
			kind := schedule.Fall
			if i >= want/2 {
				l, kind = end-(i-want/2), schedule.B
			}
			if op.Kind != kind || op.Stage != l {
				return true
			}
		}
	}
	return false
}

// IsTooLarge reports whether err is a model over the memory cap.
func IsTooLarge(err error) bool {
	var t *TooLargeError
	return errors.As(err, &t)
}

// solveInto solves m through milp.SolveGuarded (the verified evidence ev checks the solver's
// word) and fills sol's solver fields, common to both models: the status and solver, a solver
// failure's note, and the proven bound in seconds (the dual bound × the model's time unit;
// +Inf when the model is proven infeasible).
func solveInto(ctx context.Context, solvers []milp.Solver, m *model.Model, params milp.Params, ev milp.Evidence, unit float64, sol *Solution) (*milp.Guarded, error) {
	g, err := milp.SolveGuarded(ctx, solvers, m, params, ev)
	if err != nil {
		return nil, err
	}
	sol.Guarded, sol.Status, sol.Solver = g, g.Status, g.Solver
	if g.Contradiction != "" {
		sol.Note = "solver failure: " + g.Contradiction
	}
	switch {
	case g.Status == milp.Infeasible || g.Status == milp.InfeasibleOrUnbounded:
		sol.Bound = math.Inf(1)
	case !math.IsNaN(g.Bound) && !math.IsInf(g.Bound, 0):
		sol.Bound = math.Max(0, g.Bound*unit)
	}
	return g, nil
}
