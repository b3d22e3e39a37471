package report

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/instances"
	leverremat "github.com/memsched/memsched/lever/remat"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
	"github.com/memsched/memsched/verify/oracle"
)

// Remat is the rematerialization lever (004's model, SPEC §1): strategies persistent (rotor's
// C_MP; exact in bytes when its table is within reach), floating (C_FL, ≤ dp.MaxFloatingStages
// stages), revolve, sequential and store-all, and ilp (the chain-exact MILP, with a backend and
// a time limit; see rematILP); bounds, strongest first: the exhaustive search (≤
// oracle.MaxStages stages, the optimum), C_FL in exact mode (optimal by 004 Lemma 4.4), C_FL
// collapsed (≤ C_FL, any length; the optimum when exact C_MP meets it), C_FL with sizes rounded
// down (a relaxation), the smallest feasible budget (infeasibility), and Σ(u_f + u_b) (every
// stage run once, no recomputation: a relaxation valid at any size). See RematBounds.
type Remat struct{}

// coarseFrom is the chain length above which certify's remat lever also runs the coarse
// strategy (C_MP on grouped stages): below it the whole chain's tables end in time.
const coarseFrom = 400

// Name returns "remat".
func (Remat) Name() string { return "remat" }

// Skip returns "": every chain can be rematerialized.
func (Remat) Skip(Input) string { return "" }

