package report

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
)

// Input is what a certification is about. Memory is in bytes (a^0 included), time in seconds.
type Input struct {
	Chain  *instances.Chain
	Source string // where the chain came from, for the report
	Budget int64
	// Bandwidth is the GPU–CPU link rate in bytes/s, each direction; 0 means unknown, and the
	// offloading levers are skipped.
	Bandwidth float64
	// Slots is the number of memory slots of the dynamic programs (0: dp.DefaultSlots).
	Slots int
	// WeightsResident says the budget is the whole GPU memory with the weights resident: the
	// levers whose models leave the weights out (remat, act-offload) then get the budget minus
	// the chain's weights; weight-offload counts the weights itself. Without it every lever
	// gets the budget as its model defines it (004 and 001: activations only).
	WeightsResident bool
	// MaxBreakpoints caps one sub-chain's frontier in the exact C_FL table (0:
	// dp.DefaultMaxBreakpoints); above it the bound falls back to slots, with a note.
	MaxBreakpoints int
	// TimeLimit is the wall-time budget of the whole certification (0: none; a deadline on
	// Certify's context counts too, whichever comes first). Certify shares it between the
	// levers that run (ShareTime); inside a lever, Run sees its share here and as the deadline
	// of its context, and every table and MILP stops by it (docs/certify.md).
	TimeLimit time.Duration
	// MaxMemory caps the estimated memory of the tables and MILP models alive at once (0:
	// dp.DefaultMaxMemory); a lever that builds several side by side divides it.
	MaxMemory int64
	// Solver names the MILP backend ("" picks the best registered one).
	Solver string
	// Progress, when non-nil, receives progress of long steps (see Progress).
	Progress Progress
	// LeverDone, when non-nil, is called (from Certify's goroutine) with each lever's report as
	// soon as it is complete, so that an interrupted run can still print the finished ones.
	LeverDone func(*LeverReport)
	// Earlier holds the reports of the levers that ran before this one in the same
	// certification (Certify fills it): a lever whose model contains another's schedules
	// (remat-offload contains remat's) weighs their verified ones.
	Earlier map[string]*LeverReport
}

// Progress receives progress of long computations. Implementations must be safe for
// concurrent use.
type Progress interface {
	// Step starts a named step of total units (0: unknown).
	Step(name string, total int)
	// Advance reports n more units done.
	Advance(n int)
	// MILP reports a MILP's incumbent, bound and gap (NaN when unknown).
	MILP(incumbent, bound, gap float64)
	// Done ends the current step.
	Done()
}

// BoundKind is what certifies a lower bound.
type BoundKind string

const (
	// Exhaustive: an exact search over all schedules of the model (an optimum).
	Exhaustive BoundKind = "exhaustive search"
	// DPOptimal: a dynamic program proven optimal for the model (an optimum).
	DPOptimal BoundKind = "DP optimality"
	// DPRelaxation: a dynamic program on a relaxed instance (sizes rounded down).
	DPRelaxation BoundKind = "DP relaxation"
	// MILP: the best proven bound of a MILP solve (its optimum when Status is optimal).
	MILP BoundKind = "MILP"
	// SafeLP: a rigorous LP bound (Neumaier–Shcherbina).
	SafeLP BoundKind = "safe LP bound"
	// Relaxation: a closed-form relaxation (e.g. every operation once, no idle time).
	Relaxation BoundKind = "relaxation"
	// SearchRelaxation: an exhaustive search (a branch and bound) over a relaxation: every
	// schedule passes the relaxation's conditions for some choice the search tried.
	SearchRelaxation BoundKind = "search over a relaxation"
)

// Scope is which schedules a bound bounds (SPEC §5: every printed bound says its scope).
type Scope string

const (
	// Global: every schedule of the lever's model (004's sequences, 001's Problem 1, 002's
	// periodic schedules, SPEC §6's strict combined schedules), whoever produced it. The empty
	// Scope means Global: every bound is global unless it says otherwise.
	Global Scope = "global"
	// Class: only the schedules of one strategy's class (the combined DP's segment plans);
	// a schedule outside the class may be faster. Such a bound is printed with its scope but
	// never makes a ratio, a bracket or "optimal", nor proves that nothing fits.
	Class Scope = "class"
)

