package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/memsched/memsched/heuristics/checkpoint"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/verify"
)

// InfoOptions are the flags of `memsched info`.
type InfoOptions struct {
	// ChainFile is the chain to describe; empty means the embedded default (the toy chain).
	ChainFile string
}

// InfoReport is what `memsched info` prints (JSON keys in snake_case).
type InfoReport struct {
	Name             string  `json:"name"`
	Source           string  `json:"source"`
	Stages           int     `json:"stages"`
	SumUF            float64 `json:"sum_uf"`
	SumUB            float64 `json:"sum_ub"`
	StoreAllMakespan float64 `json:"store_all_makespan"`
	StoreAllPeak     int64   `json:"store_all_peak"`
	MinBudget        int64   `json:"min_budget"`
	Weights          int64   `json:"weights"`
}

func newInfoCmd(io *IO) *cobra.Command {
	opts := &InfoOptions{}
	cmd := &cobra.Command{
		Use:   "info [--chain FILE]",
		Short: "Describe a chain: sums of times, store-all makespan and peak, smallest feasible budget",
		Example: `  memsched info                     # the built-in toy chain (004 Table 2)
  memsched info --chain r101.json --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runInfo(opts, io)
		},
	}
	cmd.Flags().StringVar(&opts.ChainFile, "chain", "", "chain file (memsched.chain/v1); default: the built-in toy chain of 004 Table 2")
	return cmd
}

// loadChain reads the chain file, or the embedded default when path is empty; a bad file is a
// usage error (exit 2).
func loadChain(path string) (*instances.Chain, string, error) {
	if path == "" {
		return instances.DefaultChain(), "built-in toy chain (004 Table 2)", nil
	}
	c, err := instances.LoadChain(path)
	if err != nil {
		return nil, "", &UsageError{err}
	}
	return c, path, nil
}

func runInfo(opts *InfoOptions, io *IO) error {
	c, source, err := loadChain(opts.ChainFile)
	if err != nil {
		return err
	}
	rep := InfoReport{Name: c.Name, Source: source, Stages: c.Len(), MinBudget: verify.MinBudget(c)}
	for _, s := range c.Stages {
		rep.SumUF += s.UF
		rep.SumUB += s.UB
		rep.Weights += s.W
	}
	res, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
	if err != nil {
		return fmt.Errorf("store-all sequence does not replay: %w", err)
	}
	rep.StoreAllMakespan, rep.StoreAllPeak = res.Makespan, res.Peak
	if io.JSON {
		return io.PrintJSON(rep)
	}
	w := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "chain\t%s\n", rep.Name)
	fmt.Fprintf(w, "source\t%s\n", rep.Source)
	fmt.Fprintf(w, "stages\t%d (incl. loss stage)\n", rep.Stages)
	fmt.Fprintf(w, "sum u_f\t%s\n", instances.FormatDuration(rep.SumUF))
	fmt.Fprintf(w, "sum u_b\t%s\n", instances.FormatDuration(rep.SumUB))
	fmt.Fprintf(w, "store-all makespan\t%s\n", instances.FormatDuration(rep.StoreAllMakespan))
	fmt.Fprintf(w, "store-all peak\t%s (%d B)\n", instances.FormatSize(rep.StoreAllPeak), rep.StoreAllPeak)
	fmt.Fprintf(w, "smallest feasible budget\t%s (%d B)\n", instances.FormatSize(rep.MinBudget), rep.MinBudget)
	fmt.Fprintf(w, "weights\t%s\n", instances.FormatSize(rep.Weights))
	return w.Flush()
}
