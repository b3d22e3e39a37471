package report

import (
	"context"
	"fmt"
	"math"
	"time"

	heur "github.com/memsched/memsched/heuristics/actoffload"
	act "github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/actmilp"
)

// actMILPMaxOps is the largest chain (operations per pass) on which certify solves the exact
// MILP of Problem 1: beyond, the model (O(n²) binaries and rows) takes the time limit to reach
// its root (DenseNet-201, 105 operations).
const actMILPMaxOps = 80

// actMILP solves the exact MILP of Problem 1 (milp/actmilp) within what is left of the time
// limit, started from the best validated row's schedule (start), with the relaxations' bound
// lb inside it, and adds its bound (kind MILP, status and gap; exact when proven optimal) and
// its row "milp" (the MILP-guided schedule: the re-timed incumbent or the no-wait schedule of
// its link order, validated by verify/timed; the start when the solver found nothing better).
// A bound above a verified row is dropped with a note, never reported; a solve that cannot run
// is a note.
func actMILP(ctx context.Context, in Input, p *act.Problem, lr *LeverReport, start *heur.Result, startName string, lb float64, deadline time.Time) {
	if n := p.L() + 1; n > actMILPMaxOps {
		lr.Notes = append(lr.Notes, fmt.Sprintf("milp: not run on %d operations (up to %d)", n, actMILPMaxOps))
		return
	}
	for _, b := range lr.Bounds {
		if b.Infeasible {
			return
		}
	}
	if start != nil && start.Feasible && start.Report.Makespan <= lb*(1+1e-9) {
		return // a bound meets the best row already: nothing left to certify
	}
	s, err := milp.Lookup(in.Solver)
	if err != nil || s.Name() == "ref" {
		return // the referee enumerates: no MILP of this size
	}
	left := time.Until(deadline)
	if left < time.Second {
		lr.Notes = append(lr.Notes, fmt.Sprintf("milp: not run, %.1f s of the lever's time share left (a solve gets at least 1 s; raise --time-limit)", max(left.Seconds(), 0)))
		return
	}
	if in.Progress != nil {
		in.Progress.Step("act-offload exact MILP ("+s.Name()+")", 0)
		defer in.Progress.Done()
	}
	params := milp.Params{TimeLimit: left}
	if in.Progress != nil {
		u := actmilp.Units(p).Time
		params.Progress = func(inc, bound, gap float64) { in.Progress.MILP(inc*u, bound*u, gap) }
	}
	if start != nil && !start.Feasible {
		start = nil
	}
	t0 := time.Now()
	sol, err := actmilp.Solve(ctx, []milp.Solver{s}, p, actmilp.SolveOptions{Start: start, StartName: startName, Lower: lb, MaxMemory: memoryLimit(in), Params: params})
	if err != nil {
		lr.Notes = append(lr.Notes, fmt.Sprintf("milp: %v", err))
		return
	}
	secs := time.Since(t0).Seconds()
	f := sol.Formulation
	row := Row{Strategy: "milp", Seconds: secs}
	if r := sol.Best; r.Feasible {
		row.Feasible, row.Verified, row.Makespan, row.Peak, row.Timed = true, true, r.Report.Makespan, r.Report.Peak, r.Schedule
		row.Note = "MILP-guided: " + sol.From
		if f != nil {
			row.Note += fmt.Sprintf("; %s, %d rows × %d columns", sol.Status, f.Model.NumRows(), f.Model.NumVars())
		}
	} else {
		row.Note = "no schedule found"
	}
	lr.Rows = append(lr.Rows, row)
	b := Bound{Name: "MILP (exact Problem 1, " + s.Name() + ")", Kind: MILP, Status: sol.Status.String(), Seconds: secs,
		Exact: sol.Status == milp.Optimal && sol.Gap <= 1e-9,
		Note:  "the exact MILP of 001's Problem 1 (milp/actmilp, docs/act-offload.md)"}
	if sol.Note != "" {
		b.Note += "; " + sol.Note
	}
	if !math.IsInf(sol.Gap, 0) && !math.IsNaN(sol.Gap) {
		b.Gap = finite(sol.Gap)
	}
	if in.Progress != nil && sol.Best.Feasible {
		in.Progress.MILP(sol.Best.Report.Makespan, sol.Bound, sol.Gap)
	}
	switch {
	case math.IsInf(sol.Bound, 1):
		b.Infeasible = true
	case math.IsNaN(sol.Bound) || math.IsInf(sol.Bound, -1):
		lr.Notes = append(lr.Notes, fmt.Sprintf("milp: %s after %.1f s without a bound", sol.Status, secs))
		return
	default:
		b.Value = sol.Bound
	}
	addBound(lr, b, fmt.Sprintf("milp: %s's bound", s.Name()))
}
