package report

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	heur "github.com/memsched/memsched/heuristics/offload"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/instances/offload"
	"github.com/memsched/memsched/lever/weightoffload"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/weightlb"
	"github.com/memsched/memsched/verify/periodic"
)

// WeightOffload is the weight-offloading lever (002, SPEC §3): the period of the steady state
// under M_GPU = the budget and the link bandwidth. Strategies: greedy (002 Alg. 1 + Alg. 2),
// greedy-nodiscount (Greedy*), greedy-reserve, l2l, milp-guided (the MILP incumbent's selection
// scheduled by Alg. 2). Bounds: Σu (no idle time) and the forced prefetch volume / β
// (relaxations), and the lower-bound MILP of 002 §6 with SPEC §3's corrections, solved guarded
// against the best validated heuristic (weightlb.LowerBound; its status and gap; a stopped
// solve still certifies its proven bound).
type WeightOffload struct{}

// Name returns "weight-offload".
func (WeightOffload) Name() string { return "weight-offload" }

// Skip needs a bandwidth and weights.
func (WeightOffload) Skip(in Input) string {
	if in.Bandwidth <= 0 {
		return "no bandwidth given (--bandwidth RATE)"
	}
	for _, s := range in.Chain.Stages {
		if s.W > 0 {
			return ""
		}
	}
	return "the chain has no weights (w = 0 on every stage)"
}

// Run computes every strategy and bound.
func (WeightOffload) Run(ctx context.Context, in Input) (LeverReport, error) {
	lr := LeverReport{Lever: "weight-offload", Measure: "period"}
	p, err := offload.FromChain(in.Chain, in.Budget, in.Bandwidth)
	if err != nil {
		return lr, err
	}
	// When an operation alone exceeds M_GPU no schedule exists, and the heuristics, which take
	// tens of seconds to find that out on a 1000-block GPT-2, are not run. Otherwise they run
	// within the share, each stopped at its end (the MILP gets what they leave).
	impossible := WeightTrivialBounds(p)[0].Infeasible
	var known *weightlb.Known
	for _, st := range weightoffload.Strategies {
		start := time.Now()
		if impossible {
			lr.Rows = append(lr.Rows, Row{Strategy: st.Name, Note: "not run: no schedule exists (an operation exceeds M_GPU with every other weight away)"})
			continue
		}
		if ctx.Err() != nil {
			lr.Rows = append(lr.Rows, Row{Strategy: st.Name, Note: "not run: the lever's time share was spent"})
			continue
		}
		row, err := weightRow(p, st, ctx.Done())
		if err != nil {
			return lr, err
		}
		if row.Feasible && (known == nil || row.Makespan < known.Period) {
			known = &weightlb.Known{Name: st.Name, Period: row.Makespan}
		}
		row.Seconds = time.Since(start).Seconds()
		lr.Rows = append(lr.Rows, row)
	}
	bounds, cert, note, err := weightBounds(ctx, p, in, known)
	if err != nil {
		return lr, err
	}
	lr.Bounds = bounds
	if note != "" {
		lr.Notes = append(lr.Notes, note)
	}
	// MILP-guided: the incumbent's selection scheduled by Alg. 2 (validated).
	row := Row{Strategy: "milp-guided"}
	if cert != nil && cert.Selection != nil {
		start := time.Now()
		if sch, _, err := weightlb.Guided(p, cert); err == nil {
			r, err := periodic.Validate(p, sch)
			if err != nil {
				return lr, fmt.Errorf("milp-guided returned an invalid schedule: %w", err)
			}
			row.Feasible, row.Verified, row.Makespan, row.Peak = true, true, r.Period, r.Peak
		} else {
			row.Note = err.Error()
		}
		row.Seconds = time.Since(start).Seconds()
	} else {
		row.Note = "no MILP incumbent"
	}
	lr.Rows = append(lr.Rows, row)
	return lr, nil
}

// weightRow runs one strategy of the registry (validated by verify/periodic there) until stop
// closes (nil: never).
func weightRow(p *offload.Problem, st weightoffload.Strategy, stop <-chan struct{}) (Row, error) {
	row := Row{Strategy: st.Name}
	out, err := st.RunUntil(p, stop)
	if errors.Is(err, heur.ErrStopped) {
		row.Note = "stopped at the end of the lever's time share"
		return row, nil
	}
	if err != nil {
		return row, err
	}
	if !out.Feasible {
		row.Note = out.Reason
		return row, nil
	}
	row.Feasible, row.Verified, row.Makespan, row.Peak = true, true, out.Report.Period, out.Report.Peak
	return row, nil
}

