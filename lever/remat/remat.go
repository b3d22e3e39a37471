// Package remat is the registry of the rematerialization lever's strategies (004's model,
// SPEC §1): each one's name, what it does, how it runs (and, for the dynamic programs, the
// table it reads), and the independent replay of its sequence by verify.Remat. The remat
// command, certify and the sweep enumerate Strategies, so that a strategy is defined once.
package remat

import (
	"errors"
	"fmt"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/heuristics/checkpoint"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
	"github.com/memsched/memsched/verify/oracle"
)

// Use says where a strategy runs without being named.
type Use uint8

// InCertify: in certify and the sweep.
const InCertify Use = 1

// Options tune the strategies that have settings.
type Options struct {
	// DP is the slotted tables' discretization (persistent, floating, revolve).
	DP dp.Options
	// Exact builds the tables in bytes (dp.PersistentExact, dp.FloatingExact, dp.NewRevolveExact),
	// falling back to DP's slots, with a note, when a frontier outgrows MaxBreakpoints.
	Exact bool
	// MaxBreakpoints caps one sub-chain's frontier in the exact tables (0: dp's default).
	MaxBreakpoints int
	// FreeDelete is SPEC §1's variant where stored values may be dropped at no cost
	// (exhaustive only; the others model 004 without deletion).
	FreeDelete bool
}

// Table is a filled dynamic-programming table: slotted or exact, of any of the three DPs.
type Table interface {
	Solve(budget int64) (dp.Result, error)
	Frontier() []dp.Point
}

// Strategy is one rematerialization strategy.
type Strategy struct {
	// Name is the strategy's name in the CLI and the reports.
	Name string
	// Summary says what it does, in one line, for help texts.
	Summary string
	// Use says where it runs without being named.
	Use Use
	// MaxStages is the longest chain it handles (0: any).
	MaxStages int
	// table builds its DP table (nil for strategies without one).
	table func(c *instances.Chain, budget int64, o Options) (Table, bool, string, error)
	run   func(c *instances.Chain, budget int64, o Options) (schedule.Sequence, int, error)
}

// Strategies are the rematerialization strategies, in report order.
var Strategies = []Strategy{
	{Name: "persistent", Summary: "rotor's C_MP dynamic program (best memory-persistent sequence)", Use: InCertify,
		table: tableOf(dp.NewPersistent, dp.NewPersistentExact)},
	{Name: "floating", Summary: "the C_FL dynamic program (optimal, weakly persistent sequences)", Use: InCertify,
		table: tableOf(dp.NewFloating, dp.NewFloatingExact)},
	{Name: "revolve", Summary: "Griewank–Walther's AD-model schedule with F_all before each B", Use: InCertify,
		table: tableOf(dp.NewRevolve, dp.NewRevolveExact)},
	{Name: "sequential", Summary: "PyTorch checkpoint_sequential, best of 1..2√(L+1) segments", Use: InCertify,
		run: func(c *instances.Chain, budget int64, o Options) (schedule.Sequence, int, error) {
			best, ok, err := checkpoint.BestSequentialUntil(c, budget, o.DP.Stop)
			if errors.Is(err, checkpoint.ErrStopped) {
				return nil, 0, fmt.Errorf("%w: %w", dp.ErrStopped, err)
			}
			if err != nil || !ok {
				return nil, 0, err
			}
			return best.Sequence, best.Segments, nil
		}},
	{Name: "store-all", Summary: "no rematerialization (PyTorch default)", Use: InCertify,
		run: func(c *instances.Chain, _ int64, _ Options) (schedule.Sequence, int, error) {
			return checkpoint.StoreAll(c), 0, nil
		}},
	{Name: "coarse", Summary: "rotor's C_MP on the chain grouped into 100, 200, 400, 800 super-stages of consecutive stages (while time and --max-memory allow), expanded: for chains too long for persistent (O(L³))",
		run: runCoarse},
	{Name: "exhaustive", Summary: "exact shortest-path search (small chains only)", MaxStages: oracle.MaxStages,
		run: func(c *instances.Chain, budget int64, o Options) (schedule.Sequence, int, error) {
			seq, _, ok, err := oracle.Remat(c, budget, verify.RematOptions{FreeDelete: o.FreeDelete})
			if err != nil || !ok {
				return nil, 0, err
			}
			return seq, 0, nil
		}},
}

