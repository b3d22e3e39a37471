// Package rematoffload is the registry of the strategies of rematerialization and activation
// offloading together (003's POFO, SPEC §6): each one's name, what it does, how it runs, and
// the independent checks of its result — the plan's fluid makespan by verify/combined.Fluid,
// then the executable schedule (heuristics/rematoffload.Retime, strict timing) by
// verify/combined.Check. The remat-offload command, certify and the sweep enumerate
// Strategies.
package rematoffload

import (
	"errors"
	"fmt"
	"time"

	"github.com/memsched/memsched/dp"
	heur "github.com/memsched/memsched/heuristics/rematoffload"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify/combined"
)

// Options tune the strategies.
type Options struct {
	// Slots is the DP's memory units (0: dp.DefaultSlots) and the C_MP tables' slots.
	Slots int
	// Exact runs the DP in bytes (small integer instances).
	Exact bool
	// Inner is the DP's minimization over backward sequences (dp.InnerAuto: exact in exact
	// mode, restricted with slots).
	Inner dp.Inner
	// LinkSlots puts the DP's queued and backlogged bytes on a coarser grid (0: Slots).
	LinkSlots int
	// MaxStates caps the DP's states (0: dp.DefaultMaxCombinedStates).
	MaxStates int
	// Deadline, when set, stops the DP with dp.ErrDeadline once it has passed, and bounds the
	// heuristics (heuristics/rematoffload.Options.Deadline).
	Deadline time.Time
	// MaxMemory caps the DP's tables and states and the heuristics' C_MP tables (0:
	// dp.DefaultMaxMemory).
	MaxMemory int64
	// Incumbent, when positive, is a fluid makespan already reached: the DP prunes with it
	// and answers only with a faster plan (dp.CombinedOptions.Incumbent); pofo is then not
	// Feasible with DP.NoBetter set when it has none.
	Incumbent float64
	// NoPolish reports the strategy's plan as it is; by default inputs it offloads are kept
	// one at a time while that shortens the strict schedule (polish).
	NoPolish bool
	// Upper is a verified makespan at this budget (the best of the strategies run before;
	// 0: none): sequence-offload prunes its tables by it and tries only faster sequences.
	Upper float64
	// Seeds are valid schedules found before (other strategies'): sequence-offload schedules
	// their compute sequences again with transfers of any tensor, starting from their own
	// transfers too (heuristics/rematoffload.SequenceCandidate.Seed).
	Seeds []*schedule.Combined
	// PlanBandwidth, when positive, is the link rate the strategy plans with instead of beta
	// (a plan strategy's only; Incumbent is then in its terms); the plan is evaluated,
	// re-timed, polished and checked at beta. The fluid model lets bytes cross the link
	// progressively, strict timing moves whole tensors one at a time, so a plan made for a
	// slower link is often faster at the real one (DenseNet-121 at 1.47 GiB, 12 GB/s, 3200
	// slots: planned at 12 GB/s 89.14 ms strict before polishing, at 8 GB/s 82.78 ms). Such a
	// plan that does not fit the fluid model or strict timing at beta is no plan (Outcome.Why),
	// not an error.
	PlanBandwidth float64
	// Remat are rematerialization sequences already verified at this budget (certify passes
	// the remat lever's best): pofo weighs each, as a combined schedule without transfers,
	// against its own by strict makespan. When nil, pofo weighs C_MP exact in bytes
	// (RematCandidate) — so that pofo is never slower than rematerialization alone, whatever
	// its slots; an empty non-nil slice weighs nothing more.
	Remat []schedule.Sequence
}

// SlowerLinks are the link rates, as fractions of β, that pofo also plans for
// (Options.PlanBandwidth) in certify (the first while it doubles its slots, the others at the
// last slots it reached) and in the remat-offload command: each plan is re-timed at β and the
// fastest under strict timing is kept. Measured on the zoo's open points at 1600 slots, full
// grid (planned for β, 0.85β, 0.7β, β/2; strict at β): DenseNet-121 at 25 %, 12 GB/s 83.2 ms at
// best for β, 82.90 ms for 0.7β (3200 slots: 82.75 ms); ResNet-50 at 50 %, 12 GB/s 106.42 for β,
// 104.54 for 0.7β; Inception v3 at 25 %, 12 GB/s 152.42 for β, 150.36 for β/2; at the other
// points the plan for β was the fastest.
var SlowerLinks = []float64{0.7, 0.5, 0.85}