// Bound is one certified lower bound on the optimal makespan (or period).
type Bound struct {
	Name string    `json:"name"`
	Kind BoundKind `json:"certified_by"`
	// Scope is what the bound bounds (Global when empty; Summarize writes it out).
	Scope Scope `json:"scope"`
	// Value is the bound in seconds; with Infeasible it is +Inf (JSON: omitted).
	Value float64 `json:"value,omitempty"`
	// Infeasible: the bound proves that no schedule fits the budget.
	Infeasible bool `json:"infeasible,omitempty"`
	// Exact: the bound is the optimum of the lever's model.
	Exact bool `json:"exact"`
	// Status and Gap are a MILP solve's outcome.
	Status  string   `json:"status,omitempty"`
	Gap     *float64 `json:"gap,omitempty"`
	Seconds float64  `json:"seconds"`
	// TimeBudget is the time limit the bound was given in seconds (a MILP's; 0: none).
	TimeBudget float64 `json:"time_budget_seconds,omitempty"`
	Note       string  `json:"note,omitempty"`
}

// Row is one strategy: the validator's figures for its schedule.
type Row struct {
	Strategy string `json:"strategy"`
	Feasible bool   `json:"feasible"`
	// Makespan is the iteration time in seconds (the period for periodic schedules).
	Makespan float64 `json:"makespan,omitempty"`
	Peak     int64   `json:"peak_memory,omitempty"`
	// Ratio is Makespan over the best certified lower bound (≥ Makespan / OPT).
	Ratio float64 `json:"ratio,omitempty"`
	// Verified: the schedule was replayed by the lever's validator and fits the budget (a row
	// that does not fit is never "verified", even where its peak was measured by a replay).
	Verified bool    `json:"verified"`
	Seconds  float64 `json:"seconds"`
	Note     string  `json:"note,omitempty"`
	// Sequence is the verified rematerialization sequence of a remat row, Timed the verified
	// schedule of an act-offload row (nil otherwise): the combined lever weighs both levers'
	// best as schedules of its own model.
	Sequence schedule.Sequence `json:"-"`
	Timed    *schedule.Timed   `json:"-"`
}

// LeverReport is one lever's table.
type LeverReport struct {
	Lever string `json:"lever"`
	// Skipped says why the lever did not run (missing data, no implementation); empty if it ran.
	Skipped string `json:"skipped,omitempty"`
	// Measure is "makespan" or "period".
	Measure string  `json:"measure,omitempty"`
	Rows    []Row   `json:"strategies,omitempty"`
	Bounds  []Bound `json:"bounds,omitempty"`
	// BestBound is the largest certified lower bound of Global scope (0 when none),
	// BestBoundBy its name: class-only bounds never enter it (nor the ratios, Optimal, or
	// Infeasible).
	BestBound   float64 `json:"best_bound,omitempty"`
	BestBoundBy string  `json:"best_bound_by,omitempty"`
	// Infeasible: a bound proves no schedule of this lever fits.
	Infeasible bool `json:"infeasible,omitempty"`
	// Best is the fastest verified strategy; Optimal says that it meets BestBound.
	Best    string  `json:"best,omitempty"`
	BestAt  float64 `json:"best_makespan,omitempty"`
	Optimal bool    `json:"optimal"`
	// Stopped: the lever's time share ran out before it returned (Certify sets it).
	Stopped bool `json:"stopped,omitempty"`
	// Outcome sums the lever up in the words of certify's summary (Summarize): "optimal" (a
	// verified schedule meets a global bound), "bracketed" (the optimum lies between
	// BestBound and BestAt), "infeasible" (a global bound proves that nothing fits), "not run
	// (time)" (no schedule fits among those found before the time share ran out: nothing is
	// proven), "none found" (the strategies that ran found none; nothing proves that none
	// fits), or "no bound" (a schedule without any bound above zero).
	Outcome string `json:"outcome,omitempty"`
	// Notes say which bounds were out of reach and what was used instead.
	Notes []string `json:"notes,omitempty"`
	// TimeBudget is the lever's share of the time limit in seconds (0: no limit), Seconds the
	// wall time it took.
	TimeBudget float64 `json:"time_budget_seconds,omitempty"`
	Seconds    float64 `json:"seconds"`
}

// Lever is one way to save memory. Skip returns why the lever cannot run on in ("" if it
// can); Run computes its rows and bounds (Certify fills the ratios and the summary).
type Lever interface {
	Name() string
	Skip(in Input) string
	Run(ctx context.Context, in Input) (LeverReport, error)
}

// Report is a certification across levers.
type Report struct {
	Chain     string  `json:"chain"`
	Stages    int     `json:"stages"`
	Budget    int64   `json:"budget"`
	Bandwidth float64 `json:"bandwidth,omitempty"`
	// Levers is keyed by lever name; Order lists the names in report order.
	Levers map[string]*LeverReport `json:"levers"`
	Order  []string                `json:"-"`
	// Interrupted: the run was stopped (Ctrl-C); Levers holds those finished.
	Interrupted bool `json:"interrupted,omitempty"`
}

