package report

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/verify/oracle"
)

// creditRun is the link-credit bound (dp.LinkCredit, global: every strict schedule of the
// combined model) computed beside the lever's strategies: on DenseNet-201 at 25 % its fluid
// table takes 7.4 s, which a 10 s share left to it only after pofo and the heuristics had
// taken theirs (certify's combined lever stopped it at 1.201). It is started as soon as a
// verified makespan is at hand (the remat lever's sequence replayed in this model) and read
// after the strategies (wait); the two share the lever's memory limit, half each.
type creditRun struct {
	done   chan struct{}
	cancel context.CancelFunc
	creditResult
}

// creditResult is a link-credit computation's outcome: the bound when there is one (ok), the
// notes otherwise, and whether its table was out of reach of its memory or breakpoint caps
// (then the whole memory limit and a tighter upper end may still reach it).
type creditResult struct {
	bound      Bound
	ok         bool
	notes      []string
	outOfReach bool
}

// startLinkCredit starts the link credit below upper (a verified makespan of this model at
// budget) within ctx, its tables capped at maxMemory.
func startLinkCredit(ctx context.Context, in Input, budget int64, upper float64, maxMemory int64) *creditRun {
	ctx, cancel := context.WithCancel(ctx)
	r := &creditRun{done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(r.done)
		r.creditResult = linkCredit(ctx, in, budget, upper, maxMemory, true)
	}()
	return r
}

// abandon stops the computation and waits for it to end (the lever failed: its tables must
// not outlive it, holding half the memory limit until the share's deadline).
func (r *creditRun) abandon() {
	r.cancel()
	<-r.done
}

// wait adds the bound to lr once it is computed (or its notes: stopped, out of reach), as
// finish makes it with lr's fastest feasible row.
func (r *creditRun) wait(ctx context.Context, in Input, lr *LeverReport, budget int64) {
	res := r.finish(ctx, in, budget, bestFeasible(lr.Rows, 0))
	if res.ok {
		addBound(lr, res.bound, "link credit")
	}
	lr.Notes = append(lr.Notes, res.notes...)
}

// finish waits for the computation (stopping it when ctx ends first) and completes it with
// best, the fastest verified makespan now at hand (0: none). A table out of reach of its half
// of the memory limit is built again, as linkCredit builds it, with all of the limit and best
// as its upper end — which is how it was built before it ran beside the strategies:
// DenseNet-201 at 10 %, 12 GB/s needs 62 M breakpoints from pofo's makespan, more than half
// the limit holds, and without this the 60 s zoo table fell from the link credit's 127.46 ms
// to Σu (104.97 ms, bracket 1.254); a thinned bound in hand stands when that one does not end.
// A bound just below best gets closeBound's probe.
func (r *creditRun) finish(ctx context.Context, in Input, budget int64, best float64) creditResult {
	select {
	case <-r.done:
	case <-ctx.Done():
		r.cancel()
		<-r.done
	}
	r.cancel()
	res := r.creditResult
	if !res.outOfReach || ctx.Err() != nil || best == 0 {
		if res.ok {
			res.bound = closeBound(ctx, in, budget, res.bound, best)
		}
		return res
	}
	notes := make([]string, 0, len(res.notes))
	for _, n := range res.notes {
		notes = append(notes, n+"; built again after the strategies with all of the memory limit")
	}
	again := linkCredit(ctx, in, budget, best, memoryLimit(in), !res.ok)
	again.notes = append(notes, again.notes...)
	if !again.ok && res.ok {
		again.bound, again.ok = res.bound, true
	}
	return again
}

// closeBound decides whether best, the fastest verified makespan, is optimal when the link
// credit b, computed beside the strategies from an earlier upper end, ended within its
// whole-tensor bisection's 10⁻⁶ below it: the bisection's last probe, just below the upper end
// it was given, can prove that end optimal but not a faster schedule found after it (BERT, 24
// blocks, at 10 %, 12 GB/s: "optimum in [7159.21 ms, 7159.21 ms]", 7159.2077 against pofo's
// 7159.2117 ms). One more run from the bound to best, its fluid table pruned at the bound
// (nothing fits below it), whose last probe lies 5·10⁻¹⁰ below best, settles it; its bound
// replaces b's value when higher.
func closeBound(ctx context.Context, in Input, budget int64, b Bound, best float64) Bound {
	v := b.Value
	if best == 0 || ctx.Err() != nil || v >= best*(1-closeTol) || v < best*(1-2e-6) {
		return b // nothing to close, proven already, or farther than the bisection's tolerance
	}
	start := time.Now()
	r, err := dp.LinkCredit(in.Chain, budget, in.Bandwidth, dp.LinkCreditOptions{Upper: best, Prune: v, Whole: true,
		Exact: dp.ExactOptions{MaxBreakpoints: in.MaxBreakpoints, MaxMemory: memoryLimit(in), Stop: ctx.Done()}})
	if err != nil || r.Bound <= v || r.Bound > best {
		return b // stopped, out of reach or no higher: the bound stands
	}
	b.Value = r.Bound
	b.Seconds += time.Since(start).Seconds()
	b.Note += fmt.Sprintf("; then a probe just below the fastest schedule (%s), found after the credit started", instances.FormatDuration(best))
	return b
}

