package instances

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// memoryUnits maps a memory unit to its size in bytes (KB = 10^3, KiB = 2^10, SPEC §0).
var memoryUnits = map[string]float64{
	"B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
	"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
}

// timeUnits maps a time unit to its length in seconds.
var timeUnits = map[string]float64{"s": 1, "ms": 1e-3, "us": 1e-6}

// toBytes converts x units of size unit bytes to an int64 byte count, rounding to the nearest
// byte. It fails on negative, NaN or infinite values and above MaxBytes.
func toBytes(x, unit float64) (int64, error) {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return 0, fmt.Errorf("%g is not a finite number", x)
	case x < 0:
		return 0, fmt.Errorf("%g is negative", x)
	// A count of bytes must be whole: 1.5 B is refused, not rounded. In a larger unit the value
	// is rounded to the nearest byte (7.63 MiB = 8000634.88 B → 8000635 B).
	case unit == 1 && x != math.Trunc(x):
		return 0, fmt.Errorf("%g is not a whole number of bytes", x)
	}
	b := math.Round(x * unit)
	if b > float64(MaxBytes) || math.IsInf(b, 0) {
		if unit == 1 {
			return 0, fmt.Errorf("is above %s", maxBytesText)
		}
		return 0, fmt.Errorf("is %.3g B, above %s", b, maxBytesText)
	}
	return int64(b), nil
}

// memoryUnitList names the memory units in the order of the messages: "B, KB, …, TiB".
func memoryUnitList() string {
	return "B, KB, MB, GB, TB, KiB, MiB, GiB or TiB"
}

// splitNumber splits "90MiB" into 90 and "MiB": the longest prefix that parses as a number,
// then the trimmed rest.
func splitNumber(s string) (float64, string, error) {
	s = strings.TrimSpace(s)
	n := 0
	for n < len(s) && strings.IndexByte("0123456789.eE+-", s[n]) >= 0 {
		n++
	}
	for ; n > 0; n-- {
		if x, err := strconv.ParseFloat(s[:n], 64); err == nil {
			return x, strings.TrimSpace(s[n:]), nil
		}
	}
	return 0, "", fmt.Errorf("%q does not start with a number", s)
}

// ParseSize parses a memory size such as "90MiB", "7.63 MiB", "16GB" or "1024" (a bare number
// is bytes) into bytes. Units: B, KB, MB, GB, TB (powers of 10) and KiB, MiB, GiB, TiB (powers
// of 2). A number of bytes must be whole ("1.5B" is an error); in a larger unit the size is
// rounded to the nearest byte.
func ParseSize(s string) (int64, error) {
	x, unit, err := splitNumber(s)
	if err != nil {
		return 0, fmt.Errorf("instances: size %w", err)
	}
	if unit == "" {
		unit = "B"
	}
	u, ok := memoryUnits[unit]
	if !ok {
		return 0, fmt.Errorf("instances: size %q: unknown unit %q (want %s)", s, unit, memoryUnitList())
	}
	b, err := toBytes(x, u)
	if err != nil {
		return 0, fmt.Errorf("instances: size %q: %v", s, err)
	}
	return b, nil
}

// MinRate and MaxRate bound a bandwidth (bytes per second): below 1 B/s or above 1 PB/s a
// rate is a typo or a unit mistake (PCIe 3.0 x16 is about 12 GB/s, HBM3 about 3 TB/s), and the
// transfer times it gives (up to 9.2e18 s for an int64 size at 1 B/s) stay finite and printable.
const (
	MinRate = 1.0
	MaxRate = 1e15
)

// ParseRate parses a bandwidth such as "12GB/s", "16GiB/s" or "1PB/s" into bytes per second
// (the memory units of ParseSize and PB per second); a bare number is bytes per second. The rate must lie in [MinRate, MaxRate].
func ParseRate(s string) (float64, error) {
	x, unit, err := splitNumber(s)
	if err != nil {
		return 0, fmt.Errorf("instances: rate %w", err)
	}
	if unit == "" {
		unit = "B/s"
	}
	mem, ok := strings.CutSuffix(unit, "/s")
	u, known := memoryUnits[mem]
	if mem == "PB" { // MaxRate's unit: a rate unit only (sizes and chain files stop at TB, TiB)
		u, known = 1e15, true
	}
	if !ok || !known {
		return 0, fmt.Errorf("instances: rate %q: unknown unit %q (want e.g. B/s, MB/s, GB/s, GiB/s, PB/s)", s, unit)
	}
	r := x * u
	switch {
	case !(r > 0) || math.IsInf(r, 0):
		return 0, fmt.Errorf("instances: rate %q must be a positive finite number", s)
	case r < MinRate || r > MaxRate:
		return 0, fmt.Errorf("instances: rate %q is outside 1 B/s to 1 PB/s", s)
	}
	return r, nil
}

// FormatRate writes a bandwidth in the largest decimal unit that keeps a digit before the
// point ("12 GB/s", "20 B/s"), the units a rate is usually given in (ParseRate reads it back).
func FormatRate(r float64) string {
	for _, u := range []struct {
		name string
		size float64
	}{{"PB/s", 1e15}, {"TB/s", 1e12}, {"GB/s", 1e9}, {"MB/s", 1e6}, {"KB/s", 1e3}} {
		if r >= u.size {
			return fmt.Sprintf("%.4g %s", r/u.size, u.name)
		}
	}
	return fmt.Sprintf("%.4g B/s", r)
}

// FormatSize writes bytes in MiB with two decimals ("86.75 MiB"), in bytes below 1 KiB, in KiB
// below 1 MiB ("2.50 KiB", never "0.00 MiB"), in GiB from 1 GiB and in TiB from 1 TiB (at most
// "8388608.00 TiB" for an int64).
func FormatSize(b int64) string {
	switch {
	case b < 1<<10 && b > -(1<<10):
		return fmt.Sprintf("%d B", b)
	case b < 1<<20 && b > -(1<<20):
		return fmt.Sprintf("%.2f KiB", float64(b)/(1<<10))
	case b < 1<<30 && b > -(1<<30):
		return fmt.Sprintf("%.2f MiB", float64(b)/(1<<20))
	case b < 1<<40 && b > -(1<<40):
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	}
	return fmt.Sprintf("%.2f TiB", float64(b)/(1<<40))
}

// FormatDuration writes seconds in ms with two decimals ("47.42 ms"), in s from 10 s on
// ("7011.430 s"), and with significant digits where fixed decimals would print no digit or too
// many: from 1 ns to 0.005 ms ("0.000123 ms", three digits) and from 10⁶ s on ("1e+300 s",
// four). Below 1 ns — rounding noise of sums of times, never an operation — it is "0.00 ms".
func FormatDuration(s float64) string {
	a := math.Abs(s)
	switch {
	case math.IsNaN(s) || math.IsInf(s, 0):
		return fmt.Sprintf("%g s", s)
	case a >= 1e6:
		return fmt.Sprintf("%.4g s", s)
	case a >= 10:
		return fmt.Sprintf("%.3f s", s)
	case a >= 1e-9 && a < 5e-6:
		return fmt.Sprintf("%.3g ms", s*1e3)
	}
	return fmt.Sprintf("%.2f ms", s*1e3)
}
