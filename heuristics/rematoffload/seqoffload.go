package rematoffload

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/heuristics/checkpoint"
	"github.com/memsched/memsched/instances"
)

// seqCandidates is how many sequences SequenceOffload takes from each source, and
// seqEvaluations how many schedules it builds in all (each a strict replay), the seeds at most
// half of them; its deadline bounds it too. 400 until issue 31's stop of 2026-11-29,
// afternoon: on DenseNet-201 at 75 %, 12 GB/s the seeds took more than that in certify, and
// alone the bracketed checkpointings and C_FL's candidates spent them in 0.9 s, so the link
// credit's 20th sequence, which schedules without a pause at 109.49 ms (the table's best was
// 110.19 ms, the bound 109.40), was never tried; with 4000 it is (1.4–1.7 s).
const (
	seqCandidates  = 24
	seqEvaluations = 4000
)

// SequenceOffload schedules 004 sequences beyond the combined class with transfers of any
// stored tensor over any gap between two of its uses (ScheduleSequences): the link-credit
// relaxation's best sequences (dp.LinkCredit with fluid credits: they fit the budget plus what
// the link would keep away) and C_FL's optimal sequences at the budgets above this one along
// its frontier, the least makespan first. upper is a verified makespan at this budget (0:
// none; C_FL's optimum at the budget is used when it fits): tables are pruned by it and only
// sequences faster than it are tried. It returns nil when no candidate is scheduled.
//
// seeds are sequences to schedule first (the compute streams of other strategies' schedules).
// Without a candidate it returns a result whose Why says what it lacked (nil when it had
// neither seeds nor tables to ask).
// errTooLong marks a chain past C_FL's stage limit: its candidates are skipped.
var errTooLong = errors.New("rematoffload: longer than C_FL's stage limit")

