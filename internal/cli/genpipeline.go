package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	pl "github.com/memsched/memsched/instances/pipeline"
	"github.com/memsched/memsched/instances/reduce"
)

// newGenPipelineCmds are `memsched gen pipeline-3partition` and `pipeline-2partition`: SPEC
// §7's hardness instances (instances/reduce), the chain written out, the GPUs, the memory and
// the target period on stderr (and in --json's report).
func newGenPipelineCmds(io *IO, g *GenOptions) []*cobra.Command {
	mk := func(use, short, long, example, values string, build func([]int64, int) (*pl.Problem, float64, error), kind string) *cobra.Command {
		var vs []int64
		var m int
		cmd := &cobra.Command{
			Use: use, Short: short, Long: long, Example: example,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				if m < 1 || m > pl.MaxMicroBatches {
					return usageErrorf("--micro-batches must be in 1..%d, got %d", pl.MaxMicroBatches, m)
				}
				p, target, err := build(vs, m)
				if err != nil {
					return genValues(err)
				}
				fmt.Fprintf(io.ErrOut, "memsched: %s: --gpus %d --mem %dB --bandwidth inf --micro-batches %d; some allocation has period %g s iff the values split into %d sets of sum %g\n",
					kind, p.GPUs, p.Memory, m, target, p.GPUs, target)
				return writeChain(p.Chain, g, io, &GenReport{Mem: p.Memory, Target: target, GPUs: p.GPUs, MicroBatches: m})
			},
		}
		cmd.Flags().Int64SliceVar(&vs, "values", nil, values)
		cmd.Flags().IntVar(&m, "micro-batches", 1, "m, the micro-batches the memory is sized for (the period does not depend on it)")
		return cmd
	}
	three := mk("pipeline-3partition --values 4,5,6,4,5,6",
		"SPEC §7: the non-contiguous allocation instance of a 3-partition instance (layer times u, q GPUs, free links, period V)",
		`pipeline-3partition writes SPEC §7's reduction from 3-Partition (instances/reduce.PipelineThreePartition):
for 3q values of sum qV, a chain of 3q stages whose forward times are the values (backward 0,
every tensor 1 byte, no weights), to run on q GPUs with free links and a memory every
allocation fits. The steady-state period of an allocation is its largest GPU load: some
allocation, contiguous or not, has period V iff the values split into q sets of sum V (triples
when every value lies strictly between V/4 and V/2). `+"`memsched pipeline --algo packing`"+` (its
allocation period, proven optimal) and `+"`--algo milp-alloc`"+` (the allocation MILP) decide it;
`+"`memsched export --problem pipeline --model allocation --objective period`"+` writes the MILP.`,
		`  memsched gen pipeline-3partition --values 4,5,6,4,5,6 -o p3p.json   # --gpus 2 --mem 21B --bandwidth inf, period 15 s
  memsched pipeline --chain p3p.json --gpus 2 --mem 21B --bandwidth inf --micro-batches 1 --remat none --algo packing`,
		"3q positive integers with a sum divisible by q", reduce.PipelineThreePartition, "pipeline 3-partition")
	two := mk("pipeline-2partition --values 3,1,1,2,2,1",
		"SPEC §7: the non-contiguous allocation instance of a 2-partition instance (2 GPUs, period V = Σ/2)",
		`pipeline-2partition writes SPEC §7's reduction from 2-Partition (instances/reduce.PipelineTwoPartition):
n stages whose forward times are the values, on 2 GPUs with free links and a memory every
allocation fits: some allocation has period Σ/2 iff a subset of the values sums to Σ/2.`,
		`  memsched gen pipeline-2partition --values 3,1,1,2,2,1 -o p2p.json   # --gpus 2 --mem 21B --bandwidth inf, period 5 s
  memsched pipeline --chain p2p.json --gpus 2 --mem 21B --bandwidth inf --micro-batches 1 --remat none --algo packing`,
		"positive integers with an even sum", reduce.PipelineTwoPartition, "pipeline 2-partition")
	return []*cobra.Command{three, two}
}

// newGenReduceCmd is `memsched gen reduce NAME`: every reduction instance under one name (the
// same generators as gen NAME).
func newGenReduceCmd(io *IO, g *GenOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "reduce NAME --values ...",
		Short: "The hardness reductions' instances (the same generators as gen NAME)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var names []string
			for _, c := range cmd.Commands() {
				names = append(names, c.Name())
			}
			return usageErrorf("gen reduce: give a reduction: %v", names)
		},
	}
	cmd.AddCommand(newGenTwoPartitionCmd(io, g), newGenWeightsThreePartitionCmd(io, g))
	cmd.AddCommand(newGenActCmds(io, g)...)
	cmd.AddCommand(newGenPipelineCmds(io, g)...)
	return cmd
}
