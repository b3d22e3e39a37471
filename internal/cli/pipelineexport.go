package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/pipemilp"
	"github.com/memsched/memsched/model"
)

func init() { exportProblems = append(exportProblems, "pipeline") }

// pipelineExportFlags are the flags `memsched export --problem pipeline` adds to export.
var pipelineExportFlags = []string{"gpus", "micro-batches", "schedule", "remat", "model", "objective"}

// withPipelineExport adds --problem pipeline to the export command: the contiguous MILP or the
// allocation MILP of a pipeline problem (milp/pipemilp), as `memsched pipeline` solves them.
func withPipelineExport(cmd *cobra.Command, io *IO) *cobra.Command {
	inner := cmd.RunE
	var gpus, m int
	var order, remat, form, objective string
	f := cmd.Flags()
	f.IntVar(&gpus, "gpus", 0, "--problem pipeline: P, the GPUs")
	f.IntVar(&m, "micro-batches", 0, "--problem pipeline: m, the micro-batches of one iteration")
	f.StringVar(&order, "schedule", "1f1b", "--problem pipeline: 1f1b | gpipe")
	f.StringVar(&remat, "remat", "stage", "--problem pipeline: stage (the relaxation of any sequence per part) | none (every part stores everything: exact)")
	f.StringVar(&form, "model", "contiguous", "--problem pipeline: contiguous (the makespan over contiguous allocations) | allocation (003's ILP: every allocation, contiguous or not)")
	f.StringVar(&objective, "objective", "makespan", "--problem pipeline --model allocation: makespan (a lower bound on every allocation's) | period")
	cmd.Use = strings.Replace(cmd.Use, "remat-offload", "remat-offload|pipeline", 1)
	if fl := f.Lookup("problem"); fl != nil {
		fl.Usage += "|pipeline"
	}
	cmd.Long += "\nWith --problem pipeline (needs --gpus, --bandwidth, --micro-batches) it writes the contiguous MILP of `memsched pipeline --algo milp` (--model contiguous: its optimum is the least makespan of a contiguous allocation when every part stores everything, --remat none; a lower bound for any sequence per part with --remat stage) or the allocation MILP of --algo milp-alloc (--model allocation, 003's ILP: a lower bound on the makespan or the period of every allocation, contiguous or not); docs/pipeline.md gives the formulations. The objective times the time unit is seconds."
	cmd.Example += "\n  memsched export --problem pipeline --chain gpt2.json --gpus 4 --mem 16GiB --bandwidth 25GB/s --micro-batches 8 --remat none --format lp -o pipe.lp"
	cmd.RunE = func(c *cobra.Command, args []string) error {
		problem, _ := c.Flags().GetString("problem")
		if problem != "pipeline" {
			for _, name := range pipelineExportFlags {
				if c.Flags().Changed(name) {
					return usageErrorf("export: --%s goes with --problem pipeline", name)
				}
			}
			return inner(c, args)
		}
		for _, name := range []string{"graph", "graph-model"} {
			if c.Flags().Changed(name) {
				return usageErrorf("export: --%s goes with --problem remat-ilp, not pipeline", name)
			}
		}
		get := func(name string) string { v, _ := c.Flags().GetString(name); return v }
		format, out := get("format"), get("output")
		if err := checkExportFlags(format, out); err != nil {
			return err
		}
		if get("chain") == "" {
			return usageErrorf("export: --problem pipeline needs --chain FILE")
		}
		maxMem, err := maxMemoryFlag(get("max-memory"))
		if err != nil {
			return err
		}
		if remat != "stage" && remat != "none" {
			return usageErrorf("export: --remat must be stage or none, got %q", remat)
		}
		if form != "contiguous" && form != "allocation" {
			return usageErrorf("export: --model must be contiguous or allocation, got %q", form)
		}
		obj := pipemilp.Makespan
		switch objective {
		case "makespan":
		case "period":
			obj = pipemilp.Period
		default:
			return usageErrorf("export: --objective must be makespan or period, got %q", objective)
		}
		if form == "contiguous" && c.Flags().Changed("objective") {
			return usageErrorf("export: --objective goes with --model allocation (the contiguous model's objective is the makespan)")
		}
		p, _, err := pipelineProblem("export", get("chain"), gpus, get("mem"), get("bandwidth"), m, order, 1)
		if err != nil {
			return err
		}
		var mod *model.Model
		var units milp.Units
		if form == "contiguous" {
			f, err := pipemilp.BuildContiguous(p, pipemilp.ContiguousOptions{Remat: remat == "stage", MaxMemory: maxMem})
			if err != nil {
				return &UsageError{err}
			}
			mod, units = f.Model, f.Units
		} else {
			a, err := pipemilp.BuildAllocation(p, pipemilp.AllocationOptions{Objective: obj, Remat: remat == "stage", MaxMemory: maxMem})
			if err != nil {
				return &UsageError{err}
			}
			mod, units = a.Model, a.Units
		}
		return writeModelFile(io, "pipeline", format, out, mod, units)
	}
	return cmd
}
