package cli

import (
	"context"
	"fmt"
	"math"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/model"
	"github.com/memsched/memsched/model/modelfile"
)

// SolveOptions are the flags of `memsched solve`.
type SolveOptions struct {
	File      string
	Solver    string
	TimeLimit float64 // seconds
	Gap       float64
	Threads   int
}

// SolveReport is the JSON output of `memsched solve`.
type SolveReport struct {
	File        string   `json:"file"`
	Solver      string   `json:"solver"`
	Status      string   `json:"status"`
	HasSolution bool     `json:"has_solution"`
	Objective   *float64 `json:"objective"`
	Bound       *float64 `json:"bound"`
	Gap         *float64 `json:"gap"`
	Seconds     float64  `json:"seconds"`
	Nodes       int64    `json:"nodes"`
	// Refused is the evidence when memsched's re-check refused the solver's answer (status
	// solver-error): what the solver claimed and what its point violates.
	Refused string `json:"refused,omitempty"`
	// Note qualifies the solver's claim where memsched knows it can be wrong (lp_solve's
	// optimality on a MIP).
	Note string `json:"note,omitempty"`
}

// lpsolveMIPNote is Note for lp_solve's "optimal" on a model with integer columns: golp gives
// no best-bound query, so its bound is its incumbent's objective, and its branch and bound
// has pruned the optimum on memsched's own models (on the exported chain-exact remat MILP of
// `gen random --seed 8 --stages 8` at 30 %: 35.79 "optimal" where HiGHS and cbc prove 29.37;
// other branching rules give 29.37, 32.81 or 37.72, each called optimal).
const lpsolveMIPNote = "lp_solve's optimality on a MIP is its own word, not a proof: its branch and bound has called non-optimal points optimal on memsched's models (docs/checkmate.md); check with HiGHS or cbc"

func newSolveCmd(io *IO) *cobra.Command {
	opts := &SolveOptions{}
	cmd := &cobra.Command{
		Use:   "solve FILE.mps|FILE.lp",
		Short: "Solve an LP/MILP file with HiGHS, lp_solve or the pure-Go referee",
		Long: `solve reads a model (MPS, free or fixed format, or CPLEX LP, with memsched's readers;
.gz files are decompressed) and solves it. The returned point is re-checked against the model
before anything is printed. Solve outcomes (infeasible, unbounded, time limit, ...) are reported
as a status with exit 0; an unbounded model has no objective. An answer that fails the re-check
is reported as status solver-error with the evidence ("refused": the row, bound or integrality
the solver's point violates), never as a solution. A file with a construct outside memsched's
model (quadratic objective, SOS, semi-continuous columns, cones, indicator constraints) or a
malformed one is refused with exit 2 and the file, line and construct on stderr.`,
		Example: `  memsched solve lb.mps --time-limit 60 --gap 1e-4
  memsched solve afiro.mps.gz --solver lpsolve
  memsched solve model.lp --solver ref --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("solve: give one model file (.mps or .lp), got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			return runSolve(opts, io)
		},
	}
	bindSolveFlags(cmd.Flags(), opts)
	return cmd
}

// bindSolveFlags binds the flags of `memsched solve` to opts (separate so that argv parsing is
// testable without solving).
func bindSolveFlags(f *pflag.FlagSet, opts *SolveOptions) {
	f.StringVar(&opts.Solver, "solver", "", "highs|lpsolve|ref (default: the best compiled in)")
	f.Float64Var(&opts.TimeLimit, "time-limit", 0, "wall-time budget in seconds of the whole command, reading the file included (0: none)")
	f.Float64Var(&opts.Gap, "gap", 0, "relative MIP gap at which to stop (0: solver default)")
	f.IntVar(&opts.Threads, "threads", 0, "solver threads (0: solver default)")
}

// readModel reads a model file as `memsched solve` does: by its extension, .mps, .lp, .mps.gz or
// .lp.gz; a malformed file is a ParseError naming the line.
func readModel(path string) (*model.Model, error) { return modelfile.Read(path) }

func runSolve(opts *SolveOptions, io *IO) error {
	begin := time.Now()
	if err := checkTimeLimitOrNone(opts.TimeLimit); err != nil {
		return err
	}
	if opts.Threads < 0 {
		return usageErrorf("solve: --threads must be ≥ 0, got %d", opts.Threads)
	}
	if !(opts.Gap >= 0 && opts.Gap < 1) {
		return usageErrorf("solve: --gap must be in [0, 1), got %g", opts.Gap)
	}
	m, err := readModel(opts.File)
	if err != nil {
		return &UsageError{err}
	}
	s, err := milp.Lookup(opts.Solver)
	if err != nil {
		return &UsageError{err}
	}
	p := milp.Params{TimeLimit: time.Duration(opts.TimeLimit * float64(time.Second)), RelGap: opts.Gap, Threads: opts.Threads}
	ctx := context.Background()
	if opts.TimeLimit > 0 {
		// The whole command's budget: the solve gets what reading the file left.
		var cancel context.CancelFunc
		ctx, cancel = withTimeLimit(ctx, begin, opts.TimeLimit)
		defer cancel()
	}
	res, err := milp.Solve(ctx, s, m, p)
	if err != nil {
		return err
	}
	rep := SolveReport{File: opts.File, Solver: res.Solver, Status: res.Status.String(), HasSolution: res.HasSolution,
		Seconds: res.Wall.Seconds(), Nodes: res.Nodes}
	// An unbounded model has no optimum: the objective of whatever point the solver returned
	// (HiGHS returns one) is not a result, and printing it would read as one.
	if res.HasSolution && res.Status != milp.Unbounded && res.Status != milp.InfeasibleOrUnbounded {
		rep.Objective = finite(res.Objective)
		rep.Gap = finite(res.Gap)
	}
	rep.Bound = finite(res.Bound)
	rep.Refused = res.Refused
	if res.Solver == "lpsolve" && res.Status == milp.Optimal && hasIntegers(m) {
		rep.Note = lpsolveMIPNote
	}
	if io.JSON {
		return io.PrintJSON(rep)
	}
	show := func(x *float64) string {
		if x == nil {
			return "-"
		}
		return fmt.Sprintf("%.10g", *x)
	}
	w := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "file\t%s\n", rep.File)
	fmt.Fprintf(w, "solver\t%s\n", rep.Solver)
	fmt.Fprintf(w, "status\t%s\n", rep.Status)
	fmt.Fprintf(w, "objective\t%s\n", show(rep.Objective))
	fmt.Fprintf(w, "best bound\t%s\n", show(rep.Bound))
	fmt.Fprintf(w, "gap\t%s\n", show(rep.Gap))
	fmt.Fprintf(w, "time\t%.3f s\n", rep.Seconds)
	if rep.Refused != "" {
		fmt.Fprintf(w, "refused\t%s\n", rep.Refused)
	}
	if rep.Note != "" {
		fmt.Fprintf(w, "note\t%s\n", rep.Note)
	}
	return w.Flush()
}

// hasIntegers says whether m has an integer or binary column.
func hasIntegers(m *model.Model) bool {
	for j := 0; j < m.NumVars(); j++ {
		if m.VarType(model.Var(j)) != model.Continuous {
			return true
		}
	}
	return false
}

// finite returns &x, or nil (JSON null, "-" in text) for NaN and ±Inf: a value the solver did
// not establish.
func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}