// LinkCreditRun is the link-credit bound (dp.LinkCredit: global, every strict schedule of the
// combined model) computed in the background the way certify's combined lever computes it —
// a thinned table, then the exact one with its whole-tensor probes (linkCredit) — for a
// caller that runs the lever's strategies itself (the remat-offload command).
type LinkCreditRun struct {
	run    *creditRun
	in     Input
	budget int64
}

// StartLinkCredit starts the link credit at budget below upper, a verified makespan of the
// combined model there, within ctx, its tables capped at maxMemory (the caller's other work
// keeps the rest of in's memory limit); in gives the chain, the bandwidth and the caps.
func StartLinkCredit(ctx context.Context, in Input, budget int64, upper float64, maxMemory int64) *LinkCreditRun {
	return &LinkCreditRun{run: startLinkCredit(ctx, in, budget, upper, maxMemory), in: in, budget: budget}
}

// Wait returns the bound (ok) and the notes (stopped, out of reach, built again) once the
// computation ends, stopping it when ctx ends first; best is the fastest verified makespan at
// hand now (0: none), the upper end of a table built again with all of in's memory limit and
// of the probe that can prove it optimal.
func (r *LinkCreditRun) Wait(ctx context.Context, best float64) (b Bound, ok bool, notes []string) {
	res := r.run.finish(ctx, r.in, r.budget, best)
	return res.bound, res.ok, res.notes
}

// Abandon stops the computation and waits for it to end.
func (r *LinkCreditRun) Abandon() { r.run.abandon() }

// closeTol is how close to a verified schedule a bound proves it optimal (Summarize's 10⁻⁹).
const closeTol = 1e-9

// linkCreditBound adds the link-credit bound to lr, using the fastest verified row as its
// upper end (after the strategies, on the whole memory limit); nothing when no row is
// feasible. thinFirst: linkCredit's thinned pass first (not when its bound is already in lr).
func linkCreditBound(ctx context.Context, in Input, lr *LeverReport, budget int64, thinFirst bool) {
	upper := 0.0
	for _, r := range lr.Rows {
		if r.Feasible && (upper == 0 || r.Makespan < upper) {
			upper = r.Makespan
		}
	}
	if upper == 0 {
		return
	}
	r := linkCredit(ctx, in, budget, upper, memoryLimit(in), thinFirst)
	lr.Notes = append(lr.Notes, r.notes...)
	if r.ok {
		addBound(lr, r.bound, "link credit")
	}
}