// WeightTrivialBounds returns the closed-form bounds: Σu (no idle time) and the forced
// prefetch volume / β, or an infeasibility proof when an operation alone exceeds M_GPU.
func WeightTrivialBounds(p *offload.Problem) []Bound {
	sumU, forced, infeasible := weightlb.TrivialBounds(p)
	if infeasible {
		return []Bound{{Name: "operation memory", Kind: Relaxation, Infeasible: true, Exact: true,
			Note: "an operation exceeds M_GPU with every other weight away: no schedule exists"}}
	}
	return []Bound{
		{Name: "Σu", Kind: Relaxation, Value: sumU, Note: "every operation once, no idle time"},
		{Name: "forced prefetch / β", Kind: Relaxation, Value: forced, Note: "weights that must be away are prefetched on one channel"},
	}
}

// WeightBounds returns the closed-form bounds and the guarded MILP of 002 §6 (weightlb.LowerBound:
// its answers are checked against the best validated heuristic schedule) within in.TimeLimit.
func WeightBounds(ctx context.Context, p *offload.Problem, in Input) ([]Bound, *weightlb.Certified, string, error) {
	return weightBounds(ctx, p, in, nil)
}

// weightBounds is WeightBounds with the best schedule already validated (nil: none; the MILP's
// evidence is then found by running the strategies).
func weightBounds(ctx context.Context, p *offload.Problem, in Input, known *weightlb.Known) ([]Bound, *weightlb.Certified, string, error) {
	bounds := WeightTrivialBounds(p)
	if bounds[0].Infeasible {
		return bounds, nil, "", nil
	}
	solvers, note := milpSolvers(in.Solver)
	if len(solvers) == 0 {
		return bounds, nil, note, nil
	}
	if in.Progress != nil {
		in.Progress.Step("weight-offload MILP ("+solvers[0].Name()+")", 0)
		defer in.Progress.Done()
	}
	start := time.Now()
	params := milp.Params{TimeLimit: in.TimeLimit, RelGap: 1e-9}
	if in.Progress != nil {
		u := weightlb.Units(p)
		params.Progress = func(inc, bound, gap float64) { in.Progress.MILP(inc*u.Time, bound*u.Time, gap) }
	}
	cert, err := weightlb.LowerBound(ctx, p, weightlb.Options{Solvers: solvers, Params: params, MaxMemory: memoryLimit(in), Known: known})
	if err != nil {
		return bounds, nil, "", err
	}
	g := cert.MILP
	if g == nil {
		if cert.Note != "" {
			return bounds, cert, "bound: " + cert.Note, nil
		}
		return bounds, cert, "", nil
	}
	b := Bound{Name: "MILP (002 §6, " + g.Solver + ")", Kind: MILP, Status: g.Status.String(), Seconds: time.Since(start).Seconds(),
		Exact: g.Status == milp.Optimal, Note: cert.CertifiedBy, TimeBudget: in.TimeLimit.Seconds()}
	if g.HasSolution {
		b.Gap = finite(g.Gap)
	}
	if in.Progress != nil {
		inc := math.NaN()
		if g.HasSolution {
			inc = g.Objective * cert.Units.Time
		}
		in.Progress.MILP(inc, cert.MILPBound, g.Gap)
	}
	switch {
	case cert.Infeasible:
		b.Infeasible = true
	case math.IsNaN(cert.MILPBound):
		why := fmt.Sprintf("bound: the MILP stopped (%s after %s of its %s) without a bound", g.Status, instances.FormatDuration(b.Seconds), instances.FormatDuration(b.TimeBudget))
		if cert.Note != "" {
			why = "bound: " + cert.Note
		}
		if g.Abandoned {
			why += " (it did not stop at the end of the share and was abandoned)"
		}
		return bounds, cert, why, nil
	default:
		b.Value = cert.MILPBound
	}
	if g.Contradiction != "" {
		b.Note += "; solver contradiction: " + g.Contradiction
	}
	return append(bounds, b), cert, "", nil
}

// milpSolvers returns the named backend (or the best registered) followed by the other
// compiled-in ones for the guarded solve; none with a note when no backend is registered.
func milpSolvers(name string) ([]milp.Solver, string) {
	first, err := milp.Lookup(name)
	if err != nil {
		return nil, "bound: no MILP solver (" + err.Error() + "); closed-form bounds only"
	}
	out := []milp.Solver{first}
	for _, n := range milp.Backends() {
		if n == first.Name() {
			continue
		}
		if s, err := milp.Lookup(n); err == nil {
			out = append(out, s)
		}
	}
	return out, ""
}
