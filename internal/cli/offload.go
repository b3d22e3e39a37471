package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	heuroff "github.com/memsched/memsched/heuristics/offload"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/instances/offload"
	"github.com/memsched/memsched/lever/weightoffload"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/weightlb"
	"github.com/memsched/memsched/model"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify/periodic"
)

// WeightsOptions are the flags shared by the weight-offloading commands.
type WeightsOptions struct {
	ChainFile, Mem, Bandwidth string
}

func (o *WeightsOptions) flags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.ChainFile, "chain", "", "chain file (memsched.chain/v1; weight offloading needs its weights w per stage, activation offloading does not)")
	cmd.Flags().StringVar(&o.Mem, "mem", "", "GPU memory M_GPU (e.g. 16GiB)")
	cmd.Flags().StringVar(&o.Bandwidth, "bandwidth", "", bandwidthUsage+"; required")
}

// parse checks the three flags, naming the first one missing or wrong.
func (o *WeightsOptions) parse() (mem int64, beta float64, err error) {
	switch {
	case o.ChainFile == "":
		return 0, 0, usageErrorf("--chain FILE is required")
	case o.Mem == "":
		return 0, 0, usageErrorf("--mem is required (e.g. --mem 16GiB)")
	}
	if mem, err = budgetFlag("--mem", o.Mem); err != nil {
		return 0, 0, err
	}
	beta, err = bandwidthFlag(o.Bandwidth)
	return mem, beta, err
}

// problem loads the chain and maps it to 002's model.
func (o *WeightsOptions) problem() (*offload.Problem, error) {
	mem, beta, err := o.parse()
	if err != nil {
		return nil, err
	}
	c, err := instances.LoadChain(o.ChainFile)
	if err != nil {
		return nil, &UsageError{err}
	}
	p, err := offload.FromChain(c, mem, beta)
	if err != nil {
		return nil, &UsageError{err}
	}
	return p, nil
}

// lowerBoundModel loads the problem and builds its §6 MILP (units chosen from the data, stated
// in the model's comment line).
func (o *WeightsOptions) lowerBoundModel() (*offload.Problem, *model.Model, error) {
	p, err := o.problem()
	if err != nil {
		return nil, nil, err
	}
	m, _, err := weightlb.Build(p)
	return p, m, err
}

// OffloadReport is the output of `memsched offload-weights`.
type OffloadReport struct {
	Algorithm string             `json:"algorithm"`
	Feasible  bool               `json:"feasible"`
	Makespan  float64            `json:"makespan,omitempty"`
	Idle      float64            `json:"idle,omitempty"`
	Peak      int64              `json:"peak_memory,omitempty"`
	Offloaded int64              `json:"offloaded_bytes,omitempty"`
	Selection []string           `json:"selection"`
	Schedule  *schedule.Periodic `json:"schedule,omitempty"`
	Verified  bool               `json:"verified"`
	Reason    string             `json:"reason,omitempty"`
}

// offloadAlgos are the algorithms of offload-weights, in the order --algo all reports them:
// the registry's strategies, then "milp" (only where a MILP solver is compiled in).
var offloadAlgos = append(weightoffload.Names(), "milp")

// weightsAlgoHelp lists offload-weights' algorithms for its help: the registry's strategies,
// milp and all.
func weightsAlgoHelp() string {
	var es []helpEntry
	for _, st := range weightoffload.Strategies {
		es = append(es, helpEntry{st.Name, st.Summary})
	}
	es = append(es,
		helpEntry{"milp", "MILP-guided: the offloading choices of the lower-bound MILP's incumbent, scheduled by Alg. 2 (needs a MILP solver; --solver, --time-limit)"},
		helpEntry{"all", "every algorithm in one table; with --bound also the certified lower bound of `memsched bound` and each period's ratio to it"})
	return strategyHelp(es)
}

// boundSettings say how the MILP of the bound (and of --algo milp) is solved.
type boundSettings struct {
	solver string
	limit  float64
	// ctx carries the command's deadline (--time-limit counts from the command's start) and
	// Ctrl-C; nil: none. maxMemory caps the MILP's estimated memory (0: none).
	ctx       context.Context
	maxMemory int64
}

