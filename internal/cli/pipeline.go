package cli

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	dpl "github.com/memsched/memsched/dp/pipeline"
	"github.com/memsched/memsched/dp/pipepack"
	"github.com/memsched/memsched/instances"
	pl "github.com/memsched/memsched/instances/pipeline"
	leverpl "github.com/memsched/memsched/lever/pipeline"
	"github.com/memsched/memsched/report"
	"github.com/memsched/memsched/report/plots"
	"github.com/memsched/memsched/schedule"
)

// PipelineOptions are the flags of `memsched pipeline`.
type PipelineOptions struct {
	ChainFile, Mem, Bandwidth, Schedule, Remat, Algo, Slots string
	GPUs, MicroBatches                                      int
	TimeLimit, WeightFactor                                 float64
	maxMemory                                               string
	// SweepDir, when set, sweeps the GPU count 1..GPUs and writes the table and plots there.
	SweepDir string
}

// PipelineResult is one algorithm's answer in `memsched pipeline --json`. Every field a plan
// has (stages, sequences, peaks) is also given for a plan that does not fit, with its reason.
type PipelineResult struct {
	Algo     string `json:"algo"`
	Feasible bool   `json:"feasible"`
	// Makespan is one iteration of MicroBatches micro-batches, in seconds; Period the steady
	// state's time per micro-batch (PeriodExact as a fraction of the float64 inputs).
	Makespan    *float64 `json:"makespan"`
	Period      *float64 `json:"period"`
	PeriodExact string   `json:"period_exact,omitempty"`
	// Stages[k] is GPU k's part [first, last] (1-based chain stages; the loss stage L+1
	// joins the last part).
	Stages [][2]int `json:"stages"`
	// PeakMemory[k] is GPU k's peak in bytes (its persistent w included), as replayed.
	PeakMemory []int64 `json:"peak_memory"`
	Verified   bool    `json:"verified"`
	// Sequences[k] is the 004 sequence every micro-batch runs on GPU k, in chain stage
	// numbers, with stage last+1 standing for the next GPU on all but the last part
	// (F_all^{last+1} sends a^last, B^{last+1} receives δ^last): its operations before the
	// first B are the forward, the others the backward. Recompute[k] says whether it
	// recomputes (false: it stores everything).
	Sequences []schedule.Sequence `json:"sequences"`
	Recompute []bool              `json:"recompute"`
	// GPUs[k] is part k's GPU and Actions[g] GPU g's order of actions (PyTorch's 2F0
	// notation), given for a non-contiguous plan only (packing, milp-alloc: a GPU holds
	// several parts; then Stages, Sequences and the per-part fields are per part, PeakMemory
	// the peak of the part's GPU). AllocationPeriod is such a plan's steady-state period:
	// every GPU's and link's load per micro-batch, reached by the modulo order.
	GPUs             []int               `json:"gpus,omitempty"`
	Actions          [][]schedule.Action `json:"actions,omitempty"`
	AllocationPeriod *float64            `json:"allocation_period,omitempty"`
	// Held[k] is what one micro-batch keeps on GPU k between its forward and backward;
	// InFlight[k] how many micro-batches GPU k holds at most; Forward[k] and Backward[k] the
	// durations of its actions (seconds).
	Held     []int64   `json:"held"`
	InFlight []int     `json:"in_flight"`
	Forward  []float64 `json:"forward"`
	Backward []float64 `json:"backward"`
	// Schedule and MicroBatches are the order every GPU runs (torch.distributed.pipelining's
	// Schedule1F1B or ScheduleGPipe) and m.
	Schedule     string `json:"schedule"`
	MicroBatches int    `json:"micro_batches"`
	// RatioToBound is the makespan over the best lower bound.
	RatioToBound *float64 `json:"ratio_to_bound,omitempty"`
	// Optimal, Complete, Nodes, Exact and SlotSize describe the exact search.
	Optimal  *bool   `json:"optimal,omitempty"`
	Complete *bool   `json:"complete,omitempty"`
	Nodes    int     `json:"nodes,omitempty"`
	Exact    *bool   `json:"exact_tables,omitempty"`
	SlotSize int64   `json:"slot_size,omitempty"`
	Seconds  float64 `json:"seconds"`
	Reason   string  `json:"reason,omitempty"`
	Note     string  `json:"note,omitempty"`
}

