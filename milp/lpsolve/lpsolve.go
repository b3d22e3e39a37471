//go:build lpsolve

package lpsolve

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/draffensperger/golp"

	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/model"
)

func init() { milp.Register("lpsolve", New) }

// infinity is lp_solve's default infinite value.
const infinity = 1e30

// Solver solves models with lp_solve.
type Solver struct{}

// New returns an lp_solve solver.
func New() (milp.Solver, error) { return &Solver{}, nil }

// Name returns "lpsolve".
func (*Solver) Name() string { return "lpsolve" }

// Solve builds an lp_solve model from m row by row and solves it. Context cancellation is
// honoured before the solve only: golp offers no abort hook.
func (*Solver) Solve(ctx context.Context, m *model.Model, p milp.Params) (*milp.Result, error) {
	if err := m.Err(); err != nil {
		return nil, err
	}
	res := &milp.Result{Solver: "lpsolve", Bound: math.NaN(), Gap: math.Inf(1)}
	if ctx.Err() != nil {
		res.Status = milp.StoppedStatus(ctx)
		return res, nil
	}
	if p.Start != nil && p.Log != nil {
		// golp exposes no start point (lp_solve's guess_basis is an LP basis, not an incumbent).
		fmt.Fprintln(p.Log, "lpsolve: the start point is ignored (not supported through golp)")
	}
	n := m.NumVars()
	lp := golp.NewLP(0, n)
	lp.SetVerboseLevel(golp.NEUTRAL)
	if p.TimeLimit > 0 {
		lp.SetTimeout(int(math.Ceil(p.TimeLimit.Seconds())))
	}
	if p.NoPresolve {
		// lp_solve's default is already no presolve; say it explicitly so that a caller's
		// request does not depend on that default.
		lp.SetPresolve(golp.NONE, 0)
	}
	clamp := func(x float64) float64 { return math.Max(-infinity, math.Min(infinity, x)) }
	for j := 0; j < n; j++ {
		v := model.Var(j)
		lb, ub := m.Bounds(v)
		lp.SetBounds(j, clamp(lb), clamp(ub))
		if m.VarType(v) != model.Continuous {
			lp.SetInt(j, true)
		}
	}
	sense, cost, offset := m.Objective()
	if n > 0 {
		lp.SetObjFn(cost)
	}
	if sense == model.Maximize {
		lp.SetMaximize()
	}
	lp.SetAddRowMode(true)
	for i := 0; i < m.NumRows(); i++ {
		cols, coefs := m.RowTerms(i)
		lo, hi := m.RowBounds(i)
		if len(cols) == 0 {
			// golp cannot take an empty row; its value is 0, so it is either always
			// satisfied or makes the model infeasible.
			if lo > 0 || hi < 0 {
				res.Status = milp.Infeasible
				return res, nil
			}
			continue
		}
		entries := make([]golp.Entry, len(cols))
		for k := range cols {
			entries[k] = golp.Entry{Col: int(cols[k]), Val: coefs[k]}
		}
		var err error
		switch {
		case lo == hi:
			err = lp.AddConstraintSparse(entries, golp.EQ, lo)
		default:
			if !math.IsInf(lo, -1) {
				err = lp.AddConstraintSparse(entries, golp.GE, lo)
			}
			if err == nil && !math.IsInf(hi, 1) {
				err = lp.AddConstraintSparse(entries, golp.LE, hi)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("lpsolve: row %q: %w", m.RowName(i), err)
		}
	}
	lp.SetAddRowMode(false)
	// lp_solve's timeout is whole seconds: from a deadline (the time left once the model is
	// built) it is rounded down, never past it; it cannot be below 1 s.
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl)
		if left < time.Second {
			res.Status = milp.TimeLimit
			return res, nil
		}
		if p.TimeLimit <= 0 || left < p.TimeLimit {
			lp.SetTimeout(int(left.Seconds()))
		}
	}
	start := time.Now()
	st := lp.Solve()
	res.Wall = time.Since(start)
	res.Status, res.HasSolution = mapStatus(st)
	if res.HasSolution {
		res.Values = lp.Variables()
		res.Objective = lp.Objective() + offset
	}
	if res.Status == milp.Optimal {
		res.Bound = res.Objective
	} else if sense == model.Minimize {
		res.Bound = math.Inf(-1)
	} else {
		res.Bound = math.Inf(1)
	}
	res.Gap = milp.RelGap(res.Objective, res.Bound, res.HasSolution)
	return res, nil
}

// mapStatus maps every lp_solve 5.5 solve() result to a status and whether a point exists.
func mapStatus(s golp.SolutionType) (milp.Status, bool) {
	switch s {
	case golp.OPTIMAL, 9: // 9 is PRESOLVED (lp_lib.h), which golp does not name
		return milp.Optimal, true
	case golp.SUBOPTIMAL: // stopped early (time limit, break at first) with an incumbent
		return milp.TimeLimit, true
	case golp.INFEASIBLE:
		return milp.Infeasible, false
	case golp.UNBOUNDED:
		return milp.Unbounded, false
	case golp.TIMEOUT:
		return milp.TimeLimit, false
	case golp.USERABORT, golp.PROCBREAK:
		return milp.Interrupted, false
	case golp.FEASFOUND:
		return milp.IterationLimit, true
	case golp.NOFEASFOUND:
		return milp.Infeasible, false
	case golp.DEGENERATE, golp.NUMFAILURE, golp.NOMEMORY, golp.PROCFAIL:
		return milp.SolverError, false
	}
	return milp.SolverError, false
}