// Run computes every strategy and bound.
func (Remat) Run(ctx context.Context, in Input) (LeverReport, error) {
	lr := LeverReport{Lever: "remat", Measure: "makespan"}
	if n := weightsNote(in); n != "" {
		lr.Notes = append(lr.Notes, n)
	}
	in.Budget = activationBudget(in, in.Budget)
	c, budget := in.Chain, in.Budget
	slots := dp.Options{Slots: in.Slots}
	nslots := in.Slots
	if nslots == 0 {
		nslots = dp.DefaultSlots
	}
	// The strategies are independent: run them on all cores (each DP table is one job).
	// floating waits for the bounds: when the exact C_FL table in bytes is within reach, its
	// sequence is the floating row (the optimum of the class) and no slotted table is built.
	// Memory: the bounds' C_FL table (then the floating one) gets half of the limit, the
	// persistent and revolve tables, built beside it, a quarter each.
	mem := memoryLimit(in)
	boundsMem, stratMem := mem/2, mem/4
	slottedFloating := floatingOutOfReach(c.Len(), nslots, boundsMem)
	names := leverremat.Names(leverremat.InCertify)
	if c.Len() > coarseFrom {
		// persistent and revolve are O(L³): on 2001 stages neither ends in a 10 s share and
		// the lever had no sequence at all at 2 GiB; the coarse one ends in seconds.
		names = append(names, "coarse")
	}
	rows := make([]Row, len(names))
	seqs := make([]schedule.Sequence, len(names))
	skip := make([]bool, len(names))
	errs := make([]error, len(names))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	// The bounds run beside the strategies once the persistent row is known: its makespan
	// prunes the exact tables (dp.ExactOptions.Cutoff).
	start := time.Now()
	var br RematBoundsResult
	var boundErr error
	boundsDone := make(chan struct{})
	persistentUB := make(chan float64, 1)
	if !slices.Contains(names, "persistent") {
		persistentUB <- 0
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(boundsDone)
		ub := <-persistentUB
		sem <- struct{}{}
		defer func() { <-sem }()
		br, boundErr = RematBounds(ctx, c, budget, RematBoundsOptions{Slots: nslots, MaxBreakpoints: in.MaxBreakpoints,
			TimeLimit: in.TimeLimit, Cutoff: ub, MaxMemory: boundsMem})
	}()
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			var seq schedule.Sequence
			if name == "persistent" {
				defer func() {
					ub := 0.0
					if rows[i].Feasible {
						ub = rows[i].Makespan
					}
					persistentUB <- ub
				}()
			}
			if name == "floating" {
				<-boundsDone
				switch {
				case br.Optimal != nil:
					seq = br.Optimal
				case slottedFloating != "":
					skip[i] = true
					return
				}
			}
			var note string
			if seq == nil {
				if name != "sequential" && name != "store-all" { // cheap: they need no core of their own
					sem <- struct{}{}
					defer func() { <-sem }()
				}
				// The tables stop at the end of the share; sequential and store-all have none
				// and start anyway (store-all is one replay; sequential stops between its
				// segment counts, which on a 20 001-stage chain take seconds).
				if ctx.Err() != nil && name != "sequential" && name != "store-all" {
					rows[i] = Row{Strategy: name, Note: "not run: the lever's time share was spent"}
					return
				}
				opt := slots
				opt.Stop, opt.MaxMemory = ctx.Done(), stratMem
				if name == "floating" {
					opt.MaxMemory = boundsMem
				}
				var err error
				if seq, note, err = guardedStrategy(c, budget, name, opt); err != nil {
					errs[i] = fmt.Errorf("%s: %w", name, err)
					return
				}
			}
			seqs[i] = seq
			rows[i], errs[i] = rematRow(c, budget, name, seq)
			rows[i].Seconds = time.Since(start).Seconds()
			if note != "" {
				rows[i].Note = note
			}
			if name == "floating" && br.Optimal != nil {
				rows[i].Note = br.OptimalNote
			}
			if in.Progress != nil {
				in.Progress.Advance(1)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return lr, err
		}
	}
	// Exact C_MP's sequence replaces the slotted one when it is shorter (it always is at least
	// as short: the slots only round sizes up).
	if p := slices.Index(names, "persistent"); br.Persistent != nil && p >= 0 {
		row, err := rematRow(c, budget, "persistent", br.Persistent)
		if err != nil {
			return lr, err
		}
		if row.Feasible && (!rows[p].Feasible || row.Makespan < rows[p].Makespan) {
			if rows[p].Feasible {
				row.Note = fmt.Sprintf("C_MP exact in bytes (%d slots: %s)", nslots, instances.FormatDuration(rows[p].Makespan))
			} else {
				row.Note = fmt.Sprintf("C_MP exact in bytes (nothing fits with %d slots)", nslots)
			}
			row.Seconds = rows[p].Seconds
			rows[p], seqs[p] = row, br.Persistent
		}
	}
	for i := range names {
		if skip[i] {
			lr.Notes = append(lr.Notes, "floating: not run: "+slottedFloating)
			continue
		}
		lr.Rows = append(lr.Rows, rows[i])
	}
	lr.Bounds, lr.Notes = br.Bounds, append(lr.Notes, br.Notes...)
	if boundErr != nil {
		return lr, boundErr
	}
	// The MILP starts from the best sequence at hand: the proven optimum, else C_MP's (exact in
	// bytes when its table was within reach).
	best := br.Optimal
	if best == nil {
		best = seqs[slices.Index(names, "persistent")]
	}
	if in.TimeLimit > 0 {
		if err := rematILP(ctx, in, &lr, best, start.Add(in.TimeLimit)); err != nil {
			return lr, err
		}
		refine(ctx, in, &lr, nslots, start.Add(in.TimeLimit))
	}
	return lr, nil
}

// memoryLimit is the memory the tables of in may take at once (Input.MaxMemory).
func memoryLimit(in Input) int64 {
	if in.MaxMemory > 0 {
		return in.MaxMemory
	}
	return dp.DefaultMaxMemory
}

