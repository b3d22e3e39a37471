package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/instances"
	leverremat "github.com/memsched/memsched/lever/remat"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
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
	// SequenceFile, when set, is a sequence to replay and report instead of computing one
	// (algorithm "given"): e.g. another tool's answer, in any form verify reads (parseSequence).
	SequenceFile string
	// MaxMemory caps a dynamic-programming table's estimated memory (--max-memory).
	MaxMemory string
	// AlgoSet and SlotsSet say that --algo and --slots were given (they do not go with
	// --sequence).
	AlgoSet, SlotsSet bool
	// TimeLimit is --time-limit: the wall time of the whole command in seconds (0: none); a
	// table still filling at it stops, and the command says so (exit 1).
	TimeLimit float64
	// start is when the command began, from which TimeLimit counts.
	start time.Time
}

// maxExactBudget is the largest budget of --exact: the dynamic programs take at most 2^22 slots.
const maxExactBudget = 1 << 22

// rematAlgos lists the algorithms of `memsched remat --algo`: the registry's strategies
// (lever/remat).
var rematAlgos = leverremat.Names(0)

// RematReport is the result of `memsched remat` (JSON keys as in the issue).
type RematReport struct {
	Algorithm  string            `json:"algorithm"`
	Chain      string            `json:"chain"`
	Budget     int64             `json:"budget"`
	Feasible   bool              `json:"feasible"`
	Makespan   float64           `json:"makespan,omitempty"`
	PeakMemory int64             `json:"peak_memory,omitempty"`
	Sequence   schedule.Sequence `json:"sequence"`
	// Verified: the sequence was replayed and fits the budget; a sequence above it has its
	// peak_memory only.
	Verified bool  `json:"verified"`
	Segments int   `json:"segments,omitempty"`
	SlotSize int64 `json:"slot_size,omitempty"`
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

// rematAlgoHelp lists remat's algorithms for its help: the registry's strategies.
func rematAlgoHelp() string {
	var es []helpEntry
	for _, st := range leverremat.Strategies {
		es = append(es, helpEntry{st.Name, st.Summary})
	}
	return strategyHelp(es)
}

func newRematCmd(io *IO) *cobra.Command {
	opts := &RematOptions{}
	cmd := &cobra.Command{
		Use:   "remat --mem SIZE [--chain FILE] [--algo NAME]",
		Short: "Fastest rematerialization sequence of a chain under a memory budget (004)",
		Long: `remat computes a rematerialization sequence (F_all / F_ck / F_∅ / B, 004 Table 1) for the
chain under the budget and replays it with the simulator. Algorithms:
` + rematAlgoHelp() + `
The dynamic programs divide the budget into --slots slots (sizes rounded up, so sequences
always fit). --slots exact builds them in bytes instead, keeping each sub-chain's frontier as
its breakpoints: the exact optimum of the class at every budget, and with --frontier the exact
makespan-vs-budget frontier. If a frontier outgrows the breakpoint cap, remat says so on stderr
(and in the JSON note) and uses 500 slots.
Every table is sized before it is built: one above --max-memory (default 2GiB) is refused with
its size and the slots that would fit (C_MP on n stages with S slots takes about 4·n²·S bytes,
C_FL about 3.7·n³·S).
An infeasible budget is a result (feasible: false), not an error.`,
		Example: `  memsched remat --mem 90MiB                              # toy chain, rotor's C_MP
  memsched remat --mem 90MiB --algo floating --json       # optimal weakly persistent sequence
  memsched gen zoo resnet --depth 101 --batch 32 -o r101.json
  memsched remat --chain r101.json --mem 2GiB --algo persistent --slots 1000
  memsched remat --chain r101.json --mem 4GiB --frontier  # makespan vs budget from one table`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.start = time.Now()
			opts.AlgoSet, opts.SlotsSet = cmd.Flags().Changed("algo"), cmd.Flags().Changed("slots") || cmd.Flags().Changed("exact")
			opts.TimeLimit, _ = cmd.Flags().GetFloat64("time-limit")
			return runRemat(opts, io)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.ChainFile, "chain", "", "chain file (memsched.chain/v1); default: the built-in toy chain")
	f.StringVar(&opts.Mem, "mem", "", "memory budget of 004's model: activations and temporaries, weights not counted (e.g. 90MiB, 16GB; a bare number is whole bytes)")
	f.StringVar(&opts.Algo, "algo", "persistent", "algorithm: "+strings.Join(rematAlgos, "|"))
	f.StringVar(&opts.Slots, "slots", strconv.Itoa(dp.DefaultSlots), "memory slots of the dynamic programs (sizes rounded up, budget down), or exact: no slots, exact in bytes")
	f.BoolVar(&opts.Exact, "exact", false, "same as --slots exact")
	f.IntVar(&opts.MaxBreakpoints, "max-breakpoints", 0, "with --slots exact: cap on one sub-chain's frontier (0: 65536); above it, the slotted table, announced")
	f.BoolVar(&opts.Frontier, "frontier", false, "print the makespan-vs-budget frontier up to --mem (persistent, floating, revolve)")
	f.StringVar(&opts.SequenceFile, "sequence", "", "replay this sequence instead of computing one: remat --json output, a JSON list of {\"op\": \"Fall|Fck|Fn|B\", \"stage\": N} or the text form Fck^1 Fn^2 ... (docs/verify.md); - for stdin")
	f.BoolVar(&opts.FreeDelete, "free-delete", false, "SPEC §1 variant: stored values may be dropped at no cost (Del); --algo exhaustive only")
	addMaxMemoryFlag(f, &opts.MaxMemory)
	return cmd
}

func runRemat(opts *RematOptions, io *IO) error {
	if opts.Mem == "" {
		return usageErrorf("remat: --mem is required (e.g. --mem 90MiB)")
	}
	budget, err := budgetFlag("--mem", opts.Mem)
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
	if opts.SequenceFile != "" {
		switch {
		case opts.AlgoSet || opts.SlotsSet:
			return usageErrorf("remat: --sequence replays a given sequence: no --algo, --slots or --exact with it")
		case opts.Frontier:
			return usageErrorf("remat: --frontier needs a dynamic program (--algo persistent, floating or revolve), not --sequence")
		}
	}
	simOpt := verify.RematOptions{FreeDelete: opts.FreeDelete}
	maxMem, err := maxMemoryFlag(opts.MaxMemory)
	if err != nil {
		return err
	}
	if opts.TimeLimit != 0 {
		if err := checkTimeLimit(opts.TimeLimit); err != nil {
			return err
		}
	}
	if opts.start.IsZero() {
		opts.start = time.Now()
	}
	c, source, err := loadChain(opts.ChainFile)
	if err != nil {
		return err
	}
	dpOpt := dp.Options{Slots: slots, MaxMemory: maxMem}
	if opts.TimeLimit > 0 {
		ctx, cancel := withTimeLimit(context.Background(), opts.start, opts.TimeLimit)
		defer cancel()
		dpOpt.Stop = ctx.Done()
	}
	stopped := func() error {
		return fmt.Errorf("remat: stopped at the time limit (--time-limit %g) after %.1f s, before %s finished: raise --time-limit, or use fewer --slots",
			opts.TimeLimit, time.Since(opts.start).Seconds(), opts.Algo)
	}
	if slots == 0 {
		dpOpt.Slots = dp.DefaultSlots
	}
	lopt := leverremat.Options{DP: dpOpt, Exact: exact, MaxBreakpoints: opts.MaxBreakpoints, FreeDelete: opts.FreeDelete}
	st, _ := leverremat.Lookup(opts.Algo)
	rep := RematReport{Algorithm: opts.Algo, Chain: source, Budget: budget, Sequence: schedule.Sequence{}}
	var out leverremat.Outcome
	switch {
	case opts.SequenceFile != "":
		rep.Algorithm = "given"
		data, err := readInputFile("--sequence", opts.SequenceFile, io.In)
		if err != nil {
			return err
		}
		seq, err := parseSequence("--sequence", opts.SequenceFile, data, "auto")
		if err != nil {
			return err
		}
		// The sequence is replayed here before it is reported; one that does not replay is
		// bad input, not a failure of memsched's.
		if out, err = leverremat.Check(c, budget, seq, simOpt); err != nil {
			return usageErrorf("--sequence %s: %s", opts.SequenceFile, invalidStep(seq, err))
		}
	case st.HasTable():
		tab, ex, note, err := st.Table(c, budget, lopt)
		if errors.Is(err, dp.ErrStopped) {
			return stopped()
		}
		if err != nil {
			return err
		}
		if note != "" {
			fmt.Fprintf(io.ErrOut, "memsched: %s\n", note)
		}
		if opts.Frontier {
			return rematFrontier(tab, io)
		}
		if out, err = st.FromTable(tab, c, budget, lopt); err != nil {
			return fmt.Errorf("remat: %w", err)
		}
		out.Exact, out.Note = ex, note
	default:
		if opts.Frontier {
			return usageErrorf("remat: --frontier needs --algo persistent, floating or revolve")
		}
		var le *leverremat.LimitError
		if out, err = st.Run(c, budget, lopt); errors.As(err, &le) {
			return &UsageError{err}
		} else if errors.Is(err, dp.ErrStopped) {
			return stopped()
		} else if err != nil {
			return fmt.Errorf("remat: %w", err)
		}
	}
	rep.Feasible, rep.PeakMemory = out.Feasible, out.Peak
	rep.SlotSize, rep.Exact, rep.Note, rep.Segments = out.SlotSize, out.Exact, out.Note, out.Segments
	if rep.Feasible {
		// "verified" and the makespan only for a sequence that fits (issue 29: store-all above
		// the budget was "feasible": false, "verified": true with its makespan).
		rep.Sequence, rep.Verified, rep.Makespan = out.Sequence, out.Verified, out.Makespan
	}
	if io.JSON {
		return io.PrintJSON(rep)
	}
	w := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "chain\t%s\n", rep.Chain)
	fmt.Fprintf(w, "algorithm\t%s\n", rep.Algorithm)
	fmt.Fprintf(w, "budget\t%s (%d B)\n", instances.FormatSize(budget), budget)
	if !rep.Feasible {
		if out.Verified { // replayed: its peak is above the budget
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

func rematFrontier(tab leverremat.Table, io *IO) error {
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