// linkCredit computes the link-credit bound below upper: the bound, whether there is one, and
// the notes (no time, stopped, out of reach — a table refused or stopped is a note, never an
// error).
//
// Two passes (one, the exact, without thinFirst): first the fluid table thinned by
// dp.LinkCreditThinOfSumU of Σu (LinkCreditOptions.Thin: a lower, still global, bound in a
// fraction of the time), then — unless that bound already meets upper, which the exact one
// cannot pass — the exact table with its whole-tensor probes, pruned at the thinned bound plus
// dp.LinkCreditExactMargin thinnings (the cutoff sets its size), whose bound replaces it when
// it ends. On DenseNet-201 at 10 %, 12 GB/s the exact table (59.5 M breakpoints) takes 7.7 s
// on 2 idle cores and 16–17 s beside the strategies, so certify's 10 s share ended with Σu
// (bracket 1.255); thinned by 10.5 µs it takes 3.1 s for 127.28 ms against the exact
// 127.46 ms. On chains whose exact table is fast the first pass costs a fraction of it (it is
// never larger).
func linkCredit(ctx context.Context, in Input, budget int64, upper float64, maxMemory int64, thinFirst bool) creditResult {
	if ctx.Err() != nil {
		return creditResult{notes: []string{"link credit: not run, no time left in its share"}}
	}
	start := time.Now()
	var res creditResult
	exactUpper := upper
	thin := dp.LinkCreditThinOfSumU * in.Chain.ComputeTime()
	if thinFirst && thin > 0 {
		r, err := dp.LinkCredit(in.Chain, budget, in.Bandwidth, dp.LinkCreditOptions{Upper: upper, Thin: thin,
			Exact: dp.ExactOptions{MaxBreakpoints: in.MaxBreakpoints, MaxMemory: maxMemory, Stop: ctx.Done()}})
		if res = creditOutcome(r, err, start); res.ok {
			how := fmt.Sprintf("%s; thinned table (frontiers within %.3g µs, %.2g of Σu)", dp.LinkCreditCertificate, thin*1e6, dp.LinkCreditThinOfSumU)
			// With no table at all (upper a few ulps below Σu) the exact pass says so.
			if r.Stats.Breakpoints > 0 && res.bound.Value >= upper*(1-1e-12) {
				res.bound.Note = how + ": it meets the fastest schedule at hand, as the exact table would"
				return res
			}
			res.bound.Note = how + ": the exact table did not end"
			exactUpper = min(upper, res.bound.Value+exactMargin*thin)
			if ctx.Err() != nil {
				res.notes = append(res.notes, fmt.Sprintf("link credit: the exact table not run, no time left after the thinned one (%.1f s)", time.Since(start).Seconds()))
				return res
			}
		} else if !res.outOfReach {
			return res // stopped, out of scope or dropped: the exact table fares no better
		}
	}
	// The whole-tensor probes get half of what is left of the share (the exhaustive search
	// and the relaxation MILP come after); the fluid table all of it.
	wholeStop := ctx.Done()
	if dl, ok := ctx.Deadline(); ok {
		c, cancel := context.WithTimeout(ctx, time.Until(dl)/2)
		defer cancel()
		wholeStop = c.Done()
	}
	exactStart := time.Now()
	// Pruned at the thinned bound plus a margin (dp.LinkCreditExactMargin): where nothing fits
	// below that, it is the fluid bound; the whole-tensor probes still search up to upper.
	r, err := dp.LinkCredit(in.Chain, budget, in.Bandwidth, dp.LinkCreditOptions{Upper: upper, Prune: exactUpper, Whole: true, WholeStop: wholeStop,
		Exact: dp.ExactOptions{MaxBreakpoints: in.MaxBreakpoints, MaxMemory: maxMemory, Stop: ctx.Done()}})
	ex := creditOutcome(r, err, exactStart)
	if ex.ok && exactUpper < upper {
		ex.bound.Note = fmt.Sprintf("%s; the exact fluid table pruned at %s (the thinned bound + %g × %.3g µs)", ex.bound.Note, instances.FormatDuration(exactUpper), exactMargin, thin*1e6)
	}
	if ex.ok || !res.ok {
		if ex.ok {
			ex.bound.Seconds = time.Since(start).Seconds()
		}
		return ex
	}
	// The thinned bound stands; the exact table's fate is a note (out of reach: built again
	// after the strategies, with all of the memory limit).
	for _, n := range ex.notes {
		res.notes = append(res.notes, n+" (the thinned table's bound stands)")
	}
	res.outOfReach = ex.outOfReach
	return res
}

// exactMargin is dp.LinkCreditExactMargin (a variable for the tests).
var exactMargin float64 = dp.LinkCreditExactMargin

// creditOutcome turns dp.LinkCredit's answer, started at start, into a creditResult.
func creditOutcome(r dp.LinkCreditResult, err error, start time.Time) creditResult {
	var be *dp.BreakpointError
	var tl *dp.TooLargeError
	var se *dp.LinkCreditScopeError
	switch {
	case errors.As(err, &se):
		return creditResult{notes: []string{"link credit: not run: " + se.Reason()}}
	case errors.Is(err, dp.ErrStopped):
		return creditResult{notes: []string{fmt.Sprintf("link credit: stopped at the end of its time share (%.1f s)", time.Since(start).Seconds())}}
	case errors.As(err, &be), errors.As(err, &tl):
		return creditResult{notes: []string{"link credit: out of reach: " + err.Error()}, outOfReach: true}
	case err != nil:
		// ErrLinkCreditUpper: the relaxation contradicts a verified schedule — a bug, never a bound.
		return creditResult{notes: []string{"link credit: " + err.Error() + " (dropped)"}}
	}
	note := dp.LinkCreditCertificate
	if r.Stats.Breakpoints > 0 || r.Probes > 0 {
		note += fmt.Sprintf("; C_FL with phase budgets (%d breakpoints), fluid credits %s, whole tensors %d tables", r.Stats.Breakpoints, instances.FormatDuration(r.Fluid), r.Probes)
	}
	if r.DeficitProbes > 0 {
		note += fmt.Sprintf(", the link's deficit %d table%s", r.DeficitProbes, map[bool]string{true: "", false: "s"}[r.DeficitProbes == 1])
	}
	return creditResult{bound: Bound{Name: "link credit", Kind: DPRelaxation, Value: r.Bound, Seconds: time.Since(start).Seconds(),
		Note: note}, ok: true}
}