// Strategy is one strategy of the combined lever.
type Strategy struct {
	// Name is the strategy's name in the CLI and the reports.
	Name string
	// Summary says what it does, in one line, for help texts.
	Summary string
	plan    func(c *instances.Chain, budget int64, beta float64, o Options) (*schedule.CombinedPlan, *dp.CombinedResult, error)
	// alt, when set, gives another plan that polishing weighs against the polished plan by
	// strict makespan.
	alt func(c *instances.Chain, budget int64, beta float64, o Options) (*schedule.CombinedPlan, error)
	// direct, when set instead of plan, gives a schedule outside the class (no plan) and
	// where it comes from; without a schedule, the string says why (Outcome.Why).
	direct func(c *instances.Chain, budget int64, beta float64, o Options) (*schedule.Combined, string, error)
}

// Strategies are the combined lever's strategies, in report order.
var Strategies = []Strategy{
	{Name: "pofo", Summary: "the dynamic program of SPEC §6 over the combined class (003's POFO): top-level segments, each input kept or offloaded, persistent backward sequences; exact in bytes with --slots exact, else sizes rounded up to slots; its schedule is the faster under strict timing of its plan and the best plan without offloading",
		plan: func(c *instances.Chain, budget int64, beta float64, o Options) (*schedule.CombinedPlan, *dp.CombinedResult, error) {
			r, err := dp.Combined(c, budget, beta, dp.CombinedOptions{Slots: o.Slots, Exact: o.Exact, Inner: o.Inner, LinkSlots: o.LinkSlots, MaxStates: o.MaxStates, Deadline: o.Deadline, MaxMemory: o.MaxMemory, Incumbent: o.Incumbent})
			if err != nil || !r.Feasible {
				return nil, &r, err
			}
			return r.Plan, &r, nil
		},
		// The class's best plan without offloading (C_MP's): its strict makespan is its fluid
		// one, so pofo's schedule is never slower than rematerialization alone.
		alt: func(c *instances.Chain, budget int64, beta float64, o Options) (*schedule.CombinedPlan, error) {
			r, err := dp.Combined(c, budget, beta, dp.CombinedOptions{Slots: o.Slots, Exact: o.Exact, Inner: o.Inner, MaxStates: o.MaxStates, NoOffload: true, Deadline: o.Deadline, MaxMemory: o.MaxMemory})
			if err != nil || !r.Feasible {
				return nil, err
			}
			return r.Plan, nil
		}},
	{"remat-then-offload", "rotor's C_MP sequence for a larger budget, its checkpoints offloaded one by one while that shortens the fluid makespan (the best over the budgets where C_MP improves); never worse than rematerialization alone",
		func(c *instances.Chain, budget int64, beta float64, o Options) (*schedule.CombinedPlan, *dp.CombinedResult, error) {
			p, err := heur.RematThenOffload(c, budget, beta, heur.Options{Slots: o.Slots, Deadline: o.Deadline, MaxMemory: o.MaxMemory})
			return p, nil, err
		}, nil, nil},
	{"offload-then-remat", "001's GREEDY offload set with everything stored, then segments merged and recomputed (C_MP) where the link makes the compute stream wait, and inputs kept or offloaded, while the fluid makespan drops",
		func(c *instances.Chain, budget int64, beta float64, o Options) (*schedule.CombinedPlan, *dp.CombinedResult, error) {
			p, err := heur.OffloadThenRemat(c, budget, beta, heur.Options{Slots: o.Slots, Deadline: o.Deadline, MaxMemory: o.MaxMemory})
			return p, nil, err
		}, nil, nil},
	{Name: "sequence-offload", Summary: "004 sequences beyond the class — C_FL's optima at larger budgets, the link-credit relaxation's best sequences — with any stored tensor offloaded over any gap between two of its uses (Belady's rule, then a local search), transfers in order of need; the fastest schedule under strict timing",
		direct: func(c *instances.Chain, budget int64, beta float64, o Options) (*schedule.Combined, string, error) {
			var seeds []heur.SequenceCandidate
			for _, q := range o.Seeds {
				seeds = append(seeds, heur.SequenceCandidate{Sequence: q.Sequence(), Source: "another strategy's sequence", Seed: q})
			}
			r, err := heur.SequenceOffload(c, budget, beta, o.Upper, seeds, heur.Options{Deadline: o.Deadline, MaxMemory: o.MaxMemory})
			if err != nil {
				return nil, "", err
			}
			if r == nil || r.Schedule == nil {
				if !o.Deadline.IsZero() && time.Now().After(o.Deadline) {
					return nil, "", dp.ErrDeadline // stopped, not "none fits"
				}
				// A heuristic's "none": say what it had to work with (Outcome.Why).
				switch {
				case r != nil && r.Tried > 0:
					return nil, fmt.Sprintf("none of the %d candidate sequences it scheduled fits the budget with transfers", r.Tried), nil
				case r != nil && r.Why != "" && len(seeds) == 0:
					return nil, "no candidate sequence: no other strategy had a schedule to take the sequence of; " + r.Why, nil
				case r != nil && r.Why != "":
					return nil, "no candidate sequence faster than the other strategies' schedules; " + r.Why, nil
				}
				return nil, "no candidate sequence faster than the other strategies' schedules", nil
			}
			return r.Schedule, fmt.Sprintf("%s, %d tensors away (%d of its candidates scheduled)", r.Source, r.Gaps, r.Tried), nil
		}},
}

