package cli

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestFormatValues: rates, ratios and percentages print readably at every magnitude (issue 18:
// no 300-digit cells, no "β 1.2e+10 B/s").
func TestFormatValues(t *testing.T) {
	assert.Equal(t, "12 GB/s", formatRate(12e9))
	assert.Equal(t, "12.2 GB/s", formatRate(12.2e9))
	assert.Equal(t, "20 B/s", formatRate(20))
	assert.Equal(t, "1.5 KB/s", formatRate(1500))
	assert.Equal(t, "1000 TB/s", formatRate(1e15))
	assert.Equal(t, "1.237", formatRatio(1.2366, 3))
	assert.Equal(t, "1e+300", formatRatio(1e300, 3))
	assert.Equal(t, "+Inf", formatRatio(math.Inf(1), 3))
	assert.Equal(t, "+0.90%", formatPercent(0.9))
	assert.Equal(t, "+1e+302%", formatPercent(1e302))
}
