package report

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/memsched/memsched/dp"
	heur "github.com/memsched/memsched/heuristics/rematoffload"
	"github.com/memsched/memsched/instances"
	leverro "github.com/memsched/memsched/lever/rematoffload"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify/combined"
)

// RematOffload is the lever of rematerialization and activation offloading together (003's
// POFO, SPEC §6): segments recomputed or stored, their inputs kept or offloaded on one link.
// Strategies: the registry's (lever/rematoffload: pofo, remat-then-offload,
// offload-then-remat), each plan re-timed under strict timing and validated by
// verify/combined; the makespan reported is the strict one. pofo refines its slots while
// RematOffloadTime allows (see pofoRefined). Bounds: Σ(u_f+u_b), global; on chains of at most
// rematOffloadExactStages stages with β·u a whole number of bytes, the optimum of the class in
// the fluid model without the turn's idle (dp.Combined exact), which bounds the class's strict
// schedules only (Scope Class) — not the other levers' schedules, which are strict schedules
// of the combined model too (a remat sequence is one without transfers): it never makes a
// ratio, "optimal" or "none fits" (Summarize).
type RematOffload struct{}

// Name returns "remat-offload".
func (RematOffload) Name() string { return "remat-offload" }

// Skip needs a bandwidth.
func (RematOffload) Skip(in Input) string {
	if in.Bandwidth <= 0 {
		return "no bandwidth given (--bandwidth RATE)"
	}
	return ""
}

// RematOffloadTime is the time certify gives the combined DP at one budget: pofo starts
// coarse and doubles its slots, on a coarse link grid and then on the full one, while the
// next run is expected to finish within it (pofoRefined); a run still going at the end is
// stopped.
const RematOffloadTime = 10 * time.Second

// rematOffloadExactStages bounds the chains on which certify runs the DP in bytes.
const rematOffloadExactStages = 8

// pofoFirstSlots is the coarsest slot count pofoRefined tries, pofoLinkSlots the link grid
// of its first pass; pofoMaxStates caps the states of each of its runs.
const (
	pofoFirstSlots  = 50
	pofoSlotsFactor = 8
	pofoLinkSlots   = 25
	pofoMaxStates   = 4_000_000
	// pofoTie is how far above the fastest fluid makespan so far a run's plan may be: the
	// same tolerance as the convergence test's 0.1 %.
	pofoTie = 1e-3
)

// Run computes every strategy and bound.
func (RematOffload) Run(ctx context.Context, in Input) (LeverReport, error) {
	t0 := time.Now() // the share counts from here, as the other levers' MILPs do
	budget := activationBudget(in, in.Budget)
	lr, err := rematOffloadAt(ctx, in, budget, RematOffloadTime)
	if err != nil || in.TimeLimit <= 0 || budget <= 0 {
		return lr, err
	}
	comboMILP(ctx, in, &lr, budget, t0.Add(in.TimeLimit))
	return lr, nil
}

