package report

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/combinedlb"
)

// comboMILP adds the relaxation MILP of rematerialization and offloading combined
// (milp/combinedlb: a lower bound on every strict schedule, any 004 sequence with any
// transfers — not only the combined class) to the remat-offload lever, solved within what is
// left until deadline and guarded by the best verified row. Its bound is global: it bounds the
// other levers' schedules too (remat alone, activation offloading alone). A bound above a
// verified row is dropped with a note, never reported.
func comboMILP(ctx context.Context, in Input, lr *LeverReport, budget int64, deadline time.Time) {
	s, err := milp.Lookup(in.Solver)
	if err != nil || s.Name() == "ref" {
		return
	}
	left := time.Until(deadline)
	if left < time.Second {
		lr.Notes = append(lr.Notes, fmt.Sprintf("milp: not run, %.1f s of the lever's time share left (a solve gets at least 1 s; raise --time-limit)", max(left.Seconds(), 0)))
		return
	}
	verified := math.NaN()
	for _, r := range lr.Rows {
		if r.Feasible && (math.IsNaN(verified) || r.Makespan < verified) {
			verified = r.Makespan
		}
	}
	if in.Progress != nil {
		in.Progress.Step("remat-offload relaxation MILP ("+s.Name()+")", 0)
		defer in.Progress.Done()
	}
	t0 := time.Now()
	b, err := combinedlb.Solve(ctx, []milp.Solver{s}, in.Chain, budget, in.Bandwidth, milp.Params{TimeLimit: left}, verified, memoryLimit(in))
	if err != nil {
		lr.Notes = append(lr.Notes, fmt.Sprintf("milp: not run: %v", err))
		return
	}
	if b.Guarded == nil {
		lr.Notes = append(lr.Notes, fmt.Sprintf("milp: %s while its model was built (%.1f s): no bound", b.Status, time.Since(t0).Seconds()))
		return
	}
	bound := Bound{Name: "MILP (relaxation)", Kind: MILP, Status: b.Status.String(), Seconds: time.Since(t0).Seconds(),
		Note: s.Name() + ", milp/combinedlb: phases, stored sets, a fluid link; bounds every strict schedule of the combined model, the other levers' included (docs/bounds.md)"}
	// No gap: the solver's gap is about the relaxation, whose points are not schedules.
	switch {
	case math.IsNaN(b.Value):
		lr.Notes = append(lr.Notes, "milp: no answer believed: "+b.Guarded.Contradiction)
		return
	case math.IsInf(b.Value, 1):
		bound.Infeasible = true
	case !b.Own:
		note := fmt.Sprintf("milp: %s after %.1f s before the solver had a bound", b.Status, bound.Seconds)
		if b.Guarded.Abandoned {
			note += " (it did not stop at the end of the share and was abandoned)"
		}
		lr.Notes = append(lr.Notes, note)
		return
	default:
		bound.Value = b.Value
	}
	addBound(lr, bound, "milp: the relaxation's bound")
}
