package report

import (
	"context"
	"fmt"
	"math"
	"time"

	heur "github.com/memsched/memsched/heuristics/offload"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/instances/offload"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/weightlb"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify/periodic"
)

// WeightOffload is the weight-offloading lever (002, SPEC §3): the period of the steady state
// under M_GPU = the budget and the link bandwidth. Strategies: greedy (002 Alg. 1 + Alg. 2),
// greedy-nodiscount (Greedy*), greedy-reserve, l2l. Bounds: Σu (no idle time, a relaxation)
// and the lower-bound MILP of 002 §6 with SPEC §3's corrections (its status and gap; a stopped
// solve still certifies its best bound).
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

// WeightStrategies lists the weight-offloading strategies in report order.
var WeightStrategies = []string{"greedy", "greedy-nodiscount", "greedy-reserve", "l2l"}

// WeightStrategy runs one strategy; a nil schedule with a reason means it found none.
func WeightStrategy(p *offload.Problem, name string) (*schedule.Periodic, string) {
	var s *schedule.Periodic
	var err error
	switch name {
	case "greedy":
		_, s, _, err = heur.Greedy(p, true)
	case "greedy-nodiscount":
		_, s, _, err = heur.Greedy(p, false)
	case "greedy-reserve":
		_, s, _, err = heur.GreedyReserve(p, true)
	case "l2l":
		s, _, err = heur.L2L(p)
	default:
		panic("report: unknown weight-offload strategy " + name)
	}
	if err != nil {
		return nil, err.Error()
	}
	return s, ""
}

// Run computes every strategy and bound.
func (WeightOffload) Run(ctx context.Context, in Input) (LeverReport, error) {
	lr := LeverReport{Lever: "weight-offload", Measure: "period"}
	p, err := offload.FromChain(in.Chain, in.Budget, in.Bandwidth)
	if err != nil {
		return lr, err
	}
	for _, name := range WeightStrategies {
		if err := ctx.Err(); err != nil {
			return lr, err
		}
		start := time.Now()
		row := Row{Strategy: name}
		s, why := WeightStrategy(p, name)
		if s == nil {
			row.Note = why
		} else {
			// The heuristics validate; validate again here, independently of them.
			r, err := periodic.Validate(p, s)
			if err != nil {
				return lr, fmt.Errorf("%s returned an invalid schedule: %w", name, err)
			}
			row.Feasible, row.Verified, row.Makespan, row.Peak = true, true, r.Period, r.Peak
		}
		row.Seconds = time.Since(start).Seconds()
		lr.Rows = append(lr.Rows, row)
	}
	var sumU float64
	for _, l := range p.Layers {
		sumU += l.UF + l.UB
	}
	lr.Bounds = append(lr.Bounds, Bound{Name: "Σu", Kind: Relaxation, Value: sumU, Note: "every operation once, no idle time"})
	b, note, err := WeightMILPBound(ctx, p, in)
	if err != nil {
		return lr, err
	}
	if note != "" {
		lr.Notes = append(lr.Notes, note)
	}
	if b != nil {
		lr.Bounds = append(lr.Bounds, *b)
	}
	return lr, nil
}

// weightScale expresses the MILP's sizes in MiB, as `memsched bound` does.
const weightScale = 1 << 20

// WeightMILPBound solves 002 §6's lower-bound MILP within in.TimeLimit. It returns nil and a
// note when no solver is available.
func WeightMILPBound(ctx context.Context, p *offload.Problem, in Input) (*Bound, string, error) {
	s, err := milp.Lookup(in.Solver)
	if err != nil {
		return nil, "bound: no MILP solver (" + err.Error() + "); only Σu", nil
	}
	m, _, err := weightlb.Build(p, weightScale)
	if err != nil {
		return nil, "", err
	}
	if in.Progress != nil {
		in.Progress.Step("weight-offload MILP ("+s.Name()+")", 0)
		defer in.Progress.Done()
	}
	res, err := milp.Solve(ctx, s, m, milp.Params{TimeLimit: in.TimeLimit})
	if err != nil {
		return nil, "", err
	}
	b := &Bound{Name: "MILP (002 §6, " + res.Solver + ")", Kind: MILP, Status: res.Status.String(), Seconds: res.Wall.Seconds()}
	lb := res.Bound
	if res.Status == milp.Optimal {
		lb, b.Exact = res.Objective, true
	}
	if res.HasSolution {
		b.Gap = finite(res.Gap)
	}
	if in.Progress != nil {
		in.Progress.MILP(res.Objective, lb, res.Gap)
	}
	switch {
	case res.Status == milp.Infeasible:
		b.Infeasible = true
	case math.IsInf(lb, 0) || math.IsNaN(lb) || lb <= 0:
		return nil, fmt.Sprintf("bound: the MILP stopped (%s after %s) without a bound", res.Status, instances.FormatDuration(res.Wall.Seconds())), nil
	default:
		b.Value = lb
	}
	return b, "", nil
}
