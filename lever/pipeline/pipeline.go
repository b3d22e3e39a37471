// Package pipeline is the registry of the pipelined-model-parallelism lever's strategies
// (SPEC §7): each one's name, what it does and how it runs, the independent replay of its plan
// by verify/pipeline, and the lever's certified lower bounds (SPEC §5) with what certifies
// each and its scope. The pipeline command and its sweep enumerate Strategies.
package pipeline

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/memsched/memsched/dp"
	dpl "github.com/memsched/memsched/dp/pipeline"
	hpl "github.com/memsched/memsched/heuristics/pipeline"
	pl "github.com/memsched/memsched/instances/pipeline"
	vpl "github.com/memsched/memsched/verify/pipeline"
)

// Options tune the strategies.
type Options struct {
	// Remat lets each GPU recompute inside its part (a persistent 004 sequence), for every
	// strategy: the baselines choose the allocation only, and each of their parts runs its
	// fastest sequence that fits, as the exact planner's do.
	Remat bool
	// Slots, Exact and MaxMemory are the recomputation tables' discretization (dp/pipeline).
	Slots     int
	Exact     bool
	MaxMemory int64
	// Deadline and Stop end the exact search early (it then reports its best plan and bound).
	Deadline time.Time
	Stop     <-chan struct{}
}

func (o Options) dp() dpl.Options {
	return dpl.Options{Remat: o.Remat, Slots: o.Slots, Exact: o.Exact, MaxMemory: o.MaxMemory, Deadline: o.Deadline, Stop: o.Stop}
}

// Strategy is one way of planning a pipeline.
type Strategy struct {
	Name    string
	Summary string
	run     func(p *pl.Problem, o Options) (*dpl.Result, error)
}

// baseline turns an allocation heuristic into a strategy: its cuts completed by
// dp/pipeline.Evaluate.
func baseline(cuts func(p *pl.Problem, poll *dp.Poll) ([]int, error), none string) func(*pl.Problem, Options) (*dpl.Result, error) {
	return func(p *pl.Problem, o Options) (*dpl.Result, error) {
		c, err := cuts(p, &dp.Poll{Stop: o.Stop, Deadline: o.Deadline})
		if errors.Is(err, hpl.ErrStopped) {
			return &dpl.Result{Reason: "stopped at the time limit before its planner's table was complete"}, nil
		}
		if err != nil {
			return nil, err
		}
		if c == nil {
			return &dpl.Result{Reason: none}, nil
		}
		r, err := dpl.Evaluate(p, c, o.dp())
		var tl *dp.TooLargeError
		switch {
		case errors.Is(err, dpl.ErrStopped):
			return &dpl.Result{Reason: "stopped at the time limit before its parts' recomputation tables were complete"}, nil
		case errors.As(err, &tl):
			return &dpl.Result{Reason: "not run: its parts' recomputation tables are too large: " + err.Error()}, nil
		}
		return r, err
	}
}

// instant wraps a split that takes O(L) steps: nothing to stop.
func instant(cuts func(p *pl.Problem) []int) func(*pl.Problem, *dp.Poll) ([]int, error) {
	return func(p *pl.Problem, _ *dp.Poll) ([]int, error) { return cuts(p), nil }
}

// exact is the branch and bound. Its tables are refused past --max-memory before they are
// allocated (20 001 stages: 14.9 GiB): that is a row saying so, as for the baselines, so that
// the other strategies' rows and the bounds are still reported.
func exact(p *pl.Problem, o Options) (*dpl.Result, error) {
	r, err := dpl.Plan(p, o.dp())
	var tl *dp.TooLargeError
	if errors.As(err, &tl) {
		return &dpl.Result{Reason: "not run: " + err.Error()}, nil
	}
	return r, err
}