// rematOffloadAt is the lever at one activation budget, pofo given limit.
func rematOffloadAt(ctx context.Context, in Input, budget int64, limit time.Duration) (LeverReport, error) {
	lr := LeverReport{Lever: "remat-offload", Measure: "makespan"}
	if n := weightsNote(in); n != "" {
		lr.Notes = append(lr.Notes, n)
	}
	c, beta := in.Chain, in.Bandwidth
	lr.Bounds = append(lr.Bounds, Bound{Name: "Σ(u_f+u_b)", Kind: Relaxation, Value: c.ComputeTime(),
		Note: "every stage's forward and backward once, no recomputation, no idle (any schedule)"})
	if budget <= 0 {
		lr.Bounds = []Bound{weightsFillBound(in)}
		return lr, nil
	}
	if c.Len() <= rematOffloadExactStages {
		start := time.Now()
		r, err := dp.Combined(c, budget, beta, dp.CombinedOptions{Exact: true, Inner: dp.InnerExact, FreeTurn: true, MaxStates: pofoMaxStates})
		switch {
		case err != nil:
			lr.Notes = append(lr.Notes, "bound: the class optimum in bytes is out of reach: "+err.Error())
		case !r.ExactLink:
			lr.Notes = append(lr.Notes, "bound: the class optimum needs β·u to be a whole number of bytes for every operation")
		default:
			b := Bound{Name: "class optimum, fluid, free turn", Kind: DPRelaxation, Scope: Class, Seconds: time.Since(start).Seconds(),
				Note: "dp.Combined in bytes: the combined class's optimum in the fluid model without the turn's idle (a relaxation of strict timing); bounds the strict schedules of the class only, not other levers' schedules (docs/remat-offload.md)"}
			if r.Feasible {
				b.Value = r.Fluid.Makespan
			} else {
				b.Infeasible = true
			}
			lr.Bounds = append(lr.Bounds, b)
		}
	}
	if dl, ok := ctx.Deadline(); ok {
		// pofo refines within 60 % of what is left of the share at most: the heuristics and
		// the relaxation MILP run after it, inside the same share (a 300-block GPT-2 gave
		// pofo the whole share and the heuristics nothing).
		if l := time.Until(dl) * 6 / 10; l < limit {
			limit = max(l, 0)
		}
	}
	remat, rematNote := rematCandidates(in, budget, time.Now().Add(limit/2))
	// The link credit runs beside the strategies (creditRun), from the best verified makespan
	// at hand before the strategies that take what is left of the share (pofo, the direct
	// searches): the quick heuristics run first for it (a tighter upper end halves the credit's
	// table: 7 s against 15 s on DenseNet-201 at 25 %), the rows keep the registry's order.
	// Each side gets half the memory limit.
	var credit *creditRun
	rematUp := rematUpper(c, budget, beta, remat)
	cs := &comboStrategies{in: in, budget: budget, limit: limit, remat: remat, rematNote: rematNote, maxMemory: memoryLimit(in)}
	// The act-offload lever's schedule first, within a quarter of the share: it is at hand
	// (the conversion and one replay), it is the schedule that keeps this lever from being
	// behind that one, and as the strategies' upper end and sequence-offload's seed it
	// prunes them (a 400-stage chain at 2 GiB: act-offload's 4062.93 ms, optimal, was never
	// reached, while remat-then-offload took the whole share for 4341 ms).
	actRow, actSch, actOK := actOffloadRowWithin(ctx, in, budget)
	if actOK && actRow.Feasible {
		cs.upper = actRow.Makespan
		cs.seeds = append(cs.seeds, actSch)
		if rematUp == 0 || actRow.Makespan < rematUp {
			rematUp = actRow.Makespan
		}
	}
	for _, pass := range []bool{true, false} {
		if !pass && credit == nil && ctx.Err() == nil {
			if upper := bestFeasible(lr.Rows, rematUp); upper > 0 {
				cs.maxMemory /= 2
				credit = startLinkCredit(ctx, in, budget, upper, cs.maxMemory)
			}
		}
		for _, st := range leverro.Strategies {
			if st.Quick() == pass {
				if err := cs.run(ctx, st, &lr); err != nil {
					if credit != nil {
						credit.abandon()
					}
					return lr, err
				}
			}
		}
	}
	sortRows(lr.Rows)
	if actOK {
		lr.Rows = append(lr.Rows, actRow)
	}
	if credit != nil {
		credit.wait(ctx, in, &lr, budget)
	} else {
		linkCreditBound(ctx, in, &lr, budget, true)
	}
	hints := slices.Clone(cs.remat)
	for _, sch := range cs.seeds {
		hints = append(hints, sch.Sequence())
	}
	keptBound(ctx, in, &lr, budget, limit, hints)
	strictSearch(ctx, in, &lr, budget)
	return lr, ctx.Err()
}

