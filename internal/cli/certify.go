package cli

import (
	"errors"
	"fmt"
	"math"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/heuristics/checkpoint"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
	"github.com/memsched/memsched/verify/oracle"
)

// CertifyOptions are the flags of `memsched certify`.
type CertifyOptions struct {
	ChainFile string
	Mem       string
	Slots     int
	// Sweep > 0 certifies at Sweep budgets equally spaced from the smallest feasible budget to
	// the store-all peak (as 004 §5.4 compares strategies), instead of at Mem.
	Sweep int
	// MaxBreakpoints caps the exact C_FL table's frontiers (0: dp.DefaultMaxBreakpoints).
	MaxBreakpoints int
}

// CertifyRow is one strategy in a certification report.
type CertifyRow struct {
	Algorithm  string  `json:"algorithm"`
	Feasible   bool    `json:"feasible"`
	Makespan   float64 `json:"makespan,omitempty"`
	PeakMemory int64   `json:"peak_memory,omitempty"`
	// Ratio is Makespan over the certified lower bound (the optimum when it is known): an
	// upper bound on the true ratio to the optimum (1 = optimal).
	Ratio    float64 `json:"ratio,omitempty"`
	Verified bool    `json:"verified"`
}

// CertifyReport compares every rematerialization strategy with the optimum of 004's model.
type CertifyReport struct {
	Chain  string `json:"chain"`
	Budget int64  `json:"budget"`
	// Optimum is the optimal makespan and OptimumBy what proves it: the exhaustive search when
	// the chain is small enough, else C_FL exact in bytes (dp.FloatingExact). Otherwise Optimum is the best
	// sequence found (C_FL with sizes rounded up) and LowerBound a certified lower bound (C_FL
	// with sizes rounded down, a relaxation): the optimum lies between them.
	Optimum    float64      `json:"optimum"`
	OptimumBy  string       `json:"optimum_by"`
	Certified  bool         `json:"certified"`
	LowerBound float64      `json:"lower_bound"`
	Rows       []CertifyRow `json:"strategies"`
	// Note says why the exact table was out of reach when the optimum is bracketed by slots.
	Note string `json:"note,omitempty"`
}