// guardedStrategy runs the registry's strategy name (lever/remat) under opt's memory limit and
// Stop channel. A table above the limit is built again with the most slots that fit, when that
// is at least probeSlots, and the note says so; otherwise, and for a table stopped at the end
// of the time share, it returns no sequence and the note is the reason. Other errors are
// errors.
func guardedStrategy(c *instances.Chain, budget int64, name string, opt dp.Options) (schedule.Sequence, string, error) {
	st, _ := leverremat.Lookup(name)
	run := func(opt dp.Options) (schedule.Sequence, error) {
		out, err := st.Run(c, budget, leverremat.Options{DP: opt})
		return out.Sequence, err
	}
	seq, err := run(opt)
	var tl *dp.TooLargeError
	switch {
	case errors.Is(err, dp.ErrStopped):
		return nil, "stopped at the end of the lever's time share before it finished", nil
	case errors.As(err, &tl):
		slots := max(opt.Slots, 1)
		if opt.Slots == 0 {
			slots = dp.DefaultSlots
		}
		k := dp.PersistentSlotsWithin(c.Len(), slots, opt.MaxMemory)
		if name == "floating" {
			k = dp.FloatingSlotsWithin(c.Len(), slots, opt.MaxMemory)
		}
		if k < probeSlots {
			return nil, fmt.Sprintf("not run: its table would take %s with %d slots, above its share %s of --max-memory, and fewer than %d slots fit",
				instances.FormatSize(tl.Bytes), slots, instances.FormatSize(opt.MaxMemory), probeSlots), nil
		}
		note := fmt.Sprintf("%d slots: %d would take %s, above its share %s of --max-memory", k, slots, instances.FormatSize(tl.Bytes), instances.FormatSize(opt.MaxMemory))
		opt.Slots = k
		seq, err = run(opt)
		if errors.Is(err, dp.ErrStopped) {
			return nil, note + "; stopped at the end of the lever's time share", nil
		}
		return seq, note, err
	}
	return seq, "", err
}

// probeSlots is the probe of a large floored C_FL table (and the fewest slots worth one),
// probeBytes the table size above which RematBounds probes first, maxExactSlots the largest
// exact-mode table (dp's limit of 2^22 slots).
const (
	probeSlots    = 16
	probeBytes    = 256 << 20
	maxExactSlots = 1 << 22
)

// floatingBytes is the memory of a C_FL table (dp.FloatingBytes).
func floatingBytes(n, slots int) float64 { return float64(dp.FloatingBytes(n, slots)) }

// floatingOutOfReach says why C_FL cannot run on n stages with slots ("" when it can): its
// stage limit, or a table above limit bytes.
func floatingOutOfReach(n, slots int, limit int64) string {
	if n > dp.MaxFloatingStages {
		return fmt.Sprintf("%d stages, at most %d", n, dp.MaxFloatingStages)
	}
	if b := dp.FloatingBytes(n, slots); b > limit {
		return fmt.Sprintf("its table would take %s with %d slots, above %s (--max-memory)", instances.FormatSize(b), slots, instances.FormatSize(limit))
	}
	return ""
}

// refine narrows the bracket [C_FL floored, C_FL rounded up] when no exact bound closes it:
// both converge to the optimum as slots get finer, so it doubles the slots while the time
// budget allows (a table's time grows linearly in the slots: two tables at 2S take about four
// times one at S) and the table fits in maxTableBytes. The floating row and the floored bound
// are replaced by the best found, and a note says how far it went.
func refine(ctx context.Context, in Input, lr *LeverReport, nslots int, deadline time.Time) {
	c, budget := in.Chain, in.Budget
	n := c.Len()
	if n > dp.MaxFloatingStages {
		return
	}
	fl, lb := -1, -1
	for i, r := range lr.Rows {
		if r.Strategy == "floating" {
			fl = i
		}
	}
	for i, b := range lr.Bounds {
		if b.Exact {
			return // the optimum is known
		}
		if b.Kind == DPRelaxation && !b.Infeasible {
			lb = i
		}
	}
	if fl < 0 || lb < 0 || !lr.Rows[fl].Feasible {
		return
	}
	last := lr.Bounds[lb].Seconds + lr.Rows[fl].Seconds
	slots, steps := nslots, 0
	for {
		next := 2 * slots
		if ctx.Err() != nil || dp.FloatingBytes(n, next) > memoryLimit(in)/2 ||
			time.Now().Add(time.Duration(2.5*last*float64(time.Second))).After(deadline) {
			break
		}
		if lr.Rows[fl].Makespan <= lr.Bounds[lb].Value*(1+1e-9) {
			break // closed
		}
		t0 := time.Now()
		opt := dp.Options{Slots: next, MaxMemory: memoryLimit(in) / 2, Stop: ctx.Done()}
		v, feasible, err := dp.FloatingLowerBound(c, budget, opt)
		if err != nil || !feasible {
			break
		}
		r, err := dp.SolveFloating(c, budget, opt)
		if err != nil {
			break
		}
		last = time.Since(t0).Seconds()
		slots, steps = next, steps+1
		if v > lr.Bounds[lb].Value {
			lr.Bounds[lb].Value, lr.Bounds[lb].Name, lr.Bounds[lb].Seconds = v, fmt.Sprintf("C_FL floored, %d slots", next), last
		}
		if r.Feasible && r.Makespan < lr.Rows[fl].Makespan {
			if sim, err := verify.Remat(c, r.Sequence, verify.RematOptions{}); err == nil && sim.Peak <= budget {
				lr.Rows[fl].Makespan, lr.Rows[fl].Peak, lr.Rows[fl].Sequence = sim.Makespan, sim.Peak, r.Sequence
				lr.Rows[fl].Note = fmt.Sprintf("C_FL with %d slots", next)
			}
		}
	}
	if steps > 0 {
		lr.Notes = append(lr.Notes, fmt.Sprintf("refined: C_FL with %d → %d slots within the time limit (bound and floating sequence)", nslots, slots))
	}
}

