package cli

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/report"
	"github.com/memsched/memsched/report/plots"
)

// SweepOptions are the flags of `memsched sweep`.
type SweepOptions struct {
	ChainFile, From, To, Bandwidth string
	Steps, Slots, Workers          int
	MaxBreakpoints                 int
	WeightsResident                bool
	Levers                         []string
	OutDir                         string
	NoPlots                        bool
	// MaxMemory caps the tables alive at once (--max-memory; the three DP tables share it).
	MaxMemory string
}

// maxSteps bounds --steps.
const maxSteps = 10000

func newSweepCmd(io *IO) *cobra.Command {
	opts := &SweepOptions{}
	cmd := &cobra.Command{
		Use:   "sweep --chain FILE --from SIZE --to SIZE --steps N [--slots N] [--lever NAME...] [-o DIR]",
		Short: "Every strategy and the best bound across memory budgets, as CSV, JSON and plots",
		Long: `sweep evaluates every strategy of each lever at N budgets equally spaced from --from to --to
(both included), with each point's best certified lower bound, and writes under DIR:
  sweep.csv        one row per lever, budget and strategy (written as points complete)
  sweep.json       the whole sweep, with the exact DP frontiers
  ratio.svg/.png   makespan / best lower bound versus the budget
  throughput.svg/.png  iterations per second versus the budget, the bound as a ceiling
Each dynamic program builds one table at --to and reads every budget from it (the slot size is
--to / --slots for all budgets); independent work runs on all cores. Ctrl-C stops at once with
exit status 130 and the completed rows written.`,
		Example: `  memsched sweep --from 70MiB --to 110MiB --steps 20            # built-in toy chain
  memsched gen zoo resnet --depth 1001 --batch 32 -o r1001.json
  memsched sweep --chain r1001.json --from 100MiB --to 4GiB --steps 50 -o out/
  memsched sweep --chain gpt2.json --from 4GiB --to 16GiB --steps 10 --lever weight-offload --bandwidth 12GB/s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runSweep(cmd.Context(), opts, io) },
	}
	f := cmd.Flags()
	f.StringVar(&opts.ChainFile, "chain", "", "chain file (memsched.chain/v1); default: the built-in toy chain")
	f.StringVar(&opts.From, "from", "", "smallest budget (e.g. 1GiB)")
	f.StringVar(&opts.To, "to", "", "largest budget")
	f.IntVar(&opts.Steps, "steps", 10, "number of budgets")
	f.IntVar(&opts.Slots, "slots", dp.DefaultSlots, "memory slots of the dynamic programs (of the --to budget)")
	addMaxMemoryFlag(f, &opts.MaxMemory)
	f.IntVar(&opts.MaxBreakpoints, "max-breakpoints", 0, "cap on one sub-chain's frontier in the exact C_FL table (0: 65536); above it, slots")
	f.BoolVar(&opts.WeightsResident, "weights-resident", false, "budgets are the whole GPU with the weights resident: remat and act-offload get them minus the chain's weights")
	f.StringSliceVar(&opts.Levers, "lever", nil, "levers to sweep: "+strings.Join(report.LeverNames, ", ")+" (default: all that apply)")
	f.StringVar(&opts.Bandwidth, "bandwidth", "", bandwidthUsage+"; without it the offloading levers are skipped")
	f.StringVarP(&opts.OutDir, "output", "o", "out", "directory for sweep.csv, sweep.json and the plots")
	f.IntVar(&opts.Workers, "workers", 0, "parallel workers (default: all cores)")
	f.BoolVar(&opts.NoPlots, "no-plots", false, "write CSV and JSON only")
	return cmd
}

// parseSweep checks the flags and returns the sweep's options.
func parseSweep(opts *SweepOptions) (report.SweepOptions, error) {
	var so report.SweepOptions
	if opts.From == "" || opts.To == "" {
		return so, usageErrorf("sweep: --from and --to are required (e.g. --from 1GiB --to 4GiB)")
	}
	lo, err := budgetFlag("--from", opts.From)
	if err != nil {
		return so, err
	}
	hi, err := budgetFlag("--to", opts.To)
	if err != nil {
		return so, err
	}
	if lo > hi {
		return so, usageErrorf("sweep: --from %s is above --to %s", opts.From, opts.To)
	}
	if opts.Steps < 1 || opts.Steps > maxSteps {
		return so, usageErrorf("sweep: --steps must be in 1..%d, got %d", maxSteps, opts.Steps)
	}
	if opts.Workers < 0 {
		return so, usageErrorf("sweep: --workers must be ≥ 0, got %d", opts.Workers)
	}
	for _, l := range opts.Levers {
		if !contains(report.LeverNames, l) {
			return so, usageErrorf("sweep: unknown --lever %q (want %s)", l, strings.Join(report.LeverNames, ", "))
		}
	}
	in, err := certifyInput(opts.ChainFile, opts.Bandwidth, opts.Slots, 60, "")
	if err != nil {
		return so, err
	}
	if opts.MaxBreakpoints < 0 {
		return so, usageErrorf("sweep: --max-breakpoints must be ≥ 0, got %d", opts.MaxBreakpoints)
	}
	in.MaxBreakpoints, in.WeightsResident = opts.MaxBreakpoints, opts.WeightsResident
	if in.MaxMemory, err = maxMemoryFlag(opts.MaxMemory); err != nil {
		return so, err
	}
	if why := nothingToSweep(in, opts.Levers); why != "" {
		return so, usageErrorf("sweep: nothing to run: %s", why)
	}
	so.Input, so.Budgets, so.Levers, so.Workers = in, report.Budgets(lo, hi, opts.Steps), opts.Levers, opts.Workers
	return so, nil
}

// nothingToSweep says why none of levers (none: all) would run on in — each one's skip reason,
// "lever: why; …" — or "" when one would. A sweep of nothing is bad input (exit 2), not an
// empty success (issue 29: `sweep --lever remat-offload` without --bandwidth wrote 0 points).
func nothingToSweep(in report.Input, levers []string) string {
	if len(levers) == 0 {
		levers = report.LeverNames
	}
	all := report.DefaultLevers()
	var whys []string
	for _, l := range levers {
		why := all[l].Skip(in)
		if why == "" {
			return ""
		}
		whys = append(whys, l+": "+why)
	}
	return strings.Join(whys, "; ")
}

var csvHeader = []string{"lever", "budget_bytes", "budget", "strategy", "feasible", "makespan_s", "peak_bytes", "ratio", "throughput_per_s", "best_bound_s", "best_bound_by", "verified"}

func csvRows(p report.Point) [][]string {
	var rows [][]string
	f := func(x float64) string {
		if x == 0 {
			return ""
		}
		return strconv.FormatFloat(x, 'g', 10, 64)
	}
	for _, r := range p.Rows {
		thr := 0.0
		if r.Feasible && r.Makespan > 0 {
			thr = 1 / r.Makespan
		}
		by := p.BestBoundBy
		if p.Infeasible {
			by = "infeasible: " + by
		}
		rows = append(rows, []string{p.Lever, strconv.FormatInt(p.Budget, 10), instances.FormatSize(p.Budget), r.Strategy,
			strconv.FormatBool(r.Feasible), f(r.Makespan), strconv.FormatInt(r.Peak, 10), f(r.Ratio), f(thr), f(p.BestBound), by,
			strconv.FormatBool(r.Verified)})
	}
	return rows
}

// errInterrupted marks a run stopped by SIGINT: exit status 130.
var errInterrupted = errors.New("interrupted")

func runSweep(ctx context.Context, opts *SweepOptions, io *IO) error {
	so, err := parseSweep(opts)
	if err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if err := os.MkdirAll(opts.OutDir, 0o755); err != nil {
		return usageErrorf("-o %s: %v", opts.OutDir, pathErr(err))
	}
	csvPath := filepath.Join(opts.OutDir, "sweep.csv")
	cf, err := createOutput("-o", csvPath)
	if err != nil {
		return err
	}
	defer cf.Close()
	cw := csv.NewWriter(cf)
	cw.Write(csvHeader)
	cw.Flush()
	var mu sync.Mutex
	var done []report.Point
	closed := false // set on interrupt: no row is written after the JSON
	bar := newBar(io, "sweep", 0)
	so.Input.Progress = bar
	so.OnPoint = func(p report.Point) {
		mu.Lock()
		defer mu.Unlock()
		if closed {
			return
		}
		done = append(done, p)
		cw.WriteAll(csvRows(p)) // WriteAll flushes: a row on disk is a row kept on Ctrl-C
	}
	type outcome struct {
		res *report.SweepResult
		err error
	}
	ch := make(chan outcome, 1)
	start := time.Now()
	go func() {
		res, err := report.Sweep(ctx, so)
		ch <- outcome{res, err}
	}()
	var res *report.SweepResult
	select {
	case o := <-ch:
		res, err = o.res, o.err
	case <-ctx.Done():
		// The DP tables cannot be stopped midway: do not wait for them, write what is done.
		select {
		case o := <-ch:
			res = o.res
		case <-time.After(200 * time.Millisecond):
		}
		err = ctx.Err()
	}
	bar.Finish()
	if err != nil && ctx.Err() == nil {
		return err
	}
	if ctx.Err() != nil {
		mu.Lock()
		defer mu.Unlock()
		closed = true
		partial := &report.SweepResult{Chain: so.Input.Source, Stages: so.Input.Chain.Len(), Budgets: so.Budgets, Points: append([]report.Point{}, done...), Interrupted: true}
		if err := writeJSONFile(filepath.Join(opts.OutDir, "sweep.json"), partial); err != nil {
			return err
		}
		fmt.Fprintf(io.ErrOut, "memsched: sweep interrupted: %d completed points (one per lever and budget, %d budgets asked) written to %s\n", len(done), len(so.Budgets), csvPath)
		return errInterrupted
	}
	jsonPath := filepath.Join(opts.OutDir, "sweep.json")
	if err := writeJSONFile(jsonPath, res); err != nil {
		return err
	}
	files := []string{csvPath, jsonPath}
	if !opts.NoPlots {
		pf, err := plots.Write(res, opts.OutDir)
		if err != nil {
			return err
		}
		files = append(files, pf...)
	}
	if io.JSON {
		return io.PrintJSON(res)
	}
	printSweep(res, io)
	fmt.Fprintf(io.Out, "\n%d points in %.2f s; wrote %s\n", len(res.Points), time.Since(start).Seconds(), strings.Join(files, ", "))
	return nil
}

func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// printSweep prints one table per lever: the bound and each strategy's ratio per budget. The
// columns are every strategy a point of the lever has, in the order they first appear: a
// row only some budgets have (the exhaustive search's, where it ended with a schedule) gets
// its own column, "·" at the others (it had shifted the next point's ratios under the wrong
// header).
func printSweep(res *report.SweepResult, io *IO) {
	fmt.Fprintf(io.Out, "chain: %s (%d stages)\n", res.Chain, res.Stages)
	for l, why := range res.Skipped {
		fmt.Fprintf(io.Out, "%s: skipped: %s\n", l, why)
	}
	for _, n := range res.Notes {
		fmt.Fprintln(io.Out, "note: "+n)
	}
	for start := 0; start < len(res.Points); {
		lever := res.Points[start].Lever
		end := start
		for end < len(res.Points) && res.Points[end].Lever == lever {
			end++
		}
		points := res.Points[start:end]
		start = end
		var names []string
		for _, p := range points {
			for _, r := range p.Rows {
				if !slices.Contains(names, r.Strategy) {
					names = append(names, r.Strategy)
				}
			}
		}
		fmt.Fprintf(io.Out, "\n== %s: ratio to the best lower bound (- = does not fit, · = not run at that budget) ==\n", lever)
		w := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
		fmt.Fprint(w, "budget\tbest bound\tby")
		for _, n := range names {
			fmt.Fprintf(w, "\t%s", n)
		}
		fmt.Fprintln(w)
		for _, p := range points {
			lb, by := "-", p.BestBoundBy
			if p.Infeasible {
				lb = "infeasible"
			} else if p.BestBound > 0 {
				lb = instances.FormatDuration(p.BestBound)
			}
			fmt.Fprintf(w, "%s\t%s\t%s", instances.FormatSize(p.Budget), lb, by)
			for _, n := range names {
				cell := "·"
				for _, r := range p.Rows {
					if r.Strategy != n {
						continue
					}
					cell = "-"
					if r.Feasible && r.Ratio > 0 {
						cell = formatRatio(r.Ratio, 3)
					}
				}
				fmt.Fprintf(w, "\t%s", cell)
			}
			fmt.Fprintln(w)
		}
		w.Flush()
	}
}
