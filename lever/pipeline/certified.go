package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/memsched/memsched/dp"
	dpl "github.com/memsched/memsched/dp/pipeline"
	"github.com/memsched/memsched/dp/pipepack"
	hpl "github.com/memsched/memsched/heuristics/pipeline"
	pl "github.com/memsched/memsched/instances/pipeline"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/pipemilp"
	"github.com/memsched/memsched/schedule"
)

// The strategies of non-contiguous allocations and the MILPs (docs/pipeline.md): packing, the
// dynamic program of dp/pipepack; milp, the contiguous MILP; milp-alloc, the allocation MILP
// (003's ILP). They join Strategies after the contiguous ones; the MILPs also certify bounds
// (StrategyBounds).
func init() {
	Strategies = append(Strategies,
		Strategy{"packing", "non-contiguous: a GPU may hold several parts (virtual stages); DP over the chain for the least period under each GPU's memory with its parts' 1F1B in-flight counts, for ≤ P parts and for exactly P+1..2P, run as per-rank action lists (merged 1F1B) or looped GPipe, the fastest replay kept",
			runPacking},
		Strategy{"milp", "the contiguous MILP (HiGHS, lp_solve as fallback): event times of the named order, exact with every part storing everything, a relaxation with --remat stage whose incumbent's cuts get rotor's sequences; certifies a bound",
			runContiguousMILP},
		Strategy{"milp-alloc", "the allocation MILP (003's ILP): every allocation, contiguous or not, each GPU's m·load after what precedes its first stage, links, one micro-batch's memory; certifies a bound for every allocation and order, its incumbent run as packing's plans",
			runAllocationMILP},
	)
}

// Time caps of the strategies of this file when the caller gives no deadline (the pipeline
// command gives its --time-limit); a deadline that comes sooner wins.
var (
	PackingTimeLimit = 5 * time.Second
	MILPTimeLimit    = 10 * time.Second
)