// rematRow replays seq with the simulator; a sequence that does not replay is a bug.
func rematRow(c *instances.Chain, budget int64, name string, seq schedule.Sequence) (Row, error) {
	row := Row{Strategy: name}
	if seq == nil {
		row.Note = "no sequence of this strategy fits"
		return row, nil
	}
	sim, err := verify.Remat(c, seq, verify.RematOptions{})
	if err != nil {
		return row, fmt.Errorf("%s returned an invalid sequence: %w", name, err)
	}
	row.Peak = sim.Peak
	if sim.Peak > budget {
		// Replayed, but not a schedule of the budget: no makespan, not "verified" (its peak
		// says why).
		row.Note = fmt.Sprintf("peak %s exceeds the budget", instances.FormatSize(sim.Peak))
		return row, nil
	}
	row.Feasible, row.Verified, row.Makespan, row.Sequence = true, true, sim.Makespan, seq
	return row, nil
}

// RematBoundsOptions tune RematBounds.
type RematBoundsOptions struct {
	// Slots is the slotted tables' discretization (0: dp.DefaultSlots).
	Slots int
	// MaxBreakpoints caps one sub-chain's frontier in the exact tables (0: dp's default).
	MaxBreakpoints int
	// TimeLimit (0: none) bounds the time of a large slotted C_FL table (see RematBounds).
	TimeLimit time.Duration
	// Cutoff is the makespan of a verified sequence under the budget (0: none known): the
	// exact tables drop what cannot be part of a shorter one (dp.ExactOptions.Cutoff).
	Cutoff float64
	// MaxMemory caps every table RematBounds builds (0: dp.DefaultMaxMemory): fewer slots, or
	// the next bound down, with a note.
	MaxMemory int64
}

// RematBoundsResult is what RematBounds found.
type RematBoundsResult struct {
	Bounds []Bound
	// Notes say which bounds were out of reach, and why.
	Notes []string
	// Optimal is a sequence proven optimal (nil: none), and OptimalNote how: C_FL exact's, or
	// exact C_MP's when C_FL collapsed meets it.
	Optimal     schedule.Sequence
	OptimalNote string
	// Persistent is exact C_MP's sequence (the best persistent one, in bytes), nil when its
	// table was out of reach or nothing persistent fits.
	Persistent schedule.Sequence
}

