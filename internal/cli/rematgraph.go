package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/checkmate"
	"github.com/memsched/memsched/model"
	"github.com/memsched/memsched/schedule"
)

// RematGraphOptions are the options of `memsched remat-graph`.
type RematGraphOptions struct {
	GraphFile string
	ChainFile string
	Mem       string
	Algo      string
	Solver    string
	TimeLimit float64
	// DefaultChain uses the built-in toy chain when neither file is given (`remat --algo ilp`).
	DefaultChain bool
}

// graph loads the graph (--graph, or the graph of --chain) and parses the budget.
func (o *RematGraphOptions) graph() (*instances.Graph, int64, error) {
	if o.Mem == "" {
		return nil, 0, usageErrorf("--mem is required")
	}
	mem, err := budgetFlag("--mem", o.Mem)
	if err != nil {
		return nil, 0, err
	}
	switch {
	case o.GraphFile != "" && o.ChainFile != "":
		return nil, 0, usageErrorf("give --graph or --chain, not both")
	case o.GraphFile != "":
		g, err := instances.LoadGraph(o.GraphFile)
		if err != nil {
			return nil, 0, &UsageError{err}
		}
		return g, mem, nil
	case o.ChainFile != "":
		c, err := instances.LoadChain(o.ChainFile)
		if err != nil {
			return nil, 0, &UsageError{err}
		}
		return instances.GraphFromChain(c), mem, nil
	}
	if o.DefaultChain {
		return instances.GraphFromChain(instances.DefaultChain()), mem, nil
	}
	return nil, 0, usageErrorf("--graph FILE (or --chain FILE) is required")
}

// RematGraphReport is the output of `memsched remat-graph`. Cost (the makespan) and Peak are
// those of the incumbent as replayed by verify/graphsim; Bound is the solver's proven lower
// bound. JSON keys as in the other commands (budget, makespan, bound, peak_memory, in bytes
// and seconds); the keys of before 0.2 (budget_bytes, cost_s, bound_s, peak_bytes,
// dp_persistent_s, best_chain_schedule_s) are written too until then (MarshalJSON).
type RematGraphReport struct {
	Graph     string                  `json:"graph"`
	Nodes     int                     `json:"nodes"`
	Budget    int64                   `json:"budget"`
	Algorithm string                  `json:"algorithm"`
	Status    string                  `json:"status"`
	Feasible  *bool                   `json:"feasible"`
	Cost      *float64                `json:"makespan"`
	Bound     *float64                `json:"bound"`
	Gap       *float64                `json:"gap"`
	Peak      int64                   `json:"peak_memory,omitempty"`
	Computed  int                     `json:"computations,omitempty"`
	Rows      int                     `json:"rows"`
	Cols      int                     `json:"cols"`
	Nonzeros  int                     `json:"nonzeros"`
	Seconds   float64                 `json:"seconds"`
	Solver    string                  `json:"solver"`
	Schedule  *schedule.GraphSchedule `json:"schedule,omitempty"`
	// With --chain: the persistent DP's makespan (C_MP, replayed by verify in dp), the best
	// verified chain schedule of the two and where it comes from, and whether the ILP's bound
	// bounds the chain's optimum too (only when ā = a everywhere: the graph keeps whole tapes).
	DPPersistent     *float64 `json:"dp_persistent,omitempty"`
	BestChain        *float64 `json:"best_chain_schedule,omitempty"`
	BestFrom         string   `json:"best_chain_schedule_from,omitempty"`
	BoundBoundsChain *bool    `json:"bound_bounds_chain,omitempty"`
}

// MarshalJSON writes r with the deprecated aliases of its renamed keys (kept for one release,
// docs/README.md "Changes").
func (r RematGraphReport) MarshalJSON() ([]byte, error) {
	type plain RematGraphReport
	return json.Marshal(struct {
		plain
		OldBudget       int64    `json:"budget_bytes"`
		OldCost         *float64 `json:"cost_s"`
		OldBound        *float64 `json:"bound_s"`
		OldPeak         int64    `json:"peak_bytes,omitempty"`
		OldDPPersistent *float64 `json:"dp_persistent_s,omitempty"`
		OldBestChain    *float64 `json:"best_chain_schedule_s,omitempty"`
	}{plain(r), r.Budget, r.Cost, r.Bound, r.Peak, r.DPPersistent, r.BestChain})
}