// Strategies are the lever's strategies, in report order.
var Strategies = []Strategy{
	{"exact", "branch and bound over every contiguous allocation on ≤ P GPUs, each part storing everything or its fastest persistent sequence that fits (optimal when it finishes)", exact},
	{"uniform", "equal layer counts on min(P, L) GPUs (PyTorch's and Megatron's default split)", baseline(instant(hpl.Uniform), "")},
	{"balanced", "equal time: the split of Σ(u_f+u_b) with the least largest part on min(P, L) GPUs, memory aside", baseline(instant(hpl.Balanced), "")},
	{"pipedream", "PipeDream's planner (straight pipeline): least largest stage time, its own memory check (N−1−s copies of activations and weights)",
		baseline(hpl.PipeDreamUntil, "PipeDream's memory check rejects every allocation")},
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

// Outcome is a strategy's result: its plan replayed by verify/pipeline.
type Outcome struct {
	Name string
	*dpl.Result
	// Elapsed is the strategy's wall time.
	Elapsed time.Duration
}

// Why returns why the outcome has no feasible plan: its own reason, or for the exact search
// that it finished without one (nothing of its class fits) or was stopped first ("" when it
// has a feasible plan).
func (o *Outcome) Why() string {
	switch {
	case o.Feasible:
		return ""
	case o.Reason != "" || o.Name != "exact":
		return o.Reason
	case o.Complete:
		return "no contiguous allocation on ≤ P GPUs fits, whatever each part stores or recomputes in its class"
	}
	return "no plan found before the time limit"
}

// Run runs the strategy on p and replays its plan again with verify/pipeline, independently
// of the strategy's own check: a feasible plan that does not replay within the budget to the
// same makespan is an error (a bug), as is bad input; not fitting is an outcome.
func (s Strategy) Run(p *pl.Problem, o Options) (*Outcome, error) {
	t0 := time.Now()
	r, err := s.run(p, o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Name, err)
	}
	out := &Outcome{Name: s.Name, Result: r, Elapsed: time.Since(t0)}
	if r.Plan == nil {
		return out, nil
	}
	rep, err := vpl.Replay(p, r.Plan)
	if err != nil {
		return nil, fmt.Errorf("%s returned a plan that does not replay: %w", s.Name, err)
	}
	if r.Feasible && (!rep.Fits() || math.Abs(rep.Makespan-r.Makespan) > 1e-9*math.Max(1, r.Makespan)) {
		return nil, fmt.Errorf("%s: its plan %v replays to %g (fits: %v), not %g", s.Name, r.Plan, rep.Makespan, rep.Fits(), r.Makespan)
	}
	r.Replay = rep
	return out, nil
}

// Bound is a certified lower bound on the makespan of one iteration (SPEC §5); +Inf proves
// that no plan of its scope fits.
type Bound struct {
	Name        string
	Value       float64
	CertifiedBy string
	Scope       string
}

// Bounds returns the lever's lower bounds on p: the work per GPU, the longest stage, the
// fill-and-drain DP without memory, and — given the exact strategy's outcome — its branch and
// bound's. exact may be nil. notes says which of them were not computed and why (nothing is
// left out silently).
func Bounds(p *pl.Problem, o Options, exact *Outcome) (bs []Bound, notes []string) {
	m := float64(p.MicroBatches)
	L := p.L()
	var work, atom float64
	for l := 1; l <= L+1; l++ {
		st := p.Chain.Stage(l)
		work += st.UF + st.UB
		if l < L {
			atom = max(atom, st.UF+st.UB)
		}
	}
	last := p.Chain.Stage(L).UF + p.Chain.Stage(L).UB + p.Chain.Stage(L+1).UF + p.Chain.Stage(L+1).UB
	atom = max(atom, last)
	any := fmt.Sprintf("every allocation on %d GPUs, contiguous or not, any order, any recomputation", p.GPUs)
	bs = []Bound{
		{"work/P", m * work / float64(p.GPUs), "relaxation: m·Σ(u_f+u_b) spread evenly, no idle time, no memory limit", any},
		{"longest stage", m * atom, "relaxation: the GPU running the longest stage (the loss stage with stage L) runs it for every micro-batch", any},
	}
	// The fill-drain DP's tables hold L² part durations: under the memory limit only (they
	// take about a second at the largest size it allows), never stopped by the deadline.
	if fd, err := dpl.FillDrainBound(p, dpl.Options{MaxMemory: o.MaxMemory}); err == nil {
		bs = append(bs, Bound{"fill-drain", fd, "DP relaxation (exact over allocations): the first micro-batch's forwards, m·(F+B) on one GPU, the last one's backwards; memory ignored",
			fmt.Sprintf("contiguous allocations on ≤ %d GPUs, either schedule, any recomputation", p.GPUs)})
	} else {
		notes = append(notes, "fill-drain: not computed: "+err.Error())
	}
	if exact != nil && exact.Result != nil && math.IsInf(exact.Bound, 1) && exact.Complete {
		class := "each part storing everything"
		if o.Remat {
			class = "each part storing everything or running a persistent 004 sequence (rotor's class)"
		}
		bs = append(bs, Bound{"branch and bound", exact.Bound, "exhaustive branch and bound over allocations, finished: no plan fits",
			fmt.Sprintf("contiguous allocations on ≤ %d GPUs, %s, %s", p.GPUs, p.Schedule, class)})
	}
	if exact != nil && exact.Result != nil && exact.Searched && !math.IsInf(exact.Bound, 1) && exact.Bound > 0 {
		class := "each part storing everything"
		if o.Remat {
			class = "each part storing everything or running a persistent 004 sequence (rotor's class)"
		}
		how := "exhaustive branch and bound over allocations"
		switch {
		case exact.Optimal && exact.Exact:
			how += ", finished: the optimum (exact in bytes)"
		case exact.Optimal:
			how += ", finished: the optimum, met by the tables rounded down"
		case exact.Complete:
			how += fmt.Sprintf(", finished over tables with sizes rounded down to %d-byte slots (a relaxation)", exact.SlotSize)
		default:
			how += ", stopped: the least bound of its open subtrees"
		}
		bs = append(bs, Bound{"branch and bound", exact.Bound, how,
			fmt.Sprintf("contiguous allocations on ≤ %d GPUs, %s, %s", p.GPUs, p.Schedule, class)})
	}
	return bs, notes
}
