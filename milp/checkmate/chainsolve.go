package checkmate

import (
	"context"
	"fmt"
	"math"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
)

// ChainExactSolution is a solve of the chain-exact model (BuildChain), in seconds and bytes.
type ChainExactSolution struct {
	// Status is the solver's status; Optimal only when the solver proved it.
	Status milp.Status
	// Sequence is the incumbent as a sequence of 004's model, replayed by verify.Remat (no
	// deletes) within the budget before it is returned; nil without an incumbent.
	Sequence schedule.Sequence
	// Makespan and Peak are the replayed sequence's (Makespan = +Inf without one).
	Makespan float64
	Peak     int64
	// Bound is a proven lower bound on the chain's optimum in seconds: the solver's, raised to
	// Σ(u_f + u_b) when it is below (every stage runs F^ℓ and B^ℓ at least once; a solve stopped
	// before its root LP reports less); +Inf when infeasible.
	Bound float64
	// Gap is the relative gap between Makespan and Bound (+Inf without an incumbent).
	Gap float64
	// Result is the raw solver result (model units; an untrusted backend's optimality or
	// infeasibility claim demoted to solver-error).
	Result *milp.Result
	// StartMakespan is the start sequence's replayed makespan (NaN without one); StartNote says
	// why a start sequence was not passed to the solver ("" when it was or none was given).
	// FromStart says that Sequence is the start sequence itself: the solver ended with no
	// incumbent or a worse one (a backend that ignores start points, or a time limit hit
	// before it read it back).
	StartMakespan float64
	StartNote     string
	FromStart     bool
	// BoundNote says why the solver's bound and optimality claim were not used ("" when they
	// were): see untrustedBackends.
	BoundNote string
}

// untrustedBackends are the backends whose optimality claims this model does not believe, and
// why. lp_solve 5.5's branch and bound returns "optimal" above the true optimum on this model
// (67 of 269 solves on the seeded chains of TestChainExactEqualsOracle; the toy chain at
// 90 MiB: 77.70 ms for 47.42 ms, also from the exported MPS file, while HiGHS and cbc agree
// with the exhaustive search), so its incumbent is replayed and kept, its status becomes
// solver-error, and the bound falls back to Σ(u_f+u_b). docs/checkmate.md.
var untrustedBackends = map[string]string{
	"lpsolve": "lp_solve's branch and bound returns wrong optima on the chain-exact model (docs/checkmate.md): its bound and optimality are not used",
}

// DefaultChainGap is SolveChainExact's relative MIP gap when the caller gives none.
const DefaultChainGap = 1e-9