// actOffloadRowWithin is actOffloadRow within a quarter of what is left of ctx's share: the
// conversion and its replay do not look at a clock (0.9 s on a 20 001-stage chain, whose
// share can be 3.8 s; 35 s while they were quadratic), so they run beside the lever and are
// abandoned at the end — the row then says so, and the goroutine ends on its own (it only
// reads its inputs). It also returns the schedule (a seed of sequence-offload).
func actOffloadRowWithin(ctx context.Context, in Input, budget int64) (Row, *schedule.Combined, bool) {
	if ctx.Err() != nil {
		if lr := in.Earlier["act-offload"]; lr == nil {
			return Row{}, nil, false
		}
		return Row{Strategy: "act-offload's", Note: "not run: the lever's time share was spent"}, nil, true
	}
	type result struct {
		row Row
		sch *schedule.Combined
		ok  bool
	}
	done := make(chan result, 1)
	go func() {
		row, sch, ok := actOffloadRow(in, budget)
		done <- result{row, sch, ok}
	}()
	var timeout <-chan time.Time // nil without a deadline: never
	if dl, ok := ctx.Deadline(); ok {
		t := time.NewTimer(time.Until(dl) / 4)
		defer t.Stop()
		timeout = t.C
	}
	stopped := Row{Strategy: "act-offload's", Note: "stopped at the end of its part of the lever's time share while the act-offload lever's schedule was replayed in this model"}
	select {
	case r := <-done:
		return r.row, r.sch, r.ok
	case <-ctx.Done():
		return stopped, nil, true
	case <-timeout:
		return stopped, nil, true
	}
}

