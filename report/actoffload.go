package report

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/memsched/memsched/dp"
	heur "github.com/memsched/memsched/heuristics/actoffload"
	"github.com/memsched/memsched/instances"
	act "github.com/memsched/memsched/instances/actoffload"
	leveract "github.com/memsched/memsched/lever/actoffload"
)

// ActOffload is the activation-offloading lever (001's Problem 1, SPEC §2): activations leave
// the GPU over the link after their forward and come back before their backward; the makespan
// of one iteration under M_GPU = the budget. Strategies: none (no offloading), greedy (001
// §4.2), dynprog (001 §5.3, DYNPROG with 500 slots, sizes rounded up), vdnn (001 §6.1, best
// threshold of both variants), exact (branch and bound over offload sets and link orders, small
// chains only; optimal among no-wait schedules when it finishes). Bounds: 001 Prop. 3 (compute,
// and twice the forced volume over β), the fractional relaxation of 001 §4 (fluid form), both
// relaxations, and the interruptible relaxation of 001 §5 solved by DYNPROG with sizes rounded
// down (a DP relaxation).
type ActOffload struct{}

// Name returns "act-offload".
func (ActOffload) Name() string { return "act-offload" }

// Skip needs a bandwidth.
func (ActOffload) Skip(in Input) string {
	if in.Bandwidth <= 0 {
		return "no bandwidth given (--bandwidth RATE)"
	}
	return ""
}

// actExactMaxOps bounds the chains Exact runs on (its search is exponential), and
// actExactNodes its node budget; with a time limit it also stops at actExactShare of the
// lever's share.
// Without a time limit (sweeps, certify --time-limit 0) it keeps to actExactMaxOpsUntimed.
const (
	actExactMaxOps        = 80
	actExactMaxOpsUntimed = 16
	actExactNodes         = 2_000_000
	actExactShare         = 0.15
)

// actBoundsShare is the most of the lever's share that ActBounds's tables (the windows, their
// staircase, the interruptible DP) get in certify.
const actBoundsShare = 0.4

// actStrategyRow runs one strategy of the registry (validated by verify/timed there) with
// certify's settings: DYNPROG with the default slots under o's memory limit and Stop channel
// (a table above the one or stopped by the other is a row with the reason), the exact search
// only on chains of at most actExactMaxOps operations, stopped at the lower bound lb or
// actExactNodes nodes.
func actStrategyRow(p *act.Problem, st leveract.Strategy, lb float64, o dp.ActOptions) (Row, *Bound, error) {
	row, _, b, err := actStrategyRun(p, st, lb, o, o.Stop, actExactMaxOpsUntimed)
	return row, b, err
}

// actStrategyRun is actStrategyRow with the validated schedule (nil when none); stop, when
// not nil, ends the strategy (leveract.Options.Stop: the heuristics before their next
// candidate, the exact search, which runs on chains of at most maxOps operations). The bound,
// when not nil, is one the strategy proved on the way (the peak split's).
func actStrategyRun(p *act.Problem, st leveract.Strategy, lb float64, o dp.ActOptions, stop <-chan struct{}, maxOps int) (Row, *heur.Result, *Bound, error) {
	row := Row{Strategy: st.Name}
	if st.Name == "exact" && p.L()+1 > maxOps {
		row.Note = fmt.Sprintf("not run: %d operations (exact search up to %d)", p.L()+1, maxOps)
		return row, nil, nil, nil
	}
	start := time.Now()
	out, err := st.Run(p, leveract.Options{DP: o, LowerBound: lb, MaxNodes: actExactNodes, Stop: stop})
	if why, ok := tableOutOfReach(err); ok {
		row.Note = why
		return row, nil, nil, nil
	}
	if err != nil {
		return row, nil, nil, fmt.Errorf("%s: %w", st.Name, err)
	}
	var bound *Bound
	if out.Bound != 0 {
		b := Bound{Name: "peak split", Kind: DPRelaxation, Value: out.Bound, Seconds: time.Since(start).Seconds(),
			Note: act.SplitCertificate}
		if math.IsInf(out.Bound, 1) {
			b.Value, b.Infeasible = 0, true
		}
		bound = &b
	}
	switch {
	case st.Name != "exact":
		row.Note = out.Status // the strategy's own word (the split's: optimal at its bound, or why it did not run)
	case out.Status == heur.Optimal.String():
		row.Note = "optimal among no-wait schedules"
	case out.Status == heur.NodeLimit.String():
		row.Note = "best found (node limit)"
	case out.Status == heur.Stopped.String():
		row.Note = "best found (stopped at its time share)"
	}
	r := out.Result
	if !r.Feasible {
		if row.Note == "" {
			row.Note = "no schedule of this strategy fits"
		}
		return row, nil, bound, nil
	}
	row.Feasible, row.Verified, row.Makespan, row.Peak, row.Timed = true, true, r.Report.Makespan, r.Report.Peak, r.Schedule
	return row, r, bound, nil
}

