// Package weightoffload is the registry of the weight-offloading lever's strategies (002,
// SPEC §3): each one's name, what it does, how it runs, and the independent validation of its
// schedule by verify/periodic. The offload-weights command, certify, the sweep and the
// lower-bound MILP's evidence all enumerate Strategies, so that a strategy is defined once.
//
// The MILP-guided schedule is not here: it needs the lower-bound MILP's incumbent
// (milp/weightlb.Guided), which itself takes its evidence from these strategies.
package weightoffload

import (
	"errors"
	"fmt"

	heur "github.com/memsched/memsched/heuristics/offload"
	"github.com/memsched/memsched/instances/offload"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify/periodic"
)

// Strategy is one weight-offloading strategy.
type Strategy struct {
	// Name is the strategy's name in the CLI and the reports.
	Name string
	// Summary says what it does, in one line, for help texts.
	Summary string
	run     func(p *offload.Problem, stop <-chan struct{}) (heur.Selection, *schedule.Periodic, error)
}

// Strategies are the weight-offloading strategies, in report order.
var Strategies = []Strategy{
	{"greedy", "002 Alg. 1 (selection by profit, with the discount) + Alg. 2 (greedy scheduling with the cut-point search and early uploads)",
		func(p *offload.Problem, stop <-chan struct{}) (heur.Selection, *schedule.Periodic, error) {
			sel, s, _, err := heur.GreedyUntil(p, true, stop)
			return sel, s, err
		}},
	{"greedy-nodiscount", "Greedy*: the same without the discount",
		func(p *offload.Problem, stop <-chan struct{}) (heur.Selection, *schedule.Periodic, error) {
			sel, s, _, err := heur.GreedyUntil(p, false, stop)
			return sel, s, err
		}},
	{"greedy-reserve", "Alg. 1 run with room kept for 1–3 weights in flight, then Alg. 2; the shortest of r = 0..3 (memsched's variant)",
		func(p *offload.Problem, stop <-chan struct{}) (heur.Selection, *schedule.Periodic, error) {
			sel, s, _, err := heur.GreedyReserveUntil(p, true, stop)
			return sel, s, err
		}},
	{"l2l", "layer-to-layer: only the running layer's weights on the GPU",
		func(p *offload.Problem, _ <-chan struct{}) (heur.Selection, *schedule.Periodic, error) {
			s, _, err := heur.L2L(p) // one pass over the layers
			return nil, s, err
		}},
}

// Names returns the strategies' names in report order.
func Names() []string {
	out := make([]string, len(Strategies))
	for i, s := range Strategies {
		out[i] = s.Name
	}
	return out
}

// Lookup returns the strategy called name.
func Lookup(name string) (Strategy, bool) {
	for _, s := range Strategies {
		if s.Name == name {
			return s, true
		}
	}
	return Strategy{}, false
}

// Outcome is what a strategy gives on one problem: a validated schedule, or the reason it
// found none.
type Outcome struct {
	Feasible bool
	// Reason says why no schedule was found (Feasible false).
	Reason string
	// Selection is the (layer, choice) pairs sent away (nil for l2l).
	Selection heur.Selection
	Schedule  *schedule.Periodic
	// Report is verify/periodic's replay of Schedule.
	Report periodic.Report
}

// Run runs the strategy on p and validates its schedule again with verify/periodic,
// independently of the heuristic's own check. Finding no schedule is an outcome (Feasible
// false, Reason); a schedule that does not validate is an error (a bug).
func (s Strategy) Run(p *offload.Problem) (Outcome, error) {
	return s.RunUntil(p, nil)
}

// RunUntil is Run ended when stop closes (the caller's deadline): the error is then
// heuristics/offload.ErrStopped, not an outcome.
func (s Strategy) RunUntil(p *offload.Problem, stop <-chan struct{}) (Outcome, error) {
	sel, sch, err := s.run(p, stop)
	if errors.Is(err, heur.ErrStopped) {
		return Outcome{}, err
	}
	if err != nil {
		return Outcome{Reason: err.Error()}, nil
	}
	rep, err := periodic.Validate(p, sch)
	if err != nil {
		return Outcome{}, fmt.Errorf("%s returned an invalid schedule: %w", s.Name, err)
	}
	return Outcome{Feasible: true, Selection: sel, Schedule: sch, Report: rep}, nil
}
