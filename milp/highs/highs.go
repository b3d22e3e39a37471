//go:build highs

package highs

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/lanl/highs"

	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/model"
)

func init() { milp.Register("highs", New) }

// Solver solves models with HiGHS. The zero value is not usable; call New.
type Solver struct{}

// New returns a HiGHS solver.
func New() (milp.Solver, error) { return &Solver{}, nil }

// Name returns "highs".
func (*Solver) Name() string { return "highs" }

// Solve passes m to HiGHS as row-wise CSR arrays and runs it under p.
func (s *Solver) Solve(ctx context.Context, m *model.Model, p milp.Params) (*milp.Result, error) {
	if err := m.Err(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return &milp.Result{Status: milp.StoppedStatus(ctx), Bound: math.NaN(), Gap: math.Inf(1), Solver: "highs"}, nil
	}
	h, err := newHandle()
	if err != nil {
		return nil, err
	}
	owned := true // false once run abandoned h to the goroutine still in Highs_run
	defer func() {
		if owned {
			h.Close()
		}
	}()
	// Options first: passing the model already logs when output is on.
	logFile, err := configure(h, p)
	if logFile != "" {
		defer os.Remove(logFile)
	}
	if err != nil {
		return nil, err
	}
	if err := pass(h, m); err != nil {
		return nil, err
	}
	if err := h.setSolution(p.Start); err != nil {
		return nil, err
	}
	// Passing a big model takes a while: the time limit is set again from ctx's deadline.
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl) - presolveReserve(m.NumNonzeros())
		if left <= 0 {
			return &milp.Result{Status: milp.TimeLimit, Bound: math.NaN(), Gap: math.Inf(1), Solver: "highs"}, nil
		}
		if p.TimeLimit <= 0 || left < p.TimeLimit {
			if err := h.setOption("time_limit", left.Seconds()); err != nil {
				return nil, err
			}
		}
	}
	start := time.Now()
	given := p.TimeLimit
	if dl, ok := ctx.Deadline(); ok && (given <= 0 || time.Until(dl) < given) {
		given = time.Until(dl)
	}
	failed, abandoned, err := h.run(ctx, p.Progress, abandonGrace(given))
	if err != nil {
		return nil, err
	}
	wall := time.Since(start)
	if abandoned {
		owned = false
		return &milp.Result{Status: milp.StoppedStatus(ctx), Bound: math.NaN(), Gap: math.Inf(1), Solver: "highs", Wall: wall, Abandoned: true}, nil
	}
	if logFile != "" && p.Log != nil {
		if f, err := os.Open(logFile); err == nil {
			io.Copy(p.Log, f)
			f.Close()
		}
	}
	res := &milp.Result{Solver: "highs", Wall: wall, Bound: math.NaN(), Gap: math.Inf(1)}
	res.Status = mapStatus(h.modelStatus())
	if failed && res.Status == milp.NotSolved {
		res.Status = milp.SolverError
	}
	if ctx.Err() != nil && res.Status != milp.Optimal {
		res.Status = milp.StoppedStatus(ctx)
	}
	if err := collect(h, m, res); err != nil {
		return nil, err
	}
	return res, nil
}

// presolveReserve is the time kept back from a deadline for HiGHS's presolve, which checks the
// clock only between its passes and so overruns the time limit by up to one pass: about 1 s on
// the 2.6 million nonzeros of the weight-offloading MILP of a 300-block GPT-2 (measured on a
// loaded 2-core machine: 3.8 s of presolve under a 3 s limit), so 0.4 µs per nonzero, and
// 0.1 s for the rest of the run (reading the solution back).
func presolveReserve(nonzeros int) time.Duration {
	return 100*time.Millisecond + time.Duration(nonzeros)*400*time.Nanosecond
}

// pass builds m in h's instance with lanl/highs's RawModel methods: columns with their bounds,
// costs and integrality, then the rows from m's CSR arrays. Infinite bounds are passed as ±Inf,
// which HiGHS reads as infinite.
func pass(h *handle, m *model.Model) error {
	n, r := m.NumVars(), m.NumRows()
	sense, cost, offset := m.Objective()
	if n > 0 { // lanl/highs indexes [0] of each slice
		colLo, colUp := make([]float64, n), make([]float64, n)
		types := make([]highs.VariableType, n)
		anyInt := false
		for j := 0; j < n; j++ {
			colLo[j], colUp[j] = m.Bounds(model.Var(j))
			if m.VarType(model.Var(j)) != model.Continuous {
				types[j] = highs.IntegerType
				anyInt = true
			}
		}
		if err := h.check("adding columns", h.raw.AddColumnBounds(colLo, colUp)); err != nil {
			return err
		}
		if err := h.check("setting costs", h.raw.SetColumnCosts(cost)); err != nil {
			return err
		}
		// Integrality only for a MIP: an LP must stay an LP for HiGHS to report its duals.
		if anyInt {
			if err := h.check("setting integrality", h.raw.SetIntegrality(types)); err != nil {
				return err
			}
		}
	}
	if err := h.check("setting the sense", h.raw.SetMaximization(sense == model.Maximize)); err != nil {
		return err
	}
	if err := h.check("setting the offset", h.raw.SetOffset(offset)); err != nil {
		return err
	}
	if r == 0 {
		return nil
	}
	rowLo, rowUp := make([]float64, r), make([]float64, r)
	for i := 0; i < r; i++ {
		rowLo[i], rowUp[i] = m.RowBounds(i)
	}
	start, index, value := m.CSR()
	if len(index) == 0 {
		return h.addRowsWithoutEntries(rowLo, rowUp)
	}
	idx := make([]int, len(index))
	for k, c := range index {
		idx[k] = int(c)
	}
	return h.check("adding rows", h.raw.AddCompSparseRows(rowLo, start[:r], idx, value, rowUp))
}