// RematBounds returns every remat lower bound within reach, and notes on those out of reach.
//
// First exact C_MP in bytes (dp.PersistentExact, pruned by o.Cutoff) and, from its rows, C_FL
// collapsed (dp.CollapsedExact): a relaxation of C_FL with C_MP's O(n²) rows, hence a lower
// bound on the optimum by 004 Lemma 4.4, on chains of any length. When it meets exact C_MP's
// makespan, that persistent sequence is optimal and nothing else is built (GPT-2, ResNet).
// Otherwise, on at most dp.MaxFloatingStages stages, C_FL exact in bytes (dp.FloatingExact,
// pruned by the best makespan known; each sub-chain's frontier at most o.MaxBreakpoints
// breakpoints): the optimum of weakly persistent sequences, which is the model's optimum by
// Lemma 4.4, with its sequence. When its frontiers outgrow the cap, C_FL with 1-byte slots
// (small budgets) or with sizes rounded down to slots (a relaxation) takes its place.
//
// o.TimeLimit (0: none) bounds the time of a large floored C_FL table: one whose memory is
// above probeBytes is first run with probeSlots slots, timed, and rebuilt with as many slots as
// the time left allows (at most o.Slots). A table stopped by ctx (the end of the lever's time
// share) leaves the bounds found before it, with a note.
func RematBounds(ctx context.Context, c *instances.Chain, budget int64, o RematBoundsOptions) (res RematBoundsResult, err error) {
	deadline := time.Now().Add(o.TimeLimit)
	nslots, maxBreakpoints, limit, maxMemory := o.Slots, o.MaxBreakpoints, o.TimeLimit, o.MaxMemory
	if nslots == 0 {
		nslots = dp.DefaultSlots
	}
	if maxMemory <= 0 {
		maxMemory = dp.DefaultMaxMemory
	}
	bounds, exact, err := tableFreeRematBounds(c, budget)
	res.Bounds = bounds
	if err != nil || (len(bounds) > 0 && bounds[0].Infeasible) {
		return res, err
	}
	var notes []string
	stopped := func(what string) (RematBoundsResult, error) {
		res.Notes = append(res.Notes, fmt.Sprintf("bound: %s stopped at the end of the lever's time share; the best bound is the strongest of the others", what))
		return res, nil
	}
	if err := ctx.Err(); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return stopped("exact C_MP")
		}
		return res, err
	}
	n := c.Len()
	ub := o.Cutoff
	eopt := dp.ExactOptions{MaxBreakpoints: maxBreakpoints, MaxMemory: maxMemory, Stop: ctx.Done()}
	closed, err := collapsedBound(c, budget, eopt, &ub, &res)
	if errors.Is(err, dp.ErrStopped) {
		return stopped("exact C_MP (or C_FL collapsed)")
	}
	if err != nil || closed {
		return res, err
	}
	bounds, notes = res.Bounds, res.Notes
	if n > dp.MaxFloatingStages {
		res.Notes = append(notes, fmt.Sprintf("bound: C_FL is out of reach (%d stages, at most %d); the best bound is the strongest of the others", n, dp.MaxFloatingStages))
		return res, nil
	}
	if err := ctx.Err(); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return stopped("C_FL")
		}
		return res, err
	}
	start := time.Now()
	eopt.Cutoff = ub
	f, ferr := dp.NewFloatingExact(c, budget, eopt)
	if ferr == nil {
		r, err := f.Solve(budget)
		if err != nil {
			return res, err
		}
		b := Bound{Name: "C_FL exact", Kind: DPOptimal, Exact: true, Seconds: time.Since(start).Seconds(), Note: floatingExactNote}
		if r.Feasible {
			b.Value, res.Optimal, res.OptimalNote = r.Makespan, r.Sequence, "C_FL exact in bytes"
		} else {
			b.Infeasible = true
		}
		res.Bounds = append(bounds, b)
		return res, nil
	}
	if errors.Is(ferr, dp.ErrStopped) {
		return stopped("C_FL exact")
	}
	if !outOfReach(ferr) {
		return res, ferr
	}
	notes = append(notes, fmt.Sprintf("bound: C_FL exact in bytes is out of reach (%v)", ferr))
	start = time.Now()
	if budget <= maxExactSlots && dp.FloatingBytes(n, int(budget)) <= maxMemory {
		if r, err := dp.SolveFloating(c, budget, dp.Options{Exact: true, MaxMemory: maxMemory, Stop: ctx.Done()}); err == nil {
			b := Bound{Name: "C_FL exact", Kind: DPOptimal, Exact: true, Seconds: time.Since(start).Seconds(),
				Note: floatingExactNote + " (1-byte slots)"}
			if r.Feasible {
				b.Value = r.Makespan
			} else {
				b.Infeasible = true
			}
			res.Bounds, res.Notes = append(bounds, b), notes
			return res, nil
		}
	}
	if !exact {
		notes = append(notes, "bound: C_FL in exact mode is out of reach (1-byte slots); using sizes rounded down")
	}
	// Fewer slots still give a lower bound (a coarser relaxation): fit the table in memory and,
	// for big tables, in the time left, measured on a probe of probeSlots (the time of a table
	// grows linearly in its slots).
	stopAt := func(what string) (RematBoundsResult, error) {
		res.Bounds, res.Notes = bounds, notes
		return stopped(what)
	}
	if ctx.Err() != nil {
		return stopAt("C_FL")
	}
	slots := nslots
	if fewer := dp.FloatingSlotsWithin(n, nslots, maxMemory); fewer < slots {
		notes = append(notes, fmt.Sprintf("bound: C_FL with %d slots would take %s, above %s (--max-memory); floored with %d slots",
			nslots, instances.FormatSize(dp.FloatingBytes(n, nslots)), instances.FormatSize(maxMemory), fewer))
		slots = fewer
	}
	if slots < probeSlots {
		notes = append(notes, "bound: C_FL is out of reach (too large even with few slots); the best bound is the strongest of the others")
		res.Bounds, res.Notes = bounds, notes
		return res, nil
	}
	floored := func(k int) (Bound, error) {
		start := time.Now()
		lb, feasible, err := dp.FloatingLowerBound(c, budget, dp.Options{Slots: k, MaxMemory: maxMemory, Stop: ctx.Done()})
		b := Bound{Name: fmt.Sprintf("C_FL floored, %d slots", k), Kind: DPRelaxation, Seconds: time.Since(start).Seconds(),
			Note: "C_FL on the chain with sizes rounded down to slots", Value: lb, Infeasible: !feasible}
		if !feasible {
			b.Value = 0
		}
		return b, err
	}
	if floatingBytes(n, slots) > probeBytes && limit > 0 {
		probe, err := floored(probeSlots)
		if errors.Is(err, dp.ErrStopped) {
			return stopAt(fmt.Sprintf("C_FL floored (the %d-slot probe)", probeSlots))
		}
		if err != nil {
			return res, err
		}
		left := time.Until(deadline).Seconds()
		if fit := int(left / max(probe.Seconds, 1e-3) * probeSlots * 0.7); fit < slots {
			if fit <= probeSlots {
				notes = append(notes, fmt.Sprintf("bound: C_FL floored with %d slots would not finish in the time limit; kept the probe with %d", slots, probeSlots))
				res.Bounds, res.Notes = append(bounds, probe), notes
				return res, nil
			}
			notes = append(notes, fmt.Sprintf("bound: C_FL floored with %d slots would not finish in the time limit; %d slots instead", slots, fit))
			slots = fit
		}
	}
	b, err := floored(slots)
	if errors.Is(err, dp.ErrStopped) {
		return stopAt(fmt.Sprintf("C_FL floored with %d slots", slots))
	}
	if err != nil {
		return res, err
	}
	res.Bounds, res.Notes = append(bounds, b), notes
	return res, nil
}

