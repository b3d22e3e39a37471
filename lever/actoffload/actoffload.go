// Package actoffload is the registry of the activation-offloading lever's strategies (001's
// Problem 1, SPEC §2): each one's name, what it does, how it runs, and the independent
// validation of its schedule by verify/timed. The offload-act command, certify and the sweep
// enumerate Strategies, so that a strategy is defined once.
package actoffload

import (
	"errors"
	"fmt"

	"github.com/memsched/memsched/dp"
	heur "github.com/memsched/memsched/heuristics/actoffload"
	act "github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/verify/timed"
)

// Use says where a strategy runs without being named.
type Use uint8

const (
	// InAll: in the command's --algo all.
	InAll Use = 1 << iota
	// InCertify: in certify and the sweep.
	InCertify
)

// Options tune the strategies that have settings.
type Options struct {
	// DP is DYNPROG's discretization (dynprog).
	DP dp.ActOptions
	// LowerBound is a certified lower bound at which the exact search stops (0: its own,
	// 001 Prop. 3).
	LowerBound float64
	// MaxNodes bounds the exact search (0: its default).
	MaxNodes int
	// Stop ends every strategy when closed (the caller's deadline): greedy, vdnn and the split
	// before their next candidate, DYNPROG (unless DP.Stop is set) between operations, the
	// exact search every 1024 nodes. A strategy stopped with a schedule in hand returns it
	// (the best it tried), and its Status says so.
	Stop <-chan struct{}
}

// StoppedStatus is the Status of a strategy that Options.Stop ended.
const StoppedStatus = "stopped at the time limit"

// Strategy is one activation-offloading strategy.
type Strategy struct {
	// Name is the strategy's name in the CLI and the reports.
	Name string
	// Summary says what it does, in one line, for help texts.
	Summary string
	// Use says where it runs without being named.
	Use Use
	run func(p *act.Problem, o Options) (Outcome, error)
}

func plain(f func(p *act.Problem) (*heur.Result, error)) func(*act.Problem, Options) (Outcome, error) {
	return func(p *act.Problem, _ Options) (Outcome, error) {
		r, err := f(p)
		return Outcome{Result: r}, err
	}
}

// stoppable runs a heuristic that Options.Stop ends; a stopped one's Status is partial when
// it has a schedule, StoppedStatus + " before it had a schedule" otherwise.
func stoppable(f func(p *act.Problem, stop <-chan struct{}) (*heur.Result, error), partial string) func(*act.Problem, Options) (Outcome, error) {
	return func(p *act.Problem, o Options) (Outcome, error) {
		r, err := f(p, o.Stop)
		out := Outcome{Result: r}
		switch {
		case err != nil || !r.Stopped:
		case r.Feasible:
			out.Status = partial
		default:
			out.Status = StoppedStatus + " before it had a schedule"
		}
		return out, err
	}
}

// vdnn is VDNNUntil with the variant v.
func vdnn(v heur.VDNNVariant) func(*act.Problem, <-chan struct{}) (*heur.Result, error) {
	return func(p *act.Problem, stop <-chan struct{}) (*heur.Result, error) { return heur.VDNNUntil(p, v, stop) }
}

// vdnnStopped is the Status of a stopped vdnn.
const vdnnStopped = StoppedStatus + ": the best of the thresholds tried before it"