// runOffloadAlgo runs one algorithm and re-validates its schedule. No valid schedule is a
// result (Feasible false, Reason), not an error. The MILP-guided algorithm reuses cert when
// given (the bound already solved), else solves the MILP under bs.
func runOffloadAlgo(p *offload.Problem, algo string, bs boundSettings, cert *weightlb.Certified) (OffloadReport, error) {
	rep := OffloadReport{Algorithm: algo, Selection: []string{}}
	var out weightoffload.Outcome
	if st, ok := weightoffload.Lookup(algo); ok {
		var stop <-chan struct{}
		if bs.ctx != nil {
			stop = bs.ctx.Done()
		}
		var err error
		if out, err = st.RunUntil(p, stop); errors.Is(err, heuroff.ErrStopped) {
			out.Reason = "stopped at the time limit (--time-limit) before it finished"
		} else if err != nil {
			return rep, fmt.Errorf("offload-weights: %w", err)
		}
	} else if algo == "milp" {
		if cert == nil {
			var err error
			if cert, err = certifiedBound(p, bs); err != nil {
				return rep, err
			}
		}
		s, _, err := weightlb.Guided(p, cert)
		if err != nil {
			out.Reason = err.Error()
		} else {
			// Guided validates; validate again here, independently of it.
			r, err := periodic.Validate(p, s)
			if err != nil {
				return rep, fmt.Errorf("offload-weights: %s returned an invalid schedule: %w", algo, err)
			}
			out = weightoffload.Outcome{Feasible: true, Selection: cert.Selection, Schedule: s, Report: r}
		}
	} else {
		return rep, usageErrorf("offload-weights: unknown --algo %q (want %s)", algo, orList(slices.Concat(offloadAlgos, []string{"all"})))
	}
	if !out.Feasible {
		rep.Reason = out.Reason
		return rep, nil
	}
	r, sel := out.Report, out.Selection
	rep.Feasible, rep.Verified, rep.Schedule = true, true, out.Schedule
	rep.Makespan, rep.Idle, rep.Peak, rep.Offloaded = r.Period, r.Idle, r.Peak, r.Offloaded
	for k := 1; k < len(sel); k++ {
		if sel[k][1] {
			rep.Selection = append(rep.Selection, fmt.Sprintf("(%d,1)", k))
		}
		if sel[k][0] {
			rep.Selection = append(rep.Selection, fmt.Sprintf("(%d,0)", k))
		}
	}
	return rep, nil
}

