package cli

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/report"
)

// CertifyOptions are the flags of `memsched certify`.
type CertifyOptions struct {
	ChainFile string
	Mem       string
	Bandwidth string
	Slots     int
	// MaxBreakpoints caps one sub-chain's frontier in the exact C_FL table (0: 65536).
	MaxBreakpoints int
	// WeightsResident: --mem is the whole GPU, the weights stay on it (report.Input).
	WeightsResident bool
	TimeLimit       float64
	Solver          string
	// MaxMemory caps the tables and MILP models alive at once (--max-memory).
	MaxMemory string
}

func newCertifyCmd(io *IO) *cobra.Command {
	opts := &CertifyOptions{}
	cmd := &cobra.Command{
		Use:   "certify [--chain FILE] [--mem SIZE] [--bandwidth RATE] [--time-limit SECONDS]",
		Short: "Every strategy of every lever against the best certified lower bound",
		Long: `certify runs every applicable strategy of every memory lever on the chain under the budget,
replays each schedule with an independent validator, and reports its makespan (or period) as a
ratio to the best certified lower bound of that lever (1.000 = proven optimal). Each bound says
what certifies it: the exhaustive search, DP optimality (C_FL exact, 004 Lemma 4.4), a DP
relaxation (C_FL collapsed, on chains of any length; C_FL with sizes rounded down), a MILP with
status and gap, or a relaxation (Σu). A bound met by a verified schedule is the optimum and says
"(exact)". For remat, exact C_MP in bytes gives the persistent row, and C_FL collapsed proves it
optimal on chains whose optimum is persistent (GPT-2, BERT, ResNets); otherwise C_FL exact (up
to 200 stages) decides. When an exact bound is out of reach the strongest bound within reach is
used and the report says so.

Levers: remat (rematerialization, 004: persistent, floating, revolve, sequential, store-all, ilp;
coarse past 400 stages),
act-offload (activation offloading, 001: none, greedy, dynprog, vdnn, split, exact, and the exact
MILP's guided row and bound within --time-limit; needs --bandwidth),
weight-offload (002: greedy, greedy-nodiscount, greedy-reserve, l2l, milp-guided; needs
--bandwidth and weights in the chain), remat-offload (rematerialization and activation
offloading together, SPEC §6: pofo, remat-then-offload, offload-then-remat, sequence-offload,
strict makespans; bounds Σ(u_f+u_b), the link credit, the kept-activation bound and the
relaxation MILP (milp/combinedlb), global, the exhaustive search of strict schedules on ≤ 7
stages (stopped at its cap or time share: the bound it had reached), and on small integer
chains the DP's class optimum, class only; needs --bandwidth; the DP refines its slots for up
to 10 s, then plans for slower links, re-timed at the real one, for a third of that). A lever
whose data is missing is skipped with a one-line reason; memsched assumes no bandwidth.

Each bound says its scope: global (every schedule of the lever's model, whoever made it) or
class only (the plans of one strategy's class). The ratios, the best bound, "optimal" and "none
fits" use global bounds only. The summary says, for each lever, "optimal (meets the bound)", the
bracket [best global bound, best verified schedule], "none fits" (a global bound proves that no
schedule fits), "none found" (no strategy found one; nothing proves that none exists) or "not
run (time)" (its time share ran out first); --json gives the same as each lever's "outcome". A
row that does not fit the budget is never "verified" and has no makespan.

What --mem covers is each lever's model: remat, act-offload and remat-offload count
activations and temporaries, not the weights (a note says how much the chain's weights take);
weight-offload's M_GPU holds weights and activations. With --weights-resident, --mem is the
whole GPU: remat, act-offload and remat-offload get it minus the weights, so the levers compare
on one GPU (docs/certify.md).`,
		Example: `  memsched certify                                   # built-in toy chain at 90 MiB
  memsched gen zoo resnet --depth 101 --batch 32 -o r101.json
  memsched certify --chain r101.json --mem 2GiB --bandwidth 12GB/s
  memsched certify --chain r101.json --mem 2GiB --json | jq '.levers.remat'
  memsched gen zoo resnet --depth 1001 -o r1001.json   # 337 stages, CIFAR 32×32
  memsched certify --chain r1001.json --mem 1.2GiB     # remat proven optimal by C_FL collapsed`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runCertify(cmd.Context(), time.Now(), opts, io) },
	}
	f := cmd.Flags()
	f.StringVar(&opts.ChainFile, "chain", "", "chain file (memsched.chain/v1); default: the built-in toy chain")
	f.StringVar(&opts.Mem, "mem", "90MiB", "memory budget: activations and temporaries for remat and act-offload (weights excluded unless --weights-resident), M_GPU for weight-offload")
	f.StringVar(&opts.Bandwidth, "bandwidth", "", bandwidthUsage+"; without it the offloading levers are skipped")
	f.IntVar(&opts.Slots, "slots", dp.DefaultSlots, "memory slots of the dynamic programs")
	f.IntVar(&opts.MaxBreakpoints, "max-breakpoints", 0, "cap on one sub-chain's frontier in the exact C_FL table (0: 65536); above it, slots")
	f.BoolVar(&opts.WeightsResident, "weights-resident", false, "--mem is the whole GPU with the weights resident: remat and act-offload get it minus the chain's weights")
	f.Float64Var(&opts.TimeLimit, "time-limit", 60, "wall-time budget in seconds of the whole command, shared between the levers (docs/certify.md)")
	addMaxMemoryFlag(f, &opts.MaxMemory)
	f.StringVar(&opts.Solver, "solver", "", "MILP backend: highs|lpsolve|ref (default: the best compiled in)")
	return cmd
}