// actOffloadRow is the act-offload lever's best schedule, when it ran earlier in this
// certification (Input.Earlier), as a schedule of the combined model (rematoffload.FromTimed,
// verify/combined): a row "act-offload's", or, where the two models differ (004 counts the
// loss gradient δ^{L+1} from the start, 001 from B_L), a row saying why it does not fit.
func actOffloadRow(in Input, budget int64) (Row, *schedule.Combined, bool) {
	lr := in.Earlier["act-offload"]
	if lr == nil || in.WeightsResident && chainWeights(in.Chain) > 0 && activationBudget(in, in.Budget) != budget {
		return Row{}, nil, false
	}
	var best *Row
	for i := range lr.Rows {
		r := &lr.Rows[i]
		if r.Feasible && r.Timed != nil && (best == nil || r.Makespan < best.Makespan) {
			best = r
		}
	}
	if best == nil {
		return Row{}, nil, false
	}
	row := Row{Strategy: "act-offload's"}
	var err error
	for _, mode := range []heur.Shift{heur.Earlier, heur.Mixed, heur.Later} {
		var sch *schedule.Combined
		if sch, err = heur.FromTimedShift(in.Chain, best.Timed, in.Bandwidth, mode); err != nil {
			continue
		}
		var rep *combined.Report
		if rep, err = combined.Check(in.Chain, budget, in.Bandwidth, sch); err == nil {
			row.Feasible, row.Verified, row.Makespan, row.Peak = true, true, rep.Makespan, rep.Peak
			row.Note = fmt.Sprintf("the act-offload lever's %s schedule (no recomputation), valid in this model (verify/combined)", best.Strategy)
			return row, sch, true
		}
	}
	row.Note = fmt.Sprintf("the act-offload lever's %s schedule (%s) is not a schedule of this model: %v", best.Strategy, instances.FormatDuration(best.Makespan), err)
	return row, nil, true
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// pofoRefined refines the combined DP's grid in two passes within limit and returns the
// shortest strict schedule found, with a note naming the grid it came from.
//
// The first pass puts the queued and backlogged bytes on a grid of pofoLinkSlots
// (CombinedOptions.LinkSlots, a restriction) and the second runs the full grid; each starts
// at pofoFirstSlots slots and doubles them (up to pofoSlotsFactor × slots, 0: dp.DefaultSlots)
// while the next run is expected to end by the deadline — a run takes about 2.5 times the
// previous one — and until two doublings of its own move the makespan by less than 0.1 %.
// Every run gets the fastest fluid makespan found so far, raised by pofoTie, as its incumbent
// (CombinedOptions.Incumbent): it prunes with it and answers only with a plan below it. A run
// stopped by the state cap or the deadline ends its pass. Why both grids: the coarse link
// grid keeps the states few where the link cannot keep up (DenseNet-201 at 2326 MiB,
// 12 GB/s: 3200 slots in 4 s, 0.84 % above the finest full-grid run, where the full grid
// reaches 200 slots in 10 s, 1.6 % above); the full grid is needed where offloading pays
// (ResNet-101 at 1730 MiB: 5 % faster than the link grid's). Slots matter more here than
// for C_MP: a plan that fills the budget to the last MiB, as offloading plans do, is lost to
// rounding with coarse slots (docs/remat-offload.md, "Performance").
//
// Then pofoDerated plans for slower links within a third of limit more (a plan that expects
// less of the link is often faster under strict timing).
//
// Each run weighs remat (rematCandidates) against its plan by strict makespan, so that the row
// is never slower than rematerialization alone, whatever the slots.
//
// It also returns the schedules of the other runs whose compute sequences differ from the
// best's, fastest first under strict timing (sequence-offload's seeds: another run's sequence
// can take its transfers better — ResNet-50 at 10 %, 12 GB/s: the best run's sequence gave
// 113.02 ms, another slot count's 112.44 ms).
func pofoRefined(ctx context.Context, st leverro.Strategy, c *instances.Chain, budget int64, beta float64, slots int, limit time.Duration, remat []schedule.Sequence) (leverro.Outcome, string, []*schedule.Combined, error) {
	if slots <= 0 {
		slots = dp.DefaultSlots
	}
	slots *= pofoSlotsFactor
	deadline := time.Now().Add(limit)
	var best pofoBest
	var notes []string
	for _, link := range []int{pofoLinkSlots, 0} {
		if ctx.Err() != nil || !time.Now().Before(deadline) {
			break
		}
		note, err := pofoPass(ctx, st, c, budget, beta, slots, link, deadline, remat, &best)
		if err != nil {
			return best.out, "", nil, err
		}
		notes = append(notes, note)
	}
	// A third of limit more, within the share, for the plans for slower links: taken from the
	// passes instead, it cost DenseNet-121 at 10 %, 12 GB/s the full grid's 1600 slots (85.90
	// against 85.69 ms) where no slower link's plan was faster.
	derated := time.Now().Add(limit / 3)
	if dl, ok := ctx.Deadline(); ok && dl.Before(derated) {
		derated = dl
	}
	if note, err := pofoDerated(ctx, st, c, budget, beta, slots, derated, remat, &best); err != nil {
		return best.out, "", nil, err
	} else if note != "" {
		notes = append(notes, note)
	}
	if len(notes) == 0 {
		return best.out, "not run: no time left in the lever's share", nil, nil
	}
	if !best.out.Feasible && best.runs == 0 {
		// Not one run ended: nothing is known of this budget (a 400-stage chain's first run
		// of 50 slots outlasts a 35 s share).
		return best.out, "stopped at the end of its time before its first run ended (" + strings.Join(notes, "; ") + ")", nil, nil
	}
	if !best.out.Feasible {
		return best.out, "no plan fits (" + strings.Join(notes, "; ") + ")", nil, nil
	}
	return best.out, fmt.Sprintf("DP with %s (%s)", best.grid, strings.Join(notes, "; ")), best.others(), nil
}

// pofoDerated plans again with slower links (leverro.SlowerLinks, Options.PlanBandwidth), each plan
// re-timed, polished and checked at β, until deadline: for the first rate from the most slots
// the full-grid pass ended with, doubling while the next run is expected to end in time (as
// pofoPass), then the other rates at the last slots reached. A faster schedule becomes the
// best; every one is kept (a seed of sequence-offload). Why: the fluid model lets bytes cross
// progressively, so its optimum at β overrates what whole tensors on one link can do; a plan
// that expects less of the link leaves it slack. On the full grid: on the link grid (25) the
// plans for a slower link were slower (DenseNet-121 above at 3200 slots: 83.56 ms at 0.7β,
// 83.40 ms at β), and on the full grid they are the cheaper runs (fewer bytes queued: 1.6 s
// against 4.2 s there). It returns a note on what it ran ("" when nothing).
func pofoDerated(ctx context.Context, st leverro.Strategy, c *instances.Chain, budget int64, beta float64, slots int, deadline time.Time, remat []schedule.Sequence, best *pofoBest) (string, error) {
	if !best.out.Feasible || best.out.Report == nil {
		return "", nil // nothing fits, or no DP run ended: a slower link fits no better
	}
	s := min(max(best.fullTop, pofoFirstSlots), slots)
	var ran []string
	// run plans for rate f·β with s slots; false when the deadline (or the context) stops it.
	run := func(f float64) (bool, error) {
		planned := beta * f
		start := time.Now()
		// Remat empty: the passes weighed the remat sequences already, and best is what a
		// plan for a slower link must beat.
		out, err := st.Run(c, budget, beta, leverro.Options{Slots: s, MaxStates: pofoMaxStates, Deadline: deadline, PlanBandwidth: planned, Remat: []schedule.Sequence{}})
		at := fmt.Sprintf("%s at %d slots", instances.FormatRate(planned), s)
		switch {
		case errors.Is(err, dp.ErrDeadline):
			ran = append(ran, at+": out of time")
			return false, nil
		case errors.Is(err, dp.ErrTooManyStates):
			ran = append(ran, fmt.Sprintf("%s: more than %d states", at, pofoMaxStates))
			return false, nil
		case errors.As(err, new(*dp.TooLargeError)):
			ran = append(ran, at+": its table is above the memory limit")
			return false, nil
		case err != nil:
			return false, err
		}
		best.keep(out)
		switch {
		case !out.Feasible:
			ran = append(ran, fmt.Sprintf("%s: %s", at, cmp.Or(out.Why, "no plan")))
		case out.Report.Exact.Cmp(best.out.Report.Exact) < 0:
			ran = append(ran, fmt.Sprintf("%s: %s, the fastest", at, instances.FormatDuration(out.Report.Makespan)))
			best.out, best.grid = out, fmt.Sprintf("%d slots planned for a %s link", s, instances.FormatRate(planned))
		default:
			ran = append(ran, fmt.Sprintf("%s: %s", at, instances.FormatDuration(out.Report.Makespan)))
		}
		took := time.Since(start)
		return ctx.Err() == nil && time.Now().Add(time.Duration(2.5*float64(took))).Before(deadline), nil
	}
	more, err := run(leverro.SlowerLinks[0])
	for ; more && err == nil && s < slots; more, err = run(leverro.SlowerLinks[0]) {
		s = min(2*s, slots)
	}
	for _, f := range leverro.SlowerLinks[1:] {
		if err != nil || ctx.Err() != nil || !time.Now().Before(deadline) {
			break
		}
		more, err = run(f)
		if !more {
			break
		}
	}
	if err != nil || len(ran) == 0 {
		return "", err
	}
	return fmt.Sprintf("planned for slower links, re-timed at %s: %s", instances.FormatRate(beta), strings.Join(ran, ", ")), nil
}

// pofoRun is one run's verified schedule, its compute sequence and its strict makespan.
type pofoRun struct {
	sch      *schedule.Combined
	seq      schedule.Sequence
	makespan float64
}

// keep records a feasible run's schedule unless a kept one has the same compute sequence.
func (b *pofoBest) keep(out leverro.Outcome) {
	if !out.Feasible || out.Schedule == nil || out.Report == nil {
		return
	}
	seq := out.Schedule.Sequence()
	for _, r := range b.kept {
		if slices.Equal(r.seq, seq) {
			return
		}
	}
	b.kept = append(b.kept, pofoRun{out.Schedule, seq, out.Report.Makespan})
}

// others is the kept schedules but the best's, fastest first.
func (b *pofoBest) others() []*schedule.Combined {
	var best schedule.Sequence
	if b.out.Feasible && b.out.Schedule != nil {
		best = b.out.Schedule.Sequence()
	}
	runs := slices.Clone(b.kept)
	slices.SortStableFunc(runs, func(x, y pofoRun) int { return cmp.Compare(x.makespan, y.makespan) })
	var out []*schedule.Combined
	for _, r := range runs {
		if !slices.Equal(r.seq, best) {
			out = append(out, r.sch)
		}
	}
	return out
}

// pofoBest is pofoRefined's best outcome so far, the grid it came from, and the fastest
// fluid makespan of the DP's plans (the incumbent of the next run).
type pofoBest struct {
	out   leverro.Outcome
	grid  string
	fluid float64
	runs  int // the DP's runs that ended (with a plan or without)
	// fullTop is the most slots of a full-grid DP run that ended (0: none yet), where
	// pofoDerated starts.
	fullTop int
	// kept is the feasible runs' schedules, one per compute sequence (keep).
	kept []pofoRun
}

// pofoPass is one pass of pofoRefined on the link grid link (0: the full grid); it updates
// best and returns a note saying how far it went.
func pofoPass(ctx context.Context, st leverro.Strategy, c *instances.Chain, budget int64, beta float64, slots, link int, deadline time.Time, remat []schedule.Sequence, best *pofoBest) (string, error) {
	name := "full grid"
	if link > 0 {
		name = fmt.Sprintf("link grid %d", link)
	}
	last, steady, own := 0, 0, 0.0
	for s := min(pofoFirstSlots, slots); ; s = min(2*s, slots) {
		start := time.Now()
		// The incumbent is raised by pofoTie: a plan that only ties the fastest fluid makespan
		// can be faster under strict timing, and below the incumbent itself it was pruned
		// (Inception v3 at 75 %, 12 GB/s: 400 slots' plan, fluid 142.50 ms, strict 144.60 ms,
		// kept the 500-slot plan of the same fluid makespan, strict 142.50 ms, from the row).
		out, err := st.Run(c, budget, beta, leverro.Options{Slots: s, LinkSlots: link, MaxStates: pofoMaxStates, Deadline: deadline, Incumbent: best.fluid * (1 + pofoTie), Remat: remat})
		if errors.Is(err, dp.ErrTooManyStates) && last > 0 {
			return fmt.Sprintf("%s: up to %d slots, %d: more than %d states", name, last, s, pofoMaxStates), nil
		}
		if errors.Is(err, dp.ErrDeadline) {
			return fmt.Sprintf("%s: up to %d slots, %d: out of time", name, last, s), nil
		}
		if err != nil {
			return "", err
		}
		last = s
		best.runs++
		if link == 0 {
			best.fullTop = max(best.fullTop, s)
		}
		best.keep(out)
		// The best run is the one whose schedule is fastest under strict timing (not the
		// fastest fluid plan: whole tensors can make it slower), a rematerialization
		// sequence weighed by pofo included.
		if out.Feasible && (!best.out.Feasible || out.Report.Exact.Cmp(best.out.Report.Exact) < 0) {
			best.out, best.grid = out, fmt.Sprintf("%d slots", s)
			if link > 0 && link < s {
				best.grid += fmt.Sprintf(", link grid %d", link)
			}
		}
		switch {
		case out.Feasible && out.ModelPlan != nil:
			if best.fluid == 0 || out.ModelFluid.Makespan < best.fluid {
				best.fluid = out.ModelFluid.Makespan
			}
			// Converged: two doublings in a row moved this pass's makespan by less than 0.1 %.
			if own > 0 && out.ModelFluid.Makespan >= own*(1-1e-3) {
				steady++
			} else {
				steady = 0
			}
			own = min(cmp.Or(own, math.Inf(1)), out.ModelFluid.Makespan)
		case own > 0 && out.DP != nil && out.DP.NoBetter:
			steady++ // nothing faster than the incumbent on this grid
		}
		if steady == 2 {
			return fmt.Sprintf("%s: converged at %d slots", name, last), nil
		}
		took := time.Since(start)
		if s == slots {
			return fmt.Sprintf("%s: up to %d slots", name, last), nil
		}
		if ctx.Err() != nil || time.Now().Add(time.Duration(2.5*float64(took))).After(deadline) {
			return fmt.Sprintf("%s: up to %d of %d slots in time", name, last, slots), nil
		}
	}
}

// comboStrategies is what the combined lever's strategies share at one budget: pofo's limit
// and rematerialization sequences, the memory limit of their tables, and the compute sequences
// of the rows found so far (sequence-offload's seeds).
type comboStrategies struct {
	in        Input
	budget    int64
	limit     time.Duration
	remat     []schedule.Sequence
	rematNote string
	maxMemory int64
	seeds     []*schedule.Combined
	// upper is a verified makespan from outside the rows (the act-offload lever's schedule
	// in this model; 0: none).
	upper float64
}

// run runs strategy st and adds its row to lr.
func (cs *comboStrategies) run(ctx context.Context, st leverro.Strategy, lr *LeverReport) error {
	c, budget, beta, in := cs.in.Chain, cs.budget, cs.in.Bandwidth, cs.in
	if ctx.Err() != nil {
		lr.Rows = append(lr.Rows, Row{Strategy: st.Name, Note: "not run: the lever's time share was spent"})
		return nil
	}
	if st.Direct() {
		if up := bestFeasible(lr.Rows, cs.upper); up > 0 && up <= c.ComputeTime()*(1+1e-9) {
			// A verified schedule meets Σu: nothing is faster, and the search's replays are not
			// interruptible (on 2001 stages, seeded with act-offload's optimal schedule, it ran
			// 6 s past a 2.8 s share).
			lr.Rows = append(lr.Rows, Row{Strategy: st.Name, Note: "not run: a verified schedule already meets Σ(u_f+u_b), the optimum"})
			return nil
		}
	}
	start := time.Now()
	row := Row{Strategy: st.Name}
	var out leverro.Outcome
	var others []*schedule.Combined // pofo's other runs' schedules
	var err error
	if st.Name == "pofo" {
		var note string
		out, note, others, err = pofoRefined(ctx, st, c, budget, beta, in.Slots, cs.limit, cs.remat)
		row.Note = note
		if out.Feasible && out.Source != "" {
			row.Note = joinNote(cs.rematNote+", faster than the DP's plan", note)
		}
	} else {
		dl, _ := ctx.Deadline()
		upper := bestFeasible(lr.Rows, cs.upper)
		if !dl.IsZero() {
			// A search that takes what it is given: a quarter of what is left, so that the
			// bounds after it (the link credit, the relaxation MILP) get their time. The quick
			// heuristics too: on a long chain remat-then-offload's budgets can take the whole
			// share (400 stages: 35 s), leaving pofo and the searches nothing.
			dl = time.Now().Add(time.Until(dl) / 4)
		}
		out, err = st.Run(c, budget, beta, leverro.Options{Slots: in.Slots, Deadline: dl, MaxMemory: cs.maxMemory, Upper: upper, Seeds: cs.seeds})
		if st.Direct() && out.Feasible {
			row.Note = out.Source
		}
	}
	if errors.Is(err, dp.ErrDeadline) {
		row.Note, err = "stopped at the end of the lever's time share", nil
	} else if why, ok := tableOutOfReach(err); ok {
		row.Note, err = why, nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", st.Name, err)
	}
	if out.Stopped {
		row.Note = joinNote(row.Note, "stopped at the end of the lever's time share: the best plan found before it")
	}
	if out.Feasible {
		cs.seeds = append(append(cs.seeds, out.Schedule), others...)
		row.Feasible, row.Verified, row.Makespan, row.Peak = true, true, out.Report.Makespan, out.Report.Peak
		if out.ModelPlan != nil {
			row.Note = joinNote(row.Note, fmt.Sprintf("fluid %s, %d offloaded", instances.FormatDuration(out.ModelFluid.Makespan), out.Report.Offloaded))
		}
		if out.Kept > 0 {
			row.Note += fmt.Sprintf(", %d kept by polishing", out.Kept)
		}
	} else if row.Note == "" && st.Direct() {
		row.Note = cmp.Or(out.Why, "no candidate sequence scheduled within the budget")
	} else if row.Note == "" {
		row.Note = "no plan of this strategy fits"
	}
	row.Seconds = time.Since(start).Seconds()
	lr.Rows = append(lr.Rows, row)
	return nil
}

// bestFeasible is the least makespan of the feasible rows and upper (0: none).
func bestFeasible(rows []Row, upper float64) float64 {
	for _, r := range rows {
		if r.Feasible && (upper == 0 || r.Makespan < upper) {
			upper = r.Makespan
		}
	}
	return upper
}

// sortRows puts the strategies' rows in the registry's order (they run in another: the quick
// heuristics first).
func sortRows(rows []Row) {
	pos := map[string]int{}
	for i, st := range leverro.Strategies {
		pos[st.Name] = i
	}
	slices.SortStableFunc(rows, func(a, b Row) int { return cmp.Compare(pos[a.Strategy], pos[b.Strategy]) })
}

// rematUpper is the least makespan of the rematerialization sequences remat replayed as
// combined schedules without transfers (verify/combined; 0 when none is at hand or none fits:
// a bound's upper end must be a verified schedule's).
func rematUpper(c *instances.Chain, budget int64, beta float64, remat []schedule.Sequence) float64 {
	upper := 0.0
	for _, seq := range remat {
		rep, err := combined.Check(c, budget, beta, leverro.SequenceSchedule(seq))
		if err != nil || rep.Peak > budget {
			continue
		}
		if upper == 0 || rep.Makespan < upper {
			upper = rep.Makespan
		}
	}
	return upper
}

// rematCandidates returns the rematerialization sequences the combined lever weighs at budget
// (every sequence of 004 is a combined schedule without transfers) and a note naming them:
// the remat lever's best verified sequence when it ran earlier in this certification
// (Input.Earlier), else C_MP exact in bytes within deadline (leverro.RematCandidate). An empty,
// non-nil slice when neither is at hand: pofo then weighs its own plan without offloading only.
func rematCandidates(in Input, budget int64, deadline time.Time) ([]schedule.Sequence, string) {
	if lr := in.Earlier["remat"]; lr != nil {
		var best *Row
		for i := range lr.Rows {
			r := &lr.Rows[i]
			if r.Feasible && r.Sequence != nil && (best == nil || r.Makespan < best.Makespan) {
				best = r
			}
		}
		if best != nil {
			return []schedule.Sequence{best.Sequence}, fmt.Sprintf("the remat lever's %s sequence (no transfers)", best.Strategy)
		}
	}
	seq, err := leverro.RematCandidate(in.Chain, budget, deadline, memoryLimit(in), 0)
	if err != nil || seq == nil {
		return []schedule.Sequence{}, ""
	}
	return []schedule.Sequence{seq}, "C_MP exact in bytes (no transfers)"
}
