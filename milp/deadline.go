package milp

import (
	"context"
	"errors"
	"math"
	"time"
)

// A deadline on the context is the time budget of everything the caller does under it (the
// command's --time-limit, a lever's share of it): a solve under such a context never runs past
// it, whatever Params.TimeLimit says. Solve sets the time limit to the time left (DeadlineParams),
// backends set the solver's own limit again right before the run, once the model is passed
// (highs: minus a reserve for its presolve, which checks the clock only between passes), and
// reaching the deadline is the status TimeLimit, not Interrupted: the caller asked for a
// budget, not for a stop.

// DeadlineParams returns p with TimeLimit at most the time left before ctx's deadline, and
// whether any time is left (false: the deadline has passed; do not start). Without a
// deadline it returns p unchanged.
func DeadlineParams(ctx context.Context, p Params) (Params, bool) {
	dl, ok := ctx.Deadline()
	if !ok {
		return p, true
	}
	left := time.Until(dl)
	if left <= 0 {
		return p, false
	}
	if p.TimeLimit <= 0 || left < p.TimeLimit {
		p.TimeLimit = left
	}
	return p, true
}

// StoppedStatus is the status of a solve that ctx stopped: TimeLimit when its deadline passed,
// Interrupted when it was cancelled.
func StoppedStatus(ctx context.Context) Status {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return TimeLimit
	}
	return Interrupted
}

// stoppedResult is the result of a solve that did not start because ctx was done.
func stoppedResult(ctx context.Context, solver string) *Result {
	return &Result{Status: StoppedStatus(ctx), Bound: math.NaN(), Gap: math.Inf(1), Solver: solver}
}