// ActSweepDPStages is the most operations on which a sweep runs DYNPROG and the interruptible
// bound at every budget: each takes seconds per budget beyond (ResNet-1001, 338 operations:
// 3.5–5 s at 2–3.5 GiB), and certify runs them at one budget on any chain.
const ActSweepDPStages = 200

// ActBounds returns 001 Prop. 3, the fractional relaxation, the whole-transfer windows, their
// staircase (where its table is within reach) and, with withDP, the interruptible
// relaxation (DYNPROG with sizes rounded down to 500 slots; never below the fractional one)
// under o's memory limit and Stop channel. The notes say which bounds were out of reach (a
// table above the memory limit) or stopped (o.Stop closed: on a 20 001-stage chain the
// windows take minutes).
func ActBounds(p *act.Problem, withDP bool, o dp.ActOptions) ([]Bound, []string, error) {
	frac := p.Fractional()
	if math.IsInf(frac, 1) {
		return []Bound{{Name: "fractional relaxation", Kind: Relaxation, Infeasible: true,
			Note: "even the fluid relaxation of 001 §4 has no schedule"}}, nil, nil
	}
	bounds := []Bound{
		{Name: "001 Prop. 3", Kind: Relaxation, Value: p.Prop3(), Note: "max(Σu, 2(M_peak − M_GPU)/β)"},
		{Name: "fractional relaxation", Kind: Relaxation, Value: frac, Note: "001 §4, fluid form (instances/actoffload)"},
	}
	var notes []string
	start := time.Now()
	w, err := p.WholeTransfersUntil(o.Stop)
	switch {
	case err != nil:
		return bounds, append(notes, fmt.Sprintf("bound: the whole-transfer windows (and their staircase) stopped at the end of the time share after %.1f s", time.Since(start).Seconds())), nil
	case math.IsInf(w, 1):
		bounds = append(bounds, Bound{Name: "whole-transfer windows", Kind: Relaxation, Infeasible: true, Seconds: time.Since(start).Seconds(),
			Note: "some operation needs more bytes away than all the activations of its window hold"})
	default:
		bounds = append(bounds, Bound{Name: "whole-transfer windows", Kind: Relaxation, Value: w, Seconds: time.Since(start).Seconds(),
			Note: "max_k Head[k] + Tail[k]: whole transfers on one link before and after each operation (instances/actoffload.WholeWindows)"})
	}
	if st, _ := ActStaircase(p, 0, true, o.Stop); st != nil {
		bounds = append(bounds, *st)
	}
	if !withDP {
		return bounds, notes, nil
	}
	start = time.Now()
	ib, err := dp.InterruptibleBound(p, o)
	if why, ok := tableOutOfReach(err); ok {
		return bounds, append(notes, "bound: the interruptible relaxation (DYNPROG) "+why), nil
	}
	if err != nil {
		return bounds, notes, err
	}
	b := Bound{Name: "interruptible relaxation", Kind: DPRelaxation, Value: ib, Seconds: time.Since(start).Seconds(),
		Note: "001 §5 by DYNPROG, sizes rounded down to 500 slots"}
	if math.IsInf(ib, 1) {
		b.Value, b.Infeasible = 0, true
	}
	return append(bounds, b), notes, nil
}