// PipelineBound is a certified lower bound on the makespan (SPEC §5), in seconds; null proves
// that no plan of its scope fits.
type PipelineBound struct {
	Name        string   `json:"name"`
	Value       *float64 `json:"value"`
	CertifiedBy string   `json:"certified_by"`
	Scope       string   `json:"scope"`
}

// PipelineReport is the output of `memsched pipeline --json` (docs/pipeline.md).
type PipelineReport struct {
	Chain string `json:"chain"`
	// Stages is L, the chain's stages without the loss stage.
	Stages int   `json:"stages"`
	GPUs   int   `json:"gpus"`
	Memory int64 `json:"memory"`
	// Bandwidth is β in B/s, null for free links.
	Bandwidth    *float64 `json:"bandwidth"`
	MicroBatches int      `json:"micro_batches"`
	Schedule     string   `json:"schedule"`
	Remat        string   `json:"remat"`
	// WeightFactor is --weight-factor: every stage's w was multiplied by it.
	WeightFactor float64          `json:"weight_factor"`
	Results      []PipelineResult `json:"results"`
	LowerBounds  []PipelineBound  `json:"lower_bounds"`
	// Best is the algorithm of the fastest feasible plan ("" when none fits).
	Best string `json:"best"`
	// StoreAllMinMemory is the least --mem at which some contiguous plan on at most P GPUs
	// fits with every GPU storing everything (below it only recomputation fits).
	StoreAllMinMemory int64 `json:"store_all_min_memory"`
	// StoreAllNote says why StoreAllMinMemory is 0: not computed (its DP stopped at its share
	// of --time-limit).
	StoreAllNote string `json:"store_all_note,omitempty"`
	// BoundNotes name the lever's bounds that were not computed, and why.
	BoundNotes []string `json:"bound_notes,omitempty"`
}

func pipelineAlgoHelp() string {
	var es []helpEntry
	for _, st := range leverpl.Strategies {
		es = append(es, helpEntry{st.Name, st.Summary})
	}
	return strategyHelp(append(es, helpEntry{"all", "every algorithm in one table (the default)"}))
}

func newPipelineCmd(io *IO) *cobra.Command {
	o := &PipelineOptions{}
	cmd := &cobra.Command{
		Use:   "pipeline --chain FILE --gpus P --mem SIZE --bandwidth RATE --micro-batches m [--schedule 1f1b|gpipe] [--remat none|stage] [--algo NAME|all]",
		Short: "Pipelined model parallelism: cut a chain over P GPUs, certified (SPEC §7)",
		Long: `pipeline cuts the chain into consecutive parts on at most P GPUs of --mem bytes each, streams m
micro-batches through them in the order of --schedule (PyTorch's Schedule1F1B or ScheduleGPipe),
and minimizes the makespan of one iteration. With --remat stage (the default) each GPU may run
a persistent 004 sequence on its part — recomputation inside the stage, trading what each of its
in-flight micro-batches holds against time; with --remat none every GPU stores everything.
Algorithms:
` + pipelineAlgoHelp() + `
Every plan is replayed by an independent validator (verify/pipeline): the makespan, the
steady-state period, each GPU's peak (its weights w included), or the first GPU that overflows.
Lower bounds say what certifies them and what they bound (docs/pipeline.md). --bandwidth is the
link between consecutive GPUs, each direction (inf: free links). --time-limit is the whole
command's; the exact search then reports its best plan and bound. A budget where nothing fits is
a result, not an error. --sweep DIR plans P' = 1..P GPUs and writes pipeline-sweep.csv and
.json and the throughput plot there.`,
		Example: `  memsched gen zoo gpt2 --layers 48 --hidden 1600 --heads 25 --batch 1 -o gpt2.json
  memsched pipeline --chain gpt2.json --gpus 8 --mem 16GiB --bandwidth 25GB/s --micro-batches 32
  memsched pipeline --chain gpt2.json --gpus 4 --mem 6GiB --bandwidth 25GB/s --micro-batches 8 --algo exact --json
  memsched pipeline --chain gpt2.json --gpus 8 --mem 8GiB --bandwidth 25GB/s --micro-batches 32 --sweep out/`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runPipeline(o, io) },
	}
	f := cmd.Flags()
	f.StringVar(&o.ChainFile, "chain", "", "chain file (memsched.chain/v1), profiled per micro-batch; stage field w is its persistent bytes; default: the built-in toy chain")
	f.IntVar(&o.GPUs, "gpus", 0, "P, the GPUs available (a plan may use fewer)")
	f.StringVar(&o.Mem, "mem", "", "every GPU's memory, everything included (e.g. 16GiB)")
	f.StringVar(&o.Bandwidth, "bandwidth", "", "link between consecutive GPUs, each direction (e.g. 25GB/s; inf: free links)")
	f.IntVar(&o.MicroBatches, "micro-batches", 0, "m, the micro-batches of one iteration")
	f.StringVar(&o.Schedule, "schedule", "1f1b", "order of every GPU: 1f1b | gpipe")
	f.Float64Var(&o.WeightFactor, "weight-factor", 1, "multiply every stage's w by this (e.g. 4: fp32 parameters, gradients and Adam's two moments, when w holds the parameters as the zoo writes them)")
	f.StringVar(&o.Remat, "remat", "stage", "stage: recomputation inside each part allowed; none: store everything")
	f.StringVar(&o.Algo, "algo", "all", strings.Join(leverpl.Names(), "|")+"|all")
	f.StringVar(&o.Slots, "slots", "exact", "recomputation tables: exact (in bytes, falling back to 500 slots when too large, noted) or a number of slots over --mem")
	f.Float64Var(&o.TimeLimit, "time-limit", 60, "wall-time budget in seconds of the whole command")
	f.StringVar(&o.SweepDir, "sweep", "", "plan every GPU count 1..P and write the table and the throughput plot to this directory")
	addMaxMemoryFlag(f, &o.maxMemory)
	return cmd
}