// LeverNames are the levers, in report order.
var LeverNames = []string{"remat", "act-offload", "weight-offload", "remat-offload"}

// DefaultLevers returns the levers implemented in this package, keyed by name.
func DefaultLevers() map[string]Lever {
	return map[string]Lever{"remat": Remat{}, "act-offload": ActOffload{}, "weight-offload": WeightOffload{}, "remat-offload": RematOffload{}}
}

// Certify runs every lever of levers (keyed by name; a name of LeverNames without a lever is
// reported as skipped) on in. An error is a bug or an I/O failure, never an outcome: an
// infeasible budget, a missing bandwidth or a stopped solve are parts of the report.
func Certify(ctx context.Context, in Input, levers map[string]Lever) (*Report, error) {
	if in.Chain == nil {
		panic("report: Certify with a nil chain")
	}
	rep := &Report{Chain: in.Source, Stages: in.Chain.Len(), Budget: in.Budget, Bandwidth: in.Bandwidth,
		Levers: map[string]*LeverReport{}}
	names := append([]string{}, LeverNames...)
	for n := range levers {
		if !contains(names, n) {
			names = append(names, n)
		}
	}
	if in.TimeLimit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, in.TimeLimit)
		defer cancel()
	}
	// The levers that will run, for the time shares.
	var running []string
	for _, name := range names {
		if lv, ok := levers[name]; ok && lv.Skip(in) == "" {
			running = append(running, name)
		}
	}
	for _, name := range names {
		lv, ok := levers[name]
		rep.Order = append(rep.Order, name)
		if !ok {
			rep.Levers[name] = &LeverReport{Lever: name, Skipped: "not available in this build"}
			continue
		}
		if why := lv.Skip(in); why != "" {
			rep.Levers[name] = &LeverReport{Lever: name, Skipped: why}
			if in.LeverDone != nil {
				in.LeverDone(rep.Levers[name])
			}
			continue
		}
		if err := ctx.Err(); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return rep, err
		}
		if in.Progress != nil {
			in.Progress.Step("certify: "+name, 0)
		}
		lctx, lin, cancel := ShareTime(ctx, in, len(running))
		running = running[1:]
		lin.Earlier = rep.Levers
		start := time.Now()
		lr, err := lv.Run(lctx, lin)
		stopped := lctx.Err() != nil && ctx.Err() != context.Canceled
		cancel()
		if in.Progress != nil {
			in.Progress.Done()
		}
		if err != nil && errors.Is(err, context.DeadlineExceeded) && !errors.Is(ctx.Err(), context.Canceled) {
			// The lever returned at the end of its share: what it finished stands.
			lr.Notes = append(lr.Notes, "stopped at the end of its time share")
			err = nil
		}
		if err != nil {
			return rep, fmt.Errorf("report: %s: %w", name, err)
		}
		lr.Lever, lr.Stopped = name, stopped
		lr.Seconds = time.Since(start).Seconds()
		if lin.TimeLimit > 0 {
			lr.TimeBudget = lin.TimeLimit.Seconds()
		}
		Summarize(&lr)
		rep.Levers[name] = &lr
		if in.LeverDone != nil {
			in.LeverDone(&lr)
		}
	}
	return rep, nil
}

// ShareTime gives the next of k levers still to run its share of the time left before ctx's
// deadline: an equal share, (deadline − now)/k, so that time a lever leaves unused goes to the
// ones after it. It returns the lever's context (with its share's deadline), its Input
// (TimeLimit = the share) and the context's cancel. Without a deadline the lever gets ctx
// and in unchanged.
func ShareTime(ctx context.Context, in Input, k int) (context.Context, Input, context.CancelFunc) {
	dl, ok := ctx.Deadline()
	if !ok || k < 1 {
		return ctx, in, func() {}
	}
	share := time.Until(dl) / time.Duration(k)
	share = max(share, 0)
	lctx, cancel := context.WithDeadline(ctx, time.Now().Add(share))
	in.TimeLimit = max(share, time.Nanosecond) // a spent budget is still a budget, not "none"
	return lctx, in, cancel
}