// configure sets p's options on h by name: the log, time limit, gap, threads, seed, and the
// safer-re-solve settings (feasibility tolerances, presolve).
func configure(h *handle, p milp.Params) (logFile string, err error) {
	set := func(name string, v any) {
		if err == nil {
			err = h.setOption(name, v)
		}
	}
	if p.Log != nil {
		f, ferr := os.CreateTemp("", "memsched-highs-*.log")
		if ferr != nil {
			return "", fmt.Errorf("highs: log file: %w", ferr)
		}
		logFile = f.Name()
		f.Close()
		set("output_flag", true)
		set("log_to_console", false)
		set("log_file", logFile)
	} else {
		set("output_flag", false)
	}
	if p.TimeLimit > 0 {
		set("time_limit", p.TimeLimit.Seconds())
	}
	if p.RelGap > 0 {
		set("mip_rel_gap", p.RelGap)
	}
	if p.Threads > 0 {
		set("threads", p.Threads)
	}
	if p.Seed != 0 {
		set("random_seed", p.Seed)
	}
	if p.FeasTol > 0 {
		set("primal_feasibility_tolerance", p.FeasTol)
		set("dual_feasibility_tolerance", p.FeasTol)
		set("mip_feasibility_tolerance", p.FeasTol)
	}
	if p.NoPresolve {
		set("presolve", "off")
	}
	return logFile, err
}

// collect reads the solution, the duals of an LP and the MIP information into res.
func collect(h *handle, m *model.Model, res *milp.Result) error {
	n, r := m.NumVars(), m.NumRows()
	mip := isMIP(m)
	solutionFeasible := int64(kSolutionFeasible())
	if ps, ok := h.intInfo("primal_solution_status"); ok && ps == solutionFeasible {
		res.HasSolution = true
	}
	if res.HasSolution {
		col, colDual, rowDual, err := h.solution(n, r)
		if err != nil {
			return err
		}
		res.Values = col
		res.Objective, _ = h.doubleInfo("objective_function_value")
		if ds, ok := h.intInfo("dual_solution_status"); ok && ds == solutionFeasible && !mip {
			res.RowDuals, res.ColDuals = rowDual, colDual
		}
	}
	if mip {
		if b, ok := h.doubleInfo("mip_dual_bound"); ok && !math.IsNaN(b) {
			res.Bound = b
		}
		if nodes, ok := h.int64Info("mip_node_count"); ok && nodes > 0 {
			res.Nodes = nodes
		}
	} else if res.Status == milp.Optimal {
		// For an LP solved to optimality the optimum is its own bound.
		res.Bound = res.Objective
	}
	if math.Abs(res.Bound) >= h.infinity() {
		res.Bound = math.Copysign(math.Inf(1), res.Bound)
	}
	if res.Status == milp.Optimal && math.IsNaN(res.Bound) {
		res.Bound = res.Objective
	}
	// HiGHS's mip_gap divides by |primal bound| (and is +Inf at 0); memsched uses one gap for
	// every backend.
	res.Gap = milp.RelGap(res.Objective, res.Bound, res.HasSolution)
	return nil
}

// isMIP says whether m has an integer or binary column.
func isMIP(m *model.Model) bool {
	for j := 0; j < m.NumVars(); j++ {
		if m.VarType(model.Var(j)) != model.Continuous {
			return true
		}
	}
	return false
}

// mapStatus maps every kHighsModelStatus* of HiGHS 1.15 (highs_c_api.h) to a milp.Status.
// Unknown future values become SolverError so that nothing is silently trusted.
func mapStatus(s int) milp.Status {
	switch s {
	case 0: // kHighsModelStatusNotset
		return milp.NotSolved
	case 1, 2, 3, 4, 5: // LoadError, ModelError, PresolveError, SolveError, PostsolveError
		return milp.SolverError
	case 6: // ModelEmpty: nothing to optimize; HiGHS reports the (constant) optimum.
		return milp.Optimal
	case 7: // Optimal
		return milp.Optimal
	case 8: // Infeasible
		return milp.Infeasible
	case 9: // UnboundedOrInfeasible
		return milp.InfeasibleOrUnbounded
	case 10: // Unbounded
		return milp.Unbounded
	case 11, 12: // ObjectiveBound, ObjectiveTarget: stopped by a user objective limit
		return milp.IterationLimit
	case 13: // TimeLimit
		return milp.TimeLimit
	case 14: // IterationLimit
		return milp.IterationLimit
	case 15: // Unknown
		return milp.SolverError
	case 16: // SolutionLimit (MIP solution or node limit)
		return milp.IterationLimit
	case 17: // Interrupt
		return milp.Interrupted
	}
	return milp.SolverError
}