func newRematGraphCmd(io *IO) *cobra.Command {
	o := &RematGraphOptions{}
	cmd := &cobra.Command{
		Use:   "remat-graph --graph FILE --mem SIZE [--algo ilp] [--time-limit S]",
		Short: "Optimal rematerialization on a computation graph (Checkmate's MILP)",
		Long: `remat-graph solves Checkmate's MILP (docs/checkmate.md) on a graph (memsched.graph/v1,
docs/graph-format.md) or on the graph of a chain (--chain). The incumbent is replayed by the graph
simulator before it is printed; the status is the solver's (optimal only when proven), with its
bound and the gap.`,
		Example: `  memsched remat-graph --graph instances/testdata/graphs/diamond.json --mem 9MiB
  memsched remat-graph --graph instances/testdata/graphs/diamond.json --mem 9MiB --algo ilp-lp --json
  memsched gen zoo resnet --depth 18 --batch 8 -o r18.json
  memsched remat-graph --chain r18.json --mem 300MiB --time-limit 30   # Checkmate's graph model of the chain, next to C_MP
  memsched export --problem remat-ilp --graph g.json --mem 1GiB --format lp -o g.lp`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runRematGraph(o, io) },
	}
	f := cmd.Flags()
	f.StringVar(&o.GraphFile, "graph", "", "graph file (memsched.graph/v1)")
	f.StringVar(&o.ChainFile, "chain", "", "chain file (memsched.chain/v1), converted to its graph")
	f.StringVar(&o.Mem, "mem", "", "memory budget (e.g. 90MiB), everything counted")
	f.StringVar(&o.Algo, "algo", "ilp", "ilp (exact MILP) | ilp-lp (certified LP bound + two-phase rounding)")
	f.StringVar(&o.Solver, "solver", "", "highs|lpsolve|ref (default: the best compiled in)")
	f.Float64Var(&o.TimeLimit, "time-limit", 60, "wall-time budget in seconds of the whole command, model building included")
	return cmd
}

func runRematGraph(o *RematGraphOptions, io *IO) error {
	begin := time.Now()
	if o.Algo != "ilp" && o.Algo != "ilp-lp" {
		return usageErrorf("remat-graph: unknown --algo %q (want ilp or ilp-lp)", o.Algo)
	}
	if err := checkTimeLimit(o.TimeLimit); err != nil {
		return err
	}
	g, budget, err := o.graph()
	if err != nil {
		return err
	}
	s, err := milp.Lookup(o.Solver)
	if err != nil {
		return &UsageError{err}
	}
	// --time-limit is the command's budget: the solve gets what loading and building leave.
	ctx, cancel := withTimeLimit(context.Background(), begin, o.TimeLimit)
	defer cancel()
	params := milp.Params{TimeLimit: time.Duration(o.TimeLimit * float64(time.Second))}
	if o.Algo == "ilp-lp" {
		return runRematGraphLP(ctx, o, io, s, g, budget, params)
	}
	sol, f, err := checkmate.Solve(ctx, s, g, budget, params)
	if err != nil {
		return err
	}
	rep := &RematGraphReport{Graph: g.Name, Nodes: g.Len(), Budget: budget, Algorithm: o.Algo, Status: sol.Status.String(),
		Rows: f.Model.NumRows(), Cols: f.Model.NumVars(), Nonzeros: f.Model.NumNonzeros(),
		Seconds: sol.Result.Wall.Seconds(), Solver: sol.Result.Solver, Bound: finite(sol.Bound)}
	switch {
	case sol.Schedule != nil:
		yes := true
		rep.Feasible = &yes
		rep.Cost, rep.Gap, rep.Peak, rep.Schedule = finite(sol.Cost), finite(sol.Gap), sol.Peak, sol.Schedule
		for _, st := range sol.Schedule.Stages {
			rep.Computed += len(st.Compute)
		}
	case sol.Status == milp.Infeasible:
		no := false
		rep.Feasible = &no
	}
	if o.ChainFile != "" || (o.GraphFile == "" && o.DefaultChain) {
		if err := chainReference(ctx, o.ChainFile, budget, rep); err != nil {
			return err
		}
	}
	if io.JSON {
		return io.PrintJSON(rep)
	}
	w := tabwriter.NewWriter(io.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "graph\t%s (%d nodes)\n", rep.Graph, rep.Nodes)
	fmt.Fprintf(w, "budget\t%d bytes\n", budget)
	defer printChainReference(w, rep)
	fmt.Fprintf(w, "model\t%d rows, %d columns, %d nonzeros\n", rep.Rows, rep.Cols, rep.Nonzeros)
	fmt.Fprintf(w, "status\t%s (%s, %.2f s)\n", rep.Status, rep.Solver, rep.Seconds)
	switch {
	case rep.Cost != nil:
		fmt.Fprintf(w, "incumbent\t%.6g ms (replayed), peak %d bytes, %d computations for %d nodes\n", *rep.Cost*1e3, rep.Peak, rep.Computed, rep.Nodes)
	case rep.Feasible != nil:
		fmt.Fprintf(w, "feasible\tno schedule fits\n")
	default:
		fmt.Fprintf(w, "incumbent\tnone\n")
	}
	if rep.Bound != nil {
		fmt.Fprintf(w, "bound\t%.6g ms\n", *rep.Bound*1e3)
	} else {
		fmt.Fprintf(w, "bound\tnone\n")
	}
	if rep.Gap != nil {
		fmt.Fprintf(w, "gap\t%.3g%%\n", *rep.Gap*100)
	}
	return w.Flush()
}

