package cli

import (
	"context"
	"os"
	"runtime/debug"
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

// processMemoryLimit is set by EnableProcessMemoryLimit (the memsched binary only: the limit
// is the whole process's, and tests run commands in their own process).
var processMemoryLimit bool

// EnableProcessMemoryLimit makes every command with --max-memory also set the Go runtime's
// soft memory limit (debug.SetMemoryLimit) to 1.5 × --max-memory (at least --max-memory +
// 512 MiB), unless GOMEMLIMIT is set.
// --max-memory caps each table's estimate before it is built; without a runtime limit the
// collector lets garbage grow to the live heap again before it runs (GOGC=100): pofo on a
// 400-stage chain with its 1.5 GB table at hand reached 4.45 GB resident, refining its grid
// run after run; with the limit 3.16 GB, at the same speed.
func EnableProcessMemoryLimit() { processMemoryLimit = true }

// applyMemoryLimit sets the runtime's soft memory limit from --max-memory (maxMem bytes), when
// the binary asked for it (EnableProcessMemoryLimit) and the user did not set GOMEMLIMIT.
func applyMemoryLimit(maxMem int64) {
	if !processMemoryLimit || maxMem <= 0 || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	// At least 512 MiB above it: a small --max-memory (32MiB) must not make the collector run
	// all the time on what the program needs besides its tables.
	limit := max(maxMem+maxMem/2, maxMem+512<<20)
	if limit < maxMem { // overflow: no limit
		return
	}
	debug.SetMemoryLimit(limit)
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
