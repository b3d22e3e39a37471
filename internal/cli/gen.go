package cli

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
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

// writeChain writes c to the output file or stdout.
func writeChain(c *instances.Chain, opts *GenOptions, io *IO) error {
	var buf bytes.Buffer
	if err := instances.WriteChain(&buf, c); err != nil {
		return err
	}
	if opts.Output == "" || opts.Output == "-" {
		_, err := io.Out.Write(buf.Bytes())
		return err
	}
	if err := os.WriteFile(opts.Output, buf.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(io.ErrOut, "memsched: wrote %s (%d stages)\n", opts.Output, c.Len())
	return nil
}

func newGenCmd(io *IO) *cobra.Command {
	opts := &GenOptions{}
	cmd := &cobra.Command{
		Use:   "gen",
		Short: "Generate chain profiles: model zoo, random chains, built-in and reduction instances",
	}
	cmd.PersistentFlags().StringVarP(&opts.Output, "output", "o", "", "output file (default: stdout)")
	cmd.AddCommand(newGenZooCmd(io, opts), newGenRandomCmd(io, opts), newGenToyCmd(io, opts),
		newGenFig4Cmd(io, opts), newGenTwoPartitionCmd(io, opts))
	cmd.AddCommand(newGenActCmds(io, opts)...)
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
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Family = args[0]
			c, err := genZoo(o)
			if err != nil {
				return &UsageError{err}
			}
			return writeChain(c, g, io)
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
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			size, err := sizeFlag("--max-size", maxSize)
			if err != nil {
				return err
			}
			p.MaxSize = size
			if p.Stages < 1 || p.Stages > 100000 || p.MaxSize < 1 || p.MaxTime < 0 {
				return usageErrorf("gen random: --stages must be in 1..100000, --max-size ≥ 1 B, --max-time ≥ 0")
			}
			if _, ok := instances.MulBytes(int64(6*p.Stages+2), p.MaxSize); !ok {
				return usageErrorf("gen random: --max-size %s with --stages %d: the chain's sizes could total %.3g B, above 2^60 B (1 EiB), the most memsched computes with",
					maxSize, p.Stages, float64(6*p.Stages+2)*float64(p.MaxSize))
			}
			c := instances.Random(rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), p)
			c.Name = fmt.Sprintf("random seed=%d stages=%d", seed, p.Stages)
			return writeChain(c, g, io)
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
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return writeChain(instances.Toy(), g, io) },
	}
}

func newGenFig4Cmd(io *IO, g *GenOptions) *cobra.Command {
	var n int
	cmd := &cobra.Command{
		Use:   "fig4 --n N",
		Short: "004 Fig. 4: persistent schedules lose a factor → 3/2 (budget 15 B)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := instances.Fig4(n)
			if err != nil {
				return &UsageError{err}
			}
			return writeChain(c, g, io)
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
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, budget, target, err := reduce.RematTwoPartition(values)
			if err != nil {
				return &UsageError{err}
			}
			c.Name += fmt.Sprintf(" budget=%dB target=%gs", budget, target)
			return writeChain(c, g, io)
		},
	}
	cmd.Flags().Int64SliceVar(&values, "values", nil, "positive integers with an even sum")
	return cmd
}
