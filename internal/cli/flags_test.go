package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBadFlagsExit2: every bad flag value, on every command, exits 2 with exactly one line on
// stderr that names the flag or value, and nothing on stdout.
func TestBadFlagsExit2(t *testing.T) {
	dir := t.TempDir()
	chain := filepath.Join(dir, "r18.json")
	code, _, stderr := run(t, "gen", "zoo", "resnet", "--depth", "18", "--batch", "8", "-o", chain)
	require.Equal(t, 0, code, stderr)
	out := filepath.Join(dir, "out")
	cases := []struct {
		why  string
		args []string
		want string
	}{
		{"slots far above any table (was exit 1 about exact mode)", []string{"remat", "--mem", "90MiB", "--slots", "100000000"}, "--slots must be a number in 1..100000 or exact"},
		{"zero slots", []string{"remat", "--mem", "90MiB", "--slots", "0"}, "--slots"},
		{"negative budget", []string{"remat", "--mem", "-5"}, "--mem"},
		{"unit that is not a size", []string{"remat", "--mem", "90MB/s"}, "--mem"},
		{"unknown algorithm", []string{"remat", "--mem", "90MiB", "--algo", "x"}, "--algo"},
		{"not an integer", []string{"remat", "--mem", "90MiB", "--slots", "many"}, "--slots"},
		{"certify: slots", []string{"certify", "--slots", "100000000"}, "--slots"},
		{"certify: negative time limit", []string{"certify", "--time-limit", "-1"}, "--time-limit"},
		{"certify: NaN time limit", []string{"certify", "--time-limit", "NaN"}, "--time-limit"},
		{"certify: bandwidth without a number", []string{"certify", "--bandwidth", "fast"}, "--bandwidth"},
		{"certify: unknown solver", []string{"certify", "--solver", "nope"}, "--solver"},
		{"certify: missing chain file", []string{"certify", "--chain", filepath.Join(dir, "none.json")}, "none.json"},
		{"sweep: --from above --to", []string{"sweep", "--from", "1GiB", "--to", "1MiB", "-o", out}, "--from"},
		{"sweep: zero steps", []string{"sweep", "--from", "1MiB", "--to", "2MiB", "--steps", "0", "-o", out}, "--steps"},
		{"sweep: too many steps", []string{"sweep", "--from", "1MiB", "--to", "2MiB", "--steps", "10001", "-o", out}, "--steps"},
		{"sweep: unknown lever", []string{"sweep", "--from", "1MiB", "--to", "2MiB", "--lever", "foo", "-o", out}, "--lever"},
		{"sweep: missing --to", []string{"sweep", "--from", "1MiB", "-o", out}, "--to"},
		{"sweep: negative workers", []string{"sweep", "--from", "1MiB", "--to", "2MiB", "--workers", "-1", "-o", out}, "--workers"},
		{"offload-weights: zero bandwidth", []string{"offload-weights", "--chain", chain, "--mem", "1GiB", "--bandwidth", "0"}, "--bandwidth"},
		{"offload-weights: unknown algorithm", []string{"offload-weights", "--chain", chain, "--mem", "1GiB", "--algo", "foo"}, "--algo"},
		{"offload-weights: negative time limit", []string{"offload-weights", "--chain", chain, "--mem", "1GiB", "--algo", "all", "--bound", "--time-limit", "-1"}, "--time-limit"},
		{"bound: negative time limit", []string{"bound", "--chain", chain, "--mem", "1GiB", "--time-limit", "-3"}, "--time-limit"},
		{"bound: unknown problem", []string{"bound", "--problem", "x", "--chain", chain, "--mem", "1GiB"}, "--problem"},
		{"bound: unknown solver", []string{"bound", "--chain", chain, "--mem", "1GiB", "--solver", "foo"}, "foo"},
		{"export: unknown format", []string{"export", "--chain", chain, "--mem", "1GiB", "--format", "xml", "-o", filepath.Join(dir, "x")}, "--format"},
		{"solve: negative threads", []string{"solve", "x.mps", "--threads", "-1"}, "--threads"},
		{"solve: gap of 1", []string{"solve", "x.mps", "--gap", "1"}, "--gap"},
		{"gen zoo: unknown depth", []string{"gen", "zoo", "resnet", "--depth", "7"}, "depth 7"},
		{"gen zoo: zero batch", []string{"gen", "zoo", "resnet", "--depth", "50", "--batch", "0"}, "batch 0"},
		{"gen zoo: unknown dtype", []string{"gen", "zoo", "resnet", "--depth", "50", "--dtype", "int4"}, "int4"},
		{"gen random: zero stages", []string{"gen", "random", "--stages", "0"}, "--stages"},
		{"verify: unknown problem", []string{"verify", "--problem", "x", "--mem", "1GiB", "--schedule", "-"}, "--problem"},
		{"verify: act-offload without a schedule", []string{"verify", "--problem", "act-offload", "--mem", "1GiB"}, "--schedule"},
		{"verify: unknown format", []string{"verify", "--problem", "remat", "--mem", "1GiB", "--schedule", "-", "--format", "yaml"}, "--format"},
		{"verify: missing schedule", []string{"verify", "--problem", "remat", "--mem", "1GiB"}, "--schedule"},
		{"unknown flag", []string{"remat", "--memory", "1GiB"}, "--memory"},
		{"unknown command", []string{"remap"}, "remap"},
	}
	for _, tc := range cases {
		code, stdout, stderr := run(t, tc.args...)
		assert.Equal(t, 2, code, "%s: %v: %s", tc.why, tc.args, stderr)
		assert.Empty(t, stdout, tc.why)
		assert.Contains(t, stderr, tc.want, tc.why)
		assert.Equal(t, 1, strings.Count(strings.TrimRight(stderr, "\n"), "\n")+1, "one line: %s: %q", tc.why, stderr)
	}
}

// TestHelpHasExamples: every command that does work shows examples in its help.
func TestHelpHasExamples(t *testing.T) {
	for _, c := range [][]string{{}, {"certify"}, {"sweep"}, {"verify"}, {"remat"}, {"offload-weights"}, {"bound"}, {"export"}, {"info"}, {"solve"}, {"gen", "zoo"}} {
		code, out, _ := run(t, append([]string{"help"}, c...)...)
		require.Equal(t, 0, code, c)
		assert.Contains(t, out, "Examples:\n  memsched ", c)
	}
}
