package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
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
	ChainFile string
	Mem       string // budget, e.g. "90MiB"
	Algo      string
	// Slots is the number of memory slots of the dynamic programs, or "exact": the exact
	// tables in bytes (dp.PersistentExact, dp.FloatingExact), with slots as the announced
	// fallback when their frontiers outgrow the breakpoint cap.
	Slots string
	// Exact is the older spelling of --slots exact.
	Exact bool
	// MaxBreakpoints caps one sub-chain's frontier in the exact tables (0: the default).
	MaxBreakpoints int
	Frontier       bool
	FreeDelete     bool
	// SequenceFile, when set, is a sequence (JSON list of {"op", "stage"}) to replay and
	// report instead of computing one (algorithm "given"): e.g. another tool's answer.
	SequenceFile string
	// MaxMemory caps a dynamic-programming table's estimated memory (--max-memory).
	MaxMemory string
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
	// Exact is true when the dynamic program ran in bytes, without slots; Note says why an
	// exact run fell back to slots.
	Exact bool   `json:"exact,omitempty"`
	Note  string `json:"note,omitempty"`
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
The dynamic programs divide the budget into --slots slots (sizes rounded up, so sequences
always fit). --slots exact builds them in bytes instead, keeping each sub-chain's frontier as
its breakpoints: the exact optimum of the class at every budget, and with --frontier the exact
makespan-vs-budget frontier. If a frontier outgrows the breakpoint cap, remat says so on stderr
(and in the JSON note) and uses 500 slots.
Every table is sized before it is built: one above --max-memory (default 2GiB) is refused with
its size and the slots that would fit (C_MP on n stages with S slots takes about 5·n²·S bytes,
C_FL about 3.7·n³·S).
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
	f.StringVar(&opts.Slots, "slots", strconv.Itoa(dp.DefaultSlots), "memory slots of the dynamic programs (sizes rounded up, budget down), or exact: no slots, exact in bytes")
	f.BoolVar(&opts.Exact, "exact", false, "same as --slots exact")
	f.IntVar(&opts.MaxBreakpoints, "max-breakpoints", 0, "with --slots exact: cap on one sub-chain's frontier (0: 65536); above it, the slotted table, announced")
	f.BoolVar(&opts.Frontier, "frontier", false, "print the makespan-vs-budget frontier up to --mem (persistent, floating, revolve)")
	f.StringVar(&opts.SequenceFile, "sequence", "", "replay this sequence (JSON list of {\"op\": \"Fall|Fck|Fn|B\", \"stage\": N}) instead of computing one")
	f.BoolVar(&opts.FreeDelete, "free-delete", false, "SPEC §1 variant: stored values may be dropped at no cost (Del); --algo exhaustive only")
	addMaxMemoryFlag(f, &opts.MaxMemory)
	return cmd
}

