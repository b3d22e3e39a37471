package cli

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/instances/reduce"
	"github.com/memsched/memsched/instances/zoo"
)

// GenOptions are the flags shared by `memsched gen` subcommands.
type GenOptions struct {
	Output string // file; "" or "-" writes to stdout
}

// GenReport is what `memsched gen -o FILE --json` prints: what was written, and for a
// reduction instance the --mem, --bandwidth and target that go with it.
type GenReport struct {
	File   string `json:"file"`
	Name   string `json:"name"`
	Stages int    `json:"stages"`
	// Mem (bytes), Bandwidth (bytes/s) and Target (seconds) are set for the reductions whose
	// instance is more than a chain: the budget and rate to run it with, and the makespan or
	// period a schedule reaches exactly when the source instance is a yes-instance.
	Mem       int64   `json:"mem,omitempty"`
	Bandwidth float64 `json:"bandwidth,omitempty"`
	Target    float64 `json:"target,omitempty"`
	// GPUs and MicroBatches are set for the pipeline reductions (free links: no bandwidth).
	GPUs         int `json:"gpus,omitempty"`
	MicroBatches int `json:"micro_batches,omitempty"`
}

// writeChain writes c to the output file or stdout; with --json and -o it prints a GenReport
// (rep, when given, carries a reduction's parameters).
func writeChain(c *instances.Chain, opts *GenOptions, io *IO, rep *GenReport) error {
	var buf bytes.Buffer
	if err := instances.WriteChain(&buf, c); err != nil {
		return err
	}
	if opts.Output == "" || opts.Output == "-" {
		_, err := io.Out.Write(buf.Bytes()) // the chain is JSON: --json changes nothing
		return err
	}
	if err := writeOutput("-o", opts.Output, buf.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(io.ErrOut, "memsched: wrote %s (%d stages)\n", opts.Output, c.Len())
	if io.JSON {
		if rep == nil {
			rep = &GenReport{}
		}
		rep.File, rep.Name, rep.Stages = opts.Output, c.Name, c.Len()
		return io.PrintJSON(rep)
	}
	return nil
}

// genValues wraps a reduction's complaint about its values as a usage error naming --values.
func genValues(err error) error {
	return usageErrorf("--values: %v", err)
}

func newGenCmd(io *IO) *cobra.Command {
	opts := &GenOptions{}
	cmd := &cobra.Command{
		Use:   "gen GENERATOR [flags] [-o FILE]",
		Short: "Generate chain profiles: model zoo, random chains, built-in and reduction instances",
		Long: `gen writes a chain (memsched.chain/v1) to -o FILE or stdout. With -o and --json it prints what
it wrote (file, name, stages; for a reduction also the --mem, --bandwidth and target to use).`,
		Example: `  memsched gen zoo resnet --depth 101 --batch 32 -o r101.json
  memsched gen random --seed 3 --stages 12 --weights -o rand.json
  memsched gen weights-3partition --values 4,5,6,4,5,6 -o w3p.json --json`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var names []string
			for _, c := range cmd.Commands() {
				if c.IsAvailableCommand() {
					names = append(names, c.Name())
				}
			}
			if len(args) == 0 {
				return usageErrorf("gen: give a generator: %s", strings.Join(names, ", "))
			}
			return usageErrorf("gen: unknown generator %q (want %s)", args[0], strings.Join(names, ", "))
		},
	}
	cmd.PersistentFlags().StringVarP(&opts.Output, "output", "o", "", "output file (default: stdout)")
	cmd.AddCommand(newGenZooCmd(io, opts), newGenRandomCmd(io, opts), newGenToyCmd(io, opts),
		newGenFig4Cmd(io, opts), newGenTwoPartitionCmd(io, opts), newGenWeightsThreePartitionCmd(io, opts))
	cmd.AddCommand(newGenActCmds(io, opts)...)
	cmd.AddCommand(newGenPipelineCmds(io, opts)...)
	cmd.AddCommand(newGenReduceCmd(io, opts))
	return cmd
}

// GenZooOptions are the flags of `memsched gen zoo FAMILY`.
type GenZooOptions struct {
	Family                       string
	Depth, Image, Batch, Classes int
	Hidden, Heads, Layers, Seq   int
	DType, Device                string
}

