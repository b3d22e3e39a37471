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
// is bytes) into bytes, rounding to the nearest byte. Units: B, KB, MB, GB, TB (powers of 10)
// and KiB, MiB, GiB, TiB (powers of 2).
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
		return 0, fmt.Errorf("instances: size %q: unknown unit %q (want B, KB, MB, GB, TB, KiB, MiB, GiB or TiB)", s, unit)
	}
	b, err := toBytes(x, u)
	if err != nil {
		return 0, fmt.Errorf("instances: size %q: %v", s, err)
	}
	return b, nil
}

// ParseRate parses a bandwidth such as "12GB/s" or "16GiB/s" into bytes per second; a bare
// number is bytes per second. The rate must be positive.
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
	if !ok || !known {
		return 0, fmt.Errorf("instances: rate %q: unknown unit %q (want e.g. B/s, MB/s, GB/s, GiB/s)", s, unit)
	}
	r := x * u
	if !(r > 0) || math.IsInf(r, 0) {
		return 0, fmt.Errorf("instances: rate %q must be a positive finite number", s)
	}
	return r, nil
}

// FormatSize writes bytes in MiB with two decimals ("86.75 MiB"), or in bytes below 1 KiB.
func FormatSize(b int64) string {
	switch {
	case b < 1<<10 && b > -(1<<10):
		return fmt.Sprintf("%d B", b)
	case b < 1<<30 && b > -(1<<30):
		return fmt.Sprintf("%.2f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
}

// FormatDuration writes seconds in ms with two decimals ("47.42 ms"), or in s from 10 s on.
func FormatDuration(s float64) string {
	if math.Abs(s) >= 10 {
		return fmt.Sprintf("%.3f s", s)
	}
	return fmt.Sprintf("%.2f ms", s*1e3)
}
