package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/memsched/memsched/dp"
	hact "github.com/memsched/memsched/heuristics/actoffload"
	"github.com/memsched/memsched/instances"
	act "github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/instances/reduce"
	leveract "github.com/memsched/memsched/lever/actoffload"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/actmilp"
	"github.com/memsched/memsched/milp/combinedlb"
	"github.com/memsched/memsched/report"
	"github.com/memsched/memsched/schedule"
)

// ActOptions are the flags of `memsched offload-act` (and `bound --problem act-offload`).
type ActOptions struct {
	WeightsOptions
	Algo  string
	Slots int
	Exact bool
	// MaxNodes bounds the exact search.
	MaxNodes int
	// MaxMemory caps DYNPROG's states (--max-memory; 0: the default).
	MaxMemory int64
	// Solver and TimeLimit (seconds) run the exact MILP (--algo milp, and the bound).
	Solver    string
	TimeLimit float64
	// interruptible caches the DP bound (seconds of DP on long chains) between the bounds
	// computed before the MILP and those printed after it.
	interruptible *float64
	// staircase caches Problem.Staircase likewise (NaN: out of reach), and stairTails the tails
	// it raised (the event search's node bounds).
	staircase  *float64
	stairTails []float64
	// split caches Problem.Split's bound (NaN: out of reach), whole WholeTransfers (NaN:
	// stopped).
	split, whole *float64
	// splitStopped, stairStopped, interruptibleStopped and wholeStopped say that the time
	// limit stopped that bound (not cached: nothing to reuse).
	splitStopped, stairStopped, interruptibleStopped, wholeStopped bool
	// metBy, when set, says which verified schedule meets Prop. 3 or the fractional bound:
	// the optimum is in hand, and the bounds that take time (the DP's, the windows', the
	// peak split's) and the searches are not computed (offload-act).
	metBy string
}

// splitBound computes (once) the peak split's bound (NaN where a side's table is beyond its
// caps or ctx ended it).
func (o *ActOptions) splitBound(ctx context.Context, p *act.Problem) float64 {
	if o.split == nil && !o.splitStopped {
		v := math.NaN()
		res, err := p.Split(act.SplitOptions{Stop: ctx.Done()})
		switch {
		case err == nil:
			v = res.Bound
		case errors.Is(err, act.ErrSplitStopped):
			o.splitStopped = true
			return v
		}
		o.split = &v
	}
	if o.split == nil {
		return math.NaN()
	}
	return *o.split
}

// stair computes (once) the staircase of the whole-transfer windows and its tails.
func (o *ActOptions) stair(ctx context.Context, p *act.Problem) (float64, []float64) {
	if o.staircase == nil && !o.stairStopped {
		v := math.NaN()
		st, tails := report.ActStaircase(p, 0, false, ctx.Done())
		if st != nil {
			v = st.Value
		} else if ctx.Err() != nil {
			o.stairStopped = true
			return v, nil
		}
		o.staircase, o.stairTails = &v, tails
	}
	if o.staircase == nil {
		return math.NaN(), nil
	}
	return *o.staircase, o.stairTails
}

// wholeBound computes (once) the whole-transfer windows' bound (NaN when ctx ended it).
func (o *ActOptions) wholeBound(ctx context.Context, p *act.Problem) float64 {
	if o.whole == nil && !o.wholeStopped {
		v, err := p.WholeTransfersUntil(ctx.Done())
		if err != nil {
			o.wholeStopped = true
			return math.NaN()
		}
		o.whole = &v
	}
	if o.whole == nil {
		return math.NaN()
	}
	return *o.whole
}

// actAlgos are the strategies of the registry (lever/actoffload) and the exact MILP
// (milp/actmilp, run by runActMILP): --algo names one of them.
var actAlgos = append(leveract.Names(0), "milp")

func (o *ActOptions) problem() (*act.Problem, error) {
	mem, beta, err := o.parse()
	if err != nil {
		return nil, err
	}
	if err := checkSlots(o.Slots); err != nil {
		return nil, err
	}
	c, err := instances.LoadChain(o.ChainFile)
	if err != nil {
		return nil, &UsageError{err}
	}
	p, err := act.FromChain(c, mem, beta)
	if err != nil {
		return nil, &UsageError{err}
	}
	return p, nil
}

// infJSON is a float64 written as null in JSON when infinite (no schedule exists).
type infJSON float64

// MarshalJSON writes null for ±Inf.
func (x infJSON) MarshalJSON() ([]byte, error) {
	if math.IsInf(float64(x), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(x))
}

// UnmarshalJSON reads null as +Inf.
func (x *infJSON) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*x = infJSON(math.Inf(1))
		return nil
	}
	return json.Unmarshal(b, (*float64)(x))
}

// ActBounds are the certified lower bounds, weakest first (SPEC §2, §5); null (+Inf) when
// even the relaxation has no schedule.
type ActBounds struct {
	Prop3      infJSON `json:"prop3"`
	Fractional infJSON `json:"fractional"`
	// Interruptible and Whole are absent when the time limit stopped them (certified_by
	// says so).
	Interruptible *infJSON `json:"interruptible,omitempty"`
	Whole         *infJSON `json:"whole,omitempty"`
	// Staircase is Problem.Staircase (absent where its table is out of reach).
	Staircase *float64 `json:"staircase,omitempty"`
	// Split is Problem.Split, the peak split (absent where its table is out of reach; null
	// when it proves that no schedule exists).
	Split *infJSON `json:"split,omitempty"`
	Exact *float64 `json:"exact,omitempty"`
	// MILP is the exact MILP's proven bound (milp/actmilp), with the solve's status and the
	// relative gap to the best verified schedule; absent when the MILP did not run.
	MILP       *float64 `json:"milp,omitempty"`
	MILPStatus string   `json:"milp_status,omitempty"`
	MILPGap    *float64 `json:"milp_gap,omitempty"`
	// MILPNote says why the MILP did not run where it would have (its model above
	// --max-memory); absent otherwise.
	MILPNote string `json:"milp_note,omitempty"`
	// Best is the largest; CertifiedBy says what certifies each.
	Best        infJSON           `json:"best"`
	CertifiedBy map[string]string `json:"certified_by"`
}