// certifyInput parses the flags shared by certify and sweep into a report.Input.
func certifyInput(chainFile, bandwidth string, slots int, limit float64, solver string) (report.Input, error) {
	var in report.Input
	if err := checkSlots(slots); err != nil {
		return in, err
	}
	if err := checkTimeLimit(limit); err != nil {
		return in, err
	}
	if solver != "" {
		if _, err := milp.Lookup(solver); err != nil {
			return in, usageErrorf("--solver: %v", err)
		}
	}
	if bandwidth != "" {
		beta, err := rateFlag("--bandwidth", bandwidth)
		if err != nil {
			return in, err
		}
		in.Bandwidth = beta
	}
	c, source, err := loadChain(chainFile)
	if err != nil {
		return in, err
	}
	in.Chain, in.Source, in.Slots, in.Solver = c, source, slots, solver
	in.TimeLimit = time.Duration(limit * float64(time.Second))
	return in, nil
}

// maxSlots bounds --slots: the DP tables have O(n²·S) entries (C_FL O(n³·S)); beyond it a
// table would not fit in memory on any chain worth a DP.
const maxSlots = 100000

// checkSlots is the one check of --slots.
func checkSlots(slots int) error {
	if slots < 1 || slots > maxSlots {
		return usageErrorf("--slots must be in 1..%d, got %d", maxSlots, slots)
	}
	return nil
}

// maxTimeLimit bounds every --time-limit (a year, in seconds): far above any solve worth
// waiting for, and far below the 292 years where a time.Duration overflows.
const maxTimeLimit = 365 * 24 * 3600

// checkTimeLimit is the one check of a --time-limit that must be positive.
func checkTimeLimit(limit float64) error {
	if !(limit > 0) || limit > maxTimeLimit {
		return usageErrorf("--time-limit must be a positive number of seconds up to %d (a year), got %g", maxTimeLimit, limit)
	}
	return nil
}