// orList writes names as "a, b, c or d".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func newOffloadWeightsCmd(io *IO) *cobra.Command {
	o := &WeightsOptions{}
	var algo, solver, maxMemory string
	var withBound bool
	var limit float64
	cmd := &cobra.Command{
		Use:   "offload-weights --chain FILE --mem SIZE [--bandwidth RATE] [--algo greedy|greedy-nodiscount|greedy-reserve|l2l|all [--bound]]",
		Short: "Weight-offloading schedule of one training iteration (002), validated",
		Long: `offload-weights decides which layers' weights leave the GPU and when (002), and prints the
period of the steady state. Algorithms:
` + weightsAlgoHelp() + `
Every schedule is checked by the periodic validator before it is printed.`,
		Example: `  memsched gen zoo gpt2 --layers 36 --hidden 1280 --heads 20 --batch 8 -o gpt2.json
  memsched offload-weights --chain gpt2.json --mem 8GiB --bandwidth 12GB/s
  memsched offload-weights --chain gpt2.json --mem 8GiB --bandwidth 12GB/s --algo all --bound --time-limit 30
  memsched offload-weights --chain gpt2.json --mem 8GiB --bandwidth 12GB/s --json > w.json   # then: memsched verify`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			start := time.Now()
			if err := checkTimeLimit(limit); err != nil {
				return err
			}
			if _, err := boundSolvers(solver); err != nil {
				return err
			}
			maxMem, err := maxMemoryFlag(maxMemory)
			if err != nil {
				return err
			}
			p, err := o.problem()
			if err != nil {
				return err
			}
			ctx, cancel := withTimeLimit(cmd.Context(), start, limit)
			defer cancel()
			bs := boundSettings{solver: solver, limit: limit, ctx: ctx, maxMemory: maxMem}
			if algo == "all" {
				return runOffloadAll(io, p, withBound, bs)
			}
			if withBound {
				return usageErrorf("offload-weights: --bound goes with --algo all (or use memsched bound)")
			}
			rep, err := runOffloadAlgo(p, algo, bs, nil)
			if err != nil {
				return err
			}
			if io.JSON {
				return io.PrintJSON(rep)
			}
			w := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintf(w, "algorithm\t%s\nlayers\t%d\nM_GPU\t%s\nbandwidth\t%s\n", algo, p.L(), instances.FormatSize(p.MGPU), instances.FormatRate(p.Beta))
			if !rep.Feasible {
				fmt.Fprintf(w, "feasible\tno: %s\n", rep.Reason)
				return w.Flush()
			}
			fmt.Fprintf(w, "makespan\t%s (idle %s)\npeak memory\t%s\noffloaded per iteration\t%s\n",
				instances.FormatDuration(rep.Makespan), instances.FormatDuration(rep.Idle), instances.FormatSize(rep.Peak), instances.FormatSize(rep.Offloaded))
			if algo != "l2l" {
				fmt.Fprintf(w, "selection\t%s\n", strings.Join(rep.Selection, " "))
			}
			fmt.Fprintf(w, "verified\tyes (periodic validator)\n")
			return w.Flush()
		},
	}
	o.flags(cmd)
	cmd.Flags().StringVar(&algo, "algo", "greedy", "greedy (002 Alg. 1 + Alg. 2) | greedy-nodiscount (Greedy*) | greedy-reserve (Alg. 1 with room for weights in flight) | l2l | milp (MILP-guided) | all")
	cmd.Flags().BoolVar(&withBound, "bound", false, "with --algo all: solve the lower-bound MILP too and report each period's ratio to it")
	cmd.Flags().StringVar(&solver, "solver", "", "with --bound or --algo milp: highs|lpsolve|ref (default: the best compiled in)")
	cmd.Flags().Float64Var(&limit, "time-limit", 60, "wall-time budget in seconds of the whole command: every algorithm, the MILP's model building and solve (--bound, --algo milp) included; what it stops says so")
	addMaxMemoryFlag(cmd.Flags(), &maxMemory)
	return cmd
}

// CompareReport is the output of `memsched offload-weights --algo all`.
type CompareReport struct {
	Layers int     `json:"layers"`
	MGPU   int64   `json:"m_gpu"`
	Beta   float64 `json:"bandwidth"`
	// SumU is Σ(u_F + u_B), the period without any idle time: a lower bound by itself.
	SumU float64 `json:"sum_u"`
	// Bound is filled with --bound: the MILP's certified lower bound, which ≥ SumU.
	Bound   *BoundReport    `json:"bound,omitempty"`
	Results []OffloadReport `json:"results"`
}