// ActResult is one algorithm's validated schedule. JSON: the algorithm's name is "algorithm",
// as in every command's output; AlgoAlias writes it under "algo" too, its key before 0.2
// (deprecated, kept for one release: docs/README.md "Changes").
type ActResult struct {
	Algo       string          `json:"algorithm"`
	AlgoAlias  string          `json:"algo"`
	Feasible   bool            `json:"feasible"`
	Makespan   *float64        `json:"makespan"`
	PeakMemory int64           `json:"peak_memory"`
	Idle       float64         `json:"idle"`
	LinkUtil   float64         `json:"link_utilisation"`
	Ratio      *float64        `json:"ratio_to_best_bound"`
	Offloaded  []int           `json:"offloaded"`
	Bytes      int64           `json:"offloaded_bytes"`
	Schedule   *schedule.Timed `json:"schedule,omitempty"`
	Verified   bool            `json:"verified"`
	Status     string          `json:"status,omitempty"`
	// From says which schedule a MILP row is (the re-timed incumbent, the no-wait schedule of
	// its link order, or the start when the solver found nothing better).
	From string `json:"from,omitempty"`
}

// ActReport is the output of `memsched offload-act`: the chosen (or, for all, the best)
// algorithm's result at the top level, every result in Results.
type ActReport struct {
	ActResult
	L           int         `json:"L"`
	MGPU        int64       `json:"m_gpu"`
	MPeak       int64       `json:"m_peak"`
	MinMemory   int64       `json:"min_memory"`
	Beta        float64     `json:"bandwidth"`
	Compute     float64     `json:"compute"`
	LowerBounds ActBounds   `json:"lower_bounds"`
	Results     []ActResult `json:"results,omitempty"`
}

// maxMemory is --max-memory, or its default when the options come from a caller without it.
func (o *ActOptions) maxMemory() int64 {
	if o.MaxMemory > 0 {
		return o.MaxMemory
	}
	return dp.DefaultMaxMemory
}

func (o *ActOptions) dpOptions(ctx context.Context) dp.ActOptions {
	return dp.ActOptions{Slots: o.Slots, Exact: o.Exact, MaxMemory: o.MaxMemory, Stop: ctx.Done()}
}

// stoppedBound is the certificate of a bound the time limit stopped.
const stoppedBound = "not computed: stopped at the time limit (--time-limit)"

// actBounds computes the certified bounds within ctx (a bound it stops is absent, its
// certificate says so); exact, when given, is a completed event search (its bound the
// optimum of Problem 1), and mi a solve of the exact MILP.
func actBounds(ctx context.Context, p *act.Problem, o *ActOptions, exact *hact.EventResult, mi *actmilp.Solution) (ActBounds, error) {
	b := ActBounds{Prop3: infJSON(p.Prop3()), Fractional: infJSON(p.Fractional()), CertifiedBy: map[string]string{
		"prop3":         "001 Prop. 3 (factor 2): all compute, and M_peak − M_GPU bytes out and back on one link",
		"fractional":    "optimum of the fluid fractional relaxation (001 §4, Thm 2), a relaxation of Problem 1",
		"interruptible": "DYNPROG optimum with sizes rounded down: a relaxation of Problem 2 (interruptible transfers, 001 §5), max with fractional",
		"whole":         "max over operations of Head + Tail with whole transfers on one link before and after each (instances/actoffload.WholeWindows)",
	}}
	b.Best = infJSON(math.Max(p.Prop3(), p.Fractional()))
	if o.metBy != "" {
		for _, k := range []string{"interruptible", "whole", "staircase", "split"} {
			b.CertifiedBy[k] = "not computed: " + o.metBy
		}
		return actBoundsAfterSearch(b, exact, mi), nil
	}
	if w := o.wholeBound(ctx, p); !math.IsNaN(w) {
		wv := infJSON(w)
		b.Whole = &wv
		b.Best = infJSON(math.Max(float64(b.Best), w))
	} else if o.wholeStopped {
		b.CertifiedBy["whole"] = stoppedBound
	}
	if v, _ := o.stair(ctx, p); !math.IsNaN(v) {
		b.Staircase = &v
		b.CertifiedBy["staircase"] = "one link meets every tight operation's need with whole offloads by T − Tail[k] (instances/actoffload.Staircase)"
		b.Best = infJSON(math.Max(float64(b.Best), v))
	} else if o.stairStopped {
		b.CertifiedBy["staircase"] = stoppedBound
	}
	if o.interruptible == nil && !o.interruptibleStopped {
		ib, err := dp.InterruptibleBound(p, o.dpOptions(ctx))
		switch {
		case errors.Is(err, dp.ErrStopped):
			o.interruptibleStopped = true
		case err != nil:
			return b, err
		default:
			o.interruptible = &ib
		}
	}
	if o.interruptible != nil {
		iv := infJSON(*o.interruptible)
		b.Interruptible = &iv
		b.Best = infJSON(math.Max(float64(b.Best), *o.interruptible))
	} else {
		b.CertifiedBy["interruptible"] = stoppedBound
	}
	if v := o.splitBound(ctx, p); !math.IsNaN(v) {
		sv := infJSON(v)
		b.Split = &sv
		b.Best = infJSON(math.Max(float64(b.Best), v))
		b.CertifiedBy["split"] = act.SplitCertificate
	} else if o.splitStopped {
		b.CertifiedBy["split"] = stoppedBound
	}
	return actBoundsAfterSearch(b, exact, mi), nil
}