// SolveChainExact builds the chain-exact MILP of c under budget bytes (BuildChain), solves it
// with s through milp.Solve (which re-checks the point) and replays the incumbent's sequence
// with verify.Remat. An incumbent that does not replay, exceeds the budget or whose makespan
// differs from the objective is an error, never a result.
//
// start, when not nil, is a valid sequence (e.g. rotor's C_MP, dp.SolvePersistent) converted
// by Point into the start point p.Start: the returned sequence is then never worse than start
// — when the solver ends with no incumbent or a worse one, start itself is returned
// (FromStart), with the solver's status and bound, so a time-limited solve reports a verified
// sequence and an honest gap. A start outside the model is not passed (StartNote says why).
//
// p.RelGap = 0 means DefaultChainGap here, not the solver's default (HiGHS stops at 0.01 %):
// "optimal" is meant as the chain's optimum, to compare with the exhaustive oracle and C_FL.
func SolveChainExact(ctx context.Context, s milp.Solver, c *instances.Chain, budget int64, p milp.Params, start schedule.Sequence) (*ChainExactSolution, *ChainFormulation, error) {
	f, err := BuildChain(c, budget)
	if err != nil {
		return nil, nil, err
	}
	if p.RelGap == 0 {
		p.RelGap = DefaultChainGap
	}
	startMk, note := math.NaN(), ""
	if start != nil {
		rep, err := f.replay(start)
		if err != nil {
			return nil, f, fmt.Errorf("checkmate: start sequence: %w", err)
		}
		startMk = rep.Makespan
		if x, err := f.Point(start); err != nil {
			note = err.Error()
		} else {
			p.Start = x
		}
	}
	res, err := milp.Solve(ctx, s, f.Model, p)
	if err != nil {
		return nil, f, err
	}
	if res.HasSolution && p.FeasTol != milp.SafeTol {
		// The solver accepts rows violated within its tolerance (HiGHS: 1e-6 in model units,
		// about a kilobyte when the unit is a GiB): an incumbent whose replay exceeds the budget
		// by that much is re-solved once with the safer settings (SPEC §5).
		if _, err := f.replay(f.Sequence(res.Values)); err != nil {
			q := p
			q.FeasTol, q.NoPresolve = milp.SafeTol, true
			if res, err = milp.Solve(ctx, s, f.Model, q); err != nil {
				return nil, f, err
			}
		}
	}
	sol := &ChainExactSolution{Status: res.Status, Makespan: math.Inf(1), Bound: math.Inf(-1), Gap: math.Inf(1), Result: res,
		StartMakespan: startMk, StartNote: note}
	if untrustedBackends[res.Solver] != "" {
		// Its optimum is not a bound here: only the replayed incumbent is used (below), and
		// the bound is Σ(u_f+u_b); an infeasibility claim is not believed either.
		sol.BoundNote = untrustedBackends[res.Solver]
		if res.Status == milp.Optimal || res.Status == milp.Infeasible {
			res.Status, sol.Status = milp.SolverError, milp.SolverError
		}
		res.Bound = math.NaN()
	}
	if !math.IsNaN(res.Bound) && !math.IsInf(res.Bound, 0) {
		sol.Bound = res.Bound * f.Units.Time
	}
	sol.Bound = math.Max(sol.Bound, c.ComputeTime())
	if res.Status == milp.Infeasible {
		if start != nil {
			return nil, f, fmt.Errorf("checkmate: %s claims infeasible while the start sequence (%g s) replays within the budget", res.Solver, startMk)
		}
		sol.Bound = math.Inf(1)
	}
	if res.HasSolution {
		seq := f.Sequence(res.Values)
		rep, err := f.replay(seq)
		switch {
		case err != nil && start != nil:
			// Beyond the budget within the solver's tolerance even with the safer settings:
			// not a result; the start sequence stands in for it below.
			sol.StartNote = fmt.Sprintf("%s's incumbent dropped: %v", res.Solver, err)
		case err != nil:
			return nil, f, fmt.Errorf("checkmate: %s's incumbent: %w", res.Solver, err)
		default:
			if d := math.Abs(rep.Makespan - res.Objective*f.Units.Time); d > milp.ObjTol*f.Units.Time*math.Max(1, math.Abs(res.Objective)) {
				return nil, f, fmt.Errorf("checkmate: replayed makespan %g s differs from the objective %g s", rep.Makespan, res.Objective*f.Units.Time)
			}
			sol.Sequence, sol.Makespan, sol.Peak = seq, rep.Makespan, rep.Peak
		}
	}
	if start != nil && startMk < sol.Makespan*(1-1e-12) {
		if res.Status == milp.Optimal && sol.Sequence != nil {
			return nil, f, fmt.Errorf("checkmate: %s claims optimal at %g s above the start sequence's %g s", res.Solver, sol.Makespan, startMk)
		}
		rep, _ := f.replay(start)
		sol.Sequence, sol.Makespan, sol.Peak, sol.FromStart = start, rep.Makespan, rep.Peak, true
		if sol.Status == milp.Optimal {
			// The solver's optimum was dropped above: what is returned is not proven optimal.
			sol.Status = milp.SolverError
		}
	}
	if sol.Sequence != nil && sol.Bound > sol.Makespan*(1+1e-9) {
		return nil, f, fmt.Errorf("checkmate: %s's bound %g s is above a verified sequence of %g s", res.Solver, sol.Bound, sol.Makespan)
	}
	if sol.Sequence != nil {
		sol.Gap = milp.RelGap(sol.Makespan, sol.Bound, true)
	}
	return sol, f, nil
}

// replay checks seq with verify.Remat (004's model, no deletes) and the budget.
func (f *ChainFormulation) replay(seq schedule.Sequence) (verify.RematResult, error) {
	rep, err := verify.Remat(f.Chain, seq, verify.RematOptions{})
	if err != nil {
		return rep, fmt.Errorf("the sequence does not replay: %w", err)
	}
	if rep.Peak > f.Budget {
		return rep, fmt.Errorf("the sequence peaks at %d bytes, over the budget %d", rep.Peak, f.Budget)
	}
	return rep, nil
}