// floatingExactNote says what certifies C_FL exact as the model's optimum.
const floatingExactNote = "the optimum over weakly persistent sequences, the model's optimum by 004 Lemma 4.4 " +
	"(memsched's re-derived C_FL equals the exhaustive search wherever that runs, docs/dp.md); exact in bytes"

// collapsedNote says what certifies C_FL collapsed.
const collapsedNote = "a relaxation of C_FL on C_MP's rows (docs/dp.md): at most the optimum over weakly persistent " +
	"sequences, the model's optimum by 004 Lemma 4.4; exact in bytes"

// collapsedBound builds exact C_MP in bytes, pruned by *ub (0: no cutoff known), and C_FL
// collapsed from its rows; it adds the bound (and a note when the tables are out of reach) to
// res, exact C_MP's sequence to res.Persistent, and lowers *ub to its makespan. closed says
// that C_FL collapsed meets exact C_MP: its sequence is then res.Optimal.
func collapsedBound(c *instances.Chain, budget int64, eopt dp.ExactOptions, ub *float64, res *RematBoundsResult) (closed bool, err error) {
	start := time.Now()
	eopt.Cutoff = *ub
	pe, err := dp.NewPersistentExact(c, budget, eopt)
	if err == nil {
		var r dp.Result
		if r, err = pe.Solve(budget); err != nil {
			return false, err
		}
		var col *dp.CollapsedExact
		if r.Feasible {
			res.Persistent = r.Sequence
			if !(*ub > 0) || r.Makespan < *ub {
				*ub = r.Makespan
			}
		}
		eopt.Cutoff = *ub
		if col, err = pe.Collapsed(eopt); err == nil {
			v, ok := col.Bound(budget)
			b := Bound{Name: "C_FL collapsed", Kind: DPRelaxation, Seconds: time.Since(start).Seconds(), Note: collapsedNote}
			if ok {
				b.Value = v
			} else {
				b.Infeasible = true
			}
			res.Bounds = append(res.Bounds, b)
			if ok && r.Feasible && r.Makespan <= v*(1+1e-9) {
				// A lower bound met by a verified sequence is the optimum.
				res.Bounds[len(res.Bounds)-1].Exact = true
				res.Bounds[len(res.Bounds)-1].Note += "; met by exact C_MP's verified sequence, so the optimum"
				res.Optimal, res.OptimalNote = r.Sequence, "exact C_MP's sequence (weakly persistent too), optimal: C_FL collapsed meets it"
				return true, nil
			}
			return false, nil
		}
	}
	if !outOfReach(err) {
		return false, err
	}
	res.Notes = append(res.Notes, fmt.Sprintf("bound: exact C_MP and C_FL collapsed are out of reach (%v)", err))
	return false, nil
}

