package report

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/schedule"
)

// keptBound adds the kept-activation bound (dp.KeptActivations, global) to the combined
// lever's report: from the best global bound at hand (the link credit's, or Σu) up to the
// fastest verified row, in what is left of the lever's share. It is tensor-aware where the link
// credit counts bytes, and the two are complementary: on Inception v3 at 75 %, 12 GB/s no
// bound had risen above Σu (139.74 ms) against the lever's 142.50 ms; this one reaches
// 142.11 ms. A search stopped by the share or its node cap keeps what its finished probes
// proved; an upper end that fails it is a bug in the bound, said and not used. It gets at most
// limit (pofo's time: 10 s in certify, 2 s a budget in a sweep): where its search does not end
// (ResNet-101 at 10 %: not its first probe in a minute) it would otherwise hold every such
// lever to the end of its share, which the strategies and the credit often leave unused.
//
// hints are the sequences of the verified schedules at hand (the rows', remat's): the search
// checks the stages they keep first, which finds a passing choice at once where one of them
// passes (ResNet-101 at 25 %, 12 GB/s from remat's makespan: 7.0 M nodes for the first probe
// without them).
func keptBound(ctx context.Context, in Input, lr *LeverReport, budget int64, limit time.Duration, hints []schedule.Sequence) {
	best := bestFeasible(lr.Rows, 0)
	if best == 0 {
		return
	}
	if ctx.Err() != nil {
		lr.Notes = append(lr.Notes, "kept-activation bound: not run: the lever's time share was spent")
		return
	}
	lower := 0.0
	for _, b := range lr.Bounds {
		if (b.Scope == "" || b.Scope == Global) && !b.Infeasible {
			lower = max(lower, b.Value)
		}
	}
	kctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	start := time.Now()
	r, err := dp.KeptActivations(in.Chain, budget, in.Bandwidth, dp.KeptOptions{Upper: best, Lower: lower, Stop: kctx.Done(), Hints: hints})
	var scope *dp.KeptScopeError
	switch {
	case errors.As(err, &scope):
		lr.Notes = append(lr.Notes, fmt.Sprintf("kept-activation bound: not run: it takes at most %d stages, the chain has %d", dp.MaxKeptStages, scope.Stages))
		return
	case errors.Is(err, dp.ErrKeptUpper):
		lr.Notes = append(lr.Notes, fmt.Sprintf("kept-activation bound: the fastest verified row (%g s) does not pass it: a bug in the bound, not used", best))
		return
	case err != nil:
		lr.Notes = append(lr.Notes, "kept-activation bound: "+err.Error())
		return
	}
	how := fmt.Sprintf("%d probe%s, %d search nodes", r.Probes, map[bool]string{true: "", false: "s"}[r.Probes == 1], r.Nodes)
	if r.Stopped {
		how += fmt.Sprintf(", stopped by the lever's time share, its own %s or the node cap", limit)
	}
	if r.Bound <= lower*(1+1e-12) {
		lr.Notes = append(lr.Notes, fmt.Sprintf("kept-activation bound: no higher than the bounds at hand (%s)", how))
		return
	}
	addBound(lr, Bound{Name: "kept activations", Kind: SearchRelaxation, Value: r.Bound, Seconds: time.Since(start).Seconds(),
		Note: dp.KeptActivationsCertificate + "; " + how}, "kept activations")
}