func runOffloadAll(io *IO, p *offload.Problem, withBound bool, bs boundSettings) error {
	rep := CompareReport{Layers: p.L(), MGPU: p.MGPU, Beta: p.Beta}
	rep.SumU, _, _ = weightlb.TrivialBounds(p)
	var cert *weightlb.Certified
	// The MILP-guided row needs a real MILP backend (the pure-Go referee only enumerates).
	if withBound || realMILPBackend() {
		var err error
		if cert, err = certifiedBound(p, bs); err != nil {
			return err
		}
	}
	for _, a := range offloadAlgos {
		if a == "milp" && cert == nil {
			continue // no MILP solver in this build
		}
		r, err := runOffloadAlgo(p, a, bs, cert)
		if err != nil {
			return err
		}
		r.Schedule = nil // the table compares periods; --algo NAME prints a schedule
		rep.Results = append(rep.Results, r)
	}
	ref := rep.SumU
	if withBound {
		b := boundReport(cert)
		rep.Bound = b
		if b.LowerBound != nil {
			ref = max(ref, *b.LowerBound)
		}
	}
	if io.JSON {
		return io.PrintJSON(rep)
	}
	w := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "layers %d, M_GPU %s, bandwidth %s\n", p.L(), instances.FormatSize(p.MGPU), instances.FormatRate(p.Beta))
	refName := "Σu"
	fmt.Fprintf(w, "Σu (no idle)\t%s\n", instances.FormatDuration(rep.SumU))
	if b := rep.Bound; b != nil {
		lb := "-"
		if b.LowerBound != nil {
			lb = instances.FormatDuration(*b.LowerBound)
			refName = "bound"
		}
		fmt.Fprintf(w, "lower bound\t%s (certified by %s; MILP %s, %s, %.2f s)\n", lb, b.CertifiedBy, b.Status, b.Solver, b.Seconds)
		if b.Contradiction != "" {
			fmt.Fprintf(w, "solver failure\t%s\n", b.Contradiction)
		}
		if b.Note != "" {
			fmt.Fprintf(w, "note\t%s\n", b.Note)
		}
	}
	fmt.Fprintf(w, "\nalgorithm\tmakespan\tidle\tover %s\tverified\n", refName)
	for _, r := range rep.Results {
		if !r.Feasible {
			fmt.Fprintf(w, "%s\t-\t-\t-\tno schedule: %s\n", r.Algorithm, r.Reason)
			continue
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\tyes\n", r.Algorithm, instances.FormatDuration(r.Makespan), instances.FormatDuration(r.Idle), overBound(r.Makespan, ref))
	}
	return w.Flush()
}

// boundSolvers returns the backends SolveGuarded tries: the chosen one (or the best compiled
// in) first, then the other real backends compiled in (milp.Backends: never the enumerating
// referee, nor a solver registered by someone else, such as a test's stub).
func boundSolvers(name string) ([]milp.Solver, error) {
	first, err := milp.Lookup(name)
	if err != nil {
		return nil, &UsageError{err}
	}
	out := []milp.Solver{first}
	for _, n := range milp.Backends() {
		if n == first.Name() {
			continue
		}
		if s, err := milp.Lookup(n); err == nil {
			out = append(out, s)
		}
	}
	return out, nil
}

// certifiedBound computes the certified lower bound with the guarded MILP solve (see
// weightlb.LowerBound); a solve stopped by the time limit contributes its proven bound.
func certifiedBound(p *offload.Problem, bs boundSettings) (*weightlb.Certified, error) {
	solvers, err := boundSolvers(bs.solver)
	if err != nil {
		return nil, err
	}
	ctx := bs.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	return weightlb.LowerBound(ctx, p, weightlb.Options{Solvers: solvers, MaxMemory: bs.maxMemory,
		Params: milp.Params{TimeLimit: time.Duration(bs.limit * float64(time.Second)), RelGap: 1e-9}})
}

// boundReport turns a certified bound into the JSON/text report.
func boundReport(c *weightlb.Certified) *BoundReport {
	rep := &BoundReport{Status: milp.NotSolved.String(), CertifiedBy: c.CertifiedBy, SumU: c.SumU,
		Forced: c.Forced, Feasible: !c.Infeasible}
	rep.LowerBound = finite(c.Value)
	rep.Note = c.Note
	if c.EvidenceName != "" {
		rep.Evidence = c.Evidence.What
	}
	if g := c.MILP; g != nil {
		rep.Status, rep.Solver, rep.Seconds = g.Status.String(), g.Solver, g.Wall.Seconds()
		rep.MILPBound = finite(c.MILPBound)
		rep.Attempts, rep.Contradiction = g.Attempts, g.Contradiction
		if g.Abandoned {
			rep.Note = strings.TrimPrefix(rep.Note+"; the solver did not stop at the time limit and was abandoned: no bound or incumbent of its own", "; ")
		}
		if g.HasSolution {
			rep.Incumbent, rep.Gap = finite(g.Objective*c.Units.Time), finite(g.Gap)
		}
	}
	return rep
}