// actBoundsAfterSearch adds to b the bounds of a completed event search (exact) and of a
// MILP solve (mi), either nil.
func actBoundsAfterSearch(b ActBounds, exact *hact.EventResult, mi *actmilp.Solution) ActBounds {
	if exact != nil && !math.IsInf(exact.Bound, 1) {
		v := exact.Bound
		b.Exact = &v
		b.Best = infJSON(math.Max(float64(b.Best), v))
		b.CertifiedBy["exact"] = fmt.Sprintf("complete search over event sequences (heuristics/actoffload.EventSearch, %d nodes): no schedule of Problem 1 is shorter", exact.Nodes)
	}
	if mi != nil {
		b.MILPStatus = mi.Status.String()
		b.CertifiedBy["milp"] = actMILPCertificate(mi)
		if v := mi.Bound; !math.IsNaN(v) {
			b.MILP = finite(v)
			if math.IsInf(v, 1) {
				b.Best = infJSON(v)
			} else {
				b.Best = infJSON(math.Max(float64(b.Best), v))
			}
		}
		b.MILPGap = finite(mi.Gap)
	}
	return b
}

// actMILPCertificate says what certifies the MILP's number.
func actMILPCertificate(mi *actmilp.Solution) string {
	solver := ""
	if mi.Guarded != nil {
		solver = mi.Guarded.Solver + ", "
	}
	switch {
	case math.IsInf(mi.Bound, 1):
		return "exact MILP of Problem 1 (milp/actmilp) proven infeasible: " + strings.TrimPrefix(mi.Note, "; ")
	case math.IsNaN(mi.Bound):
		msg := fmt.Sprintf("exact MILP of Problem 1 (milp/actmilp), %s%s: no bound", solver, mi.Status)
		if note := strings.TrimPrefix(mi.Note, "; "); note != "" {
			msg += " (" + note + ")"
		}
		return msg
	case mi.Status == milp.Optimal:
		return fmt.Sprintf("optimum of the exact MILP of Problem 1 (milp/actmilp), %srelative gap %s", solver, milp.GapText(mi.Gap))
	}
	return fmt.Sprintf("proven dual bound of the exact MILP of Problem 1 (milp/actmilp) at %s, %srelative gap %s", mi.Status, solver, milp.GapText(mi.Gap))
}

// runActMILP solves the exact MILP from start (the best schedule at hand; nil: the best of
// GREEDY, DYNPROG and VDNN), with the certified bound lower as a row of the model, within
// ctx's deadline (the command's).
func runActMILP(ctx context.Context, p *act.Problem, o *ActOptions, start *hact.Result, startName string, lower float64) (*actmilp.Solution, error) {
	solvers, err := boundSolvers(o.Solver)
	if err != nil {
		return nil, err
	}
	if solvers[0].Name() == "ref" {
		return nil, usageErrorf("--algo milp needs a MILP backend (HiGHS or lp_solve): build with make")
	}
	if start == nil {
		if start, startName, err = actmilp.BestHeuristicUntil(p, ctx.Done()); err != nil {
			return nil, err
		}
	}
	// The deadline covers building the model too (a long chain's takes longer than its solve).
	return actmilp.Solve(ctx, solvers, p, actmilp.SolveOptions{Start: start, StartName: startName, Lower: lower,
		MaxMemory: o.maxMemory()})
}

func runActAlgo(ctx context.Context, p *act.Problem, o *ActOptions, algo string) (*hact.Result, string, error) {
	if algo == "milp" {
		panic("cli: milp runs through runActMILP")
	}
	st, ok := leveract.Lookup(algo)
	if !ok {
		return nil, "", usageErrorf("--algo: unknown %q (want %s or all)", algo, strings.Join(actAlgos, ", "))
	}
	out, err := st.Run(p, leveract.Options{DP: o.dpOptions(ctx), LowerBound: p.Fractional(), MaxNodes: o.MaxNodes, Stop: ctx.Done()})
	if errors.Is(err, dp.ErrStopped) { // DYNPROG's table
		return &hact.Result{}, leveract.StoppedStatus + " before it had a schedule", nil
	}
	if err == nil && algo == "split" && o.split == nil {
		// The bound line reuses the strategy's split instead of running it again.
		v := math.NaN()
		if out.Bound != 0 {
			v = out.Bound
		}
		o.split = &v
	}
	return out.Result, out.Status, err
}

