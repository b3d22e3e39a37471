package instances

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSize(t *testing.T) {
	ok := []struct {
		in   string
		want int64
	}{
		{"1024", 1024}, {"90MiB", 90 << 20}, {"7.63 MiB", 8000635}, {"16GB", 16e9}, {"1KB", 1000},
		{"1KiB", 1024}, {"0", 0}, {"2GiB", 2 << 30}, {"1e3B", 1000}, {"1.0005 KiB", 1025}, {"4TiB", 4 << 40},
	}
	for _, c := range ok {
		got, err := ParseSize(c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, got, c.in)
	}
	bad := []struct{ in, why string }{
		{"", "empty"}, {"MiB", "no number"}, {"-5MiB", "negative"}, {"5 mib", "unit is case-sensitive"},
		{"5XB", "unknown unit"}, {"1e30GiB", "overflow"}, {"2e18", "above 2^60 B"}, {"1.1EiB", "no such unit"}, {"NaN", "not a number"}, {"12GB/s", "a rate is not a size"},
	}
	for _, c := range bad {
		_, err := ParseSize(c.in)
		assert.Error(t, err, "%q should fail: %s", c.in, c.why)
	}
}

func TestParseRate(t *testing.T) {
	got, err := ParseRate("12GB/s")
	require.NoError(t, err)
	assert.Equal(t, 12e9, got)
	got, err = ParseRate("1000")
	require.NoError(t, err)
	assert.Equal(t, 1000.0, got)
	for _, in := range []string{"0GB/s", "-1GB/s", "12GB", "12GB/h", "fast", "NaN", "InfGB/s",
		"1e-30B/s", "0.5B/s", "1.1e15", "2PB/s", "1.5PB/s", "1PiB/s"} {
		_, err := ParseRate(in)
		assert.Error(t, err, in)
	}
	// 1 PB/s, the upper limit every message names, in its own unit (issue 29: refused as an
	// unknown unit).
	for _, in := range []string{"1B/s", "1e15", "1000TB/s", "1PB/s", "0.5PB/s"} {
		_, err := ParseRate(in)
		assert.NoError(t, err, in, "the limits are inclusive")
	}
}

// TestParseSizeWholeBytes: a size in bytes must be whole (--mem 1.5B was rounded silently).
func TestParseSizeWholeBytes(t *testing.T) {
	for _, in := range []string{"1.5B", "0.4", "0.5B", "1000.5"} {
		_, err := ParseSize(in)
		assert.ErrorContains(t, err, "is not a whole number of bytes", in)
	}
	_, err := ParseSize("Inf")
	assert.Error(t, err)
}

// TestUnitMessages: the unit list of the messages names every unit the parsers take.
func TestUnitMessages(t *testing.T) {
	for u := range memoryUnits {
		assert.Contains(t, memoryUnitList(), u)
	}
	_, err := ParseSize("5XB")
	assert.ErrorContains(t, err, "TiB")
	_, err = ReadChain(strings.NewReader(`{"format": "memsched.chain/v1", "units": {"memory": "PB"}, "input": {"a": 1}, "stages": [{"uf": 1, "ub": 1, "a": 1}]}`), "c.json")
	assert.ErrorContains(t, err, "c.json: units.memory: \"PB\": unknown memory unit (want B, KB, MB, GB, TB, KiB, MiB, GiB or TiB)")
}

// TestFormat: sizes and durations print readably at every magnitude, never hundreds of digits
// (issue 18: a chain with uf = 1e300 printed 300-digit cells).
func TestFormat(t *testing.T) {
	for _, c := range []struct {
		b    int64
		want string
	}{{90963968, "86.75 MiB"}, {12, "12 B"}, {2 << 30, "2.00 GiB"}, {3 << 40, "3.00 TiB"}, {math.MaxInt64, "8388608.00 TiB"}, {-5 << 30, "-5.00 GiB"},
		// Issue 29: a few KiB printed as "0.00 MiB".
		{1023, "1023 B"}, {1024, "1.00 KiB"}, {1271, "1.24 KiB"}, {188 << 10, "188.00 KiB"}, {1<<20 - 1, "1024.00 KiB"}, {1 << 20, "1.00 MiB"}} {
		assert.Equal(t, c.want, FormatSize(c.b))
	}
	for _, c := range []struct {
		s    float64
		want string
	}{
		{0.04742, "47.42 ms"}, {0, "0.00 ms"}, {7011.43, "7011.430 s"}, {1e300, "1e+300 s"}, {3e300, "3e+300 s"},
		{1234567, "1.235e+06 s"}, {999999, "999999.000 s"}, {1.23e-7, "0.000123 ms"}, {1e-9, "1e-06 ms"}, {8.88e-16, "0.00 ms"},
		{5e-6, "0.01 ms"}, {math.Inf(1), "+Inf s"},
	} {
		assert.Equal(t, c.want, FormatDuration(c.s), "%g", c.s)
	}
}

// TestReadChainWholeBytes: in bytes, a fractional size is refused with its field (it was
// rounded silently); in a larger unit it is rounded to the nearest byte. A file of the other
// format is named as such, not by its first unknown field.
func TestReadChainWholeBytes(t *testing.T) {
	chain := func(units, a string) string {
		return `{"format": "memsched.chain/v1", "units": {"memory": "` + units + `"}, "input": {"a": 1}, "stages": [{"uf": 1, "ub": 1, "a": ` + a + `}]}`
	}
	_, err := ReadChain(strings.NewReader(chain("B", "1.5")), "c.json")
	assert.EqualError(t, err, "c.json: stages[0].a: 1.5: 1.5 is not a whole number of bytes")
	c, err := ReadChain(strings.NewReader(chain("B", "1.5e3")), "c.json")
	require.NoError(t, err)
	assert.Equal(t, int64(1500), c.Stages[0].A)
	c, err = ReadChain(strings.NewReader(chain("KiB", "1.5004")), "c.json")
	require.NoError(t, err)
	assert.Equal(t, int64(1536), c.Stages[0].A, "1536.41 B rounds to the nearest byte")

	_, err = ReadChain(strings.NewReader(`{"format": "memsched.graph/v1", "nodes": []}`), "g.json")
	assert.EqualError(t, err, `g.json: format: "memsched.graph/v1": unknown format (want "memsched.chain/v1")`)
	_, err = ReadGraph(strings.NewReader(chain("B", "1")), "c.json")
	assert.EqualError(t, err, `c.json: format: "memsched.chain/v1": unknown format (want "memsched.graph/v1")`)
}

// TestFormatRate: rates print in the largest decimal unit with a digit before the point (issue
// 18: no "β 1.2e+10 B/s"), and ParseRate reads them back.
func TestFormatRate(t *testing.T) {
	for _, c := range []struct {
		r    float64
		want string
	}{{12e9, "12 GB/s"}, {12.2e9, "12.2 GB/s"}, {20, "20 B/s"}, {1500, "1.5 KB/s"}, {1e15, "1 PB/s"}, {1, "1 B/s"}} {
		got := FormatRate(c.r)
		assert.Equal(t, c.want, got, "issue 29: 1 B/s, not 1e-09 GB/s")
		back, err := ParseRate(strings.ReplaceAll(got, " ", ""))
		require.NoError(t, err, got)
		assert.InDelta(t, c.r, back, c.r*1e-9, got)
	}
}
