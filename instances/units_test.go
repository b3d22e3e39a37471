package instances

import (
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
		{"1KiB", 1024}, {"0", 0}, {"2GiB", 2 << 30}, {"1e3B", 1000}, {"0.4B", 0}, {"0.5B", 1},
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
	for _, in := range []string{"0GB/s", "-1GB/s", "12GB", "12GB/h", "fast"} {
		_, err := ParseRate(in)
		assert.Error(t, err, in)
	}
}

func TestFormat(t *testing.T) {
	assert.Equal(t, "86.75 MiB", FormatSize(90963968))
	assert.Equal(t, "12 B", FormatSize(12))
	assert.Equal(t, "47.42 ms", FormatDuration(0.04742))
}