func actResult(algo string, r *hact.Result, status string, best float64) ActResult {
	a := ActResult{Algo: algo, AlgoAlias: algo, Feasible: r.Feasible, Status: status, Offloaded: r.Offloaded}
	if a.Offloaded == nil {
		a.Offloaded = []int{}
	}
	if r.Feasible {
		m := r.Report.Makespan
		a.Makespan, a.PeakMemory, a.Idle, a.LinkUtil = &m, r.Report.Peak, r.Report.Idle, r.Report.Utilisation
		a.Bytes, a.Schedule, a.Verified = r.Report.OffloadedBytes, r.Schedule, true
		if best > 0 && !math.IsInf(best, 0) {
			ratio := m / best
			a.Ratio = &ratio
		}
	}
	return a
}

// actRun is one row of RunOffloadAct: the algorithm, its status, the schedule it started from
// (the MILP) and its result.
type actRun struct {
	algo, status, from string
	r                  *hact.Result
}

// RunOffloadAct runs the algorithms and assembles the report, within ctx's deadline (the
// command's --time-limit): an algorithm stopped by it says so in its status, a bound it
// stopped is absent with a certificate that says so.
func RunOffloadAct(ctx context.Context, p *act.Problem, o *ActOptions) (*ActReport, error) {
	algos := []string{o.Algo}
	if o.Algo == "all" {
		algos = leveract.Names(leveract.InAll)
		if realMILPBackend() {
			algos = append(algos, "milp")
		}
	}
	var runs []actRun
	// GREEDY first, within a tenth of the limit (milliseconds but on long chains): where its
	// verified schedule meets Prop. 3 or the fractional bound (instant), it is optimal, and
	// the bounds and searches that take time are not run. On a 20-stage random chain the
	// peak split's bound alone took its whole share (24 s of --time-limit 60) while greedy
	// met Σu.
	lb := math.Max(p.Prop3(), p.Fractional())
	meets := func(r *hact.Result) bool {
		return r != nil && r.Feasible && lb > 0 && !math.IsInf(lb, 0) && r.Report.Makespan <= lb*(1+1e-9)
	}
	var greedy *actRun
	if slices.Contains(algos, "greedy") {
		gctx, cancel := shareOf(ctx, 0.1)
		r, st, err := runActAlgo(gctx, p, o, "greedy")
		cancel()
		if err != nil {
			return nil, err
		}
		greedy = &actRun{"greedy", st, "", r}
		if meets(r) {
			o.metBy = "greedy's schedule meets the relaxations' bound"
		}
	}
	// met says which verified schedule meets the relaxations' bound, found before the
	// bounds (o.metBy) or after them (greedy again on a long chain, dynprog, vdnn): the
	// searches after it are not run.
	met := o.metBy
	var exact *hact.EventResult
	var mi *actmilp.Solution
	milpNote := ""
	// The bounds first, within actBoundsShare of the limit (milliseconds on the zoo; minutes
	// for the windows of a 20 001-stage chain): the algorithms get the rest, the bounds
	// stopped say so.
	bctx, cancel := shareOf(ctx, actBoundsShare)
	_, err := actBounds(bctx, p, o, nil, nil)
	cancel()
	if err != nil {
		return nil, err
	}
	for i, a := range algos {
		if a == "greedy" && greedy != nil && !greedy.r.Stopped {
			runs = append(runs, *greedy)
			continue // stopped in its tenth (a long chain), it runs again with what is left
		}
		if met != "" && (a == "split" || a == "exact" || a == "milp") {
			runs = append(runs, actRun{a, "not run: " + met, "", &hact.Result{}})
			continue
		}
		if a == "split" && o.splitStopped && i+1 < len(algos) {
			// The strategy is the bound's search and more, and would get less time than the
			// bound had (half of what is left, against actBoundsShare of the limit): on a
			// 20-stage random chain at 1040653605 B it took every second left of --time-limit
			// 60, and the exact search none.
			runs = append(runs, actRun{a, "not run: the peak split's search did not end within the bounds' share of --time-limit", "", &hact.Result{}})
			continue
		}
		if a == "milp" {
			// From the best schedule of the algorithms run so far (else the heuristics'), with
			// the relaxations' bound inside the model.
			var start *hact.Result
			name := ""
			for _, r := range runs {
				if r.r.Feasible && (start == nil || r.r.Report.Makespan < start.Report.Makespan) {
					start, name = r.r, r.algo
				}
			}
			b, err := actBounds(ctx, p, o, nil, nil)
			if err != nil {
				return nil, err
			}
			lower := float64(b.Best)
			if math.IsInf(lower, 0) {
				lower = 0
			}
			if mi, err = runActMILP(ctx, p, o, start, name, lower); err != nil {
				var tl *actmilp.TooLargeError
				if errors.As(err, &tl) && o.Algo == "all" {
					milpNote = "not run: " + err.Error() // the others stand; --algo milp alone fails
					continue
				}
				return nil, err
			}
			runs = append(runs, actRun{a, mi.Status.String(), mi.From, mi.Best})
			continue
		}
		actx, cancel := ctx, context.CancelFunc(func() {})
		if a == "split" && i+1 < len(algos) {
			// Half of what is left: its search over count vectors can take minutes, and the
			// exact search and the MILP come after it.
			actx, cancel = shareOf(ctx, 0.5)
		}
		r, st, err := runActAlgo(actx, p, o, a)
		cancel()
		if err != nil {
			return nil, err
		}
		if met == "" && a != "split" && a != "exact" && meets(r) {
			met = a + "'s schedule meets the relaxations' bound"
		}
		runs = append(runs, actRun{a, st, "", r})
		if a == "exact" && p.L()+1 <= hact.EventMaxOps {
			// The branch and bound is optimal among no-wait schedules; the event search proves
			// (or improves) it for Problem 1 itself, from the best schedule so far.
			var best *hact.Result
			for _, r := range runs {
				if r.r.Feasible && (best == nil || r.r.Report.Makespan < best.Report.Makespan) {
					best = r.r
				}
			}
			// The event search gets half of what is left when the MILP comes after it.
			ectx, cancel := ctx, context.CancelFunc(func() {})
			if i+1 < len(algos) && algos[len(algos)-1] == "milp" {
				ectx, cancel = shareOf(ctx, 0.5)
			}
			ev, err := runEventSearch(ectx, p, o, best)
			timedOut := ectx.Err() != nil
			cancel()
			if err != nil {
				return nil, err
			}
			if ev.Best != nil {
				// "optimal" only when the search ended: a stopped one's schedule is the best it
				// found (on a 20-stage chain, "events (optimal)" at 246.90 ms stood beside a bound
				// of 208.69 ms, which the exact search then reached).
				st := hact.Optimal.String()
				switch {
				case !ev.Complete && timedOut:
					st = hact.Stopped.String()
				case !ev.Complete:
					st = hact.NodeLimit.String()
				}
				runs = append(runs, actRun{"events", st, "", ev.Best})
			}
			if ev.Complete {
				exact = ev
			} else if best == nil && st == hact.Optimal.String() {
				runs[len(runs)-1].status = hact.NoWaitInfeasible
			}
		}
	}
	b, err := actBounds(ctx, p, o, exact, mi)
	if err != nil {
		return nil, err
	}
	b.MILPNote = milpNote
	rep := &ActReport{L: p.L(), MGPU: p.MGPU, MPeak: p.Peak(), MinMemory: p.MinMemory(), Beta: p.Beta,
		Compute: p.Compute(), LowerBounds: b}
	bestIdx := -1
	for i, r := range runs {
		res := actResult(r.algo, r.r, r.status, float64(b.Best))
		res.From = r.from
		// Nothing a search says stands against a verified schedule (SPEC §5).
		if res.Feasible && *res.Makespan < float64(b.Best)*(1-1e-9) {
			return nil, fmt.Errorf("offload-act: %s's verified makespan %g is below the certified bound %g (bug)", r.algo, *res.Makespan, b.Best)
		}
		rep.Results = append(rep.Results, res)
		if res.Feasible && (bestIdx < 0 || *res.Makespan < *rep.Results[bestIdx].Makespan) {
			bestIdx = i
		}
	}
	if bestIdx < 0 {
		bestIdx = 0
	}
	rep.ActResult = rep.Results[bestIdx]
	if len(runs) == 1 {
		rep.Results = nil
	}
	return rep, nil
}