// newExportAllCmd is `memsched export`: the weight-offloading export (newExportCmd) plus
// --problem remat-ilp, Checkmate's MILP for a graph or a chain.
func newExportAllCmd(io *IO) *cobra.Command {
	cmd := newExportCmd(io)
	inner := cmd.RunE
	var graphFile string
	var graphModel bool
	cmd.Use = "export --problem weight-offload-lb|remat-ilp --chain FILE|--graph FILE --mem SIZE --format lp|mps -o FILE"
	cmd.Long += "\nWith --problem remat-ilp it writes Checkmate's MILP (docs/checkmate.md): for --graph the graph model, for --chain the chain-exact model (004's operations; --graph-model: the graph model of the chain instead); the first comment line gives its units (memsched units: memory=<bytes> time=<seconds>)."
	cmd.Flags().StringVar(&graphFile, "graph", "", "graph file (memsched.graph/v1), --problem remat-ilp only")
	cmd.Flags().BoolVar(&graphModel, "graph-model", false, "--problem remat-ilp --chain: Checkmate's graph model of the chain instead of the chain-exact one")
	cmd.Use = strings.Replace(cmd.Use, "weight-offload-lb|remat-ilp", "weight-offload-lb|remat-ilp|act-offload|remat-offload", 1)
	cmd.Long += "\nWith --problem act-offload (needs --bandwidth) it writes the exact MILP of 001's Problem 1 (docs/act-offload.md), bounded by the best heuristic's verified makespan; with --problem remat-offload (needs --bandwidth) the relaxation MILP of rematerialization and offloading combined, a lower bound on every strict schedule (docs/bounds.md)."
	cmd.Flags().Lookup("problem").Usage = "weight-offload-lb|remat-ilp|act-offload|remat-offload"
	cmd.Flags().String("max-memory", defaultMaxMemory, "--problem act-offload|remat-offload: the most memory the model may take, estimated while it is built (their rows grow as the cube of the chain's length); above it export refuses")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		problem, _ := c.Flags().GetString("problem")
		if problem == "act-offload" || problem == "remat-offload" {
			if graphFile != "" || graphModel {
				return usageErrorf("export: --graph and --graph-model go with --problem remat-ilp")
			}
			return runExportOffload(c, io, problem)
		}
		if !contains(exportProblems, problem) {
			return usageErrorf("export: unknown --problem %q (want %s)", problem, strings.Join(exportProblems, " or "))
		}
		if problem != "remat-ilp" {
			if graphFile != "" {
				return usageErrorf("export: --graph needs --problem remat-ilp")
			}
			if graphModel {
				return usageErrorf("export: --graph-model needs --problem remat-ilp")
			}
			return inner(c, args)
		}
		chain, _ := c.Flags().GetString("chain")
		mem, _ := c.Flags().GetString("mem")
		format, _ := c.Flags().GetString("format")
		out, _ := c.Flags().GetString("output")
		if err := checkExportFlags(format, out); err != nil {
			return err
		}
		if graphModel && chain == "" {
			return usageErrorf("export: --graph-model needs --chain")
		}
		o := &RematGraphOptions{GraphFile: graphFile, ChainFile: chain, Mem: mem}
		var m *model.Model
		var units milp.Units
		if chain != "" && !graphModel {
			if graphFile != "" {
				return usageErrorf("give --graph or --chain, not both")
			}
			if mem == "" {
				return usageErrorf("--mem is required")
			}
			budget, err := budgetFlag("--mem", mem)
			if err != nil {
				return err
			}
			c, err := instances.LoadChain(chain)
			if err != nil {
				return &UsageError{err}
			}
			f, err := checkmate.BuildChain(c, budget)
			if err != nil {
				return &UsageError{err}
			}
			m, units = f.Model, f.Units
		} else {
			g, budget, err := o.graph()
			if err != nil {
				return err
			}
			f, err := checkmate.Build(g, budget)
			if err != nil {
				return &UsageError{err}
			}
			m, units = f.Model, f.Units
		}
		return writeModelFile(io, problem, format, out, m, units)
	}
	return cmd
}

