package cli

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/checkmate"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
)

// RematILPOptions are the options of `memsched remat --algo ilp|ilp-lp`: the chain-exact MILP
// (checkmate.BuildChain) on a chain.
type RematILPOptions struct {
	ChainFile string
	Mem       string
	Algo      string
	Solver    string
	TimeLimit float64
	// MaxMemory caps the model's estimated memory (--max-memory).
	MaxMemory string
}

// RematILPReport is the output of `memsched remat --algo ilp|ilp-lp`. Makespan and Peak are
// those of the reported sequence as replayed by verify.Remat (004's model); Bound is a proven
// lower bound on the chain's optimum: the solver's MIP bound (ilp) or the safe LP bound (ilp-lp).
type RematILPReport struct {
	Chain  string `json:"chain"`
	Stages int    `json:"stages"`
	Budget int64  `json:"budget"`
	// MinBudget is the smallest budget in which any sequence runs (verify.MinBudget).
	MinBudget int64    `json:"min_budget"`
	Algorithm string   `json:"algorithm"`
	Status    string   `json:"status"`
	Feasible  *bool    `json:"feasible"`
	Makespan  *float64 `json:"makespan,omitempty"`
	Peak      int64    `json:"peak_memory,omitempty"`
	Bound     *float64 `json:"bound"`
	Gap       *float64 `json:"gap"`
	// SequenceFrom says which algorithm produced Sequence: "ilp" (the MILP's incumbent) or
	// "dp-persistent" (C_MP, when the MILP has none or a worse one, and always with ilp-lp).
	SequenceFrom string            `json:"sequence_from,omitempty"`
	Sequence     schedule.Sequence `json:"sequence"`
	Verified     bool              `json:"verified"`
	// ILPMakespan is the MILP incumbent's replayed makespan (ilp), LPValue the solver's LP
	// optimum (ilp-lp, not rigorous), DPPersistent C_MP's makespan.
	ILPMakespan  *float64 `json:"ilp_makespan,omitempty"`
	LPValue      *float64 `json:"lp_value,omitempty"`
	DPPersistent *float64 `json:"dp_persistent,omitempty"`
	// WarmStart says what the MILP solve started from (ilp): C_MP's sequence when it fits.
	WarmStart string `json:"warm_start,omitempty"`
	// BoundNote says why the solver's bound and optimality claim were not used (a backend the
	// model does not trust), "" otherwise.
	BoundNote string  `json:"bound_note,omitempty"`
	Rows      int     `json:"rows"`
	Cols      int     `json:"cols"`
	Nonzeros  int     `json:"nonzeros"`
	Seconds   float64 `json:"seconds"`
	Solver    string  `json:"solver"`
}

func runRematILP(o *RematILPOptions, io *IO) error {
	begin := time.Now()
	if o.Mem == "" {
		return usageErrorf("remat: --mem is required (e.g. --mem 90MiB)")
	}
	budget, err := budgetFlag("--mem", o.Mem)
	if err != nil {
		return err
	}
	if err := checkTimeLimit(o.TimeLimit); err != nil {
		return err
	}
	maxMem, err := maxMemoryFlag(o.MaxMemory)
	if err != nil {
		return err
	}
	c, source, err := loadChain(o.ChainFile)
	if err != nil {
		return err
	}
	// The model has about 18n² nonzeros (714 000 on 200 stages): sized before it is built.
	if need := milp.ModelBytes(18 * c.Len() * c.Len()); need > maxMem {
		return fmt.Errorf("remat: the chain-exact MILP of %d stages would take about %s, above the memory limit of %s (--max-memory); use --algo persistent or floating, or raise --max-memory",
			c.Len(), instances.FormatSize(need), instances.FormatSize(maxMem))
	}
	s, err := milp.Lookup(o.Solver)
	if err != nil {
		return &UsageError{err}
	}
	// --time-limit is the command's budget: the solve gets what the loading, C_MP and the
	// model building leave of it.
	ctx, cancel := withTimeLimit(context.Background(), begin, o.TimeLimit)
	defer cancel()
	p := milp.Params{TimeLimit: time.Duration(o.TimeLimit * float64(time.Second))}
	rep := &RematILPReport{Chain: source, Stages: c.Len(), Budget: budget, MinBudget: verify.MinBudget(c), Algorithm: o.Algo, Sequence: schedule.Sequence{}, Solver: s.Name()}
	cmp, err := dp.SolvePersistent(c, budget, dp.Options{MaxMemory: maxMem, Stop: ctx.Done()})
	var tl *dp.TooLargeError
	if errors.As(err, &tl) || errors.Is(err, dp.ErrStopped) {
		cmp, err = dp.Result{}, nil // no C_MP row, no warm start
	}
	if err != nil {
		return err
	}
	if cmp.Feasible {
		rep.DPPersistent = finite(cmp.Makespan)
	}
	var f *checkmate.ChainFormulation
	if o.Algo == "ilp-lp" {
		if f, err = checkmate.BuildChain(c, budget); err != nil {
			return &UsageError{err}
		}
		start := time.Now()
		lp, err := milp.LPBound(ctx, s, f.Model, p)
		if err != nil {
			return err
		}
		rep.Seconds = time.Since(start).Seconds()
		rep.Status = "lp-" + lp.Status.String()
		if lp.Status == milp.Infeasible {
			no := false
			rep.Feasible = &no
		}
		rep.Bound = finite(lp.Bound * f.Units.Time)
		rep.LPValue = finite(lp.SolverValue * f.Units.Time)
	} else {
		var start schedule.Sequence
		if cmp.Feasible {
			start = cmp.Sequence
		}
		sol, ff, err := checkmate.SolveChainExact(ctx, s, c, budget, p, start)
		if err != nil {
			return err
		}
		rep.WarmStart = "none (C_MP infeasible)"
		switch {
		case start != nil && sol.StartNote != "":
			rep.WarmStart = "C_MP's sequence, not passed: " + sol.StartNote
		case start != nil:
			rep.WarmStart = "C_MP's sequence"
		}
		f = ff
		rep.Status, rep.Seconds, rep.Solver = sol.Status.String(), sol.Result.Wall.Seconds(), sol.Result.Solver
		rep.BoundNote = sol.BoundNote
		rep.Bound = finite(sol.Bound)
		if sol.Status == milp.Infeasible {
			no := false
			rep.Feasible = &no
		}
		if sol.Sequence != nil && !sol.FromStart {
			rep.ILPMakespan = finite(sol.Makespan)
			rep.Sequence, rep.SequenceFrom = sol.Sequence, "ilp"
		}
	}
	if cmp.Feasible && (rep.ILPMakespan == nil || cmp.Makespan < *rep.ILPMakespan) {
		rep.Sequence, rep.SequenceFrom = cmp.Sequence, "dp-persistent"
	}
	if rep.SequenceFrom != "" {
		// Whatever produced it, the sequence is replayed here before it is reported.
		sim, err := verify.Remat(c, rep.Sequence, verify.RematOptions{})
		if err != nil || sim.Peak > budget {
			return fmt.Errorf("remat: the %s sequence does not replay within the budget: %v (peak %d)", rep.SequenceFrom, err, sim.Peak)
		}
		yes := true
		rep.Feasible, rep.Verified = &yes, true
		rep.Makespan, rep.Peak = finite(sim.Makespan), sim.Peak
		if rep.Bound != nil {
			rep.Gap = finite(milp.RelGap(sim.Makespan, *rep.Bound, true))
		}
	}
	rep.Rows, rep.Cols, rep.Nonzeros = f.Model.NumRows(), f.Model.NumVars(), f.Model.NumNonzeros()
	if io.JSON {
		return io.PrintJSON(rep)
	}
	return printRematILP(io, rep)
}