// maxWeightFactor bounds --weight-factor.
const maxWeightFactor = 1e6

// pipelineProblem parses the instance flags shared by pipeline and verify.
func pipelineProblem(cmd, chainFile string, gpus int, mem, bandwidth string, m int, order string, wf float64) (*pl.Problem, string, error) {
	if gpus == 0 {
		return nil, "", usageErrorf("%s: --gpus is required (e.g. --gpus 4)", cmd)
	}
	if gpus < 1 || gpus > pl.MaxGPUs {
		return nil, "", usageErrorf("%s: --gpus must be in 1..%d, got %d", cmd, pl.MaxGPUs, gpus)
	}
	if mem == "" {
		return nil, "", usageErrorf("%s: --mem is required (every GPU's memory, e.g. --mem 16GiB)", cmd)
	}
	budget, err := budgetFlag("--mem", mem)
	if err != nil {
		return nil, "", err
	}
	if bandwidth == "" {
		return nil, "", usageErrorf("%s: --bandwidth is required: the link between consecutive GPUs, each direction (e.g. --bandwidth 25GB/s, or inf)", cmd)
	}
	beta := math.Inf(1)
	if !strings.EqualFold(bandwidth, "inf") {
		if beta, err = rateFlag("--bandwidth", bandwidth); err != nil {
			return nil, "", err
		}
	}
	if m == 0 {
		return nil, "", usageErrorf("%s: --micro-batches is required (e.g. --micro-batches 8)", cmd)
	}
	if m < 1 || m > pl.MaxMicroBatches {
		return nil, "", usageErrorf("%s: --micro-batches must be in 1..%d, got %d", cmd, pl.MaxMicroBatches, m)
	}
	sched, err := pl.ParseSchedule(order)
	if err != nil {
		return nil, "", usageErrorf("%s: --schedule must be 1f1b or gpipe, got %q", cmd, order)
	}
	if !(wf >= 0) || wf > maxWeightFactor {
		return nil, "", usageErrorf("%s: --weight-factor must be a number in 0..%g, got %g", cmd, float64(maxWeightFactor), wf)
	}
	c, source, err := loadChain(chainFile)
	if err != nil {
		return nil, "", err
	}
	if wf != 1 {
		c = c.Clone()
		for i := range c.Stages {
			w := math.Ceil(float64(c.Stages[i].W) * wf)
			if w > float64(instances.MaxBytes) {
				return nil, "", usageErrorf("%s: --weight-factor %g: stage %d's w becomes %.3g B, above 2^60 B", cmd, wf, i+1, w)
			}
			c.Stages[i].W = int64(w)
		}
	}
	p := &pl.Problem{Chain: c, GPUs: gpus, Memory: budget, Bandwidth: beta, MicroBatches: m, Schedule: sched}
	if err := p.Validate(); err != nil {
		return nil, "", &UsageError{fmt.Errorf("%s: %s: %w", cmd, source, err)}
	}
	return p, source, nil
}