// runRematGraphLP is --algo ilp-lp: the LP relaxation's certified bound and the two-phase
// rounding's schedule (replayed), or none when the rounding exceeds the budget.
func runRematGraphLP(ctx context.Context, o *RematGraphOptions, io *IO, s milp.Solver, g *instances.Graph, budget int64, p milp.Params) error {
	a, f, err := checkmate.SolveLP(ctx, s, g, budget, p)
	if err != nil {
		return err
	}
	status := "lp-" + a.LPStatus.String()
	rep := &RematGraphReport{Graph: g.Name, Nodes: g.Len(), Budget: budget, Algorithm: o.Algo, Status: status,
		Rows: f.Model.NumRows(), Cols: f.Model.NumVars(), Nonzeros: f.Model.NumNonzeros(), Solver: s.Name(), Bound: finite(a.Bound)}
	if a.LPStatus == milp.Infeasible {
		no := false
		rep.Feasible = &no
	}
	if a.Schedule != nil {
		yes := true
		rep.Feasible = &yes
		rep.Cost, rep.Peak, rep.Schedule = finite(a.Cost), a.Peak, a.Schedule
		rep.Gap = finite(milp.RelGap(a.Cost, a.Bound, true))
		for _, st := range a.Schedule.Stages {
			rep.Computed += len(st.Compute)
		}
	}
	if io.JSON {
		return io.PrintJSON(rep)
	}
	w := tabwriter.NewWriter(io.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "graph\t%s (%d nodes)\n", rep.Graph, rep.Nodes)
	fmt.Fprintf(w, "budget\t%d bytes\n", budget)
	fmt.Fprintf(w, "LP relaxation\t%s, value %.6g ms (solver's, not rigorous)\n", a.LPStatus, a.LPValue*1e3)
	if rep.Bound != nil {
		fmt.Fprintf(w, "bound\t%.6g ms (certified: safe LP bound)\n", *rep.Bound*1e3)
	} else {
		fmt.Fprintf(w, "bound\tnone\n")
	}
	switch {
	case rep.Cost != nil:
		fmt.Fprintf(w, "rounded\t%.6g ms (replayed), peak %d bytes, gap to bound %.3g%%\n", *rep.Cost*1e3, rep.Peak, *rep.Gap*100)
	case a.LPStatus == milp.Optimal:
		fmt.Fprintf(w, "rounded\tno schedule: the rounding peaks at %d bytes, over the budget\n", a.RoundedPeak)
	}
	return w.Flush()
}

