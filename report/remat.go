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
// C_MP), floating (C_FL, ≤ dp.MaxFloatingStages stages), revolve, sequential and store-all,
// and ilp (the chain-exact MILP, with a backend and a time limit; see rematILP);
// bounds, strongest first: the exhaustive search (≤ oracle.MaxStages stages, the optimum),
// C_FL in exact mode (optimal by 004 Lemma 4.4), C_FL with sizes rounded down (a relaxation),
// the smallest feasible budget (infeasibility), and Σ(u_f + u_b) (every stage run once, no
// recomputation: a relaxation valid at any size).
type Remat struct{}

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
	slottedFloating := floatingOutOfReach(c.Len(), nslots, maxFloatingBytes)
	names := leverremat.Names(leverremat.InCertify)
	rows := make([]Row, len(names))
	seqs := make([]schedule.Sequence, len(names))
	skip := make([]bool, len(names))
	errs := make([]error, len(names))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	// The bounds run beside the strategies (C_FL floored is as long as the floating table).
	start := time.Now()
	var bounds []Bound
	var notes []string
	var optSeq schedule.Sequence
	var boundErr error
	boundsDone := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(boundsDone)
		sem <- struct{}{}
		defer func() { <-sem }()
		bounds, notes, optSeq, boundErr = RematBounds(ctx, c, budget, nslots, in.MaxBreakpoints, in.TimeLimit)
	}()
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			var seq schedule.Sequence
			if name == "floating" {
				<-boundsDone
				switch {
				case optSeq != nil:
					seq = optSeq
				case slottedFloating != "":
					skip[i] = true
					return
				}
			}
			if seq == nil {
				sem <- struct{}{}
				defer func() { <-sem }()
				if errs[i] = ctx.Err(); errs[i] != nil {
					return
				}
				st, _ := leverremat.Lookup(name)
				out, err := st.Run(c, budget, leverremat.Options{DP: slots})
				if err != nil {
					errs[i] = fmt.Errorf("%s: %w", name, err)
					return
				}
				seq = out.Sequence
			}
			seqs[i] = seq
			rows[i], errs[i] = rematRow(c, budget, name, seq)
			rows[i].Seconds = time.Since(start).Seconds()
			if name == "floating" && optSeq != nil {
				rows[i].Note = "C_FL exact in bytes"
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
	for i := range names {
		if skip[i] {
			lr.Notes = append(lr.Notes, "floating: not run: "+slottedFloating)
			continue
		}
		lr.Rows = append(lr.Rows, rows[i])
	}
	lr.Bounds, lr.Notes = bounds, append(lr.Notes, notes...)
	if boundErr != nil {
		return lr, boundErr
	}
	// The MILP starts from the best sequence at hand: exact C_FL's (the optimum), else C_MP's.
	best := optSeq
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

// maxTableBytes caps the memory of one C_FL table in refine; maxFloatingBytes any C_FL
// table certify builds (two may be built at once).
const (
	maxTableBytes    = 1 << 30
	maxFloatingBytes = 4 << 30
)

// probeSlots is the probe of a large floored C_FL table (and the fewest slots worth one),
// probeBytes the table size above which RematBounds probes first, maxExactSlots the largest
// exact-mode table (dp's limit of 2^22 slots).
const (
	probeSlots    = 16
	probeBytes    = 256 << 20
	maxExactSlots = 1 << 22
)

// floatingBytes estimates the memory of a C_FL table: n³/6 states × (S+1) slots × (two
// float64 and three int16).
func floatingBytes(n, slots int) float64 {
	return float64(n) * float64(n) * float64(n) / 6 * float64(slots+1) * 22
}

// floatingOutOfReach says why C_FL cannot run on n stages with slots ("" when it can): its
// stage limit, or a table above limit bytes.
func floatingOutOfReach(n, slots int, limit float64) string {
	if n > dp.MaxFloatingStages {
		return fmt.Sprintf("%d stages, at most %d", n, dp.MaxFloatingStages)
	}
	if b := floatingBytes(n, slots); b > limit {
		return fmt.Sprintf("its table would take %.1f GiB with %d slots, above %.1f GiB", b/(1<<30), slots, limit/(1<<30))
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
	bytesPerSlot := floatingBytes(n, 0)
	last := lr.Bounds[lb].Seconds + lr.Rows[fl].Seconds
	slots, steps := nslots, 0
	for {
		next := 2 * slots
		if ctx.Err() != nil || float64(next)*bytesPerSlot > maxTableBytes ||
			time.Now().Add(time.Duration(2.5*last*float64(time.Second))).After(deadline) {
			break
		}
		if lr.Rows[fl].Makespan <= lr.Bounds[lb].Value*(1+1e-9) {
			break // closed
		}
		t0 := time.Now()
		v, feasible, err := dp.FloatingLowerBound(c, budget, dp.Options{Slots: next})
		if err != nil || !feasible {
			break
		}
		r, err := dp.SolveFloating(c, budget, dp.Options{Slots: next})
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
				lr.Rows[fl].Makespan, lr.Rows[fl].Peak = sim.Makespan, sim.Peak
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
	row.Verified, row.Makespan, row.Peak = true, sim.Makespan, sim.Peak
	if sim.Peak <= budget {
		row.Feasible = true
	} else {
		row.Note = fmt.Sprintf("peak %s exceeds the budget", instances.FormatSize(sim.Peak))
	}
	return row, nil
}

// RematBounds returns every remat lower bound within reach, and notes on those out of reach.
//
// The strongest, when the chain has at most dp.MaxFloatingStages stages, is C_FL exact in
// bytes (dp.FloatingExact: each sub-chain's frontier kept as its breakpoints, at most
// maxBreakpoints each, 0: dp.DefaultMaxBreakpoints): the optimum by 004 Lemma 4.4, and its
// sequence is returned too. When its frontiers outgrow the cap, C_FL with 1-byte slots (small
// budgets) or with sizes rounded down to slots (a relaxation) takes its place.
//
// limit (0: none) bounds the time of a large C_FL table: one whose memory is above probeBytes
// is first run with probeSlots slots, timed, and rebuilt with as many slots as the time left
// allows (at most nslots).
func RematBounds(ctx context.Context, c *instances.Chain, budget int64, nslots, maxBreakpoints int, limit time.Duration) (bounds []Bound, notes []string, optSeq schedule.Sequence, err error) {
	deadline := time.Now().Add(limit)
	bounds, exact, err := tableFreeRematBounds(c, budget)
	if err != nil || (len(bounds) > 0 && bounds[0].Infeasible) {
		return bounds, notes, nil, err
	}
	if err := ctx.Err(); err != nil {
		return bounds, notes, nil, err
	}
	n := c.Len()
	if n > dp.MaxFloatingStages {
		notes = append(notes, fmt.Sprintf("bound: C_FL is out of reach (%d stages, at most %d); the best bound is the strongest of the others", n, dp.MaxFloatingStages))
		return bounds, notes, nil, nil
	}
	start := time.Now()
	f, ferr := dp.NewFloatingExact(c, budget, dp.ExactOptions{MaxBreakpoints: maxBreakpoints})
	if ferr == nil {
		r, err := f.Solve(budget)
		if err != nil {
			return bounds, notes, nil, err
		}
		b := Bound{Name: "C_FL exact", Kind: DPOptimal, Exact: true, Seconds: time.Since(start).Seconds(),
			Note: "optimal by 004 Lemma 4.4 (exact in bytes: sub-chain frontiers as breakpoints)"}
		if r.Feasible {
			b.Value, optSeq = r.Makespan, r.Sequence
		} else {
			b.Infeasible = true
		}
		return append(bounds, b), notes, optSeq, nil
	}
	var be *dp.BreakpointError
	if !errors.As(ferr, &be) {
		return bounds, notes, nil, ferr
	}
	notes = append(notes, fmt.Sprintf("bound: C_FL exact in bytes is out of reach (%v)", ferr))
	start = time.Now()
	if budget <= maxExactSlots && floatingBytes(n, int(budget)) <= maxFloatingBytes {
		if r, err := dp.SolveFloating(c, budget, dp.Options{Exact: true}); err == nil {
			b := Bound{Name: "C_FL exact", Kind: DPOptimal, Exact: true, Seconds: time.Since(start).Seconds(),
				Note: "optimal by 004 Lemma 4.4 (1-byte slots)"}
			if r.Feasible {
				b.Value = r.Makespan
			} else {
				b.Infeasible = true
			}
			return append(bounds, b), notes, nil, nil
		}
	}
	if !exact {
		notes = append(notes, "bound: C_FL in exact mode is out of reach (1-byte slots); using sizes rounded down")
	}
	// Fewer slots still give a lower bound (a coarser relaxation): fit the table in memory and,
	// for big tables, in the time left, measured on a probe of probeSlots (the time of a table
	// grows linearly in its slots).
	slots := nslots
	if fewer := int(maxFloatingBytes/floatingBytes(n, 0)) - 1; fewer < slots {
		notes = append(notes, fmt.Sprintf("bound: C_FL with %d slots would take %.1f GiB; floored with %d slots", nslots, floatingBytes(n, nslots)/(1<<30), fewer))
		slots = fewer
	}
	if slots < probeSlots {
		notes = append(notes, "bound: C_FL is out of reach (too large even with few slots); the best bound is the strongest of the others")
		return bounds, notes, nil, nil
	}
	floored := func(k int) (Bound, error) {
		start := time.Now()
		lb, feasible, err := dp.FloatingLowerBound(c, budget, dp.Options{Slots: k})
		b := Bound{Name: fmt.Sprintf("C_FL floored, %d slots", k), Kind: DPRelaxation, Seconds: time.Since(start).Seconds(),
			Note: "C_FL on the chain with sizes rounded down to slots", Value: lb, Infeasible: !feasible}
		if !feasible {
			b.Value = 0
		}
		return b, err
	}
	if floatingBytes(n, slots) > probeBytes && limit > 0 {
		probe, err := floored(probeSlots)
		if err != nil {
			return bounds, notes, nil, err
		}
		left := time.Until(deadline).Seconds()
		if fit := int(left / max(probe.Seconds, 1e-3) * probeSlots * 0.7); fit < slots {
			if fit <= probeSlots {
				notes = append(notes, fmt.Sprintf("bound: C_FL floored with %d slots would not finish in the time limit; kept the probe with %d", slots, probeSlots))
				return append(bounds, probe), notes, nil, nil
			}
			notes = append(notes, fmt.Sprintf("bound: C_FL floored with %d slots would not finish in the time limit; %d slots instead", slots, fit))
			slots = fit
		}
	}
	b, err := floored(slots)
	if err != nil {
		return bounds, notes, nil, err
	}
	return append(bounds, b), notes, nil, nil
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