func runPipeline(o *PipelineOptions, io *IO) error {
	start := time.Now()
	p, source, err := pipelineProblem("pipeline", o.ChainFile, o.GPUs, o.Mem, o.Bandwidth, o.MicroBatches, o.Schedule, o.WeightFactor)
	if err != nil {
		return err
	}
	opt, algos, err := pipelineOptions(o)
	if err != nil {
		return err
	}
	ctx, cancel := withTimeLimit(context.Background(), start, o.TimeLimit)
	defer cancel()
	opt.Deadline, _ = ctx.Deadline()
	if o.SweepDir != "" {
		return runPipelineSweep(io, p, source, opt, o.SweepDir)
	}
	rep, err := RunPipeline(p, source, algos, opt)
	if err != nil {
		return err
	}
	rep.WeightFactor = o.WeightFactor
	if io.JSON {
		return io.PrintJSON(rep)
	}
	return printPipeline(io, rep)
}

// pipelineOptions checks the lever's flags.
func pipelineOptions(o *PipelineOptions) (leverpl.Options, []string, error) {
	var opt leverpl.Options
	switch o.Remat {
	case "stage":
		opt.Remat = true
	case "none":
	default:
		return opt, nil, usageErrorf("pipeline: --remat must be stage or none, got %q", o.Remat)
	}
	algos := []string{o.Algo}
	if o.Algo == "all" {
		algos = leverpl.Names()
	} else if _, ok := leverpl.Lookup(o.Algo); !ok {
		return opt, nil, usageErrorf("pipeline: unknown --algo %q (want %s)", o.Algo, orList(append(leverpl.Names(), "all")))
	}
	if !strings.EqualFold(o.Slots, "exact") {
		n, err := strconv.Atoi(o.Slots)
		if err != nil || n < 1 || n > maxSlots {
			return opt, nil, usageErrorf("pipeline: --slots must be exact or a number in 1..%d, got %q", maxSlots, o.Slots)
		}
		opt.Slots = n
	}
	if err := checkTimeLimit(o.TimeLimit); err != nil {
		return opt, nil, err
	}
	mm, err := maxMemoryFlag(o.maxMemory)
	if err != nil {
		return opt, nil, err
	}
	opt.MaxMemory = mm
	return opt, algos, nil
}

// RunPipeline runs the algorithms on p and computes the bounds. The exact strategy runs first
// (its bound is the ratios' reference); every feasible plan must be at least every bound whose
// scope holds it — a plan below one is a bug, reported as an error.
func RunPipeline(p *pl.Problem, source string, algos []string, opt leverpl.Options) (*PipelineReport, error) {
	rep := &PipelineReport{Chain: source, Stages: p.L(), GPUs: p.GPUs, Memory: p.Memory, MicroBatches: p.MicroBatches,
		Schedule: p.Schedule.String(), Remat: "none"}
	// The store-all memory DP is O(P²·L²): a tenth of the time left at most, so that a long
	// chain leaves the planners their time.
	so := dpl.Options{Stop: opt.Stop}
	if !opt.Deadline.IsZero() {
		so.Deadline = time.Now().Add(time.Until(opt.Deadline) / 10)
	}
	start := time.Now()
	if m, err := dpl.StoreAllMemory(p, so); err == nil {
		rep.StoreAllMinMemory = m
	} else {
		rep.StoreAllNote = fmt.Sprintf("not computed: its DP over allocations stopped after %.1f s, a tenth of --time-limit", time.Since(start).Seconds())
	}
	if opt.Remat {
		rep.Remat = "stage"
	}
	if !math.IsInf(p.Bandwidth, 1) {
		b := p.Bandwidth
		rep.Bandwidth = &b
	}
	// The baselines first, each under a share of half the limit, then the exact search with
	// what is left (leverpl.RunAll); rows keep the order asked for.
	outs, err := leverpl.RunAll(p, algos, opt)
	if err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	var exact *leverpl.Outcome
	for _, out := range outs {
		if out.Name == "exact" {
			exact = out
		}
	}
	bounds, notes := leverpl.Bounds(p, opt, exact)
	rep.BoundNotes = notes
	for _, out := range outs {
		bounds = append(bounds, leverpl.StrategyBounds(out)...) // the MILPs'
	}
	for _, b := range bounds {
		pb := PipelineBound{Name: b.Name, CertifiedBy: b.CertifiedBy, Scope: b.Scope}
		if !math.IsInf(b.Value, 1) {
			v := b.Value
			pb.Value = &v
		}
		rep.LowerBounds = append(rep.LowerBounds, pb)
	}
	for _, out := range outs {
		r := pipelineResult(p, out)
		if r.Feasible {
			ms := *r.Makespan
			// A bound holds the plans of its scope: a non-contiguous plan (a GPU with several
			// parts, or its own action lists) may be below the contiguous ones.
			contiguous := out.Plan.Contiguous() && out.Plan.Actions == nil
			best := 0.0
			for _, b := range bounds {
				if b.ContiguousOnly() && !contiguous {
					continue
				}
				if ms < b.Value*(1-1e-9) {
					return nil, fmt.Errorf("pipeline: %s's verified makespan %g is below the bound %q = %g (bug)", out.Name, ms, b.Name, b.Value)
				}
				if !math.IsInf(b.Value, 1) {
					best = max(best, b.Value)
				}
			}
			if best > 0 {
				ratio := ms / best
				r.RatioToBound = &ratio
			}
			if rep.Best == "" || ms < bestMakespan(rep) {
				rep.Best = out.Name
			}
		}
		rep.Results = append(rep.Results, r)
	}
	return rep, nil
}