// Solvers returns the MILP backends the MILP strategies try, in order: HiGHS, then lp_solve,
// as compiled in (the pure-Go referee "ref" only when nothing else is, for tiny models).
var Solvers = func() []milp.Solver {
	var out []milp.Solver
	for _, n := range []string{"highs", "lpsolve"} {
		if s, err := milp.Lookup(n); err == nil {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		if s, err := milp.Lookup("ref"); err == nil {
			out = append(out, s)
		}
	}
	return out
}

// certified holds the bounds a strategy's result certifies, until StrategyBounds reads them.
var certified sync.Map // *dpl.Result → []Bound

// StrategyBounds returns the bounds out's strategy certified (the MILPs'), none for the others.
func StrategyBounds(out *Outcome) []Bound {
	if out == nil || out.Result == nil {
		return nil
	}
	if v, ok := certified.LoadAndDelete(out.Result); ok {
		return v.([]Bound)
	}
	return nil
}

// ContiguousOnly reports whether b's scope holds contiguous allocations only: a non-contiguous
// plan may be below it.
func (b Bound) ContiguousOnly() bool { return strings.HasPrefix(b.Scope, "contiguous") }

// deadline returns o's deadline, or now + cap when o has none or a later one.
func deadline(o Options, cap time.Duration) time.Time {
	d := time.Now().Add(cap)
	if !o.Deadline.IsZero() && o.Deadline.Before(d) {
		return o.Deadline
	}
	return d
}

// context returns a context with o's deadline (capped) that o.Stop cancels.
func strategyContext(o Options, cap time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithDeadline(context.Background(), deadline(o, cap))
	if o.Stop != nil {
		go func() {
			select {
			case <-o.Stop:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return ctx, cancel
}

// runPacking runs pipepack.Pack with at most P' parts (P' = min(P, L)), then exactly P'+1, …,
// 2P', each plan replayed, and keeps the fastest. Each part stores everything (the DP's memory model is
// store-all's); with Remat the note says so.
func runPacking(p *pl.Problem, o Options) (*dpl.Result, error) {
	L := p.L()
	P := min(p.GPUs, L)
	stop := deadline(o, PackingTimeLimit)
	res := &dpl.Result{}
	var notes []string
	optimalAll := true
	tried := 0
	for parts := P; parts <= min(2*P, L); parts++ {
		if tried > 0 && time.Now().After(stop) {
			notes = append(notes, fmt.Sprintf("time limit: part counts above %d not tried", parts-1))
			break
		}
		tried++
		// At most P parts (the contiguous allocations among them), then exactly P+1, …, 2P
		// (every GPU count beyond P makes some GPU hold two parts): the DP's period ties
		// between them, their makespans do not.
		minParts := parts
		if parts == P {
			minParts = 1
		}
		r, err := pipepack.Pack(p, pipepack.Options{MinParts: minParts, MaxParts: parts, Deadline: stop, Stop: o.Stop, MaxNodes: 1_000_000, MaxMemory: o.MaxMemory})
		var tl *dp.TooLargeError
		if errors.As(err, &tl) {
			return &dpl.Result{Reason: "not run: " + err.Error()}, nil
		}
		if err != nil {
			return nil, err
		}
		optimalAll = optimalAll && r.Optimal
		if !r.Feasible {
			continue
		}
		if res.Plan == nil || r.Makespan < res.Makespan*(1-1e-12) {
			res.Feasible, res.Plan, res.Replay, res.Makespan = true, r.Plan, r.Replay, r.Makespan
			res.Note = fmt.Sprintf("allocation period %.6g s (%d parts; the DP's period, each cut's transfers counted alone: %.6g s, %s)",
				r.Period, len(r.Plan.Parts), r.Objective, map[bool]string{true: "optimal for its memory model", false: "search stopped, not proven optimal"}[r.Optimal])
		}
	}
	if o.Remat {
		notes = append(notes, "every part stores everything (the DP's memory model)")
	}
	if !optimalAll {
		notes = append(notes, "a search stopped before it finished (node cap or time limit)")
	}
	if len(notes) > 0 {
		if res.Note != "" {
			res.Note += "; "
		}
		res.Note += strings.Join(notes, "; ")
	}
	if res.Plan == nil {
		res.Reason = "no allocation on ≤ P GPUs fits each GPU's memory bound (Σw + Σ in-flight × held + the largest own peak)"
	}
	res.Complete = optimalAll
	return res, nil
}

// evalCuts completes a contiguous allocation (nil when it does not fit, is nil, or its tables
// are not built within o's limits: the MILPs' starts and evidence are optional).
func evalCuts(p *pl.Problem, cuts []int, o Options) *dpl.Result {
	if cuts == nil {
		return nil
	}
	r, err := dpl.Evaluate(p, cuts, dpl.Options{Remat: o.Remat, Slots: o.Slots, MaxMemory: o.MaxMemory, Deadline: o.Deadline, Stop: o.Stop})
	if err != nil || !r.Feasible {
		return nil
	}
	return r
}

// statusText describes a solve for a bound's certified_by.
func statusText(sol *pipemilp.Solution) string {
	if sol.Status == milp.Optimal {
		return fmt.Sprintf("optimum (%s, relative gap %s)", sol.Solver, milp.GapText(sol.Gap))
	}
	return fmt.Sprintf("proven dual bound at %s (%s, relative gap %s)", sol.Status, sol.Solver, milp.GapText(sol.Gap))
}

// milpOutcome turns a solve into the strategy's result and records its bound.
func milpOutcome(sol *pipemilp.Solution, b Bound) *dpl.Result {
	res := &dpl.Result{Complete: sol.Status == milp.Optimal}
	if sol.Plan != nil {
		res.Plan, res.Replay, res.Feasible = sol.Plan, sol.Replay, sol.Feasible
		res.Makespan = sol.Makespan
		if !sol.Feasible && sol.Replay != nil && sol.Replay.Violation != nil {
			res.Reason = "the incumbent's allocation does not fit with m micro-batches in flight: " + sol.Replay.Violation.Error()
		}
	}
	shown := "no plan"
	if sol.Plan != nil {
		shown = "the plan shown is the " + orNone(sol.From) + "'s"
	}
	var notes []string
	notes = append(notes, fmt.Sprintf("status %s, the model's value at its incumbent %s, bound %s, gap %s, %.2f s; %s",
		sol.Status, fmtSecs(sol.Value), fmtSecs(sol.Bound), milp.GapText(sol.Gap), sol.Seconds, shown))
	if sol.Note != "" {
		notes = append(notes, sol.Note)
	}
	res.Note = strings.Join(notes, "; ")
	switch {
	case math.IsInf(sol.Bound, 1):
		b.Value = math.Inf(1)
		b.CertifiedBy += ", infeasible (" + sol.Solver + ")"
		if res.Reason == "" {
			res.Reason = "the MILP is infeasible: no plan of its scope fits"
		}
	case !math.IsNaN(sol.Bound):
		b.Value = sol.Bound
		if sol.Feasible && sol.Makespan < b.Value {
			// Within the solver's tolerance of its own replayed plan, which is in scope.
			b.Value = sol.Makespan
		}
		b.CertifiedBy += ", " + statusText(sol)
	default:
		if res.Reason == "" && res.Plan == nil {
			res.Reason = fmt.Sprintf("the MILP gave no plan and no bound (status %s)", sol.Status)
		}
		return res
	}
	res.Bound = b.Value
	certified.Store(res, []Bound{b})
	return res
}

func fmtSecs(v float64) string {
	switch {
	case math.IsNaN(v):
		return "none"
	case math.IsInf(v, 1):
		return "+∞ (infeasible)"
	}
	return fmt.Sprintf("%.6g s", v)
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// noSolver is the result when no MILP solver could run.
func noSolver(err error) *dpl.Result {
	return &dpl.Result{Reason: "no MILP solver could run it: " + err.Error()}
}

// StartTimeLimit caps the exact planner's run that gives the MILPs their start.
var StartTimeLimit = 2 * time.Second

// runContiguousMILP solves the contiguous MILP, started from the best of the uniform and
// equal-time splits and the exact planner's plan within StartTimeLimit (a start only helps
// the solver find incumbents; the bound is the solver's own, guarded by the start's makespan).
func runContiguousMILP(p *pl.Problem, o Options) (*dpl.Result, error) {
	solvers := Solvers()
	if len(solvers) == 0 {
		return noSolver(errors.New("none compiled in")), nil
	}
	var start []int
	best := math.Inf(1)
	cands := [][]int{hpl.Balanced(p), hpl.Uniform(p)}
	if ex, err := dpl.Plan(p, dpl.Options{Remat: o.Remat, Slots: o.Slots, MaxMemory: o.MaxMemory, Deadline: deadline(o, StartTimeLimit), Stop: o.Stop}); err == nil && ex.Feasible {
		cands = append(cands, ex.Plan.Cuts())
	}
	for _, cuts := range cands {
		if r := evalCuts(p, cuts, o); r != nil && r.Makespan < best {
			best, start = r.Makespan, cuts
		}
	}
	ctx, cancel := strategyContext(o, MILPTimeLimit)
	defer cancel()
	sol, err := pipemilp.SolveContiguous(ctx, solvers, p, pipemilp.ContiguousSolveOptions{Remat: o.Remat, Start: start, MaxMemory: maxModelMemory(o)})
	if err != nil {
		if pipemilp.IsTooLarge(err) {
			return &dpl.Result{Reason: err.Error()}, nil
		}
		return noSolver(err), nil
	}
	b := Bound{Name: "contiguous MILP", CertifiedBy: "MILP of the makespan (event times of the named order)",
		Scope: fmt.Sprintf("contiguous allocations on ≤ %d GPUs, %s, each part storing everything", p.GPUs, p.Schedule)}
	if o.Remat {
		b.CertifiedBy = "MILP relaxation of the makespan (event times of the named order; each part's durations at least storing everything's, memory at least its input, output and operations)"
		b.Scope = fmt.Sprintf("contiguous allocations on ≤ %d GPUs, %s, any sequence per part", p.GPUs, p.Schedule)
	}
	return milpOutcome(sol, b), nil
}

// runAllocationMILP solves the allocation MILP (makespan objective), guarded by the uniform
// and equal-time splits and packing's plan.
func runAllocationMILP(p *pl.Problem, o Options) (*dpl.Result, error) {
	solvers := Solvers()
	if len(solvers) == 0 {
		return noSolver(errors.New("none compiled in")), nil
	}
	ctx, cancel := strategyContext(o, MILPTimeLimit)
	defer cancel()
	var ev []*schedule.Pipeline
	for _, cuts := range [][]int{hpl.Balanced(p), hpl.Uniform(p)} {
		if r := evalCuts(p, cuts, o); r != nil {
			ev = append(ev, r.Plan)
		}
	}
	sol, err := pipemilp.SolveAllocation(ctx, solvers, p, pipemilp.AllocationSolveOptions{Objective: pipemilp.Makespan, Remat: o.Remat, Evidence: ev, MaxMemory: maxModelMemory(o)})
	if err != nil {
		if pipemilp.IsTooLarge(err) {
			return &dpl.Result{Reason: err.Error()}, nil
		}
		return noSolver(err), nil
	}
	b := Bound{Name: "allocation MILP", CertifiedBy: "MILP relaxation (each GPU's m·load after the forwards, backwards and transfers before its first stage, m·each link's load, one micro-batch's memory)",
		Scope: fmt.Sprintf("every allocation on %d GPUs, contiguous or not, any order, each part storing everything", p.GPUs)}
	if o.Remat {
		b.Scope = fmt.Sprintf("every allocation on %d GPUs, contiguous or not, any order, any recomputation", p.GPUs)
	}
	return milpOutcome(sol, b), nil
}

// maxModelMemory is the MILPs' model cap: o.MaxMemory, 2 GiB by default.
func maxModelMemory(o Options) int64 {
	if o.MaxMemory > 0 {
		return o.MaxMemory
	}
	return 2 << 30
}

// IsMILP reports whether s is one of the MILP strategies (slow on long chains: the sweep
// leaves them out).
func (s Strategy) IsMILP() bool { return s.Name == "milp" || s.Name == "milp-alloc" }