func runRemat(opts *RematOptions, io *IO) error {
	if opts.Mem == "" {
		return usageErrorf("remat: --mem is required (e.g. --mem 90MiB)")
	}
	budget, err := sizeFlag("--mem", opts.Mem)
	if err != nil {
		return err
	}
	if !contains(rematAlgos, opts.Algo) {
		return usageErrorf("remat: unknown --algo %q (want %s)", opts.Algo, strings.Join(rematAlgos, ", "))
	}
	slots, exact, err := parseSlots(opts.Slots)
	if err != nil {
		return err
	}
	exact = exact || opts.Exact
	if opts.MaxBreakpoints < 0 {
		return usageErrorf("remat: --max-breakpoints must be ≥ 0, got %d", opts.MaxBreakpoints)
	}
	if opts.FreeDelete && opts.Algo != "exhaustive" {
		return usageErrorf("remat: --free-delete needs --algo exhaustive (the dynamic programs model 004 without deletion)")
	}
	simOpt := verify.RematOptions{FreeDelete: opts.FreeDelete}
	maxMem, err := maxMemoryFlag(opts.MaxMemory)
	if err != nil {
		return err
	}
	c, source, err := loadChain(opts.ChainFile)
	if err != nil {
		return err
	}
	dpOpt := dp.Options{Slots: slots, MaxMemory: maxMem}
	if slots == 0 {
		dpOpt.Slots = dp.DefaultSlots
	}
	rep := RematReport{Algorithm: opts.Algo, Chain: source, Budget: budget, Sequence: schedule.Sequence{}}
	var tab rematTable
	if contains([]string{"persistent", "floating", "revolve"}, opts.Algo) && opts.SequenceFile == "" {
		if tab, rep.Exact, rep.Note, err = newRematTable(c, budget, opts.Algo, exact, dpOpt, dp.ExactOptions{MaxBreakpoints: opts.MaxBreakpoints, MaxMemory: maxMem}); err != nil {
			return err
		}
		if rep.Note != "" {
			fmt.Fprintf(io.ErrOut, "memsched: %s\n", rep.Note)
		}
	}
	if opts.Frontier {
		return rematFrontier(tab, opts.Algo, io)
	}
	var seq schedule.Sequence
	algo := opts.Algo
	if opts.SequenceFile != "" {
		algo, rep.Algorithm = "given", "given"
		data, err := os.ReadFile(opts.SequenceFile)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(data, &seq); err != nil {
			return fmt.Errorf("%s: %w", opts.SequenceFile, err)
		}
	}
	switch algo {
	case "persistent", "floating", "revolve":
		res, err := tab.Solve(budget)
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
			return fmt.Errorf("remat: %s returned an invalid sequence: %w", algo, err)
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
	switch {
	case rep.Exact:
		fmt.Fprintf(w, "memory\texact, in bytes (no slots)\n")
	case rep.SlotSize > 0:
		fmt.Fprintf(w, "memory\tslots of %d B (sizes rounded up)\n", rep.SlotSize)
	}
	fmt.Fprintf(w, "makespan\t%s (%.9g s)\n", instances.FormatDuration(rep.Makespan), rep.Makespan)
	fmt.Fprintf(w, "peak memory\t%s (%d B)\n", instances.FormatSize(rep.PeakMemory), rep.PeakMemory)
	if rep.Segments > 0 {
		fmt.Fprintf(w, "segments\t%d\n", rep.Segments)
	}
	fmt.Fprintf(w, "verified\tyes (replayed by the simulator)\n")
	fmt.Fprintf(w, "sequence\t%s\n", rep.Sequence)
	return w.Flush()
}

// rematTable is a filled dynamic-programming table: slotted or exact, any of the three.
type rematTable interface {
	Solve(budget int64) (dp.Result, error)
	Frontier() []dp.Point
}

// parseSlots reads --slots: a positive number of slots, or "exact" (slots = 0).
func parseSlots(v string) (slots int, exact bool, err error) {
	if strings.EqualFold(v, "exact") {
		return 0, true, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxSlots {
		return 0, false, usageErrorf("remat: --slots must be a number in 1..%d or exact, got %q", maxSlots, v)
	}
	return n, false, nil
}

// newRematTable fills the table of algo for budget: exact in bytes when asked, falling back to
// opt's slots — with a note saying so — when the exact frontiers outgrow their cap.
func newRematTable(c *instances.Chain, budget int64, algo string, exact bool, opt dp.Options, eopt dp.ExactOptions) (rematTable, bool, string, error) {
	if exact {
		var t rematTable
		var err error
		switch algo {
		case "persistent":
			t, err = dp.NewPersistentExact(c, budget, eopt)
		case "floating":
			t, err = dp.NewFloatingExact(c, budget, eopt)
		default:
			t, err = dp.NewRevolveExact(c, budget, eopt)
		}
		var be *dp.BreakpointError
		var tl *dp.TooLargeError
		switch {
		case err == nil:
			return t, true, "", nil
		case !errors.As(err, &be) && !errors.As(err, &tl):
			return nil, false, "", err
		}
		note := fmt.Sprintf("exact table out of reach (%v); fell back to %d slots", err, opt.Slots)
		t, _, _, err = newRematTable(c, budget, algo, false, opt, eopt)
		return t, false, note, err
	}
	switch algo {
	case "persistent":
		t, err := dp.NewPersistent(c, budget, opt)
		return t, false, "", err
	case "floating":
		t, err := dp.NewFloating(c, budget, opt)
		return t, false, "", err
	default:
		t, err := dp.NewRevolve(c, budget, opt)
		return t, false, "", err
	}
}

func rematFrontier(tab rematTable, algo string, io *IO) error {
	if tab == nil {
		return usageErrorf("remat: --frontier needs --algo persistent, floating or revolve")
	}
	pts := tab.Frontier()
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