func SequenceOffload(c *instances.Chain, budget int64, beta float64, upper float64, seeds []SequenceCandidate, o Options) (*SequenceResult, error) {
	if upper > 0 && upper <= c.ComputeTime()*(1+1e-12) {
		// The schedule at hand computes for Σ(u_f+u_b) without a pause: nothing is faster.
		return &SequenceResult{Why: "the schedule at hand meets Σ(u_f+u_b)"}, nil
	}
	stop, release := o.stop()
	defer release()
	eopt := dp.ExactOptions{MaxMemory: o.maxMemory(), Stop: stop}
	var cands []SequenceCandidate
	type ranked struct {
		c SequenceCandidate
		v float64
	}
	var rs []ranked
	peak, err := storeAllPeak(c)
	if err != nil {
		return nil, err
	}
	// The seeds first, before any table: they are few and cheap to schedule, while C_FL's
	// table and the link credit's can take seconds (DenseNet-201 at 75 %: the seeds' 110.19 ms
	// came only after both, past a 10 s certify share). Their best schedule then prunes the
	// tables as upper does: a sequence computes for at least its value.
	first := &SequenceResult{}
	var lacked []string // why a source gave no candidate, for SequenceResult.Why
	alone := len(seeds) == 0 && upper == 0
	if len(seeds) > 0 {
		if first, err = ScheduleSequences(c, budget, beta, seeds, o, seqEvaluations/2); err != nil {
			return nil, err
		}
		if first.Report != nil && (upper == 0 || first.Report.Makespan < upper) {
			upper = first.Report.Makespan
		}
	}
	// Alone (remat-offload --algo sequence-offload) nothing else has a schedule to start from.
	// The store-all sequence covered by transfers first (it stops there when it meets Σu), the
	// best sequential checkpointing (linear, milliseconds on 2001 stages), then C_MP with slots
	// (rotor's table, sizes rounded up, so that its sequence fits in bytes; coarser where the
	// table would not fit the memory limit): their makespans prune C_FL's table as upper does.
	// Without them, `gen random --seed 3 --stages 150` at 3 GiB spent the whole --time-limit on
	// C_FL's exact table and had no candidate; C_MP alone took more than 40 s on 2001 stages
	// (O(L³)) and had none there either.
	if alone {
		schedule1 := func(cand SequenceCandidate, evals int) error {
			if evals <= 0 {
				return nil // ScheduleSequences reads 0 as no limit
			}
			r, err := ScheduleSequences(c, budget, beta, []SequenceCandidate{cand}, o, evals)
			if err != nil {
				return err
			}
			first = bestOf(first, r)
			if first.Report != nil {
				upper = first.Report.Makespan
			}
			return nil
		}
		// The store-all sequence computes for Σu: where offloading alone can bring it within
		// the budget, nothing is faster.
		if peak > budget {
			tried := first.Tried
			if err := schedule1(SequenceCandidate{Sequence: checkpoint.StoreAll(c), Source: "the store-all sequence"}, seqEvaluations/4); err != nil {
				return nil, err
			}
			if first.Tried == tried && !o.passed() {
				lacked = append(lacked, "no transfers bring the store-all sequence within the budget")
			}
			if meetsSumU(c, first.Schedule, first.Report) {
				return first, nil // Σ(u_f+u_b): no schedule is faster
			}
		}
		switch sq, ok, err := checkpoint.BestSequentialUntil(c, budget, stop); {
		case err != nil && !errors.Is(err, checkpoint.ErrStopped):
			return nil, err
		case err == nil && !ok:
			lacked = append(lacked, "no sequential checkpointing fits")
		case err == nil && ok:
			if err := schedule1(SequenceCandidate{Sequence: sq.Sequence, Source: fmt.Sprintf("the best sequential checkpointing (%d segments)", sq.Segments)}, seqEvaluations/2-first.Evaluations); err != nil {
				return nil, err
			}
		}
		slots := o.slots()
		if w := dp.PersistentSlotsWithin(c.Len(), slots, o.maxMemory()); w > 0 && w < slots {
			slots = w
		}
		r, err := dp.SolvePersistent(c, budget, dp.Options{Slots: slots, MaxMemory: o.maxMemory(), Stop: stop})
		switch {
		case err == nil && r.Feasible && (upper == 0 || r.Makespan < upper):
			if err := schedule1(SequenceCandidate{Sequence: r.Sequence, Source: fmt.Sprintf("C_MP's sequence with %d slots", slots)}, 3*seqEvaluations/4-first.Evaluations); err != nil {
				return nil, err
			}
		case err == nil:
			// No persistent sequence fits with sizes rounded up (the exact tables may still),
			// or it computes for no less than the schedule at hand.
		case errors.Is(err, dp.ErrStopped) || isOutOfReach(err):
			lacked = append(lacked, "C_MP's table: "+err.Error())
		default:
			return nil, err
		}
	}
	// The bracketed checkpointings (bracket.go): the earliest stages' ā away over the forward
	// phase, the last ones on the GPU, the middle rebuilt one stage at a time — a quarter of
	// the evaluations at most; their best prunes C_FL's table as upper does.
	if !o.passed() && peak > budget {
		if bc := Bracketed(c, budget, beta, upper, seqCandidates); len(bc) > 0 {
			r, err := ScheduleSequences(c, budget, beta, bc, o, seqEvaluations/4)
			if err != nil {
				return nil, err
			}
			first = bestOf(first, r)
			if first.Report != nil && (upper == 0 || first.Report.Makespan < upper) {
				upper = first.Report.Makespan
			}
			if meetsSumU(c, first.Schedule, first.Report) {
				return first, nil
			}
		}
	}
	// C_FL's frontier above the budget, pruned by upper.
	fopt := eopt
	fopt.Cutoff = upper
	// C_FL's tables (and the link credit's) take at most dp.MaxFloatingStages stages: beyond
	// it only the seeds are scheduled (a 401-stage chain made remat-offload --algo all fail).
	short := c.Len() <= dp.MaxFloatingStages
	var fe *dp.FloatingExact
	err = errTooLong
	if short {
		fe, err = dp.NewFloatingExact(c, max(peak, budget), fopt)
	}
	switch {
	case err == errTooLong:
		lacked = append(lacked, fmt.Sprintf("C_FL's tables stop at %d stages", dp.MaxFloatingStages))
	case err == nil:
		if upper == 0 {
			if r, err := fe.Solve(budget); err == nil && r.Feasible {
				upper = r.Makespan
			}
		}
		var pts []dp.Point
		for _, p := range fe.Frontier() {
			if p.Budget > budget && (upper == 0 || p.Makespan < upper) {
				pts = append(pts, p)
			}
		}
		// The fastest first, each budget's own optimum.
		sort.SliceStable(pts, func(a, b int) bool { return pts[a].Makespan < pts[b].Makespan })
		for _, p := range pts[:min(len(pts), seqCandidates)] {
			r, err := fe.Solve(p.Budget)
			if err != nil {
				return nil, err
			}
			if r.Feasible {
				rs = append(rs, ranked{SequenceCandidate{Sequence: r.Sequence, Source: fmt.Sprintf("C_FL's optimum at %s", instances.FormatSize(p.Budget))}, r.Makespan})
			}
		}
	case errors.Is(err, dp.ErrStopped) || isOutOfReach(err):
		lacked = append(lacked, "C_FL's exact table: "+err.Error())
	default:
		return nil, err
	}
	if upper == 0 && short {
		lacked = append(lacked, "the link credit's sequences need a schedule that fits to start from")
	}
	if upper > 0 && short && !o.passed() {
		lc, err := dp.LinkCredit(c, budget, beta, dp.LinkCreditOptions{Upper: upper, Sequences: seqCandidates, Exact: eopt})
		switch {
		case err == nil:
			for _, s := range lc.Sequences {
				rs = append(rs, ranked{SequenceCandidate{Sequence: s.Sequence, Source: fmt.Sprintf("the link-credit relaxation's sequence at %s", instances.FormatDuration(s.Relaxed))}, s.Relaxed})
			}
		case errors.Is(err, dp.ErrStopped) || isOutOfReach(err) || errors.Is(err, dp.ErrLinkCreditUpper):
			lacked = append(lacked, "the link credit's table: "+err.Error())
		default:
			return nil, err
		}
	}
	sort.SliceStable(rs, func(a, b int) bool { return rs[a].v < rs[b].v })
	for _, r := range rs {
		if upper > 0 && r.v >= upper*(1+1e-12) {
			continue // it computes for at least its value: never faster than upper
		}
		cands = append(cands, r.c)
	}
	// The candidates below keep half of the schedules whatever the seeds took: in certify the
	// seeds are every run of pofo and the other rows (DenseNet-201 at 75 %, 12 GB/s: 572
	// schedules, more than the 400 of the old cap, which left the link credit's sequence at
	// 109.49 ms unscheduled).
	left := max(seqEvaluations-first.Evaluations, seqEvaluations/2)
	if len(cands) == 0 {
		if first.Tried == 0 {
			if len(lacked) == 0 {
				return nil, nil
			}
			return &SequenceResult{Why: strings.Join(lacked, "; ")}, nil
		}
		if first.Report == nil {
			first.Why = strings.Join(lacked, "; ")
		}
		return first, nil
	}
	rest, err := ScheduleSequences(c, budget, beta, cands, o, left)
	if err != nil {
		return nil, err
	}
	return bestOf(first, rest), nil
}

// bestOf joins two runs of ScheduleSequences, a before b: the counts added, the faster
// schedule kept (a's on a tie).
func bestOf(a, b *SequenceResult) *SequenceResult {
	b.Tried += a.Tried
	b.Evaluations += a.Evaluations
	b.Polished += a.Polished
	if a.Report != nil && (b.Report == nil || a.Report.Exact.Cmp(b.Report.Exact) <= 0) {
		b.Schedule, b.Report, b.Source, b.Gaps = a.Schedule, a.Report, a.Source, a.Gaps
	}
	return b
}

// isOutOfReach says whether a table was refused or outgrew its caps.
func isOutOfReach(err error) bool {
	var be *dp.BreakpointError
	var tl *dp.TooLargeError
	return errors.As(err, &be) || errors.As(err, &tl)
}