func bestMakespan(rep *PipelineReport) float64 {
	for _, r := range rep.Results {
		if r.Algo == rep.Best {
			return *r.Makespan
		}
	}
	return math.Inf(1)
}

// pipelineResult turns an outcome into its JSON form.
func pipelineResult(p *pl.Problem, out *leverpl.Outcome) PipelineResult {
	r := PipelineResult{Algo: out.Name, Feasible: out.Feasible, Seconds: out.Elapsed.Seconds(), Reason: out.Reason, Note: out.Note,
		Schedule: p.Schedule.String(), MicroBatches: p.MicroBatches}
	if out.Name == "exact" {
		opt, comp, ex := out.Optimal, out.Complete, out.Exact
		r.Optimal, r.Complete, r.Exact, r.Nodes, r.SlotSize = &opt, &comp, &ex, out.Nodes, out.SlotSize
		r.Reason = out.Why()
	}
	if out.Plan == nil || out.Replay == nil {
		return r
	}
	rep := out.Replay
	S := len(out.Plan.Parts)
	if p.Schedule == pl.OneFOneB && p.MicroBatches < S {
		note := fmt.Sprintf("m = %d < %d GPUs: PyTorch's Schedule1F1B refuses it; the order is run as a per-rank action list", p.MicroBatches, S)
		if r.Note != "" {
			note = r.Note + "; " + note
		}
		r.Note = note
	}
	if out.Feasible {
		ms := rep.Makespan
		r.Makespan, r.Verified = &ms, true
		if !math.IsNaN(rep.Period) {
			per := rep.Period
			r.Period, r.PeriodExact = &per, rep.PeriodExact
		}
	}
	if !out.Plan.Contiguous() || out.Plan.Actions != nil {
		for _, pt := range out.Plan.Parts {
			r.GPUs = append(r.GPUs, pt.GPU)
		}
		r.Actions = out.Plan.Actions
		if per, err := pipepack.Period(p, out.Plan); err == nil {
			r.AllocationPeriod = &per
		}
	}
	for k, pt := range out.Plan.Parts {
		r.Stages = append(r.Stages, [2]int{pt.First, pt.Last})
		r.PeakMemory = append(r.PeakMemory, rep.Peak[pt.GPU])
		seq := pt.Sequence
		if len(seq) == 0 {
			seq = storeAllSequence(pt.First, pt.Last+1)
		}
		r.Sequences = append(r.Sequences, seq)
		r.Recompute = append(r.Recompute, len(pt.Sequence) > 0 && !isStoreAll(pt.Sequence, pt.First, pt.Last+1))
		r.Held = append(r.Held, rep.Parts[k].Held)
		r.InFlight = append(r.InFlight, p.InFlight(k, S))
		r.Forward = append(r.Forward, rep.Parts[k].F)
		r.Backward = append(r.Backward, rep.Parts[k].B)
	}
	return r
}