// BoundReport is the output of `memsched bound`.
type BoundReport struct {
	Problem string `json:"problem"`
	// Feasible is false when no schedule exists (an operation exceeds M_GPU on its own).
	Feasible bool `json:"feasible"`
	// LowerBound is the best certified lower bound on the period, in seconds; CertifiedBy says
	// what certifies it (SPEC §5).
	LowerBound  *float64 `json:"lower_bound"`
	CertifiedBy string   `json:"certified_by"`
	// SumU and Forced are the bounds that need no solver: Σu and the forced prefetch volume / β.
	SumU   float64 `json:"sum_u"`
	Forced float64 `json:"forced_prefetch"`
	// MILPBound is the MILP's believed bound in seconds (null when none); Status its status —
	// "solver-error" when every attempt contradicted the verified schedule (Contradiction).
	MILPBound     *float64       `json:"milp_bound"`
	Evidence      string         `json:"verified_schedule,omitempty"`
	Attempts      []milp.Attempt `json:"attempts,omitempty"`
	Contradiction string         `json:"contradiction,omitempty"`
	Status        string         `json:"status"`
	Gap           *float64       `json:"gap"`
	Incumbent     *float64       `json:"incumbent"`
	Seconds       float64        `json:"seconds"`
	Solver        string         `json:"solver"`
	// Note says why the MILP did not run or has no bound (memory limit, time spent building).
	Note string `json:"note,omitempty"`
}