// runCertify certifies; start is when the command began, from which --time-limit counts.
func runCertify(ctx context.Context, start time.Time, opts *CertifyOptions, io *IO) error {
	budget, err := budgetFlag("--mem", opts.Mem)
	if err != nil {
		return err
	}
	maxMem, err := maxMemoryFlag(opts.MaxMemory)
	if err != nil {
		return err
	}
	if opts.MaxBreakpoints < 0 {
		return usageErrorf("certify: --max-breakpoints must be ≥ 0, got %d", opts.MaxBreakpoints)
	}
	in, err := certifyInput(opts.ChainFile, opts.Bandwidth, opts.Slots, opts.TimeLimit, opts.Solver)
	if err != nil {
		return err
	}
	in.MaxBreakpoints, in.WeightsResident = opts.MaxBreakpoints, opts.WeightsResident
	in.Budget, in.MaxMemory = budget, maxMem
	if ctx == nil {
		ctx = context.Background()
	}
	// The certification runs under the command's deadline; ctx alone (Ctrl-C) interrupts it.
	cctx, cancel := withTimeLimit(ctx, start, opts.TimeLimit)
	defer cancel()
	bar := newBar(io, "certify", 0)
	in.Progress = bar
	var mu sync.Mutex
	partial := &report.Report{Chain: in.Source, Stages: in.Chain.Len(), Budget: in.Budget, Bandwidth: in.Bandwidth,
		Levers: map[string]*report.LeverReport{}, Interrupted: true}
	closed := false // set on interrupt: nothing is added after the partial report is printed
	in.LeverDone = func(lr *report.LeverReport) {
		mu.Lock()
		defer mu.Unlock()
		if closed {
			return
		}
		partial.Levers[lr.Lever] = lr
		partial.Order = append(partial.Order, lr.Lever)
	}
	type outcome struct {
		rep *report.Report
		err error
	}
	ch := make(chan outcome, 1)
	go func() {
		rep, err := report.Certify(cctx, in, report.DefaultLevers())
		ch <- outcome{rep, err}
	}()
	var rep *report.Report
	select {
	case o := <-ch:
		rep, err = o.rep, o.err
	case <-ctx.Done(): // a DP table cannot stop midway: do not wait for it
		err = errInterrupted
	}
	bar.Finish()
	if errors.Is(err, errInterrupted) || errors.Is(err, context.Canceled) {
		// Print the levers finished before Ctrl-C, then exit 130.
		mu.Lock()
		defer mu.Unlock()
		closed = true
		if io.JSON {
			io.PrintJSON(partial)
		} else if len(partial.Order) > 0 {
			printCertify(partial, io)
		}
		return errInterrupted
	}
	if err != nil {
		return err
	}
	if io.JSON {
		return io.PrintJSON(rep)
	}
	return printCertify(rep, io)
}