// strictShare is the part of what is left of the lever's share the exhaustive search of
// strict schedules may take (its configurations capped by oracle.ToolStrictNodes and
// oracle.ToolStrictNodesFine).
const strictShare = 0.5

// strictSearch runs the exhaustive search of strict schedules (oracle.Strict: the exact
// optimum of the combined model, global) on chains of at most oracle.MaxStrictStages stages,
// pruned by the fastest verified row: its schedule, when faster, is the row "exhaustive", and
// a search that ends proves its makespan — or the best row's, when it finds nothing faster —
// a lower bound of kind exhaustive search. Stopped by the share or its node cap, it adds a
// note and what it proved by then (strictPartial); it is not run once a global bound meets
// the best row.
func strictSearch(ctx context.Context, in Input, lr *LeverReport, budget int64) {
	if in.Chain.Len() > oracle.MaxStrictStages {
		return
	}
	upper := 0.0
	for _, r := range lr.Rows {
		if r.Feasible && (upper == 0 || r.Makespan < upper) {
			upper = r.Makespan
		}
	}
	// A global bound that meets the best row leaves the search nothing to prove: it would only
	// take time (on real profiles, whose durations share no small tick, it can pass its 2 Mi
	// configurations where the link credit has proven the row: GPT-2 of 4 blocks, 7–10 s).
	for _, b := range lr.Bounds {
		if upper > 0 && !b.Infeasible && (b.Scope == "" || b.Scope == Global) && upper <= b.Value*(1+1e-9) {
			lr.Notes = append(lr.Notes, "exhaustive search: not run: the best row meets the "+b.Name+" bound")
			return
		}
	}
	stop := ctx.Done()
	if dl, ok := ctx.Deadline(); ok {
		c, cancel := context.WithTimeout(ctx, time.Duration(strictShare*float64(time.Until(dl))))
		defer cancel()
		stop = c.Done()
	}
	start := time.Now()
	r, err := oracle.Strict(in.Chain, budget, in.Bandwidth, oracle.StrictOptions{Upper: upper, MaxNodes: oracle.ToolStrictNodes, MaxNodesFine: oracle.ToolStrictNodesFine,
		MaxMemory: memoryLimit(in), Stop: stop})
	secs := time.Since(start).Seconds()
	var limit *oracle.StrictLimitError
	var stopped *oracle.StrictStoppedError
	switch {
	case errors.As(err, &stopped):
		why := fmt.Sprintf("stopped at its time share after %.1f s, %d configurations", secs, stopped.Nodes)
		lr.Notes = append(lr.Notes, "exhaustive search: "+why)
		strictPartial(lr, stopped.Bound, secs, why)
		return
	case errors.As(err, &limit):
		why := fmt.Sprintf("%s (%.1f s)", limit.Reason(), secs)
		lr.Notes = append(lr.Notes, "exhaustive search: "+why)
		strictPartial(lr, limit.Bound, secs, why)
		return
	case err != nil:
		lr.Notes = append(lr.Notes, "exhaustive search: not run: "+err.Error())
		return
	}
	b := Bound{Name: "exhaustive search", Kind: Exhaustive, Exact: true, Seconds: secs,
		Note: fmt.Sprintf("oracle.Strict: every strict schedule of the combined model (any 004 sequence, any transfers on the link; %d configurations); global", r.Nodes)}
	switch {
	case r.Feasible:
		lr.Rows = append(lr.Rows, Row{Strategy: "exhaustive", Feasible: true, Verified: true, Makespan: r.Report.Makespan,
			Peak: r.Report.Peak, Seconds: secs, Note: "the optimum of the strict combined model (oracle.Strict), validated by verify/combined"})
		b.Value = r.Report.Makespan
	case r.NoBetter:
		b.Value = upper
		b.Note += ": nothing faster than the best row"
	default:
		b.Infeasible = true
	}
	addBound(lr, b, "exhaustive search")
}

// strictPartial adds what a stopped exhaustive search proved (oracle.StrictLimitError's Bound:
// A*'s least priority queued, which no schedule it had not reached beats) as a global bound of
// kind exhaustive search, not exact.
func strictPartial(lr *LeverReport, v, secs float64, why string) {
	if v <= 0 {
		return
	}
	addBound(lr, Bound{Name: "exhaustive search (stopped)", Kind: Exhaustive, Value: v, Seconds: secs,
		Note: "oracle.Strict stopped, " + why + ": every strict schedule it had not reached takes at least this (A*'s least priority queued); global"}, "exhaustive search (stopped)")
}