// ActStaircase is the staircase of the whole-transfer windows (Problem.Staircase) searched up
// to upper (0: Σu + 2Σ|x|/β), quick or not, with the tails it raised (for the event search's
// node bounds); nil where its table is out of reach or it was stopped before any decision.
func ActStaircase(p *act.Problem, upper float64, quick bool, stop <-chan struct{}) (*Bound, []float64) {
	if upper <= 0 {
		var all int64
		for _, x := range p.X {
			all += x
		}
		upper = p.Compute() + 2*float64(all)/p.Beta
	}
	start := time.Now()
	tails, v, ok := p.StaircaseTails(act.StaircaseOptions{Upper: upper, Stop: stop, Quick: quick})
	if !ok || math.IsInf(v, 1) {
		return nil, nil // the windows' own bound says infeasible
	}
	return &Bound{Name: "whole-transfer staircase", Kind: Relaxation, Value: v, Seconds: time.Since(start).Seconds(),
		Note: "one link meets every tight operation's need with whole offloads by its deadline T − Tail[k] (instances/actoffload.Staircase)"}, tails
}

// Run computes every strategy and bound.
func (ActOffload) Run(ctx context.Context, in Input) (LeverReport, error) {
	lr := LeverReport{Lever: "act-offload", Measure: "makespan"}
	if n := weightsNote(in); n != "" {
		lr.Notes = append(lr.Notes, n)
	}
	if activationBudget(in, in.Budget) <= 0 {
		lr.Bounds = []Bound{weightsFillBound(in)}
		return lr, nil
	}
	p, err := act.FromChain(in.Chain, activationBudget(in, in.Budget), in.Bandwidth)
	if err != nil {
		return lr, err
	}
	dpOpt := dp.ActOptions{MaxMemory: memoryLimit(in), Stop: ctx.Done()}
	bopt := dpOpt
	if in.TimeLimit > 0 {
		// The bounds' tables get at most actBoundsShare of the share: on a long chain the
		// windows alone would take it all, and the strategies none.
		bctx, cancel := context.WithTimeout(ctx, time.Duration(actBoundsShare*float64(in.TimeLimit)))
		defer cancel()
		bopt.Stop = bctx.Done()
	}
	bounds, notes, err := ActBounds(p, true, bopt)
	if err != nil {
		return lr, err
	}
	lr.Bounds, lr.Notes = bounds, append(lr.Notes, notes...)
	lb := 0.0
	for _, b := range lr.Bounds {
		lb = math.Max(lb, b.Value)
	}
	t0 := time.Now()
	var best *heur.Result
	bestName := ""
	for _, st := range leveract.Strategies {
		if st.Use&leveract.InCertify == 0 {
			continue
		}
		// Every strategy stops at the end of the share (the heuristics before their next
		// candidate), the exact search at actExactShare of it (and its node budget). The exact
		// search has nothing to find
		// once a bound meets the best row (the split's, typically).
		// The peak split's strategy neither, for the same reason: its search took the whole
		// share on a 20-stage random chain where greedy met Σu (certify --time-limit 20:
		// 6.6 s of a 6.6 s share, which the other levers could have had).
		if (st.Name == "exact" || st.Name == "split") && best != nil && best.Report.Makespan <= lb*(1+1e-9) {
			lr.Rows = append(lr.Rows, Row{Strategy: st.Name, Note: fmt.Sprintf("not run: the %s row is proven optimal", bestName)})
			continue
		}
		start := time.Now()
		stop := ctx.Done() // every strategy stops at the end of the share
		maxOps := actExactMaxOpsUntimed
		if st.Name == "exact" && in.TimeLimit > 0 {
			c, cancel := context.WithTimeout(ctx, time.Duration(actExactShare*float64(in.TimeLimit)))
			defer cancel()
			stop, maxOps = c.Done(), actExactMaxOps
		}
		row, r, b, err := actStrategyRun(p, st, lb, dpOpt, stop, maxOps)
		if err != nil {
			return lr, err
		}
		if b != nil && addBound(&lr, *b, "the peak split") && b.Value > lb {
			lb = b.Value // the exact search, after it, stops at it
		}
		row.Seconds = time.Since(start).Seconds()
		lr.Rows = append(lr.Rows, row)
		if r != nil && (best == nil || r.Report.Makespan < best.Report.Makespan) {
			best, bestName = r, st.Name
		}
	}
	var tails []float64
	if best != nil && best.Feasible && best.Report.Makespan > lb*(1+1e-9) {
		// The staircase with every backward pass (ActBounds ran the quick one); its tails
		// strengthen the event search's node bounds.
		st, t := ActStaircase(p, best.Report.Makespan, false, ctx.Done())
		tails = t
		if st != nil && st.Value > lb {
			st.Name += " (every backward pass)"
			if addBound(&lr, *st, "the staircase") {
				lb = st.Value
			}
		}
	}
	if in.TimeLimit > 0 {
		deadline := t0.Add(in.TimeLimit)
		if r := actLocal(ctx, in, p, &lr, best, lb); r != nil {
			best, bestName = r, "local"
		}
		if b, r := actEventBound(ctx, in, p, &lr, best, lb, tails, deadline); b > lb {
			lb = b
			if r != nil {
				best, bestName = r, "events"
			}
		}
		actMILP(ctx, in, p, &lr, best, bestName, lb, deadline)
	}
	return lr, nil
}