// Summarize fills the best bound, every row's ratio, the best strategy and the outcome. Only
// bounds of Global scope count (a class-only bound bounds the class's plans, not the model's
// other schedules, SPEC §5): they make the best bound, the ratios, Optimal and Infeasible.
func Summarize(lr *LeverReport) {
	lr.BestBound, lr.BestBoundBy, lr.Infeasible = 0, "", false
	bestExact := false
	for i := range lr.Bounds {
		b := &lr.Bounds[i]
		if b.Scope == "" {
			b.Scope = Global
		}
		if b.Infeasible || b.Scope != Global {
			continue
		}
		// On a tie (relative 1e-12) an exact bound (an optimum) names the best bound: it says more.
		tie := math.Abs(b.Value-lr.BestBound) <= 1e-12*b.Value
		if b.Value > lr.BestBound && !tie || tie && b.Exact && !bestExact {
			lr.BestBound, lr.BestBoundBy, bestExact = math.Max(b.Value, lr.BestBound), b.Name, b.Exact
		}
	}
	for _, b := range lr.Bounds {
		if b.Infeasible && b.Scope == Global { // a proof that nothing fits outranks every finite bound
			lr.Infeasible, lr.BestBound, lr.BestBoundBy = true, 0, b.Name
			break
		}
	}
	lr.Best, lr.BestAt, lr.Optimal = "", 0, false
	for i := range lr.Rows {
		r := &lr.Rows[i]
		r.Ratio = 0
		if !r.Feasible {
			r.Verified = false // what does not fit was not verified as a schedule (issue 29)
			continue
		}
		if lr.BestBound > 0 {
			r.Ratio = r.Makespan / lr.BestBound
		}
		if lr.Best == "" || r.Makespan < lr.BestAt {
			lr.Best, lr.BestAt = r.Strategy, r.Makespan
		}
	}
	if lr.Best != "" && lr.BestBound > 0 && lr.BestAt <= lr.BestBound*(1+1e-9) {
		lr.Optimal = true
	}
	lr.Outcome = outcome(lr)
}

// outcome is LeverReport.Outcome ("" for a skipped lever).
func outcome(lr *LeverReport) string {
	switch {
	case lr.Skipped != "":
		return ""
	case lr.Infeasible:
		return "infeasible"
	case lr.Best == "" && lr.Stopped:
		return "not run (time)"
	case lr.Best == "":
		return "none found"
	case lr.Optimal:
		return "optimal"
	case lr.BestBound > 0:
		return "bracketed"
	}
	return "no bound"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// finite returns a pointer to x, or nil when x is not finite (JSON has no infinity).
func finite(x float64) *float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return nil
	}
	return &x
}

// chainWeights returns Σ_ℓ |w_ℓ|, the chain's weights in bytes.
func chainWeights(c *instances.Chain) int64 {
	var w int64
	for _, st := range c.Stages {
		w += st.W
	}
	return w
}

// activationBudget is the budget of a lever whose model leaves the weights out (004's remat,
// 001's activation offloading) at the budget b: b itself, or with in.WeightsResident b minus
// the chain's weights, which stay on the GPU (0 when they alone exceed b: nothing fits).
func activationBudget(in Input, b int64) int64 {
	if !in.WeightsResident {
		return b
	}
	return max(0, b-chainWeights(in.Chain))
}

// weightsNote says, for the levers whose model leaves the weights out of the budget, what
// the budget covers ("" when the chain has no weights): without WeightsResident that the
// weights are not in it, with it the budget left for activations.
func weightsNote(in Input) string {
	w := chainWeights(in.Chain)
	if w == 0 {
		return ""
	}
	if !in.WeightsResident {
		return fmt.Sprintf("the budget counts activations only (the model of this lever); the chain's %s of weights are not in it: to compare with a GPU, pass its memory minus the weights (or --weights-resident)", instances.FormatSize(w))
	}
	if w >= in.Budget {
		return fmt.Sprintf("the chain's %s of resident weights fill the budget %s: nothing fits", instances.FormatSize(w), instances.FormatSize(in.Budget))
	}
	return fmt.Sprintf("budget for activations: %s = %s minus the chain's %s of resident weights", instances.FormatSize(in.Budget-w), instances.FormatSize(in.Budget), instances.FormatSize(w))
}

// addBound appends b to lr's bounds unless a verified row contradicts it (a bound above a
// verified makespan, or infeasibility where a schedule was verified): then it is dropped with a
// note "who: … dropped" — nothing a solver or search says stands against what verify accepted
// (SPEC §5). It reports whether b was added.
func addBound(lr *LeverReport, b Bound, who string) bool {
	for _, r := range lr.Rows {
		if r.Feasible && (b.Infeasible || b.Value > r.Makespan*(1+1e-9)) {
			lr.Notes = append(lr.Notes, fmt.Sprintf("%s contradicts the verified %s row (%g s): dropped", who, r.Strategy, r.Makespan))
			return false
		}
	}
	lr.Bounds = append(lr.Bounds, b)
	return true
}
