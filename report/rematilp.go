package report

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/checkmate"
	"github.com/memsched/memsched/schedule"
)

// ilpCheckStages is the largest chain on which certify always solves the chain-exact MILP, as
// a cross-check of the DP's optimum (ResNet-101 224/32, 36 stages: 0.5 s with HiGHS);
// ilpMaxStages the largest on which it runs at all, and only while the DP bracket is open
// (ResNet-152, 52 stages: 7 s; a 98-stage GPT-2: still 0.4 % off at 30 s).
const (
	ilpCheckStages = 40
	ilpMaxStages   = 200
)

// ilpCheckLimit caps the time of the cross-check when a bound already meets the best
// row (a 38-stage GPT-2 at 8 GiB takes 17 s to prove what C_FL exact proved in 0.2 s).
const ilpCheckLimit = 5 * time.Second

// rematILP solves the chain-exact MILP (milp/checkmate.SolveChainExact: Checkmate's model
// extended to 004's operations, equal to the exhaustive search on chains) within the time
// left, warm-started from start (the best sequence at hand: exact C_FL's, else rotor's C_MP's),
// and adds its row ("ilp", replayed by
// verify.Remat) and its bound (kind MILP, with status and gap) to lr. It runs only with a
// MILP backend that solves real models (not the pure-Go referee), on chains of at most
// ilpCheckStages stages, or ilpMaxStages while no bound meets the best row. A bound
// above a verified row contradicts the solver and is dropped with a note, never reported.
func rematILP(ctx context.Context, in Input, lr *LeverReport, start schedule.Sequence, deadline time.Time) error {
	c, budget := in.Chain, in.Budget
	n := c.Len()
	if n > ilpMaxStages || (n > ilpCheckStages && bracketClosed(lr)) {
		return nil
	}
	for _, b := range lr.Bounds {
		if b.Infeasible && b.Exact {
			return nil // nothing fits: nothing to solve
		}
	}
	s, err := milp.Lookup(in.Solver)
	if err != nil || s.Name() == "ref" {
		return nil // the referee enumerates: no MILP of this size
	}
	left := time.Until(deadline)
	if bracketClosed(lr) {
		left = min(left, ilpCheckLimit) // a cross-check of a proven optimum: keep it short
	}
	if left < time.Second {
		lr.Notes = append(lr.Notes, fmt.Sprintf("ilp: not run, %.1f s of the lever's time share left (a solve gets at least 1 s; raise --time-limit)", max(left.Seconds(), 0)))
		return nil
	}
	// Its model has about 18n² nonzeros (714 000 on 200 stages), built at about 2.5 µs per
	// nonzero on the shared machine (1.8 s on 200 stages) before the solver starts.
	nnz := 18 * n * n
	if need := milp.ModelBytes(nnz); need > memoryLimit(in) {
		lr.Notes = append(lr.Notes, fmt.Sprintf("ilp: not run, its model would take about %s, above --max-memory %s", instances.FormatSize(need), instances.FormatSize(memoryLimit(in))))
		return nil
	}
	if build := time.Duration(nnz) * 2500 * time.Nanosecond; left < time.Second+build {
		lr.Notes = append(lr.Notes, fmt.Sprintf("ilp: not run, the %.1f s left would not build its model (about %.1f s) and leave a second to solve it", left.Seconds(), build.Seconds()))
		return nil
	}
	if in.Progress != nil {
		in.Progress.Step("remat chain-exact MILP ("+s.Name()+")", 0)
		defer in.Progress.Done()
	}
	params := milp.Params{TimeLimit: left}
	if in.Progress != nil {
		u := checkmate.ChainUnits(c).Time
		params.Progress = func(inc, bound, gap float64) { in.Progress.MILP(inc*u, bound*u, gap) }
	}
	t0 := time.Now()
	sol, f, err := checkmate.SolveChainExact(ctx, s, c, budget, params, start)
	if err != nil {
		lr.Notes = append(lr.Notes, fmt.Sprintf("ilp: %v", err))
		return nil
	}
	secs := time.Since(t0).Seconds()
	row, err := rematRow(c, budget, "ilp", sol.Sequence)
	if err != nil {
		return err
	}
	row.Seconds = secs
	row.Note = fmt.Sprintf("chain-exact MILP, %s, %d rows × %d columns", sol.Status, f.Model.NumRows(), f.Model.NumVars())
	if sol.FromStart {
		row.Note += "; the start sequence (no better incumbent)"
	}
	lr.Rows = append(lr.Rows, row)
	if in.Progress != nil {
		in.Progress.MILP(sol.Makespan, sol.Bound, sol.Gap)
	}
	if sol.BoundNote != "" {
		lr.Notes = append(lr.Notes, "ilp: "+sol.BoundNote)
		return nil
	}
	b := Bound{Name: "MILP (chain-exact, " + s.Name() + ")", Kind: MILP, Status: sol.Status.String(), Seconds: secs, TimeBudget: left.Seconds(),
		Exact: sol.Status == milp.Optimal, Note: "Checkmate's MILP extended to 004's operations (docs/checkmate.md)"}
	if !math.IsInf(sol.Gap, 0) && !math.IsNaN(sol.Gap) {
		b.Gap = finite(sol.Gap)
	}
	switch {
	case math.IsInf(sol.Bound, 1):
		b.Infeasible = true
	case math.IsInf(sol.Bound, -1) || math.IsNaN(sol.Bound):
		lr.Notes = append(lr.Notes, fmt.Sprintf("ilp: %s after %.1f s without a bound", sol.Status, secs))
		return nil
	default:
		b.Value = sol.Bound
	}
	addBound(lr, b, fmt.Sprintf("ilp: %s's bound", s.Name()))
	return nil
}

// bracketClosed reports whether a bound already meets the best feasible row (the optimum is
// then proven, whatever certifies the bound), or an exact one proves that nothing fits.
func bracketClosed(lr *LeverReport) bool {
	best := math.Inf(1)
	for _, r := range lr.Rows {
		if r.Feasible {
			best = math.Min(best, r.Makespan)
		}
	}
	for _, b := range lr.Bounds {
		if !b.Infeasible && best <= b.Value*(1+1e-9) {
			return true
		}
		if b.Exact && b.Infeasible {
			return true
		}
	}
	return false
}