// actLocalShare is the share of the time limit the local search gets (heur.LocalSearch, at
// most actLocalEvals schedules): seconds where the exact searches cannot finish, and a better
// incumbent prunes them where they can.
const (
	actLocalShare = 0.1
	actLocalEvals = 200_000
)

// actLocal improves the best verified schedule by local search over link orders; a shorter
// schedule is the row "local" (validated by verify/timed) and is returned, else nil.
func actLocal(ctx context.Context, in Input, p *act.Problem, lr *LeverReport, best *heur.Result, lb float64) *heur.Result {
	if best == nil || !best.Feasible || best.Report.Makespan <= lb*(1+1e-9) {
		return nil
	}
	c, cancel := context.WithTimeout(ctx, time.Duration(actLocalShare*float64(in.TimeLimit)))
	defer cancel()
	start := time.Now()
	r, err := heur.LocalSearch(p, best, heur.LocalOptions{Seed: 1, MaxEvals: actLocalEvals, Stop: c.Done()})
	if err != nil {
		lr.Notes = append(lr.Notes, fmt.Sprintf("local search: %v", err))
		return nil
	}
	if r == best || r.Report.Makespan >= best.Report.Makespan {
		return nil
	}
	lr.Rows = append(lr.Rows, Row{Strategy: "local", Feasible: true, Verified: true, Makespan: r.Report.Makespan,
		Peak: r.Report.Peak, Seconds: time.Since(start).Seconds(), Timed: r.Schedule,
		Note: "local search over link orders from the best schedule (heuristics/actoffload.LocalSearch; validated by verify/timed)"})
	return r
}

// skipActEventSearch leaves the event search out (set by the tests of the MILP's path only).
var skipActEventSearch = false

// actEventGap is the relative gap of certify's first event search: it proves the best schedule
// within 0.9 % of the optimum (ratio ≤ 1.009) far sooner than the optimum itself.
const actEventGap = 0.009

