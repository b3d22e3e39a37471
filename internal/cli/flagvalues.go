package cli

import (
	"fmt"
	"math"
	"os"
	"strconv"

	"github.com/memsched/memsched/instances"
)

// sizeFlag parses the value of the memory-size flag name (e.g. "--mem"); a bad value is a usage
// error naming the flag (exit 2).
func sizeFlag(name, v string) (int64, error) {
	b, err := instances.ParseSize(v)
	if err != nil {
		return 0, &UsageError{fmt.Errorf("%s: %w", name, err)}
	}
	return b, nil
}

// budgetFlag parses a memory budget (--mem, --from, --to): a size as sizeFlag, and positive —
// no schedule of any model runs in 0 B, so a zero budget is a mistake, refused with exit 2
// naming the flag (one behaviour for one input, issue 29).
func budgetFlag(name, v string) (int64, error) {
	b, err := sizeFlag(name, v)
	if err != nil {
		return 0, err
	}
	if b == 0 {
		return 0, usageErrorf("%s %s: a memory budget must be at least 1 B", name, v)
	}
	return b, nil
}

// rateFlag parses the value of the bandwidth flag name (e.g. "--bandwidth"); a bad value is a
// usage error naming the flag (exit 2).
func rateFlag(name, v string) (float64, error) {
	r, err := instances.ParseRate(v)
	if err != nil {
		return 0, &UsageError{fmt.Errorf("%s: %w", name, err)}
	}
	return r, nil
}

// bandwidthUsage is the help of every --bandwidth flag. memsched assumes no bandwidth: every
// command that moves data over the link (offload-weights, offload-act, bound, export
// weight-offload-lb, verify of an offloading schedule) needs --bandwidth, and certify and sweep
// skip the offloading levers without it, saying so.
const bandwidthUsage = "GPU–CPU link rate β, each direction (e.g. 12GB/s; 1 B/s to 1 PB/s)"

// bandwidthFlag parses a --bandwidth that the command needs: missing is a usage error saying so.
func bandwidthFlag(v string) (float64, error) {
	if v == "" {
		return 0, usageErrorf("--bandwidth is required: the GPU–CPU link rate, each direction (e.g. --bandwidth 12GB/s)")
	}
	return rateFlag("--bandwidth", v)
}

// checkTimeLimitOrNone is the check of a --time-limit where 0 means none.
func checkTimeLimitOrNone(limit float64) error {
	if limit == 0 {
		return nil
	}
	if !(limit > 0) || limit > maxTimeLimit {
		return usageErrorf("--time-limit must be 0 (none) or a positive number of seconds up to %d (a year), got %g", maxTimeLimit, limit)
	}
	return nil
}

// createOutput creates the output file named by flag (e.g. "-o"); a path that cannot be
// written (a directory, a missing directory) is a usage error naming the flag and the path.
func createOutput(flag, path string) (*os.File, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, usageErrorf("%s %s: %v", flag, path, pathErr(err))
	}
	return f, nil
}

// writeOutput writes data to the output file named by flag, as createOutput.
func writeOutput(flag, path string, data []byte) error {
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return usageErrorf("%s %s: %v", flag, path, pathErr(err))
	}
	return nil
}

// pathErr drops the operation and path of an *os.PathError (the message names the path
// already): "open x: is a directory" becomes "is a directory".
func pathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// finiteFlag checks that a float flag holds a finite number (NaN and ±Inf parse as floats).
func finiteFlag(name string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return usageErrorf("%s must be a finite number, got %g", name, v)
	}
	return nil
}

// formatRatio writes a ratio to a bound with the given decimals ("1.237"), or with four
// significant digits from 10⁶ on, where fixed decimals would print hundreds of digits (a
// bound near zero under a long schedule).
func formatRatio(r float64, decimals int) string {
	if math.Abs(r) >= 1e6 || math.IsInf(r, 0) || math.IsNaN(r) {
		return fmt.Sprintf("%.4g", r)
	}
	return strconv.FormatFloat(r, 'f', decimals, 64)
}

// ratioTo is x over the bound b, where it means something: 1 where both are 0 (an all-zero
// chain's schedule meets its bound), absent (nil) where only the bound is 0 — never NaN or
// +Inf, which JSON cannot carry and no reader can use (issue 29: "+NaN%").
func ratioTo(x, b float64) *float64 {
	var r float64
	switch {
	case b > 0:
		r = x / b
	case x == 0 && b == 0:
		r = 1
	default:
		return nil
	}
	return &r
}

// overBound writes x's excess over the bound b as a signed percentage ("+0.90%"), "-" where
// ratioTo has no ratio.
func overBound(x, b float64) string {
	r := ratioTo(x, b)
	if r == nil {
		return "-"
	}
	return formatPercent(100 * (*r - 1))
}

// formatPercent writes a signed percentage with two decimals ("+0.90%"), as formatRatio beyond
// 10⁶ %.
func formatPercent(p float64) string {
	if math.Abs(p) >= 1e6 || math.IsInf(p, 0) || math.IsNaN(p) {
		return fmt.Sprintf("%+.4g%%", p)
	}
	if math.Abs(p) < 0.005 {
		p = 0 // "+0.00%", not "-0.00%" for a makespan an ulp below its bound's sum
	}
	return fmt.Sprintf("%+.2f%%", p)
}
