package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/heuristics/checkpoint"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
	"github.com/memsched/memsched/verify/oracle"
)

// RematOptions are the flags of `memsched remat`.
type RematOptions struct {
	ChainFile  string
	Mem        string // budget, e.g. "90MiB"
	Algo       string
	Slots      int
	Exact      bool
	Frontier   bool
	FreeDelete bool
}

// maxExactBudget is the largest budget of --exact: the dynamic programs take at most 2^22 slots.
const maxExactBudget = 1 << 22

// rematAlgos lists the algorithms of `memsched remat --algo`.
var rematAlgos = []string{"persistent", "floating", "exhaustive", "store-all", "sequential", "revolve"}

// RematReport is the result of `memsched remat` (JSON keys as in the issue).
type RematReport struct {
	Algorithm  string            `json:"algorithm"`
	Chain      string            `json:"chain"`
	Budget     int64             `json:"budget"`
	Feasible   bool              `json:"feasible"`
	Makespan   float64           `json:"makespan,omitempty"`
	PeakMemory int64             `json:"peak_memory,omitempty"`
	Sequence   schedule.Sequence `json:"sequence"`
	Verified   bool              `json:"verified"`
	Segments   int               `json:"segments,omitempty"`
	SlotSize   int64             `json:"slot_size,omitempty"`
}

// FrontierPoint is one row of `memsched remat --frontier`.
type FrontierPoint struct {
	Budget   int64   `json:"budget"`
	Makespan float64 `json:"makespan"`
}

func newRematCmd(io *IO) *cobra.Command {
	opts := &RematOptions{}
	cmd := &cobra.Command{
		Use:   "remat --mem SIZE [--chain FILE] [--algo NAME]",
		Short: "Fastest rematerialization sequence of a chain under a memory budget (004)",
		Long: `remat computes a rematerialization sequence (F_all / F_ck / F_∅ / B, 004 Table 1) for the
chain under the budget and replays it with the simulator. Algorithms:
  persistent  rotor's C_MP dynamic program (best memory-persistent sequence)
  floating    the C_FL dynamic program (optimal, weakly persistent sequences)
  exhaustive  exact shortest-path search (small chains only)
  store-all   no rematerialization (PyTorch default)
  sequential  PyTorch checkpoint_sequential, best of 1..2√(L+1) segments
  revolve     Griewank–Walther's AD-model schedule with F_all before each B
An infeasible budget is a result (feasible: false), not an error.`,
		Example: `  memsched remat --mem 90MiB                              # toy chain, rotor's C_MP
  memsched remat --mem 90MiB --algo floating --json       # optimal weakly persistent sequence
  memsched gen zoo resnet --depth 101 --batch 32 -o r101.json
  memsched remat --chain r101.json --mem 2GiB --algo persistent --slots 1000
  memsched remat --chain r101.json --mem 4GiB --frontier  # makespan vs budget from one table`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runRemat(opts, io) },
	}
	f := cmd.Flags()
	f.StringVar(&opts.ChainFile, "chain", "", "chain file (memsched.chain/v1); default: the built-in toy chain")
	f.StringVar(&opts.Mem, "mem", "", "memory budget, everything included (e.g. 90MiB, 16GB; a bare number is bytes)")
	f.StringVar(&opts.Algo, "algo", "persistent", "algorithm: "+strings.Join(rematAlgos, "|"))
	f.IntVar(&opts.Slots, "slots", dp.DefaultSlots, "memory slots of the dynamic programs (sizes rounded up, budget down)")
	f.BoolVar(&opts.Exact, "exact", false, "1-byte slots (exact; small integer instances only)")
	f.BoolVar(&opts.Frontier, "frontier", false, "print the makespan-vs-budget frontier up to --mem (persistent, floating, revolve)")
	f.BoolVar(&opts.FreeDelete, "free-delete", false, "SPEC §1 variant: stored values may be dropped at no cost (Del); --algo exhaustive only")
	return cmd
}