// Direct says that the strategy builds schedules outside the combined class (no plan): its
// Outcome has no Plan, and Source says what the schedule is.
func (s Strategy) Direct() bool { return s.direct != nil }

// Quick says that the strategy is a heuristic of one short pass: neither the dynamic program
// (pofo, which refines its grid while its time lasts) nor a direct search. The reports and the
// CLI run the quick ones first: their makespans are the upper end that prunes the others and
// the link credit's table.
func (s Strategy) Quick() bool { return s.Name != "pofo" && !s.Direct() }

// Names returns the strategies' names in report order.
func Names() []string {
	out := make([]string, len(Strategies))
	for i, s := range Strategies {
		out[i] = s.Name
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

// Outcome is a strategy's result on one instance.
type Outcome struct {
	// Feasible: the strategy found a plan and its schedule validated.
	Feasible bool
	// Plan is the strategy's plan of the combined class; Fluid its makespan in the fluid
	// model (verify/combined.Fluid, exact).
	Plan  *schedule.CombinedPlan
	Fluid combined.FluidResult
	// Schedule is the plan re-timed under strict timing, Report verify/combined.Check's
	// replay of it.
	Schedule *schedule.Combined
	Report   *combined.Report
	// DP is the dynamic program's own answer (pofo only).
	DP *dp.CombinedResult
	// ModelPlan is the strategy's own plan and ModelFluid its fluid makespan; Plan differs
	// from it when polishing kept inputs the model offloads (Options.NoPolish).
	ModelPlan  *schedule.CombinedPlan
	ModelFluid combined.FluidResult
	// Kept is the number of inputs polishing kept.
	Kept int
	// Source says where Schedule comes from when it is not the strategy's plan re-timed:
	// a rematerialization sequence without transfers that was faster (Options.Remat, or C_MP
	// exact in bytes). Plan is then that sequence read as a plan of the class (PlanOf), or nil
	// when it is not one (a floating sequence), and Fluid its fluid makespan (zero when nil).
	Source string
	// Stopped: the deadline (Options.Deadline) stopped the strategy after it had a plan; Plan
	// is the best it found before, not its answer.
	Stopped bool
	// Why says, when the strategy found no schedule, what it had to work with (a heuristic's
	// "none" proves nothing); empty when no plan of its own fits the budget.
	Why string
}

// Run runs the strategy on chain c under budget bytes (everything counted) with a link of beta
// bytes per second, evaluates its plan in the fluid model and re-times it under strict timing;
// both are checked independently. No plan is an outcome (Feasible false); a plan the checks
// reject is an error (a bug). Past o.Deadline a strategy stops: with a plan in hand it is
// reported (Stopped), without one the error is dp.ErrDeadline or dp.ErrStopped.
func (s Strategy) Run(c *instances.Chain, budget int64, beta float64, o Options) (Outcome, error) {
	out, err := s.run(c, budget, beta, o)
	if tl, ok := err.(*dp.TooLargeError); ok {
		// The tables are remat's; what to use instead is another strategy of this lever.
		err = tl.WithOther("another --algo of this lever")
	}
	return out, err
}

func (s Strategy) run(c *instances.Chain, budget int64, beta float64, o Options) (Outcome, error) {
	if s.direct != nil {
		sch, src, err := s.direct(c, budget, beta, o)
		if err != nil || sch == nil {
			return Outcome{Why: src}, err
		}
		rep, err := combined.Check(c, budget, beta, sch)
		if err != nil {
			return Outcome{}, fmt.Errorf("%s: its schedule is invalid: %w", s.Name, err)
		}
		return Outcome{Feasible: true, Schedule: sch, Report: rep, Source: src}, nil
	}
	planBeta, derated := beta, o.PlanBandwidth > 0 && o.PlanBandwidth != beta
	if derated {
		planBeta = o.PlanBandwidth
	}
	p, r, err := s.plan(c, budget, planBeta, o)
	out := Outcome{DP: r}
	if errors.Is(err, heur.ErrPartial) && p != nil {
		out.Stopped, err = true, nil
	}
	if err != nil {
		return out, err
	}
	if p == nil {
		// No plan (none fits with these slots, or none beats Options.Incumbent): a
		// rematerialization sequence may still fit.
		if s.alt != nil && !o.NoPolish {
			if err := weighRemat(c, budget, beta, o, &out); err != nil {
				return out, fmt.Errorf("%s: %w", s.Name, err)
			}
		}
		return out, nil
	}
	fl, err := combined.Fluid(c, budget, beta, p)
	if err != nil {
		return out, fmt.Errorf("%s returned an invalid plan: %w", s.Name, err)
	}
	if !fl.Feasible && derated {
		out.Why = fmt.Sprintf("its plan for a %s link does not fit the fluid model at %s: %s", instances.FormatRate(planBeta), instances.FormatRate(beta), fl.Reason)
		return out, nil
	}
	if !fl.Feasible {
		return out, fmt.Errorf("%s returned a plan that does not fit the fluid model: %s", s.Name, fl.Reason)
	}
	sch, rep, err := heur.Retime(c, budget, beta, p)
	if errors.Is(err, heur.ErrStrict) && derated {
		out.Why = fmt.Sprintf("its plan for a %s link cannot be re-timed at %s: %v", instances.FormatRate(planBeta), instances.FormatRate(beta), err)
		return out, nil
	}
	if errors.Is(err, heur.ErrStrict) {
		return out, fmt.Errorf("%s: %w", s.Name, err)
	}
	if err != nil {
		return out, err
	}
	out.ModelPlan, out.ModelFluid = p, fl
	if !o.NoPolish {
		p, sch = polish(c, budget, beta, p, sch, rep, o.Deadline)
		if s.alt != nil {
			q, err := s.alt(c, budget, beta, o)
			if errors.Is(err, dp.ErrDeadline) || errors.As(err, new(*dp.TooLargeError)) {
				q, err = nil, nil // no time or memory left for the comparison: the plan stands
			}
			if err != nil {
				return out, err
			}
			if q != nil {
				if s2, r2, err := heur.Retime(c, budget, beta, q); err == nil {
					if _, r1, err := heur.Retime(c, budget, beta, p); err == nil && r2.Exact.Cmp(r1.Exact) < 0 {
						p, sch = q, s2
					}
				}
			}
		}
		if fl, err = combined.Fluid(c, budget, beta, p); err != nil {
			return out, err
		}
	}
	// Retime validates; validate again here, independently of it.
	rep2, err := combined.Check(c, budget, beta, sch)
	if err != nil {
		return out, fmt.Errorf("%s: the re-timed schedule is invalid: %w", s.Name, err)
	}
	// Strict timing may beat the fluid model at the turn (FluidFreeTurn's comment), never its
	// relaxation without the turn's idle.
	relaxed, err := combined.FluidFreeTurn(c, budget, beta, p)
	if err != nil {
		return out, err
	}
	if rep2.Exact.Cmp(relaxed.Exact) < 0 {
		return out, fmt.Errorf("%s: strict makespan %g below the fluid one without the turn's idle %g (bug)", s.Name, rep2.Makespan, relaxed.Makespan)
	}
	out.Feasible, out.Plan, out.Fluid, out.Schedule, out.Report = true, p, fl, sch, rep2
	out.Kept = max(0, out.ModelPlan.Offloaded()-p.Offloaded())
	if s.alt != nil && !o.NoPolish {
		if err := weighRemat(c, budget, beta, o, &out); err != nil {
			return out, fmt.Errorf("%s: %w", s.Name, err)
		}
	}
	return out, nil
}

// weighRemat replaces out's schedule by a rematerialization sequence without transfers when
// that is faster under strict timing: o.Remat, or without them C_MP exact in bytes
// (RematCandidate). A candidate that verify/combined rejects is an error: the caller said it
// was verified at this budget.
func weighRemat(c *instances.Chain, budget int64, beta float64, o Options, out *Outcome) error {
	cands, source := o.Remat, "the verified rematerialization sequence given (no transfers)"
	if cands == nil {
		cutoff := 0.0
		if out.Feasible {
			cutoff = out.Report.Makespan
		}
		seq, err := RematCandidate(c, budget, o.Deadline, o.MaxMemory, cutoff)
		if err != nil {
			return err
		}
		if seq == nil {
			return nil
		}
		cands, source = []schedule.Sequence{seq}, "C_MP exact in bytes (no transfers)"
	}
	for _, seq := range cands {
		sch := SequenceSchedule(seq)
		rep, err := combined.Check(c, budget, beta, sch)
		if err != nil {
			return fmt.Errorf("a rematerialization sequence weighed as a combined schedule is invalid: %w", err)
		}
		if rep.Peak > budget {
			return fmt.Errorf("a rematerialization sequence weighed as a combined schedule peaks at %d B, above the budget %d B", rep.Peak, budget)
		}
		if out.Feasible && rep.Exact.Cmp(out.Report.Exact) >= 0 {
			continue
		}
		out.Feasible, out.Schedule, out.Report, out.Source, out.Kept = true, sch, rep, source, 0
		out.Plan, out.Fluid = nil, combined.FluidResult{}
		if p, err := schedule.PlanOf(c.Len(), seq); err == nil {
			if fl, err := combined.Fluid(c, budget, beta, p); err == nil && fl.Feasible {
				out.Plan, out.Fluid = p, fl
			}
		}
	}
	return nil
}

// SequenceSchedule is the combined schedule of a 004 sequence with no transfers: the compute
// stream alone.
func SequenceSchedule(seq schedule.Sequence) *schedule.Combined {
	sch := &schedule.Combined{Ops: make([]schedule.CombinedOp, len(seq))}
	for i, op := range seq {
		sch.Ops[i] = schedule.CombinedOp{Op: op}
	}
	return sch
}

// RematCandidate returns the best persistent sequence at budget, C_MP exact in bytes
// (dp.PersistentExact), within deadline and maxMemory (0: dp's default), pruned by cutoff
// (a makespan already reached; 0: none): nil when no persistent sequence fits, when none is
// faster than cutoff, or when the table is out of reach (too large, stopped by the deadline)
// — the caller then keeps what it has. Its makespan is also its strict makespan as a
// combined schedule without transfers.
func RematCandidate(c *instances.Chain, budget int64, deadline time.Time, maxMemory int64, cutoff float64) (schedule.Sequence, error) {
	eopt := dp.ExactOptions{MaxMemory: maxMemory, Cutoff: cutoff}
	if !deadline.IsZero() {
		if !time.Now().Before(deadline) {
			return nil, nil
		}
		stop := make(chan struct{})
		t := time.AfterFunc(time.Until(deadline), func() { close(stop) })
		defer t.Stop()
		eopt.Stop = stop
	}
	pe, err := dp.NewPersistentExact(c, budget, eopt)
	var be *dp.BreakpointError
	var tl *dp.TooLargeError
	if errors.Is(err, dp.ErrStopped) || errors.As(err, &be) || errors.As(err, &tl) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r, err := pe.Solve(budget)
	if err != nil || !r.Feasible {
		return nil, err
	}
	return r.Sequence, nil
}

// polish keeps the plan's offloaded inputs one at a time — the first whose keeping shortens
// the strict schedule, until none does. Strict timing moves whole tensors, and a tensor the
// fluid model moves for free (its bytes trickling in beside the computation) can cost idle
// when it must be reserved whole: on the zoo, pofo's fluid optimum re-timed is sometimes
// slower than keeping some inputs. Plans that no longer fit are skipped. sch and rep are p
// re-timed (Retime) and its report: re-timing again took 4.2 s of a 1000-block GPT-2's plan
// with 981 offloads, past the deadline (38 s for --time-limit 30).
func polish(c *instances.Chain, budget int64, beta float64, p *schedule.CombinedPlan, sch *schedule.Combined, rep *combined.Report, deadline time.Time) (*schedule.CombinedPlan, *schedule.Combined) {
	best := rep.Exact
	for improved := true; improved; {
		improved = false
		for k := 0; k <= len(p.Segments); k++ {
			if !deadline.IsZero() && time.Now().After(deadline) {
				return p, sch // what polishing found so far
			}
			q := *p
			q.Segments = append([]schedule.CombinedSegment(nil), p.Segments...)
			if k < len(p.Segments) {
				if !q.Segments[k].Offload {
					continue
				}
				q.Segments[k].Offload = false
			} else {
				if !q.OffloadLoss {
					continue
				}
				q.OffloadLoss = false
			}
			if f, err := combined.Fluid(c, budget, beta, &q); err != nil || !f.Feasible {
				continue
			}
			s2, r2, err := heur.Retime(c, budget, beta, &q)
			if err != nil || r2.Exact.Cmp(best) >= 0 {
				continue
			}
			p, sch, best, improved = &q, s2, r2.Exact, true
			break
		}
	}
	return p, sch
}