// actEventBound runs the complete search over event sequences (heur.EventSearch) from the best
// verified schedule: first with the gap actEventGap, within half of what is left of the
// share, then, if that completed, exactly within 30 % of what is left then; the MILP gets the
// rest. A completed search is a bound
// (kind exhaustive search; exact when it ran without a gap); a schedule it finds below the
// best is a row "events", validated by verify/timed. It returns the best bound it proved (0 if
// none) and that schedule (nil if none).
func actEventBound(ctx context.Context, in Input, p *act.Problem, lr *LeverReport, best *heur.Result, lb float64, tails []float64, deadline time.Time) (float64, *heur.Result) {
	if n := p.L() + 1; skipActEventSearch || n > heur.EventMaxOps || best == nil || !best.Feasible || best.Report.Makespan <= lb*(1+1e-9) {
		return 0, nil
	}
	for _, b := range lr.Bounds {
		if b.Infeasible {
			return 0, nil
		}
	}
	states := heur.EventStatesWithin(memoryLimit(in) / 2)
	bound, incumbent := 0.0, best.Report.Makespan
	var found *heur.Result
	for _, gap := range []float64{actEventGap, 0} {
		left := time.Until(deadline)
		if left < time.Second/2 {
			break
		}
		if gap > 0 && incumbent <= lb*(1+gap) {
			continue // already proven within the gap (the staircase, say): go for the optimum
		}
		frac := 0.5 // the gap search: the MILP rarely closes what it leaves open
		if gap == 0 {
			frac = 0.3
		}
		c, cancel := context.WithTimeout(ctx, time.Duration(frac*float64(left)))
		start := time.Now()
		ev, err := heur.EventSearch(p, heur.EventOptions{Incumbent: incumbent, Gap: gap, Stop: c.Done(), MaxStates: states, Tail: tails})
		cancel()
		secs := time.Since(start).Seconds()
		if err != nil {
			lr.Notes = append(lr.Notes, fmt.Sprintf("event search: %v", err))
			return bound, found
		}
		if ev.Best != nil && ev.Best.Report.Makespan < incumbent {
			incumbent, found = ev.Best.Report.Makespan, ev.Best
			lr.Rows = append(lr.Rows, Row{Strategy: "events", Feasible: true, Verified: true, Makespan: ev.Best.Report.Makespan,
				Peak: ev.Best.Report.Peak, Seconds: secs, Timed: ev.Best.Schedule, Note: "found by the event search (validated by verify/timed)"})
		}
		if !ev.Complete {
			lr.Notes = append(lr.Notes, fmt.Sprintf("event search (gap %g): stopped after %.1f s, %d nodes", gap, secs, ev.Nodes))
			break
		}
		b := Bound{Name: "event search (exact Problem 1)", Kind: Exhaustive, Value: ev.Bound, Seconds: secs, Exact: gap == 0,
			Note: fmt.Sprintf("complete search over event sequences (heuristics/actoffload.EventSearch), %d nodes", ev.Nodes)}
		if gap > 0 {
			b.Note += fmt.Sprintf(", pruned at a relative gap of %g: every schedule is ≥ the best over %g", gap, 1+gap)
		}
		if !addBound(lr, b, "event search: its bound") {
			break
		}
		bound = math.Max(bound, ev.Bound)
	}
	return bound, found
}

// tableOutOfReach says why a dynamic program did not finish when err is one of the guards'
// (a table above the memory limit, or stopped at the end of the time share).
func tableOutOfReach(err error) (string, bool) {
	var tl *dp.TooLargeError
	switch {
	case errors.Is(err, dp.ErrStopped):
		return "stopped at the end of the lever's time share", true
	case errors.As(err, &tl):
		return "not run: " + tl.Error(), true
	}
	return "", false
}

// weightsFillBound is the infeasibility proof when the resident weights alone fill the budget.
func weightsFillBound(in Input) Bound {
	return Bound{Name: "resident weights", Kind: Relaxation, Infeasible: true, Exact: true,
		Note: fmt.Sprintf("the chain's %s of weights fill the budget %s", instances.FormatSize(chainWeights(in.Chain)), instances.FormatSize(in.Budget))}
}