func newCertifyCmd(io *IO) *cobra.Command {
	opts := &CertifyOptions{}
	cmd := &cobra.Command{
		Use:   "certify [--chain FILE] [--mem SIZE]",
		Short: "Compare every rematerialization strategy with the proven optimum under a budget",
		Long: `certify runs every rematerialization strategy on the chain under the budget, replays each
sequence with the simulator, and reports its makespan as a ratio to the optimum of 004's model.
The optimum comes from the exhaustive search (chains of up to 11 stages), else from the C_FL
dynamic program (optimal by 004 Lemma 4.4) exact in bytes, its sub-chains' frontiers kept as
breakpoints, when those stay under the cap; else with slots, bracketed between sizes rounded
down (a certified lower bound) and up (a sequence), and the report says why.
Default: the built-in toy chain at 90 MiB (004 §3.2).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runCertify(opts, io) },
	}
	cmd.Flags().StringVar(&opts.ChainFile, "chain", "", "chain file (memsched.chain/v1); default: the built-in toy chain")
	cmd.Flags().StringVar(&opts.Mem, "mem", "90MiB", "memory budget, everything included")
	cmd.Flags().IntVar(&opts.Slots, "slots", dp.DefaultSlots, "memory slots for the dynamic programs")
	cmd.Flags().IntVar(&opts.Sweep, "sweep", 0, "certify at N budgets from the smallest feasible one to the store-all peak")
	cmd.Flags().IntVar(&opts.MaxBreakpoints, "max-breakpoints", 0, "cap on the breakpoints of one sub-chain's frontier in the exact table (0: 65536); above it, the slotted bracket")
	return cmd
}

func runCertify(opts *CertifyOptions, io *IO) error {
	budget, err := instances.ParseSize(opts.Mem)
	if err != nil {
		return &UsageError{fmt.Errorf("--mem: %w", err)}
	}
	if opts.Slots < 1 {
		return usageErrorf("certify: --slots must be positive, got %d", opts.Slots)
	}
	if opts.MaxBreakpoints < 0 {
		return usageErrorf("certify: --max-breakpoints must be ≥ 0, got %d", opts.MaxBreakpoints)
	}
	if opts.Sweep < 0 || opts.Sweep > 1000 {
		return usageErrorf("certify: --sweep must be in 0..1000, got %d", opts.Sweep)
	}
	c, source, err := loadChain(opts.ChainFile)
	if err != nil {
		return err
	}
	if opts.Sweep > 0 {
		return certifySweep(c, source, opts, io)
	}
	rep, err := certifyAt(c, source, budget, opts)
	if err != nil {
		return err
	}
	return printCertify(rep, c, io)
}

// certifySweep certifies at opts.Sweep budgets and prints one line per budget.
func certifySweep(c *instances.Chain, source string, opts *CertifyOptions, io *IO) error {
	lo := verify.MinBudget(c)
	all, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
	if err != nil {
		return err
	}
	hi := max(all.Peak, lo)
	var reps []CertifyReport
	for k := 0; k < opts.Sweep; k++ {
		b := lo
		if opts.Sweep > 1 {
			b = lo + (hi-lo)*int64(k)/int64(opts.Sweep-1)
		}
		rep, err := certifyAt(c, source, b, opts)
		if err != nil {
			return err
		}
		reps = append(reps, rep)
	}
	if io.JSON {
		for i := range reps {
			if math.IsNaN(reps[i].Optimum) {
				reps[i].Optimum = 0
			}
		}
		return io.PrintJSON(reps)
	}
	fmt.Fprintf(io.Out, "chain: %s\nratios are makespan / certified lower bound (the optimum when certified); - = does not fit\n\n", source)
	w := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
	fmt.Fprint(w, "budget\tlower bound\tbest\tcertified")
	for _, r := range reps[0].Rows[1:] {
		fmt.Fprintf(w, "\t%s", r.Algorithm)
	}
	fmt.Fprintln(w)
	for _, rep := range reps {
		lb, best := "infeasible", "-"
		if rep.LowerBound > 0 && !math.IsInf(rep.LowerBound, 0) {
			lb = instances.FormatDuration(rep.LowerBound)
		}
		if !math.IsNaN(rep.Optimum) {
			best = instances.FormatDuration(rep.Optimum)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%v", instances.FormatSize(rep.Budget), lb, best, rep.Certified)
		for _, r := range rep.Rows[1:] {
			if r.Feasible && r.Ratio > 0 {
				fmt.Fprintf(w, "\t%.4f", r.Ratio)
			} else {
				fmt.Fprint(w, "\t-")
			}
		}
		fmt.Fprintln(w)
	}
	return w.Flush()
}

// certifyAt runs every strategy at one budget.
func certifyAt(c *instances.Chain, source string, budget int64, opts *CertifyOptions) (CertifyReport, error) {
	rep := CertifyReport{Chain: source, Budget: budget, Optimum: math.NaN()}
	nslots := opts.Slots
	slots := dp.Options{Slots: nslots}
	// The optimum, and what proves it.
	var optSeq schedule.Sequence
	switch {
	case c.Len() <= oracle.MaxStages:
		seq, _, ok, err := oracle.Remat(c, budget, verify.RematOptions{})
		if err != nil {
			return rep, err
		}
		rep.OptimumBy, rep.Certified = "exhaustive search", true
		if ok {
			optSeq = seq
		}
	default:
		// The exact C_FL table in bytes (its frontiers' breakpoints); when it is out of reach
		// (too many stages or breakpoints) the slotted bracket, and the report says why.
		var res dp.Result
		var err error
		f, ferr := dp.NewFloatingExact(c, budget, dp.ExactOptions{MaxBreakpoints: opts.MaxBreakpoints})
		if ferr == nil {
			res, err = f.Solve(budget)
			if err != nil {
				return rep, err
			}
			rep.OptimumBy, rep.Certified = "C_FL, exact in bytes", true
		} else {
			var be *dp.BreakpointError
			if !errors.As(ferr, &be) && c.Len() <= dp.MaxFloatingStages {
				return rep, ferr
			}
			res, err = dp.SolveFloating(c, budget, slots)
			if err != nil {
				return rep, err
			}
			rep.OptimumBy = fmt.Sprintf("C_FL, %d slots (sizes rounded up)", nslots)
			rep.Note = fmt.Sprintf("exact C_FL out of reach: %v", ferr)
			lb, _, err := dp.FloatingLowerBound(c, budget, slots)
			if err != nil {
				return rep, err
			}
			rep.LowerBound = lb
		}
		if res.Feasible {
			optSeq = res.Sequence
		}
	}
	strategies := []struct {
		name string
		run  func() (schedule.Sequence, error)
	}{
		{"best", func() (schedule.Sequence, error) { return optSeq, nil }},
		{"floating", func() (schedule.Sequence, error) {
			r, err := dp.SolveFloating(c, budget, slots)
			return r.Sequence, err
		}},
		{"persistent", func() (schedule.Sequence, error) {
			r, err := dp.SolvePersistent(c, budget, slots)
			return r.Sequence, err
		}},
		{"revolve", func() (schedule.Sequence, error) {
			t, err := dp.NewRevolve(c, budget, slots)
			if err != nil {
				return nil, err
			}
			r, err := t.Solve(budget)
			return r.Sequence, err
		}},
		{"sequential", func() (schedule.Sequence, error) {
			r, ok, err := checkpoint.BestSequential(c, budget)
			if !ok {
				return nil, err
			}
			return r.Sequence, err
		}},
		{"store-all", func() (schedule.Sequence, error) { return checkpoint.StoreAll(c), nil }},
	}
	for _, s := range strategies {
		if s.name == "floating" && c.Len() > dp.MaxFloatingStages || s.name == "best" && optSeq == nil && rep.OptimumBy == "" {
			continue
		}
		seq, err := s.run()
		if err != nil {
			return rep, fmt.Errorf("certify: %s: %w", s.name, err)
		}
		row := CertifyRow{Algorithm: s.name}
		if seq != nil {
			sim, err := verify.Remat(c, seq, verify.RematOptions{})
			if err != nil {
				return rep, fmt.Errorf("certify: %s returned an invalid sequence: %w", s.name, err)
			}
			row.Verified = true
			if sim.Peak <= budget {
				row.Feasible, row.Makespan, row.PeakMemory = true, sim.Makespan, sim.Peak
			}
		}
		if s.name == "best" && row.Feasible {
			rep.Optimum = row.Makespan
			if rep.Certified {
				rep.LowerBound = rep.Optimum
			}
		}
		if row.Feasible && rep.LowerBound > 0 && !math.IsInf(rep.LowerBound, 0) {
			row.Ratio = row.Makespan / rep.LowerBound
		}
		rep.Rows = append(rep.Rows, row)
	}
	// The best sequence of any strategy; one that meets the lower bound proves optimality.
	for _, r := range rep.Rows {
		if r.Feasible && (math.IsNaN(rep.Optimum) || r.Makespan < rep.Optimum) {
			rep.Optimum = r.Makespan
		}
	}
	if !rep.Certified && !math.IsNaN(rep.Optimum) && rep.Optimum <= rep.LowerBound*(1+1e-12) {
		rep.Certified, rep.OptimumBy = true, "a sequence meeting the certified lower bound"
	}
	if !math.IsNaN(rep.Optimum) && rep.LowerBound > 0 {
		for i := range rep.Rows {
			if rep.Rows[i].Feasible {
				rep.Rows[i].Ratio = rep.Rows[i].Makespan / rep.LowerBound
			}
		}
	}
	return rep, nil
}

func printCertify(rep CertifyReport, c *instances.Chain, io *IO) error {
	budget := rep.Budget
	if io.JSON {
		if math.IsNaN(rep.Optimum) {
			rep.Optimum = 0
		}
		return io.PrintJSON(rep)
	}
	fmt.Fprintf(io.Out, "chain:   %s\nbudget:  %s (%d B)\n", rep.Chain, instances.FormatSize(budget), budget)
	if math.IsNaN(rep.Optimum) {
		fmt.Fprintf(io.Out, "optimum: infeasible — no sequence fits; the smallest feasible budget is %s\n",
			instances.FormatSize(verify.MinBudget(c)))
	} else if rep.Certified {
		fmt.Fprintf(io.Out, "optimum: %s by %s (certified)\n", instances.FormatDuration(rep.Optimum), rep.OptimumBy)
	} else {
		fmt.Fprintf(io.Out, "optimum: between %s (certified lower bound: C_FL with sizes rounded down) and %s (best sequence: %s)\n",
			instances.FormatDuration(rep.LowerBound), instances.FormatDuration(rep.Optimum), rep.OptimumBy)
	}
	if rep.Note != "" {
		fmt.Fprintf(io.Out, "note:    %s\n", rep.Note)
	}
	w := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
	header := "ratio to optimum"
	if !rep.Certified {
		header = "ratio to lower bound (≥ ratio to optimum)"
	}
	fmt.Fprintln(w, "\nstrategy\tfeasible\tmakespan\tpeak\t"+header)
	for _, r := range rep.Rows {
		if !r.Feasible {
			fmt.Fprintf(w, "%s\tno\t-\t-\tdoes not fit\n", r.Algorithm)
			continue
		}
		ratio := "-"
		if r.Ratio > 0 {
			ratio = fmt.Sprintf("%.4f", r.Ratio)
		}
		fmt.Fprintf(w, "%s\tyes\t%s\t%s\t%s\n", r.Algorithm, instances.FormatDuration(r.Makespan), instances.FormatSize(r.PeakMemory), ratio)
	}
	fmt.Fprintln(w, "\nevery sequence above was replayed by the simulator (verify.Remat)")
	return w.Flush()
}