// Strategies are the activation-offloading strategies, in report order.
var Strategies = []Strategy{
	{"none", "no offloading (feasible only when everything fits)", InCertify,
		plain(func(p *act.Problem) (*heur.Result, error) { return heur.Ordered(p, nil) })},
	{"greedy", "001 §4.2: Thm 2's eager set rounded up to whole activations", InAll | InCertify,
		stoppable(heur.GreedyUntil, "")},
	{"dynprog", "001 §5.3: DYNPROG's offload set, scheduled no-wait (sizes rounded up to slots)", InAll | InCertify,
		func(p *act.Problem, o Options) (Outcome, error) {
			dpo := o.DP
			if dpo.Stop == nil {
				dpo.Stop = o.Stop
			}
			r, err := dp.DynProg(p, dpo)
			return Outcome{Result: r}, err
		}},
	{"vdnn", "001 §6.1: offload the activations whose u_F/|x| is above a threshold, or every other one of them; best over all thresholds", InAll | InCertify,
		stoppable(vdnn(heur.VDNNBoth), vdnnStopped)},
	{"vdnn-all", "vDNN's variant: every activation above the threshold", 0, stoppable(vdnn(heur.VDNNAll), vdnnStopped)},
	{"vdnn-half", "vDNN++'s variant: every other activation above the threshold", 0, stoppable(vdnn(heur.VDNNHalf), vdnnStopped)},
	{"split", "the peak split: the offloads before and the prefetches after the operation of largest need, each sequenced exactly for a relaxation and joined there; optimal when it meets the split's bound (instances/actoffload.Split)", InAll | InCertify,
		func(p *act.Problem, o Options) (Outcome, error) {
			r, res, err := heur.Split(p, act.SplitOptions{Stop: o.Stop})
			switch {
			case errors.Is(err, act.ErrSplitLimit):
				return Outcome{Result: &heur.Result{}, Status: "not run: a side's table is beyond its caps"}, nil
			case errors.Is(err, act.ErrSplitStopped):
				return Outcome{Result: &heur.Result{}, Status: StoppedStatus}, nil
			case err != nil:
				return Outcome{}, err
			}
			out := Outcome{Result: r, Bound: res.Bound}
			if r.Feasible && r.Report.Makespan <= res.Bound*(1+1e-9) {
				out.Status = "proven optimal by the split bound"
			}
			return out, nil
		}},
	{"exact", "branch and bound over offload sets and link orders (small chains): optimal among no-wait schedules when it finishes; offload-act and certify then run the event search, which proves it (or a shorter schedule, row events) optimal for Problem 1", InAll | InCertify,
		func(p *act.Problem, o Options) (Outcome, error) {
			r, st, err := heur.Exact(p, heur.ExactOptions{LowerBound: o.LowerBound, MaxNodes: o.MaxNodes, Stop: o.Stop})
			return Outcome{Result: r, Status: st.String()}, err
		}},
}

// Names returns the names of the strategies with every bit of use (0: all of them), in
// report order.
func Names(use Use) []string {
	var out []string
	for _, s := range Strategies {
		if s.Use&use == use {
			out = append(out, s.Name)
		}
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

// Outcome is a strategy's result on one problem.
type Outcome struct {
	// Result is the strategy's schedule (Feasible false when it found none); its Report is
	// verify/timed's replay, made here.
	Result *heur.Result
	// Status is the exact search's status (optimal or node-limit), the split's word (proven
	// optimal, or why it did not run); empty for the others.
	Status string
	// Bound is a certified lower bound on every schedule that the strategy proved on the way
	// (the split's: Problem.Split; +Inf when no schedule exists); 0 when none.
	Bound float64
}

// Run runs the strategy on p and validates its schedule again with verify/timed,
// independently of the strategy's own check. Finding no schedule is an outcome; a schedule
// that does not validate is an error (a bug), as is bad input.
func (s Strategy) Run(p *act.Problem, o Options) (Outcome, error) {
	out, err := s.run(p, o)
	if err != nil {
		return Outcome{}, err
	}
	r := out.Result
	if r == nil {
		r = &heur.Result{}
	}
	if !r.Feasible {
		out.Result = r
		return out, nil
	}
	rep, err := timed.Check(p, r.Schedule)
	if err != nil {
		return Outcome{}, fmt.Errorf("%s returned an invalid schedule: %w", s.Name, err)
	}
	checked := *r
	checked.Report = rep
	out.Result = &checked
	return out, nil
}