func printCertify(rep *report.Report, io *IO) error {
	w := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "chain:\t%s (%d stages)\nbudget:\t%s (%d B)\n", rep.Chain, rep.Stages, instances.FormatSize(rep.Budget), rep.Budget)
	if rep.Bandwidth > 0 {
		fmt.Fprintf(w, "bandwidth:\t%s\n", instances.FormatRate(rep.Bandwidth))
	}
	w.Flush()
	for _, name := range rep.Order {
		lr := rep.Levers[name]
		fmt.Fprintf(io.Out, "\n== %s ==\n", name)
		if lr.Skipped != "" {
			fmt.Fprintf(io.Out, "skipped: %s\n", lr.Skipped)
			continue
		}
		w := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
		fmt.Fprintf(w, "strategy\t%s\tpeak\tratio to bound\tverified\n", lr.Measure)
		for _, r := range lr.Rows {
			if !r.Feasible {
				fmt.Fprintf(w, "%s\t-\t-\t-\t%s\n", r.Strategy, orDash(r.Note))
				continue
			}
			ratio := "-"
			if r.Ratio > 0 {
				ratio = formatRatio(r.Ratio, 3)
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", r.Strategy, instances.FormatDuration(r.Makespan), instances.FormatSize(r.Peak), ratio, yesNo(r.Verified))
		}
		fmt.Fprintf(w, "\nbound\tvalue\tcertified by\tscope\t\n")
		for _, b := range lr.Bounds {
			v := "infeasible"
			if !b.Infeasible {
				v = instances.FormatDuration(b.Value)
			}
			by := string(b.Kind)
			if b.Status != "" {
				by += ", " + b.Status
				if b.Gap != nil {
					by += fmt.Sprintf(", gap %.3g", *b.Gap)
				}
			}
			if b.Exact {
				by += " (exact)"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t\n", b.Name, v, by, scopeText(b.Scope))
		}
		w.Flush()
		if hasClassBound(lr) {
			fmt.Fprintln(io.Out, "note: a class-only bound bounds the plans of its strategy's class, not every schedule of the model: the ratios and the summary use the global bounds only")
		}
		for _, n := range lr.Notes {
			fmt.Fprintln(io.Out, "note: "+n)
		}
		fmt.Fprintln(io.Out, leverTime(lr))
	}
	fmt.Fprintln(io.Out, "\n== summary ==")
	w = tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "lever\tbest strategy\ttime\tbest global bound\tbracket\n")
	for _, name := range rep.Order {
		lr := rep.Levers[name]
		bound := "-"
		if lr.BestBound > 0 {
			bound = fmt.Sprintf("%s (%s)", instances.FormatDuration(lr.BestBound), lr.BestBoundBy)
		}
		switch {
		case lr.Skipped != "":
			fmt.Fprintf(w, "%s\tskipped\t\t\t%s\n", name, lr.Skipped)
		case lr.Infeasible:
			fmt.Fprintf(w, "%s\tnone fits\t-\tinfeasible (%s)\tproven: no schedule fits\n", name, lr.BestBoundBy)
		case lr.Best == "" && lr.Stopped:
			fmt.Fprintf(w, "%s\tnot run (time)\t-\t%s\tnothing found or proven before its time share ran out\n", name, bound)
		case lr.Best == "":
			fmt.Fprintf(w, "%s\tnone found\t-\t%s\tno strategy found a schedule; none is proven impossible\n", name, bound)
		default:
			bracket := "no bound above zero"
			switch {
			case lr.Optimal:
				bracket = "optimal (meets the bound)"
			case lr.BestBound > 0:
				bracket = fmt.Sprintf("optimum in [%s, %s]", instances.FormatDuration(lr.BestBound), instances.FormatDuration(lr.BestAt))
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", name, lr.Best, instances.FormatDuration(lr.BestAt), bound, bracket)
		}
	}
	w.Flush()
	if rep.Interrupted {
		fmt.Fprintln(io.Out, "\ninterrupted: the levers not listed above did not finish")
	}
	fmt.Fprintln(io.Out, "\nevery schedule above was replayed by an independent validator (verify)")
	return nil
}

// leverTime is the line that says what time a lever had and took: its share of --time-limit
// and each MILP bound's limit against the seconds used.
func leverTime(lr *report.LeverReport) string {
	line := fmt.Sprintf("time: %.1f s", lr.Seconds)
	if lr.TimeBudget > 0 {
		line += fmt.Sprintf(" of a %.1f s share", lr.TimeBudget)
	}
	for _, b := range lr.Bounds {
		if b.TimeBudget > 0 {
			line += fmt.Sprintf("; %s %.1f s of %.1f s", b.Name, b.Seconds, b.TimeBudget)
		}
	}
	return line
}

// scopeText is a bound's scope as printed: "global" or "class only".
func scopeText(s report.Scope) string {
	if s == report.Class {
		return "class only"
	}
	return "global"
}

// hasClassBound says whether some bound of lr is class-only.
func hasClassBound(lr *report.LeverReport) bool {
	for _, b := range lr.Bounds {
		if b.Scope == report.Class {
			return true
		}
	}
	return false
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