func printRematILP(io *IO, rep *RematILPReport) error {
	w := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "chain\t%s (%d stages)\n", rep.Chain, rep.Stages)
	fmt.Fprintf(w, "algorithm\t%s (chain-exact MILP, 004's model, docs/checkmate.md)\n", rep.Algorithm)
	fmt.Fprintf(w, "budget\t%s (%d B)\n", instances.FormatSize(rep.Budget), rep.Budget)
	fmt.Fprintf(w, "model\t%d rows, %d columns, %d nonzeros\n", rep.Rows, rep.Cols, rep.Nonzeros)
	fmt.Fprintf(w, "status\t%s (%s, %.2f s)\n", rep.Status, rep.Solver, rep.Seconds)
	if rep.LPValue != nil {
		fmt.Fprintf(w, "LP relaxation\t%s (solver's value, not rigorous)\n", instances.FormatDuration(*rep.LPValue))
	}
	switch {
	case rep.Bound != nil && rep.Algorithm == "ilp-lp":
		fmt.Fprintf(w, "bound\t%s (%.9g s, certified: safe LP bound)\n", instances.FormatDuration(*rep.Bound), *rep.Bound)
	case rep.Bound != nil:
		fmt.Fprintf(w, "bound\t%s (%.9g s, proven: the solver's, or Σ(u_f+u_b) if higher)\n", instances.FormatDuration(*rep.Bound), *rep.Bound)
	default:
		fmt.Fprintf(w, "bound\tnone\n")
	}
	if rep.WarmStart != "" {
		fmt.Fprintf(w, "warm start\t%s\n", rep.WarmStart)
	}
	if rep.BoundNote != "" {
		fmt.Fprintf(w, "note\t%s\n", rep.BoundNote)
	}
	if rep.ILPMakespan != nil {
		fmt.Fprintf(w, "ILP incumbent\t%s (replayed)\n", instances.FormatDuration(*rep.ILPMakespan))
	} else if rep.Algorithm == "ilp" {
		fmt.Fprintf(w, "ILP incumbent\tnone\n")
	}
	if rep.DPPersistent != nil {
		fmt.Fprintf(w, "C_MP (persistent DP)\t%s\n", instances.FormatDuration(*rep.DPPersistent))
	} else {
		fmt.Fprintf(w, "C_MP (persistent DP)\tinfeasible\n")
	}
	if rep.Feasible != nil && !*rep.Feasible {
		fmt.Fprintf(w, "feasible\tno: the model is infeasible (smallest feasible budget: %s)\n", instances.FormatSize(rep.MinBudget))
		return w.Flush()
	}
	if rep.Makespan == nil {
		fmt.Fprintf(w, "sequence\tnone found\n")
		return w.Flush()
	}
	fmt.Fprintf(w, "makespan\t%s (%.9g s, from %s)\n", instances.FormatDuration(*rep.Makespan), *rep.Makespan, rep.SequenceFrom)
	fmt.Fprintf(w, "peak memory\t%s (%d B)\n", instances.FormatSize(rep.Peak), rep.Peak)
	if rep.Gap != nil {
		fmt.Fprintf(w, "gap\t%.3g%%\n", *rep.Gap*100)
	}
	fmt.Fprintf(w, "verified\tyes (replayed by the simulator)\n")
	fmt.Fprintf(w, "sequence\t%s\n", rep.Sequence)
	return w.Flush()
}