// actBoundsShare is the most of --time-limit the certified bounds get before the algorithms
// (offload-act) or the MILP (bound --problem act-offload).
const actBoundsShare = 0.4

// runEventSearch runs heuristics/actoffload.EventSearch from best (nil: none) within ctx's
// deadline (the command's --time-limit) and ten times --max-nodes.
func runEventSearch(ctx context.Context, p *act.Problem, o *ActOptions, best *hact.Result) (*hact.EventResult, error) {
	_, tails := o.stair(ctx, p)
	opt := hact.EventOptions{Stop: ctx.Done(), MaxNodes: 10 * o.MaxNodes,
		MaxStates: hact.EventStatesWithin(o.maxMemory() / 2), Tail: tails}
	if best != nil {
		opt.Incumbent = best.Report.Makespan
	}
	return hact.EventSearch(p, opt)
}

// noSchedule says what a result without a schedule means: "infeasible" only where the exact
// search proved it; a search stopped by its node limit found none, and a heuristic's failure
// proves nothing.
func noSchedule(r ActResult) string {
	switch r.Status {
	case hact.Optimal.String():
		return "infeasible"
	case "":
		return "no schedule"
	}
	return "none found"
}

func fmtTime(x float64) string {
	if math.IsInf(x, 1) {
		return "infeasible"
	}
	return instances.FormatDuration(x)
}

func printActBounds(w *tabwriter.Writer, b ActBounds) {
	opt := func(name string, v *infJSON) {
		if v != nil {
			fmt.Fprintf(w, "bound %s\t%s\t%s\n", name, fmtTime(float64(*v)), b.CertifiedBy[name])
		} else if c := b.CertifiedBy[name]; c != "" {
			fmt.Fprintf(w, "bound %s\t-\t%s\n", name, c)
		}
	}
	fmt.Fprintf(w, "bound prop3\t%s\t%s\n", fmtTime(float64(b.Prop3)), b.CertifiedBy["prop3"])
	fmt.Fprintf(w, "bound fractional\t%s\t%s\n", fmtTime(float64(b.Fractional)), b.CertifiedBy["fractional"])
	opt("interruptible", b.Interruptible)
	opt("whole", b.Whole)
	if b.Staircase != nil {
		fmt.Fprintf(w, "bound staircase\t%s\t%s\n", fmtTime(*b.Staircase), b.CertifiedBy["staircase"])
	} else if c := b.CertifiedBy["staircase"]; c != "" {
		fmt.Fprintf(w, "bound staircase\t-\t%s\n", c)
	}
	opt("split", b.Split)
	if b.Exact != nil {
		fmt.Fprintf(w, "optimum (exact)\t%s\t%s\n", fmtTime(*b.Exact), b.CertifiedBy["exact"])
	}
	if b.MILPStatus != "" {
		v := "-"
		if b.MILP != nil {
			v = fmtTime(*b.MILP)
		}
		fmt.Fprintf(w, "bound milp\t%s\t%s\n", v, b.CertifiedBy["milp"])
	}
	if b.MILPNote != "" {
		fmt.Fprintf(w, "bound milp\t-\t%s\n", b.MILPNote)
	}
}