// outOfReach says whether an exact table was refused or stopped for its size (a note and a
// fallback), not for a bug.
func outOfReach(err error) bool {
	var be *dp.BreakpointError
	var tl *dp.TooLargeError
	return errors.As(err, &be) || errors.As(err, &tl)
}

// tableFreeRematBounds returns the remat bounds that need no DP table, for RematBounds and the
// sweep alike: the smallest feasible budget (alone, Infeasible, when budget is below it),
// Σ(u_f+u_b), and on ≤ oracle.MaxStages stages the exhaustive search (exact reports it ran).
func tableFreeRematBounds(c *instances.Chain, budget int64) (bounds []Bound, exact bool, err error) {
	if minB := verify.MinBudget(c); budget < minB {
		return []Bound{{Name: "minimum budget", Kind: Exhaustive, Infeasible: true, Exact: true,
			Note: fmt.Sprintf("no sequence fits below %s (verify.MinBudget)", instances.FormatSize(minB))}}, true, nil
	}
	bounds = append(bounds, Bound{Name: "Σ(u_f+u_b)", Kind: Relaxation, Value: c.ComputeTime(),
		Note: "every stage's forward and backward once, no recomputation"})
	if c.Len() > oracle.MaxStages {
		return bounds, false, nil
	}
	start := time.Now()
	_, ms, ok, err := oracle.Remat(c, budget, verify.RematOptions{})
	if err != nil {
		return bounds, false, err
	}
	b := Bound{Name: "exhaustive search", Kind: Exhaustive, Exact: true, Seconds: time.Since(start).Seconds()}
	if ok {
		b.Value = ms
	} else {
		b.Infeasible = true
	}
	return append(bounds, b), true, nil
}