func newGenZooCmd(io *IO, g *GenOptions) *cobra.Command {
	o := &GenZooOptions{}
	cmd := &cobra.Command{
		Use:   "zoo resnet|densenet|inception|vgg|gpt2|bert",
		Short: "Analytic profile of a standard network (docs/zoo.md)",
		Example: `  memsched gen zoo resnet --depth 101 --image 224 --batch 32 --device v100 -o resnet101.json
  memsched gen zoo gpt2 --hidden 3072 --heads 24 --layers 36 --seq 1024 --batch 16`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("gen zoo: give one family (resnet, densenet, inception, vgg, gpt2 or bert), got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Family = args[0]
			c, err := genZoo(o)
			if err != nil {
				return &UsageError{err}
			}
			return writeChain(c, g, io, nil)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.Depth, "depth", 0, "variant: resnet 18|34|50|101|152|200|1001, densenet 121|161|169|201, vgg 16|19")
	f.IntVar(&o.Image, "image", 0, "image size (default 224; 299 for inception, 32 for resnet 1001)")
	f.IntVar(&o.Batch, "batch", 32, "batch size")
	f.IntVar(&o.Classes, "classes", 0, "classes of the classifier (default 1000; 10 for resnet 1001)")
	f.IntVar(&o.Hidden, "hidden", 768, "transformer hidden size")
	f.IntVar(&o.Heads, "heads", 12, "transformer attention heads")
	f.IntVar(&o.Layers, "layers", 12, "transformer blocks")
	f.IntVar(&o.Seq, "seq", 1024, "transformer sequence length")
	f.StringVar(&o.DType, "dtype", "fp32", "fp32|fp16|bf16")
	f.StringVar(&o.Device, "device", "v100", "device profile for times: v100|h100")
	return cmd
}

func genZoo(o *GenZooOptions) (*instances.Chain, error) {
	for _, f := range []struct {
		name string
		v    int
	}{{"--image", o.Image}, {"--classes", o.Classes}} {
		if f.v < 0 {
			return nil, fmt.Errorf("gen zoo: %s must not be negative, got %d", f.name, f.v)
		}
	}
	cfg := zoo.CNNConfig{Depth: o.Depth, Image: o.Image, Batch: o.Batch, DType: o.DType, Device: o.Device, Classes: o.Classes}
	if cfg.Image == 0 {
		switch {
		case o.Family == "inception":
			cfg.Image = 299
		case o.Family == "resnet" && o.Depth == 1001:
			cfg.Image = 32
		default:
			cfg.Image = 224
		}
	}
	switch strings.ToLower(o.Family) {
	case "resnet":
		return zoo.ResNet(cfg)
	case "densenet":
		return zoo.DenseNet(cfg)
	case "inception", "inception_v3", "inception-v3":
		return zoo.InceptionV3(cfg)
	case "vgg":
		return zoo.VGG(cfg)
	case "gpt2", "bert":
		return zoo.Transformer(zoo.TransformerConfig{Kind: o.Family, Hidden: o.Hidden, Heads: o.Heads, Layers: o.Layers,
			SeqLen: o.Seq, Batch: o.Batch, DType: o.DType, Device: o.Device})
	}
	return nil, fmt.Errorf("gen zoo: unknown family %q (want resnet, densenet, inception, vgg, gpt2 or bert)", o.Family)
}

func newGenRandomCmd(io *IO, g *GenOptions) *cobra.Command {
	var seed uint64
	p := instances.RandomParams{}
	var maxSize string
	cmd := &cobra.Command{
		Use:   "random",
		Short: "A seeded random chain (for tests and experiments)",
		Example: `  memsched gen random --seed 7 --stages 12 -o rand.json
  memsched gen random --seed 7 --stages 6 --integer --max-size 64 --max-time 10 --weights   # small integers, for exact runs`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			size, err := sizeFlag("--max-size", maxSize)
			if err != nil {
				return err
			}
			p.MaxSize = size
			switch {
			case p.Stages < 1 || p.Stages > 100000:
				return usageErrorf("gen random: --stages must be in 1..100000, got %d", p.Stages)
			case p.MaxSize < 1:
				return usageErrorf("gen random: --max-size must be at least 1 B, got %s", maxSize)
			case !(p.MaxTime >= 0) || p.MaxTime > 1e6:
				return usageErrorf("gen random: --max-time must be in 0..1e6 seconds, got %g", p.MaxTime)
			}
			if _, ok := instances.MulBytes(int64(6*p.Stages+2), p.MaxSize); !ok {
				return usageErrorf("gen random: --max-size %s with --stages %d: the chain's sizes could total %.3g B, above 2^60 B (1 EiB), the most memsched computes with",
					maxSize, p.Stages, float64(6*p.Stages+2)*float64(p.MaxSize))
			}
			c := instances.Random(rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), p)
			c.Name = fmt.Sprintf("random seed=%d stages=%d", seed, p.Stages)
			return writeChain(c, g, io, nil)
		},
	}
	f := cmd.Flags()
	f.Uint64Var(&seed, "seed", 1, "random seed (same seed, same chain)")
	f.IntVar(&p.Stages, "stages", 8, "stages, loss stage included")
	f.StringVar(&maxSize, "max-size", "64MiB", "largest size")
	f.Float64Var(&p.MaxTime, "max-time", 0.01, "longest duration in seconds")
	f.BoolVar(&p.Integer, "integer", false, "integer sizes (bytes) and times (seconds), for exact runs")
	f.BoolVar(&p.WithABar, "abar", true, "draw ā ≥ a (else ā = a)")
	f.BoolVar(&p.WithOverheads, "overheads", true, "draw overheads o_f, o_b")
	f.BoolVar(&p.WithWeights, "weights", false, "draw weight sizes")
	f.BoolVar(&p.WithDelta, "delta", false, "draw δ independently of a")
	return cmd
}