// actAlgoHelp lists offload-act's algorithms for its help: the registry's strategies and all.
func actAlgoHelp() string {
	var es []helpEntry
	for _, st := range leveract.Strategies {
		es = append(es, helpEntry{st.Name, st.Summary})
	}
	es = append(es, helpEntry{"milp", "the exact MILP of Problem 1 (milp/actmilp) from the best heuristic's schedule: its re-timed incumbent (or the no-wait schedule of its link order) and its proven bound; needs a MILP backend"})
	return strategyHelp(append(es, helpEntry{"all", strings.Join(leveract.Names(leveract.InAll), ", ") + " (and milp where a MILP backend is compiled in) in one table"}))
}

func newOffloadActCmd(io *IO) *cobra.Command {
	o := &ActOptions{}
	var maxMemory string
	cmd := &cobra.Command{
		Use:   "offload-act --chain FILE --mem SIZE --bandwidth RATE [--algo " + strings.Join(actAlgos, "|") + "|all] [--slots N|--exact]",
		Short: "Activation offloading (001): a validated schedule and the certified bounds",
		Long: `offload-act maps the chain to 001's model (x_0 = a^0, x_i = ā^i, y_i = δ^i, ex = o_f/o_b) and
builds a schedule with GREEDY (001 §4.2), DYNPROG (001 §5.3), VDNN (001 §6.1), the peak split,
the exact search (small chains) or the exact MILP (milp: from the best heuristic's schedule within --time-limit,
its incumbent re-timed and validated, its proven bound reported with status and gap), validated
by verify/timed, next to the certified bounds
LB (Prop. 3) ≤ OPT_frac ≤ OPT_interruptible ≤ OPT ≤ every schedule (docs/act-offload.md).
A row without a schedule says "infeasible" only where the exact search proved it; "none found"
when the search stopped at --max-nodes (its status in brackets), "no schedule" for a heuristic.
Algorithms:
` + actAlgoHelp(),
		Example: `  memsched gen zoo resnet --depth 50 --batch 32 -o r50.json
  memsched offload-act --chain r50.json --mem 3GiB --bandwidth 12.2GB/s            # every algorithm, every bound
  memsched offload-act --chain r50.json --mem 3GiB --bandwidth 12.2GB/s --algo dynprog --slots 2000
  memsched offload-act --chain r50.json --mem 3GiB --bandwidth 12.2GB/s --algo milp --time-limit 60
  memsched offload-act --chain r50.json --mem 3GiB --bandwidth 12.2GB/s --algo greedy --json > a.json
  memsched verify --problem act-offload --chain r50.json --mem 3GiB --bandwidth 12.2GB/s --schedule a.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			start := time.Now()
			if o.Algo != "all" && !contains(actAlgos, o.Algo) {
				return usageErrorf("--algo: unknown %q (want %s or all)", o.Algo, strings.Join(actAlgos, ", "))
			}
			if o.MaxNodes < 1 {
				return usageErrorf("--max-nodes must be at least 1, got %d", o.MaxNodes)
			}
			var err error
			if o.MaxMemory, err = maxMemoryFlag(maxMemory); err != nil {
				return err
			}
			if err := checkTimeLimit(o.TimeLimit); err != nil {
				return err
			}
			p, err := o.problem()
			if err != nil {
				return err
			}
			ctx, cancel := withTimeLimit(cmd.Context(), start, o.TimeLimit)
			defer cancel()
			rep, err := RunOffloadAct(ctx, p, o)
			if err != nil {
				return err
			}
			if io.JSON {
				return io.PrintJSON(rep)
			}
			w := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintf(w, "chain\tL = %d, M_GPU %s, M_peak %s, min %s, β %s, compute %s\n", rep.L,
				instances.FormatSize(rep.MGPU), instances.FormatSize(rep.MPeak), instances.FormatSize(rep.MinMemory), instances.FormatRate(rep.Beta), fmtTime(rep.Compute))
			printActBounds(w, rep.LowerBounds)
			results := rep.Results
			if results == nil {
				results = []ActResult{rep.ActResult}
			}
			fmt.Fprintln(w, "algorithm\tmakespan\tratio\toffloaded\tpeak\tverified")
			for _, r := range results {
				name := r.Algo
				if r.Status != "" {
					name += " (" + r.Status + ")"
				}
				if !r.Feasible {
					fmt.Fprintf(w, "%s\t%s\t-\t-\t-\t-\n", name, noSchedule(r))
					continue
				}
				ratio := "-"
				if r.Ratio != nil {
					ratio = formatRatio(*r.Ratio, 4)
				}
				if r.From != "" {
					name += " [" + r.From + "]"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%d (%s)\t%s\t%s\n", name, fmtTime(*r.Makespan), ratio, len(r.Offloaded),
					instances.FormatSize(r.Bytes), instances.FormatSize(r.PeakMemory), yesNo(r.Verified))
			}
			return w.Flush()
		},
	}
	o.flags(cmd)
	cmd.Flags().StringVar(&o.Algo, "algo", "all", strings.Join(actAlgos, "|")+"|all")
	cmd.Flags().Float64Var(&o.TimeLimit, "time-limit", 60, "wall-time budget in seconds of the whole command: every algorithm, bound and solve runs within it (what it stops says so); the exact search and the MILP get what is left")
	cmd.Flags().StringVar(&o.Solver, "solver", "", "MILP backend for --algo milp: highs|lpsolve (default: the best compiled in)")
	cmd.Flags().IntVar(&o.Slots, "slots", dp.DefaultSlots, "DYNPROG memory slots S (001 §5.3.2)")
	cmd.Flags().BoolVar(&o.Exact, "exact", false, "DYNPROG without rounding (slots of gcd of the sizes; small integer instances)")
	cmd.Flags().IntVar(&o.MaxNodes, "max-nodes", 2_000_000, "node limit of the exact search")
	addMaxMemoryFlag(cmd.Flags(), &maxMemory)
	return cmd
}

// runActBound is `memsched bound --problem act-offload`: the relaxations' bounds and, with a
// MILP backend, the exact MILP's proven bound — no exact search. The incumbent is the best
// verified schedule of GREEDY, DYNPROG, VDNN and the peak split (whose bound the split
// computes on the way): where it meets the bound, the optimum is proven and the MILP does not
// run; otherwise the MILP starts from it, within the time limit.
// The incumbent and the bounds get half of --time-limit (the whole command's), the MILP
// what is left.
func runActBound(ctx context.Context, begin time.Time, io *IO, w *WeightsOptions, slots int, exact bool, maxMemory int64, solver string, limit float64) error {
	o := &ActOptions{WeightsOptions: *w, Slots: slots, Exact: exact, MaxMemory: maxMemory, Solver: solver, TimeLimit: limit}
	p, err := o.problem()
	if err != nil {
		return err
	}
	if err := checkTimeLimit(limit); err != nil {
		return err
	}
	ctx, cancel := withTimeLimit(ctx, begin, limit)
	defer cancel()
	hctx, hcancel := shareOf(ctx, 0.5)
	defer hcancel()
	start, from, err := actmilp.BestHeuristicUntil(p, hctx.Done())
	if err != nil {
		return err
	}
	// The split's bound is cached for actBounds; beyond its caps it has no schedule (and no
	// bound), and the others stand.
	split, _, err := runActAlgo(hctx, p, o, "split")
	if err != nil {
		return err
	}
	if split.Feasible && (!start.Feasible || split.Report.Makespan < start.Report.Makespan) {
		start, from = split, "split"
	}
	b, err := actBounds(hctx, p, o, nil, nil)
	hcancel()
	if err != nil {
		return err
	}
	proven := start.Feasible && start.Report.Makespan <= float64(b.Best)*(1+1e-9)
	var mi *actmilp.Solution
	if realMILPBackend() && !math.IsInf(float64(b.Best), 1) && !proven {
		mi, err = runActMILP(ctx, p, o, start, from, float64(b.Best))
		var tl *actmilp.TooLargeError
		switch {
		case errors.As(err, &tl):
			b.MILPNote, mi = "not run: "+err.Error(), nil // the relaxations' bounds stand
		case err != nil:
			return err
		default:
			if b, err = actBounds(ctx, p, o, nil, mi); err != nil {
				return err
			}
			if mi.Best.Feasible && (!start.Feasible || mi.Best.Report.Makespan < start.Report.Makespan) {
				start, from = mi.Best, mi.From
			}
		}
	}
	var gap *float64
	if start.Feasible && !math.IsInf(float64(b.Best), 1) && b.Best > 0 {
		g := max(0, (start.Report.Makespan-float64(b.Best))/start.Report.Makespan)
		gap = &g
	}
	if io.JSON {
		out := struct {
			Problem     string    `json:"problem"`
			LowerBound  infJSON   `json:"lower_bound"`
			LowerBounds ActBounds `json:"lower_bounds"`
			// Status is the MILP's (absent when it did not run).
			Status string `json:"status,omitempty"`
			// Gap is (incumbent − lower_bound)/incumbent; Incumbent the best verified
			// schedule's makespan, IncumbentFrom the algorithm that gave it.
			Gap           *float64 `json:"gap,omitempty"`
			Incumbent     *float64 `json:"incumbent,omitempty"`
			IncumbentFrom string   `json:"incumbent_from,omitempty"`
			Optimal       bool     `json:"optimal"`
		}{Problem: "act-offload", LowerBound: b.Best, LowerBounds: b, Gap: gap}
		if mi != nil {
			out.Status = mi.Status.String()
		}
		if start.Feasible {
			out.Incumbent, out.IncumbentFrom = finite(start.Report.Makespan), from
			out.Optimal = start.Report.Makespan <= float64(b.Best)*(1+1e-9)
		}
		return io.PrintJSON(out)
	}
	tw := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "problem\tact-offload (L = %d, M_GPU %s, M_peak %s, β %s)\n", p.L(), instances.FormatSize(p.MGPU), instances.FormatSize(p.Peak()), instances.FormatRate(p.Beta))
	printActBounds(tw, b)
	fmt.Fprintf(tw, "lower bound\t%s\n", fmtTime(float64(b.Best)))
	if start.Feasible {
		verdict := "proven optimal: it meets the lower bound"
		if gap != nil && start.Report.Makespan > float64(b.Best)*(1+1e-9) {
			verdict = fmt.Sprintf("gap %.3g%%", 100**gap)
		}
		fmt.Fprintf(tw, "best schedule\t%s (%s, verified by verify/timed), %s\n", fmtTime(start.Report.Makespan), from, verdict)
	}
	return tw.Flush()
}

// realMILPBackend says whether HiGHS or lp_solve is compiled in (milp.Backends: a test's stub
// solver is not one; counting it made --algo all ask the referee for the MILP without cgo).
func realMILPBackend() bool { return len(milp.Backends()) > 0 }

// writeActInstance writes a reduction instance as a chain in bytes and seconds and prints
// M_GPU, β and the target on stderr.
func writeActInstance(io *IO, g *GenOptions, p *act.Problem, target float64, name string) error {
	c := p.ToChain(fmt.Sprintf("%s M_GPU=%dB beta=%gB/s T=%gs", name, p.MGPU, p.Beta, target))
	fmt.Fprintf(io.ErrOut, "memsched: %s: M_GPU = %d B (--mem %dB), β = %g B/s (--bandwidth %gB/s), T = %g s\n",
		name, p.MGPU, p.MGPU, p.Beta, p.Beta, target)
	return writeChain(c, g, io, &GenReport{Mem: p.MGPU, Bandwidth: p.Beta, Target: target})
}

func newGenActCmds(io *IO, g *GenOptions) []*cobra.Command {
	var v3, v2 []int64
	three := &cobra.Command{
		Use:   "act-3partition --values 6,7,6,7,6,8",
		Short: "001 Thm 1: the activation-offloading instance of a 3-partition instance (M_GPU = mV, β = V, T = 2m)",
		Example: `  memsched gen act-3partition --values 6,7,6,7,6,8 -o a3p.json   # --mem 40B --bandwidth 20B/s, T = 4 s on stderr
  memsched offload-act --chain a3p.json --mem 40B --bandwidth 20B/s --algo exact`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, target, err := reduce.ActThreePartition(v3)
			if err != nil {
				return genValues(err)
			}
			return writeActInstance(io, g, p, target, "act 3-partition")
		},
	}
	three.Flags().Int64SliceVar(&v3, "values", nil, "3m positive integers with a sum divisible by m")
	two := &cobra.Command{
		Use:   "act-2partition --values 3,1,1,2,2,1",
		Short: "001 Thm 3: the interruptible activation-offloading instance of a 2-partition instance (M_GPU = 2V, β = V, T = 2)",
		Example: `  memsched gen act-2partition --values 3,1,1,2,2,1 -o a2p.json   # --mem 10B --bandwidth 5B/s, T = 2 s on stderr
  memsched bound --problem act-offload --chain a2p.json --mem 10B --bandwidth 5B/s --exact`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, target, err := reduce.ActTwoPartition(v2)
			if err != nil {
				return genValues(err)
			}
			return writeActInstance(io, g, p, target, "act 2-partition")
		},
	}
	two.Flags().Int64SliceVar(&v2, "values", nil, "positive integers with an even sum")
	return []*cobra.Command{three, two}
}

// runExportOffload is `memsched export --problem act-offload`: the exact MILP of Problem 1,
// with the best heuristic's verified makespan as its time horizon and the relaxations' bound as
// the row T ≥ lower — the model `--algo milp` solves, without its start point; and
// `--problem remat-offload`: the relaxation MILP of the combined model (milp/combinedlb).
func runExportOffload(c *cobra.Command, io *IO, problem string) error {
	get := func(name string) string { v, _ := c.Flags().GetString(name); return v }
	format, out := get("format"), get("output")
	if err := checkExportFlags(format, out); err != nil {
		return err
	}
	maxMem, err := maxMemoryFlag(get("max-memory"))
	if err != nil {
		return err
	}
	if problem == "remat-offload" {
		if get("mem") == "" {
			return usageErrorf("export: --mem is required")
		}
		budget, err := budgetFlag("--mem", get("mem"))
		if err != nil {
			return err
		}
		beta, err := bandwidthFlag(get("bandwidth"))
		if err != nil {
			return err
		}
		ch, _, err := loadChain(get("chain"))
		if err != nil {
			return err
		}
		f, err := combinedlb.BuildWithin(ch, budget, beta, combinedlb.Limits{MaxMemory: maxMem})
		var tl *combinedlb.TooLargeError
		if errors.As(err, &tl) {
			return err // a limit reached, not bad input
		}
		if err != nil {
			return &UsageError{err}
		}
		return writeModelFile(io, problem, format, out, f.Model, f.Units)
	}
	o := &ActOptions{WeightsOptions: WeightsOptions{ChainFile: get("chain"), Mem: get("mem"), Bandwidth: get("bandwidth")}, Slots: dp.DefaultSlots}
	p, err := o.problem()
	if err != nil {
		return err
	}
	if p.MinMemory() > p.MGPU {
		return usageErrorf("export: no schedule fits --mem %s: an operation needs %s with every other activation away", o.Mem, instances.FormatSize(p.MinMemory()))
	}
	start, name, err := actmilp.BestHeuristic(p)
	if err != nil {
		return err
	}
	b, err := actBounds(context.Background(), p, o, nil, nil)
	if err != nil {
		return err
	}
	opts := actmilp.Options{Lower: float64(b.Best), MaxMemory: maxMem}
	if start.Feasible {
		opts.Upper = start.Report.Makespan
	}
	f, err := actmilp.Build(p, opts)
	if err != nil {
		return err
	}
	if start.Feasible {
		f.Model.Comments = append(f.Model.Comments, fmt.Sprintf("horizon: the %s schedule, %.17g s, validated by verify/timed", name, start.Report.Makespan))
	}
	return writeModelFile(io, problem, format, out, f.Model, f.Units)
}
