package cli

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProcessMemoryLimit: where the binary asks for it, a command's --max-memory sets the
// runtime's soft memory limit to 1.5 times it, at least 512 MiB above (pofo on 400 stages: 4.45 GB resident without,
// 3.16 GB with), and a GOMEMLIMIT the user set wins; without the opt-in (tests, other
// programs using the package) nothing changes.
func TestProcessMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() {
		debug.SetMemoryLimit(before)
		processMemoryLimit = false
	})
	t.Setenv("GOMEMLIMIT", "")

	code, _, stderr := run(t, "remat", "--mem", "1GiB", "--max-memory", "1GiB")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, before, debug.SetMemoryLimit(-1), "not opted in: unchanged")

	EnableProcessMemoryLimit()
	code, _, stderr = run(t, "remat", "--mem", "1GiB", "--max-memory", "1GiB")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, int64(3<<29), debug.SetMemoryLimit(-1), "1.5 GiB for --max-memory 1GiB")
	code, _, stderr = run(t, "remat", "--mem", "1GiB", "--max-memory", "32MiB")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, int64(544<<20), debug.SetMemoryLimit(-1), "at least 512 MiB above a small --max-memory")

	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOMEMLIMIT", "8GiB")
	code, _, stderr = run(t, "remat", "--mem", "1GiB", "--max-memory", "1GiB")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(-1), "the user's GOMEMLIMIT wins")

	t.Setenv("GOMEMLIMIT", "")
	code, _, _ = run(t, "remat", "--mem", "1GiB", "--max-memory", "0")
	assert.Equal(t, 2, code, "a bad --max-memory is refused by the command")
	assert.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(-1), "and sets nothing")
}
