package actoffload

import (
	"sort"

	act "github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify/timed"
)

// splitSchedules is how many of the peak split's joined schedules Split validates when the
// options ask for none: the best few are where an optimal one is found, when one is.
const splitSchedules = 16

// Split runs the peak split (instances/actoffload.Split) and validates its joined schedules
// with verify/timed: it returns the shortest one that validates (Feasible false when none
// does) and the split's result, whose Bound is certified whatever the schedules. A schedule
// at the bound is optimal.
func Split(p *act.Problem, o act.SplitOptions) (*Result, act.SplitResult, error) {
	if err := p.Validate(); err != nil {
		return nil, act.SplitResult{}, err
	}
	if o.Schedules <= 0 {
		o.Schedules = splitSchedules
	}
	res, err := p.Split(o)
	if err != nil {
		return &Result{}, res, err
	}
	best := &Result{}
	for _, s := range res.Schedules {
		rep, err := timed.Check(p, s)
		if err != nil {
			continue // a rule the relaxations drop is broken: not a schedule
		}
		if !best.Feasible || rep.Makespan < best.Report.Makespan {
			best = &Result{Feasible: true, Schedule: s, Report: rep, Offloaded: offloaded(s)}
		}
	}
	return best, res, nil
}

// offloaded lists the activations a schedule offloads, increasing.
func offloaded(s *schedule.Timed) []int {
	var out []int
	for _, t := range s.Transfers {
		if t.Kind == schedule.Offload {
			out = append(out, t.Index)
		}
	}
	sort.Ints(out)
	return out
}