func runRemat(opts *RematOptions, io *IO) error {
	if opts.Mem == "" {
		return usageErrorf("remat: --mem is required (e.g. --mem 90MiB)")
	}
	budget, err := instances.ParseSize(opts.Mem)
	if err != nil {
		return &UsageError{fmt.Errorf("--mem: %w", err)}
	}
	if !contains(rematAlgos, opts.Algo) {
		return usageErrorf("remat: unknown --algo %q (want %s)", opts.Algo, strings.Join(rematAlgos, ", "))
	}
	if err := checkSlots(opts.Slots); err != nil {
		return err
	}
	if opts.Exact && budget > maxExactBudget {
		return usageErrorf("remat: --exact uses 1-byte slots, at most %d of them: the budget %s is too large (use --slots)", maxExactBudget, instances.FormatSize(budget))
	}
	if opts.FreeDelete && opts.Algo != "exhaustive" {
		return usageErrorf("remat: --free-delete needs --algo exhaustive (the dynamic programs model 004 without deletion)")
	}
	simOpt := verify.RematOptions{FreeDelete: opts.FreeDelete}
	c, source, err := loadChain(opts.ChainFile)
	if err != nil {
		return err
	}
	dpOpt := dp.Options{Slots: opts.Slots, Exact: opts.Exact}
	if opts.Frontier {
		return rematFrontier(c, budget, opts.Algo, dpOpt, io)
	}
	rep := RematReport{Algorithm: opts.Algo, Chain: source, Budget: budget, Sequence: schedule.Sequence{}}
	var seq schedule.Sequence
	switch opts.Algo {
	case "persistent", "floating", "revolve":
		var res dp.Result
		switch opts.Algo {
		case "persistent":
			res, err = dp.SolvePersistent(c, budget, dpOpt)
		case "floating":
			res, err = dp.SolveFloating(c, budget, dpOpt)
		default:
			var t *dp.Persistent
			if t, err = dp.NewRevolve(c, budget, dpOpt); err == nil {
				res, err = t.Solve(budget)
			}
		}
		if err != nil {
			return err
		}
		seq, rep.SlotSize = res.Sequence, res.SlotSize
	case "exhaustive":
		var ok bool
		seq, _, ok, err = oracle.Remat(c, budget, simOpt)
		if err != nil {
			return &UsageError{err}
		}
		if !ok {
			seq = nil
		}
	case "store-all":
		seq = checkpoint.StoreAll(c)
	case "sequential":
		best, ok, err := checkpoint.BestSequential(c, budget)
		if err != nil {
			return err
		}
		if ok {
			seq, rep.Segments = best.Sequence, best.Segments
		}
	}
	// Whatever produced it, the sequence is replayed here before it is reported.
	if seq != nil {
		sim, err := verify.Remat(c, seq, simOpt)
		if err != nil {
			return fmt.Errorf("remat: %s returned an invalid sequence: %w", opts.Algo, err)
		}
		rep.Verified = true
		rep.Makespan, rep.PeakMemory = sim.Makespan, sim.Peak
		rep.Feasible = sim.Peak <= budget
		if rep.Feasible {
			rep.Sequence = seq
		}
	}
	if io.JSON {
		return io.PrintJSON(rep)
	}
	w := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "chain\t%s\n", rep.Chain)
	fmt.Fprintf(w, "algorithm\t%s\n", rep.Algorithm)
	fmt.Fprintf(w, "budget\t%s (%d B)\n", instances.FormatSize(budget), budget)
	if !rep.Feasible {
		if rep.Verified {
			fmt.Fprintf(w, "feasible\tno: its peak %s exceeds the budget\n", instances.FormatSize(rep.PeakMemory))
		} else {
			fmt.Fprintf(w, "feasible\tno sequence of this algorithm fits (smallest feasible budget of any sequence: %s)\n",
				instances.FormatSize(verify.MinBudget(c)))
		}
		return w.Flush()
	}
	fmt.Fprintf(w, "feasible\tyes\n")
	fmt.Fprintf(w, "makespan\t%s (%.9g s)\n", instances.FormatDuration(rep.Makespan), rep.Makespan)
	fmt.Fprintf(w, "peak memory\t%s (%d B)\n", instances.FormatSize(rep.PeakMemory), rep.PeakMemory)
	if rep.Segments > 0 {
		fmt.Fprintf(w, "segments\t%d\n", rep.Segments)
	}
	fmt.Fprintf(w, "verified\tyes (replayed by the simulator)\n")
	fmt.Fprintf(w, "sequence\t%s\n", rep.Sequence)
	return w.Flush()
}

func rematFrontier(c *instances.Chain, budget int64, algo string, opt dp.Options, io *IO) error {
	var pts []dp.Point
	switch algo {
	case "persistent", "revolve":
		mk := dp.NewPersistent
		if algo == "revolve" {
			mk = dp.NewRevolve
		}
		t, err := mk(c, budget, opt)
		if err != nil {
			return err
		}
		pts = t.Frontier()
	case "floating":
		t, err := dp.NewFloating(c, budget, opt)
		if err != nil {
			return err
		}
		pts = t.Frontier()
	default:
		return usageErrorf("remat: --frontier needs --algo persistent, floating or revolve")
	}
	out := make([]FrontierPoint, len(pts))
	for i, p := range pts {
		out[i] = FrontierPoint(p)
	}
	if io.JSON {
		return io.PrintJSON(out)
	}
	w := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "budget\tmakespan\n")
	for _, p := range out {
		fmt.Fprintf(w, "%s\t%s\n", instances.FormatSize(p.Budget), instances.FormatDuration(p.Makespan))
	}
	return w.Flush()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