// CoarseGroups are how many super-stages the coarse strategy groups a chain into, in turn:
// C_MP with 500 slots on `gen random --seed 1 --stages 2001` took 0.04, 0.19 and 1.1 s with
// 100, 200 and 400 groups, and gave 34.36, 31.51 and 29.95 s at 2 GiB (Σu 19.84 s; sequential
// checkpointing needs 8 GiB there; C_MP on the whole chain, 23 s even with 16 slots).
var CoarseGroups = []int{100, 200, 400, 800}

// minCoarseSlots is the fewest slots the coarse strategy gives a grouping's table.
const minCoarseSlots = 16

// runCoarse is the coarse strategy: C_MP on the chain grouped into each of CoarseGroups
// super-stages (at most the chain's stages), each table with as many of the slots as fit
// o.DP.MaxMemory (at least minCoarseSlots), until o.DP.Stop: the fastest expanded sequence
// that fits (checkpoint.Coarse: its sizes make the expansion need no more memory than the
// coarse sequence).
func runCoarse(c *instances.Chain, budget int64, o Options) (schedule.Sequence, int, error) {
	var best schedule.Sequence
	bestTime := 0.0
	slots := o.DP.Slots
	if slots == 0 {
		slots = dp.DefaultSlots
	}
	for _, g := range CoarseGroups {
		g = min(g, c.Len())
		opt := o.DP
		if opt.MaxMemory > 0 {
			// A finer grouping with fewer slots where its table would not fit: on 20 001
			// stages at 2 GiB only 800 groups fit the budget, and their table with 500 slots
			// was above certify's 512 MiB share (the row said "not run").
			if w := dp.PersistentSlotsWithin(g, slots, opt.MaxMemory); w < slots {
				if w < minCoarseSlots {
					break
				}
				opt.Slots = w
			}
		}
		co, err := checkpoint.NewCoarse(c, g)
		if err != nil {
			return nil, 0, err
		}
		r, err := dp.SolvePersistent(co.Chain, budget, opt)
		if err != nil {
			if best != nil && (errors.Is(err, dp.ErrStopped) || isTooLarge(err)) {
				break // the finer grouping out of reach: the coarser one stands
			}
			return nil, 0, err
		}
		if r.Feasible && (best == nil || r.Makespan < bestTime) {
			best, bestTime = co.Expand(r.Sequence), r.Makespan
		}
		if g == c.Len() {
			break
		}
	}
	return best, 0, nil
}

func isTooLarge(err error) bool {
	var tl *dp.TooLargeError
	return errors.As(err, &tl)
}

// tableOf builds the slotted or the exact table of one DP, the exact one falling back to
// slots with a note when its frontiers outgrow their cap or its fixed part is above the memory
// limit (o.DP.MaxMemory, which caps either table; o.DP.Stop stops either).
func tableOf[S, E Table](slotted func(*instances.Chain, int64, dp.Options) (S, error), exact func(*instances.Chain, int64, dp.ExactOptions) (E, error)) func(*instances.Chain, int64, Options) (Table, bool, string, error) {
	return func(c *instances.Chain, budget int64, o Options) (Table, bool, string, error) {
		if o.Exact {
			t, err := exact(c, budget, dp.ExactOptions{MaxBreakpoints: o.MaxBreakpoints, MaxMemory: o.DP.MaxMemory, Stop: o.DP.Stop})
			var be *dp.BreakpointError
			var tl *dp.TooLargeError
			switch {
			case err == nil:
				return t, true, "", nil
			case !errors.As(err, &be) && !errors.As(err, &tl):
				return nil, false, "", err
			}
			slots := o.DP.Slots
			if slots == 0 {
				slots = dp.DefaultSlots
			}
			note := fmt.Sprintf("exact table out of reach (%v); fell back to %d slots", err, slots)
			t2, err := slotted(c, budget, o.DP)
			if err != nil {
				return nil, false, "", err
			}
			return t2, false, note, nil
		}
		t, err := slotted(c, budget, o.DP)
		if err != nil {
			return nil, false, "", err
		}
		return t, false, "", nil
	}
}

