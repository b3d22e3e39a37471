package cli

import (
	"context"
	"time"

	"github.com/spf13/pflag"
)

// Resource limits shared by the commands that build big tables or models.
//
// --time-limit is the wall time of the whole command, from the moment it starts: loading,
// heuristics, dynamic-program tables, model building and solving all run under one deadline
// (withTimeLimit), and each MILP gets the time left (milp.DeadlineParams). --max-memory caps
// the estimated memory of each table or model before it is allocated (dp.TooLargeError,
// weightlb.Options.MaxMemory); certify, which builds two tables side by side, gives each half.

// defaultMaxMemory is --max-memory's default: 2 GiB, so that certify stays near 2 GiB in all
// and a single command never asks for more without being told to.
const defaultMaxMemory = "2GiB"

// maxMemoryUsage is --max-memory's help.
const maxMemoryUsage = "the most memory one table or MILP may take, estimated before it is built (e.g. 8GiB); above it memsched refuses or uses fewer slots, and says so"

// addMaxMemoryFlag defines --max-memory on f.
func addMaxMemoryFlag(f *pflag.FlagSet, v *string) {
	f.StringVar(v, "max-memory", defaultMaxMemory, maxMemoryUsage)
}

// maxMemoryFlag parses --max-memory; it must be positive.
func maxMemoryFlag(v string) (int64, error) {
	b, err := sizeFlag("--max-memory", v)
	if err != nil {
		return 0, err
	}
	if b <= 0 {
		return 0, usageErrorf("--max-memory must be positive, got %q", v)
	}
	return b, nil
}

// passed reports whether deadline is set and has passed.
func passed(deadline time.Time) bool { return !deadline.IsZero() && !time.Now().Before(deadline) }

// withTimeLimit returns ctx with a deadline seconds after start (the command's start), the
// budget of everything the command does.
func withTimeLimit(ctx context.Context, start time.Time, seconds float64) (context.Context, context.CancelFunc) {
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithDeadline(ctx, start.Add(time.Duration(seconds*float64(time.Second))))
}

// shareOf returns ctx with a deadline at frac of the time left before ctx's (ctx itself
// without one), and its cancel.
func shareOf(ctx context.Context, frac float64) (context.Context, context.CancelFunc) {
	dl, ok := ctx.Deadline()
	if !ok {
		return ctx, func() {}
	}
	return context.WithDeadline(ctx, time.Now().Add(time.Duration(frac*float64(time.Until(dl)))))
}