func newBoundCmd(io *IO) *cobra.Command {
	o := &WeightsOptions{}
	var problem, solver, maxMemory string
	var limit float64
	var slots int
	var exactSlots bool
	cmd := &cobra.Command{
		Use:   "bound --problem weight-offload|act-offload --chain FILE --mem SIZE [--bandwidth RATE]",
		Short: "Certified lower bound on the iteration time: weight offloading (002 §6 MILP) or activation offloading (001)",
		Long: `bound reports the best certified lower bound of an offloading problem, each bound saying what
certifies it.

--problem weight-offload (default): on the period, Σu, the forced prefetch volume / β, and the
lower-bound MILP of 002 §6 with SPEC §3's corrections. A solve stopped by the time limit
contributes the solver's proven bound. No solver answer is taken on trust: one that says
"infeasible" while a heuristic schedule validates, or a bound above that schedule's period, is
re-solved with safe settings and then with the other backend, and reported as solver-error with
the evidence if the contradiction stays.

--problem act-offload: on the makespan of 001's Problem 1, 001 Prop. 3, the fractional and
interruptible relaxations, the whole-transfer windows and their staircase, the peak split, and
the exact MILP's proven bound (milp/actmilp), from the best verified schedule of GREEDY,
DYNPROG, VDNN and the peak split; where that schedule meets the bound, it is proven optimal and
the MILP does not run.`,
		Example: `  memsched bound --chain gpt2.json --mem 8GiB --bandwidth 12GB/s --time-limit 60
  memsched bound --chain gpt2.json --mem 8GiB --bandwidth 12GB/s --solver lpsolve --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			start := time.Now()
			if problem == "act-offload" {
				maxMem, err := maxMemoryFlag(maxMemory)
				if err != nil {
					return err
				}
				return runActBound(cmd.Context(), start, io, o, slots, exactSlots, maxMem, solver, limit)
			}
			if problem != "weight-offload" {
				return usageErrorf("bound: unknown --problem %q (want weight-offload or act-offload)", problem)
			}
			if err := checkTimeLimit(limit); err != nil {
				return err
			}
			if _, err := boundSolvers(solver); err != nil {
				return err
			}
			maxMem, err := maxMemoryFlag(maxMemory)
			if err != nil {
				return err
			}
			p, err := o.problem()
			if err != nil {
				return err
			}
			ctx, cancel := withTimeLimit(cmd.Context(), start, limit)
			defer cancel()
			cert, err := certifiedBound(p, boundSettings{solver: solver, limit: limit, ctx: ctx, maxMemory: maxMem})
			if err != nil {
				return err
			}
			rep := boundReport(cert)
			rep.Problem = problem
			if io.JSON {
				return io.PrintJSON(rep)
			}
			show := func(x *float64, f func(float64) string) string {
				if x == nil {
					return "-"
				}
				return f(*x)
			}
			w := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintf(w, "problem\t%s (%d layers, M_GPU %s, β %s)\n", problem, p.L(), instances.FormatSize(p.MGPU), instances.FormatRate(p.Beta))
			if !rep.Feasible {
				fmt.Fprintf(w, "feasible\tno: %s\n", rep.CertifiedBy)
				return w.Flush()
			}
			fmt.Fprintf(w, "lower bound\t%s\ncertified by\t%s\nΣu\t%s\nforced prefetch / β\t%s\n",
				show(rep.LowerBound, instances.FormatDuration), rep.CertifiedBy,
				instances.FormatDuration(rep.SumU), instances.FormatDuration(rep.Forced))
			if rep.Solver == "" {
				fmt.Fprintf(w, "MILP\tnot run (see the note)\n")
			} else {
				fmt.Fprintf(w, "MILP\t%s, bound %s, incumbent %s, gap %s (%s, %.2f s)\n", rep.Status,
					show(rep.MILPBound, instances.FormatDuration), show(rep.Incumbent, instances.FormatDuration),
					show(rep.Gap, func(g float64) string { return fmt.Sprintf("%.3g", g) }), rep.Solver, rep.Seconds)
			}
			if rep.Evidence != "" {
				fmt.Fprintf(w, "checked against\t%s\n", rep.Evidence)
			}
			if rep.Note != "" {
				fmt.Fprintf(w, "note\t%s\n", rep.Note)
			}
			if rep.Contradiction != "" {
				fmt.Fprintf(w, "solver failure\t%s\n", rep.Contradiction)
			}
			return w.Flush()
		},
	}
	o.flags(cmd)
	cmd.Flags().StringVar(&problem, "problem", "weight-offload", "weight-offload|act-offload")
	cmd.Flags().StringVar(&solver, "solver", "", "highs|lpsolve|ref (default: the best compiled in)")
	cmd.Flags().IntVar(&slots, "slots", 500, "act-offload: DYNPROG memory slots for the interruptible bound")
	cmd.Flags().BoolVar(&exactSlots, "exact", false, "act-offload: DYNPROG bound without rounding (small integer instances)")
	cmd.Flags().Float64Var(&limit, "time-limit", 60, "wall-time budget in seconds of the whole command: model building and every solve included")
	addMaxMemoryFlag(cmd.Flags(), &maxMemory)
	return cmd
}

func newExportCmd(io *IO) *cobra.Command {
	o := &WeightsOptions{}
	var problem, format, out string
	cmd := &cobra.Command{
		Use:   "export --problem weight-offload-lb --chain FILE --mem SIZE --format lp|mps -o FILE",
		Short: "Write a memsched MILP as an .lp or .mps file for external solvers",
		Long:  "export writes the model of `memsched bound`. Its units are chosen from the data and stated in the file's comment line\n`memsched units: memory=<bytes per unit> time=<seconds per unit>`: the objective times the time unit is the period in seconds.",
		Example: `  memsched export --chain gpt2.json --mem 8GiB --bandwidth 12GB/s --format mps -o lb.mps
  memsched solve lb.mps --time-limit 60          # or any external MILP solver`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if problem != "weight-offload-lb" {
				return usageErrorf("export: unknown --problem %q (want %s)", problem, strings.Join(exportProblems, " or "))
			}
			if err := checkExportFlags(format, out); err != nil {
				return err
			}
			p, m, err := o.lowerBoundModel()
			if err != nil {
				return err
			}
			return writeModelFile(io, problem, format, out, m, weightlb.Units(p))
		},
	}
	o.flags(cmd)
	cmd.Flags().StringVar(&problem, "problem", "weight-offload-lb", "weight-offload-lb")
	cmd.Flags().StringVar(&format, "format", "mps", "lp|mps")
	cmd.Flags().StringVarP(&out, "output", "o", "", "output file")
	return cmd
}