func newGenToyCmd(io *IO, g *GenOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "toy",
		Short: "The toy chain of 004 Table 2 (in bytes and seconds)",
		Example: `  memsched gen toy -o toy.json   # the chain commands use without --chain
  memsched info --chain toy.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return writeChain(instances.Toy(), g, io, nil) },
	}
}

func newGenFig4Cmd(io *IO, g *GenOptions) *cobra.Command {
	var n int
	cmd := &cobra.Command{
		Use:   "fig4 --n N",
		Short: "004 Fig. 4: persistent schedules lose a factor → 3/2 (budget 15 B)",
		Example: `  memsched gen fig4 --n 6 -o fig4.json
  memsched remat --chain fig4.json --mem 15B --algo exhaustive`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := instances.Fig4(n)
			if err != nil {
				return usageErrorf("--n: %v", err)
			}
			return writeChain(c, g, io, nil)
		},
	}
	cmd.Flags().IntVar(&n, "n", 4, "family parameter n ≥ 3 (chain of n+3 stages)")
	return cmd
}

func newGenTwoPartitionCmd(io *IO, g *GenOptions) *cobra.Command {
	var values []int64
	cmd := &cobra.Command{
		Use:   "remat-2partition --values 3,1,1,2,2,1",
		Short: "004 Thm 3.6: the Remat instance of a 2-partition instance (budget 3V, target 4V + U_B)",
		Example: `  memsched gen remat-2partition --values 3,1,1,2,2,1 -o r2p.json   # budget 15 B, target 34 s on stderr
  memsched certify --chain r2p.json --mem 15B`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, budget, target, err := reduce.RematTwoPartition(values)
			if err != nil {
				return genValues(err)
			}
			c.Name += fmt.Sprintf(" budget=%dB target=%gs", budget, target)
			fmt.Fprintf(io.ErrOut, "memsched: remat 2-partition: budget = %d B (--mem %dB), T = %g s\n", budget, budget, target)
			return writeChain(c, g, io, &GenReport{Mem: budget, Target: target})
		},
	}
	cmd.Flags().Int64SliceVar(&values, "values", nil, "positive integers with an even sum")
	return cmd
}

// newGenWeightsThreePartitionCmd is `memsched gen weights-3partition`: 002 Thm 1's instance as a
// chain (one stage per layer: u_F, u_B and |w|; no activations), with M_GPU, β and T on stderr.
func newGenWeightsThreePartitionCmd(io *IO, g *GenOptions) *cobra.Command {
	var values []int64
	cmd := &cobra.Command{
		Use:   "weights-3partition --values 4,5,6,4,5,6",
		Short: "002 Thm 1: the weight-offloading instance of a 3-partition instance (M_GPU = (m+1)V, β = V, T = 2m)",
		Long: `weights-3partition writes the instance of 002 Thm 1 (instances/reduce.WeightsThreePartition) for
3m values of sum mV: L = 5m layers, M_GPU = (m+1)V bytes, β = V bytes/s. With every value
strictly between V/4 and V/2 (3-Partition's strong form), a periodic schedule of period T = 2m
exists iff the values split into m triples of sum V; outside that form a shorter schedule may
exist without a partition. ` + "`memsched bound`" + ` gives the certified lower bound and
offload-weights the heuristics' periods.`,
		Example: `  memsched gen weights-3partition --values 4,5,6,4,5,6 -o w3p.json   # --mem 45B --bandwidth 15B/s, T = 4 s
  memsched bound --problem weight-offload --chain w3p.json --mem 45B --bandwidth 15B/s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, _, err := reduce.WeightsThreePartition(values, nil)
			if err != nil {
				return genValues(err)
			}
			target := float64(2 * (len(values) / 3))
			name := "weights 3-partition"
			c := &instances.Chain{Name: fmt.Sprintf("%s M_GPU=%dB beta=%gB/s T=%gs", name, p.MGPU, p.Beta, target), A0: p.A0}
			for i, l := range p.Layers {
				c.Stages = append(c.Stages, instances.Stage{Name: fmt.Sprintf("layer%d", i+1), UF: l.UF, UB: l.UB, A: l.A, ABar: l.A, Delta: l.A, W: l.W})
			}
			fmt.Fprintf(io.ErrOut, "memsched: %s: M_GPU = %d B (--mem %dB), β = %g B/s (--bandwidth %gB/s), T = %g s\n",
				name, p.MGPU, p.MGPU, p.Beta, p.Beta, target)
			return writeChain(c, g, io, &GenReport{Mem: p.MGPU, Bandwidth: p.Beta, Target: target})
		},
	}
	cmd.Flags().Int64SliceVar(&values, "values", nil, "3m positive integers with a sum divisible by m")
	return cmd
}