// chainReference adds the persistent DP's sequence to a --chain report. HiGHS takes no start
// point through milp.Params, so instead of a warm start the DP's sequence is reported as the best
// chain schedule whenever the ILP has none or a worse one.
func chainReference(ctx context.Context, file string, budget int64, rep *RematGraphReport) error {
	c, _, err := loadChain(file)
	if err != nil {
		return err
	}
	same := true
	for _, st := range c.Stages {
		same = same && st.ABar == st.A
	}
	rep.BoundBoundsChain = &same
	r, err := dp.SolvePersistent(c, budget, dp.Options{Stop: ctx.Done()})
	if errors.Is(err, dp.ErrStopped) {
		return nil // no time left for the reference row
	}
	if err != nil {
		return err
	}
	if r.Feasible {
		rep.DPPersistent = finite(r.Makespan)
	}
	switch {
	case rep.Cost != nil && (rep.DPPersistent == nil || *rep.Cost <= *rep.DPPersistent):
		rep.BestChain, rep.BestFrom = rep.Cost, "ilp (free-delete variant)"
	case rep.DPPersistent != nil:
		rep.BestChain, rep.BestFrom = rep.DPPersistent, "dp-persistent"
	}
	return nil
}

func printChainReference(w *tabwriter.Writer, rep *RematGraphReport) {
	if rep.BoundBoundsChain == nil {
		return
	}
	if rep.DPPersistent != nil {
		fmt.Fprintf(w, "C_MP (persistent DP)\t%.6g ms\n", *rep.DPPersistent*1e3)
	} else {
		fmt.Fprintf(w, "C_MP (persistent DP)\tinfeasible\n")
	}
	if rep.BestChain != nil {
		fmt.Fprintf(w, "best chain schedule\t%.6g ms (%s)\n", *rep.BestChain*1e3, rep.BestFrom)
	}
	if !*rep.BoundBoundsChain {
		fmt.Fprintf(w, "note\tā > a: the graph keeps whole tapes, its bound bounds the graph model only, not the chain\n")
	}
	w.Flush()
}

// newRematAllCmd is `memsched remat`: the chain algorithms of newRematCmd plus --algo ilp and
// ilp-lp, the chain-exact MILP (checkmate.BuildChain; Checkmate's graph model of the chain stays
// reachable as `remat-graph --chain`).
func newRematAllCmd(io *IO) *cobra.Command {
	cmd := newRematCmd(io)
	inner := cmd.RunE
	var limit float64
	var solver string
	cmd.Flags().Float64Var(&limit, "time-limit", 60, "wall-time budget in seconds of the whole command, every table and (--algo ilp, ilp-lp) the model building included: a table or solve still running at it stops, and the command says so")
	cmd.Flags().StringVar(&solver, "solver", "", "MILP backend for --algo ilp, ilp-lp: highs|lpsolve|ref (default: the best compiled in)")
	cmd.Flags().Lookup("algo").Usage += "|ilp|ilp-lp"
	cmd.Long += "\n  ilp         the chain-exact MILP (Checkmate's staged model on 004's operations; its optimum is\n              the exhaustive oracle's), C_MP's sequence next to it, docs/checkmate.md\n  ilp-lp      its certified LP bound, with C_MP's sequence as the schedule\nCheckmate's plain graph model of the chain (free-delete variant): memsched remat-graph --chain FILE."
	cmd.RunE = func(c *cobra.Command, args []string) error {
		algo, _ := c.Flags().GetString("algo")
		if algo != "ilp" && algo != "ilp-lp" {
			return inner(c, args)
		}
		for _, f := range []string{"sequence", "frontier", "slots", "exact", "max-breakpoints", "free-delete"} {
			if c.Flags().Changed(f) {
				return usageErrorf("remat: --%s does not go with --algo %s (the dynamic programs' flag)", f, algo)
			}
		}
		chain, _ := c.Flags().GetString("chain")
		mem, _ := c.Flags().GetString("mem")
		maxMem, _ := c.Flags().GetString("max-memory")
		return runRematILP(&RematILPOptions{ChainFile: chain, Mem: mem, Algo: algo, Solver: solver, TimeLimit: limit, MaxMemory: maxMem}, io)
	}
	return cmd
}