// storeAllSequence is F_all^first … F_all^end, B^end … B^first.
func storeAllSequence(first, end int) schedule.Sequence {
	var seq schedule.Sequence
	for l := first; l <= end; l++ {
		seq = append(seq, schedule.Op{Kind: schedule.Fall, Stage: l})
	}
	for l := end; l >= first; l-- {
		seq = append(seq, schedule.Op{Kind: schedule.B, Stage: l})
	}
	return seq
}

func isStoreAll(seq schedule.Sequence, first, end int) bool {
	sa := storeAllSequence(first, end)
	if len(seq) != len(sa) {
		return false
	}
	for i := range seq {
		if seq[i] != sa[i] {
			return false
		}
	}
	return true
}

func printPipeline(io *IO, rep *PipelineReport) error {
	w := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
	link := "free"
	if rep.Bandwidth != nil {
		link = fmt.Sprintf("%.4g GB/s each direction", *rep.Bandwidth/1e9)
	}
	remat := "each part stores everything"
	if rep.Remat == "stage" {
		remat = "recomputation inside the parts allowed"
	}
	fmt.Fprintf(w, "chain\t%s (%d stages + loss)\n", rep.Chain, rep.Stages)
	fmt.Fprintf(w, "GPUs\t%d × %s, links %s\n", rep.GPUs, instances.FormatSize(rep.Memory), link)
	fmt.Fprintf(w, "iteration\t%d micro-batches, %s, %s\n", rep.MicroBatches, rep.Schedule, remat)
	if rep.StoreAllNote != "" {
		fmt.Fprintf(w, "store-all fits\t%s\n\n", rep.StoreAllNote)
	} else {
		fmt.Fprintf(w, "store-all fits\tfrom %s per GPU (%d B) on the best allocation\n\n", instances.FormatSize(rep.StoreAllMinMemory), rep.StoreAllMinMemory)
	}
	fmt.Fprintf(w, "algorithm\tmakespan\tperiod\tratio\tGPUs\tparts\tpeak (max)\tverified\ttime\n")
	for _, r := range rep.Results {
		parts := make([]string, len(r.Stages))
		used := map[int]bool{} // the GPUs the plan uses
		for k, s := range r.Stages {
			parts[k] = fmt.Sprintf("%d–%d", s[0], s[1])
			g := k
			if r.GPUs != nil { // a non-contiguous plan: part@GPU
				g = r.GPUs[k]
				parts[k] += fmt.Sprintf("@%d", g)
			}
			used[g] = true
			if k < len(r.Recompute) && r.Recompute[k] {
				parts[k] += "*"
			}
		}
		var peak int64
		for _, x := range r.PeakMemory {
			peak = max(peak, x)
		}
		if !r.Feasible {
			fmt.Fprintf(w, "%s\t-\t-\t-\t%d\t%s\t%s\tno\t%.2f s\n", r.Algo, len(used), strings.Join(parts, " "), sizeOrDash(peak), r.Seconds)
			continue
		}
		period, ratio := "-", "-"
		if r.Period != nil {
			period = instances.FormatDuration(*r.Period)
		} else if r.AllocationPeriod != nil {
			period = instances.FormatDuration(*r.AllocationPeriod) + "†"
		}
		if r.RatioToBound != nil {
			ratio = fmt.Sprintf("%.3f", *r.RatioToBound)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%s\t%s\tyes\t%.2f s\n", r.Algo, instances.FormatDuration(*r.Makespan), period, ratio,
			len(used), strings.Join(parts, " "), instances.FormatSize(peak), r.Seconds)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	for _, r := range rep.Results {
		if r.Reason != "" {
			fmt.Fprintf(io.Out, "%s: %s\n", r.Algo, r.Reason)
		}
		if r.Note != "" {
			fmt.Fprintf(io.Out, "%s: note: %s\n", r.Algo, r.Note)
		}
		if r.Algo == "exact" && r.Optimal != nil && *r.Optimal {
			fmt.Fprintf(io.Out, "exact: proven optimal (%d partial allocations bounded)\n", r.Nodes)
		}
	}
	fmt.Fprintln(io.Out, "(* recomputes inside its part; @g: part on GPU g of a non-contiguous plan, run by per-rank action lists; † the allocation's steady-state period)")
	fmt.Fprintln(io.Out)
	w = tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "bound\tvalue\tcertified by\tscope\n")
	for _, b := range rep.LowerBounds {
		v := "∞ (nothing fits)"
		if b.Value != nil {
			v = instances.FormatDuration(*b.Value)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", b.Name, v, b.CertifiedBy, b.Scope)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	for _, n := range rep.BoundNotes {
		fmt.Fprintf(io.Out, "note: %s\n", n)
	}
	fmt.Fprintln(io.Out, "\nevery plan above was replayed by an independent validator (verify/pipeline)")
	return nil
}

func sizeOrDash(b int64) string {
	if b == 0 {
		return "-"
	}
	return instances.FormatSize(b)
}

// runPipelineSweep plans P' = 1..P GPUs and writes pipeline-sweep.csv, pipeline-sweep.json and
// the throughput plot into dir.
func runPipelineSweep(io *IO, p *pl.Problem, source string, opt leverpl.Options, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usageErrorf("--sweep %s: %v", dir, pathErr(err))
	}
	res, err := report.PipelineSweep(p, source, opt)
	if err != nil {
		return err
	}
	var b strings.Builder
	cw := csv.NewWriter(&b)
	cw.Write([]string{"gpus", "algo", "feasible", "makespan_s", "throughput_microbatches_per_s", "parts", "optimal", "best_bound_s", "best_bound", "seconds"})
	for _, pt := range res.Points {
		for _, r := range pt.Rows {
			ms, thr := "", ""
			if r.Feasible {
				ms = strconv.FormatFloat(r.Makespan, 'g', -1, 64)
				thr = strconv.FormatFloat(float64(p.MicroBatches)/r.Makespan, 'g', -1, 64)
			}
			cw.Write([]string{strconv.Itoa(pt.GPUs), r.Algo, strconv.FormatBool(r.Feasible), ms, thr, strconv.Itoa(r.Parts),
				strconv.FormatBool(r.Optimal), strconv.FormatFloat(pt.Bound, 'g', -1, 64), pt.BoundName, strconv.FormatFloat(r.Seconds, 'f', 3, 64)})
		}
	}
	cw.Flush()
	files := []string{filepath.Join(dir, "pipeline-sweep.csv"), filepath.Join(dir, "pipeline-sweep.json")}
	if err := writeOutput("--sweep", files[0], []byte(b.String())); err != nil {
		return err
	}
	js, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := writeOutput("--sweep", files[1], append(js, '\n')); err != nil {
		return err
	}
	plotsOut, err := plots.WritePipeline(res, dir)
	if err != nil {
		return err
	}
	files = append(files, plotsOut...)
	if io.JSON {
		return io.PrintJSON(res)
	}
	w := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "GPUs\tbest\tmakespan\tbound\tcertified by\n")
	for _, pt := range res.Points {
		best, ms := "-", math.Inf(1)
		for _, r := range pt.Rows {
			if r.Feasible && r.Makespan < ms {
				best, ms = r.Algo, r.Makespan
			}
		}
		msText := "-"
		if !math.IsInf(ms, 1) {
			msText = instances.FormatDuration(ms)
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\n", pt.GPUs, best, msText, instances.FormatDuration(pt.Bound), pt.BoundName)
	}
	w.Flush()
	// A GPU count without a plan says why (pipeline-sweep.json has every row's reason).
	for _, pt := range res.Points {
		algos := map[string][]string{} // reason → the rows giving it
		var reasons []string
		for _, r := range pt.Rows {
			if r.Feasible {
				reasons = nil
				break
			}
			if r.Reason == "" {
				continue
			}
			if algos[r.Reason] == nil {
				reasons = append(reasons, r.Reason)
			}
			algos[r.Reason] = append(algos[r.Reason], r.Algo)
		}
		for i, why := range reasons {
			reasons[i] = strings.Join(algos[why], ", ") + ": " + why
		}
		if len(reasons) > 0 {
			fmt.Fprintf(io.Out, "%d GPUs, no plan: %s\n", pt.GPUs, strings.Join(reasons, "; "))
		}
	}
	fmt.Fprintf(io.Out, "wrote %s\n", strings.Join(files, ", "))
	return nil
}
