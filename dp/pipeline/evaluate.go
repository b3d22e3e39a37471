package pipeline

import (
	"fmt"
	"math"

	"github.com/memsched/memsched/dp"
	pl "github.com/memsched/memsched/instances/pipeline"
	"github.com/memsched/memsched/schedule"
	vpl "github.com/memsched/memsched/verify/pipeline"
)

// Evaluate completes a given contiguous allocation — cuts are its parts' last stages, GPU k
// running stages cuts[k−1]+1..cuts[k] — into a plan: each part stores everything or, with
// o.Remat, runs its fastest persistent sequence that fits its GPU (the planner's tables,
// built for these parts only). The plan is replayed by verify/pipeline. When a part fits no
// sequence of the class, Feasible is false and Reason names it, with the validator's first
// overflow of the plan that stores everything there.
func Evaluate(p *pl.Problem, cuts []int, o Options) (*Result, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	L := p.L()
	if len(cuts) == 0 || len(cuts) > p.GPUs || cuts[len(cuts)-1] != L {
		return nil, fmt.Errorf("pipeline: Evaluate: cuts %v are not 1..%d parts ending at %d", cuts, p.GPUs, L)
	}
	for k := 1; k < len(cuts); k++ {
		if cuts[k] <= cuts[k-1] || cuts[0] < 1 {
			return nil, fmt.Errorf("pipeline: Evaluate: cuts %v are not increasing", cuts)
		}
	}
	o, release := o.deadlineStop()
	defer release()
	var costs partCosts = storeAllParts(p) // a plan's parts only
	res := &Result{Exact: true, Complete: true}
	if o.Remat {
		sMin := make([]int, L+1)
		for e := 1; e <= L; e++ {
			sMin[e] = e + 1
		}
		first := 1
		for _, e := range cuts {
			sMin[e] = first
			first = e + 1
		}
		u, _, exact, q, err := newRematCosts(p, o, o.Slots, len(cuts), sMin, math.Inf(1), false)
		if err != nil && o.Slots == 0 && !o.Exact && tooLarge(err) {
			res.Note = fmt.Sprintf("the exact tables are too large (%v): %d slots instead", err, dp.DefaultSlots)
			u, _, exact, q, err = newRematCosts(p, o, dp.DefaultSlots, len(cuts), sMin, math.Inf(1), false)
		}
		if err != nil {
			return nil, err
		}
		costs = either{costs, u}
		res.Exact, res.SlotSize = exact, q
	}
	return complete(p, cuts, costs, o.Remat, res)
}

// complete gives each part of the contiguous allocation cuts its sequence at costs and replays
// the plan with verify/pipeline into res (Feasible, or Reason with the validator's first
// overflow when a part fits no sequence of the class).
func complete(p *pl.Problem, cuts []int, costs partCosts, remat bool, res *Result) (*Result, error) {
	plan := schedule.NewContiguous(cuts)
	S := len(cuts)
	for k := range plan.Parts {
		pt := &plan.Parts[k]
		n := p.InFlight(k, S)
		if _, _, ok := costs.cost(pt.First, pt.Last, n); !ok {
			if res.Reason == "" {
				what := "storing everything"
				if remat {
					what = "with any persistent sequence"
				}
				res.Reason = fmt.Sprintf("part [%d–%d] does not fit GPU %d (%d micro-batches in flight) %s", pt.First, pt.Last, k, n, what)
			}
			continue
		}
		seq, err := costs.sequence(pt.First, pt.Last, n)
		if err != nil {
			return nil, err
		}
		pt.Sequence = seq
	}
	rep, err := vpl.Replay(p, plan)
	if err != nil {
		return nil, fmt.Errorf("pipeline: internal error: the plan %v does not replay: %w", plan, err)
	}
	res.Plan, res.Replay, res.Makespan = plan, rep, rep.Makespan
	if res.Reason != "" {
		if rep.Fits() {
			return nil, fmt.Errorf("pipeline: internal error: plan %v fits the budget though %s", plan, res.Reason)
		}
		res.Reason += ": " + rep.Violation.Error()
		return res, nil
	}
	if !rep.Fits() {
		return nil, fmt.Errorf("pipeline: internal error: the plan %v does not fit: %w", plan, rep.Violation)
	}
	res.Feasible = true
	return res, nil
}
