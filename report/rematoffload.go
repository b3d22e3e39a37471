package report

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/instances"
	leverro "github.com/memsched/memsched/lever/rematoffload"
)

// RematOffload is the lever of rematerialization and activation offloading together (003's
// POFO, SPEC §6): segments recomputed or stored, their inputs kept or offloaded on one link.
// Strategies: the registry's (lever/rematoffload: pofo, remat-then-offload,
// offload-then-remat), each plan re-timed under strict timing and validated by
// verify/combined; the makespan reported is the strict one. pofo refines its slots while
// RematOffloadTime allows (see pofoRefined). Bounds: Σ(u_f+u_b), global; on chains of at most
// rematOffloadExactStages stages with β·u a whole number of bytes, the optimum of the class in
// the fluid model without the turn's idle (dp.Combined exact), which bounds the class's strict
// schedules only — every row of this lever is one, but not the other levers' schedules.
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
// coarse and doubles its slots while the next run is expected to finish within it.
const RematOffloadTime = 10 * time.Second

// rematOffloadExactStages bounds the chains on which certify runs the DP in bytes.
const rematOffloadExactStages = 8

// pofoFirstSlots is the coarsest slot count pofoRefined tries; pofoMaxStates caps the states
// of each of its runs.
const (
	pofoFirstSlots  = 50
	pofoSlotsFactor = 8
	pofoMaxStates   = 4_000_000
)

// Run computes every strategy and bound.
func (RematOffload) Run(ctx context.Context, in Input) (LeverReport, error) {
	budget := activationBudget(in, in.Budget)
	lr, err := rematOffloadAt(ctx, in, budget, RematOffloadTime)
	if err != nil || in.TimeLimit <= 0 || budget <= 0 {
		return lr, err
	}
	comboMILP(ctx, in, &lr, budget, time.Now().Add(in.TimeLimit))
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
			b := Bound{Name: "class optimum, fluid, free turn", Kind: DPRelaxation, Seconds: time.Since(start).Seconds(),
				Note: "dp.Combined in bytes: the combined class's optimum in the fluid model without the turn's idle (a relaxation of strict timing); bounds the strict schedules of the class only, not other levers' schedules (docs/remat-offload.md)"}
			if r.Feasible {
				b.Value = r.Fluid.Makespan
			} else {
				b.Infeasible = true
			}
			lr.Bounds = append(lr.Bounds, b)
		}
	}
	for _, st := range leverro.Strategies {
		if err := ctx.Err(); err != nil {
			return lr, err
		}
		start := time.Now()
		row := Row{Strategy: st.Name}
		var out leverro.Outcome
		var err error
		if st.Name == "pofo" {
			var note string
			out, note, err = pofoRefined(ctx, st, c, budget, beta, in.Slots, limit)
			row.Note = note
		} else {
			out, err = st.Run(c, budget, beta, leverro.Options{Slots: in.Slots})
		}
		if err != nil {
			return lr, fmt.Errorf("%s: %w", st.Name, err)
		}
		if out.Feasible {
			row.Feasible, row.Verified, row.Makespan, row.Peak = true, true, out.Report.Makespan, out.Report.Peak
			row.Note = joinNote(row.Note, fmt.Sprintf("fluid %s, %d offloaded", instances.FormatDuration(out.ModelFluid.Makespan), out.Report.Offloaded))
			if out.Kept > 0 {
				row.Note += fmt.Sprintf(", %d kept by polishing", out.Kept)
			}
		} else if row.Note == "" {
			row.Note = "no plan of this strategy fits"
		}
		row.Seconds = time.Since(start).Seconds()
		lr.Rows = append(lr.Rows, row)
	}
	return lr, nil
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// pofoRefined runs the combined DP with pofoFirstSlots slots, then doubles them (up to
// pofoSlotsFactor × slots, 0: dp.DefaultSlots) while the next run is expected to end within
// limit — a run takes about 2.5 times the previous one — and returns the shortest strict
// schedule found with a note naming the slots it came from. A run stopped by the state cap
// ends the refinement. (Slots matter more here than for C_MP: a plan that fills the budget to
// the last MiB, as offloading plans do, is lost to rounding with coarse slots.)
func pofoRefined(ctx context.Context, st leverro.Strategy, c *instances.Chain, budget int64, beta float64, slots int, limit time.Duration) (leverro.Outcome, string, error) {
	if slots <= 0 {
		slots = dp.DefaultSlots
	}
	slots *= pofoSlotsFactor
	deadline := time.Now().Add(limit)
	var best leverro.Outcome
	bestSlots, last, steady := 0, 0, 0
	for s := min(pofoFirstSlots, slots); ; s = min(2*s, slots) {
		start := time.Now()
		out, err := st.Run(c, budget, beta, leverro.Options{Slots: s, MaxStates: pofoMaxStates})
		if errors.Is(err, dp.ErrTooManyStates) && last > 0 {
			note := fmt.Sprintf("DP with %d slots (%d slots: more than %d states)", bestSlots, s, pofoMaxStates)
			if !best.Feasible {
				note = fmt.Sprintf("no plan fits (DP up to %d slots; %d slots: more than %d states)", last, s, pofoMaxStates)
			}
			return best, note, nil
		}
		if err != nil {
			return best, "", err
		}
		last = s
		prev := best
		if out.Feasible && (!best.Feasible || out.Report.Exact.Cmp(best.Report.Exact) < 0) {
			best, bestSlots = out, s
		}
		// Converged: two doublings in a row moved the makespan by less than 0.1 %.
		if prev.Feasible && best.Report.Makespan >= prev.Report.Makespan*(1-1e-3) {
			if steady++; steady == 2 {
				break
			}
		} else {
			steady = 0
		}
		took := time.Since(start)
		if s == slots || ctx.Err() != nil || time.Now().Add(time.Duration(2.5*float64(took))).After(deadline) {
			break
		}
	}
	if !best.Feasible {
		return best, fmt.Sprintf("no plan fits (DP up to %d slots)", last), nil
	}
	note := fmt.Sprintf("DP with %d slots", bestSlots)
	if last != slots {
		note += fmt.Sprintf(" (refined up to %d of %d within %s)", last, slots, limit)
	}
	return best, note, nil
}
