package report

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/memsched/memsched/dp"
)

// linkCreditBound adds the link-credit bound (dp.LinkCredit, global: every strict schedule of
// the combined model) to lr, using the fastest verified row as its upper end; nothing when no
// row is feasible. A table out of reach or stopped is a note.
func linkCreditBound(ctx context.Context, in Input, lr *LeverReport, budget int64) {
	upper := 0.0
	for _, r := range lr.Rows {
		if r.Feasible && (upper == 0 || r.Makespan < upper) {
			upper = r.Makespan
		}
	}
	if upper == 0 {
		return
	}
	if ctx.Err() != nil {
		lr.Notes = append(lr.Notes, "link credit: not run, no time left in the lever's share")
		return
	}
	start := time.Now()
	r, err := dp.LinkCredit(in.Chain, budget, in.Bandwidth, dp.LinkCreditOptions{Upper: upper, Whole: true,
		Exact: dp.ExactOptions{MaxBreakpoints: in.MaxBreakpoints, MaxMemory: memoryLimit(in), Stop: ctx.Done()}})
	var be *dp.BreakpointError
	var tl *dp.TooLargeError
	switch {
	case errors.Is(err, dp.ErrStopped):
		lr.Notes = append(lr.Notes, fmt.Sprintf("link credit: stopped at the end of the lever's time share (%.1f s)", time.Since(start).Seconds()))
		return
	case errors.As(err, &be), errors.As(err, &tl):
		lr.Notes = append(lr.Notes, "link credit: out of reach: "+err.Error())
		return
	case err != nil:
		// ErrLinkCreditUpper: the relaxation contradicts a verified row — a bug, never a bound.
		lr.Notes = append(lr.Notes, "link credit: "+err.Error()+" (dropped)")
		return
	}
	addBound(lr, Bound{Name: "link credit", Kind: DPRelaxation, Value: r.Bound, Seconds: time.Since(start).Seconds(),
		Note: dp.LinkCreditCertificate}, "link credit")
}