// Names returns the names of the strategies with every bit of use (0: all of them), in
// report order.
func Names(use Use) []string {
	var out []string
	for _, s := range Strategies {
		if s.Use&use == use {
			out = append(out, s.Name)
		}
	}
	return out
}

// Lookup returns the strategy called name.
func Lookup(name string) (Strategy, bool) {
	for _, s := range Strategies {
		if s.Name == name {
			return s, true
		}
	}
	return Strategy{}, false
}

// HasTable says whether the strategy is a dynamic program with a table (Table, Frontier).
func (s Strategy) HasTable() bool { return s.table != nil }

// LimitError says that a chain is beyond a strategy's reach (bad input for it, not a bug).
type LimitError struct {
	Strategy          string
	Stages, MaxStages int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("remat: %s handles chains of at most %d stages, this one has %d", e.Strategy, e.MaxStages, e.Stages)
}

// Table fills the strategy's DP table for budgets up to budget: exact in bytes when o.Exact
// (then exact reports whether it stayed exact, and note why not). It panics for a strategy
// without a table (HasTable).
func (s Strategy) Table(c *instances.Chain, budget int64, o Options) (t Table, exact bool, note string, err error) {
	if s.table == nil {
		panic("remat: " + s.Name + " has no table")
	}
	return s.table(c, budget, o)
}

// Outcome is a strategy's sequence on one chain and budget, replayed by verify.Remat.
type Outcome struct {
	// Feasible: a sequence was found and its replayed peak fits the budget.
	Feasible bool
	// Verified: Sequence was replayed (Makespan and Peak are the simulator's).
	Verified bool
	Sequence schedule.Sequence
	Makespan float64
	Peak     int64
	// SlotSize is the DP's discretization in bytes (1: exact), 0 without a DP.
	SlotSize int64
	// Exact: the table was built in bytes; Note says why an exact build fell back to slots.
	Exact bool
	Note  string
	// Segments is sequential's number of segments.
	Segments int
}

// Run runs the strategy for budget and replays its sequence with verify.Remat: no sequence
// that fits is an outcome (Feasible false); one that does not replay is an error (a bug); a
// chain beyond the strategy's reach is a *LimitError.
func (s Strategy) Run(c *instances.Chain, budget int64, o Options) (Outcome, error) {
	if s.MaxStages > 0 && c.Len() > s.MaxStages {
		return Outcome{}, &LimitError{s.Name, c.Len(), s.MaxStages}
	}
	if s.table != nil {
		t, exact, note, err := s.table(c, budget, o)
		if err != nil {
			return Outcome{}, err
		}
		out, err := s.FromTable(t, c, budget, o)
		out.Exact, out.Note = exact, note
		return out, err
	}
	seq, segs, err := s.run(c, budget, o)
	if err != nil {
		return Outcome{}, err
	}
	out, err := Check(c, budget, seq, verify.RematOptions{FreeDelete: o.FreeDelete})
	if err != nil {
		return out, fmt.Errorf("%s returned an invalid sequence: %w", s.Name, err)
	}
	out.Segments = segs
	return out, nil
}

// FromTable reads the strategy's sequence for budget off a table it built (Table) and replays
// it: the way to answer many budgets from one table.
func (s Strategy) FromTable(t Table, c *instances.Chain, budget int64, o Options) (Outcome, error) {
	r, err := t.Solve(budget)
	if err != nil {
		return Outcome{}, err
	}
	out, err := Check(c, budget, r.Sequence, verify.RematOptions{})
	if err != nil {
		return out, fmt.Errorf("%s returned an invalid sequence: %w", s.Name, err)
	}
	out.SlotSize = r.SlotSize
	return out, nil
}

// Check replays seq (nil: none found) with verify.Remat under opt and says whether it fits
// budget. A sequence that does not replay is an error.
func Check(c *instances.Chain, budget int64, seq schedule.Sequence, opt verify.RematOptions) (Outcome, error) {
	if seq == nil {
		return Outcome{}, nil
	}
	sim, err := verify.Remat(c, seq, opt)
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Feasible: sim.Peak <= budget, Verified: true, Sequence: seq, Makespan: sim.Makespan, Peak: sim.Peak}, nil
}
