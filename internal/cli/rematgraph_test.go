package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/model/lpfile"
	"github.com/memsched/memsched/model/mpsfile"
)

const diamondFile = "../../instances/testdata/graphs/diamond.json"

// TestRematGraphDiamond: the diamond (fixed 1 MiB + the store-all peak 8 MiB) solved at 9 MiB
// (cost 7.5 ms, no recomputation) and reported infeasible at 8 MiB. Needs a compiled-in MIP
// backend (the ref referee enumerates at most 2^16 integer points).
func TestRematGraphDiamond(t *testing.T) {
	if av := milp.Available(); !slices.Contains(av, "highs") && !slices.Contains(av, "lpsolve") {
		t.Skipf("no MIP backend in this build (have %v); build with -tags highs", av)
	}
	code, out, stderr := run(t, "remat-graph", "--graph", diamondFile, "--mem", "9MiB", "--json")
	require.Equal(t, 0, code, stderr)
	var rep RematGraphReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, "optimal", rep.Status)
	require.NotNil(t, rep.Cost)
	assert.InDelta(t, 7.5e-3, *rep.Cost, 1e-12)
	assert.Equal(t, 4, rep.Computed)
	assert.LessOrEqual(t, rep.Peak, int64(9<<20))

	code, out, stderr = run(t, "remat-graph", "--graph", diamondFile, "--mem", "8MiB", "--json")
	require.Equal(t, 0, code, stderr)
	rep = RematGraphReport{}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, "infeasible", rep.Status)
	require.NotNil(t, rep.Feasible)
	assert.False(t, *rep.Feasible)
	assert.Nil(t, rep.Cost)
}

// TestRematGraphBadInput: each bad flag exits 2 with one line naming it.
func TestRematGraphBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"remat-graph", "--graph", diamondFile, "--mem", "9MiB", "--algo", "dp"}, `unknown --algo "dp"`},
		{[]string{"remat-graph", "--graph", diamondFile}, "--mem is required"},
		{[]string{"remat-graph", "--mem", "1GiB"}, "--graph FILE"},
		{[]string{"remat-graph", "--graph", diamondFile, "--chain", "x", "--mem", "1GiB"}, "not both"},
		{[]string{"remat-graph", "--graph", diamondFile, "--mem", "9MiB", "--time-limit", "0"}, "--time-limit"},
		{[]string{"export", "--problem", "weight-offload-lb", "--graph", diamondFile, "--mem", "1GiB", "-o", "x"}, "--graph needs --problem remat-ilp"},
	} {
		code, _, stderr := run(t, c.args...)
		assert.Equal(t, 2, code, c.args)
		assert.Contains(t, stderr, c.want)
		assert.Equal(t, 1, strings.Count(strings.TrimSpace(stderr), "\n")+1, stderr)
	}
}

// TestExportRematILP: the exported .lp and .mps read back with the units line as first comment:
// for --chain the chain-exact model (129 columns on the toy chain), with --graph-model the graph
// model of the chain (506 columns).
func TestExportRematILP(t *testing.T) {
	for _, c := range []struct {
		format string
		extra  []string
		cols   int
	}{
		{"lp", nil, 129},
		{"mps", nil, 129},
		{"lp", []string{"--graph-model"}, 506},
		{"mps", []string{"--graph-model"}, 506},
	} {
		out := filepath.Join(t.TempDir(), "m."+c.format)
		args := append([]string{"export", "--problem", "remat-ilp", "--chain", "../../instances/testdata/toy.json", "--mem", "90MiB", "--format", c.format, "-o", out}, c.extra...)
		code, _, stderr := run(t, args...)
		require.Equal(t, 0, code, stderr)
		data, err := os.ReadFile(out)
		require.NoError(t, err)
		assert.Contains(t, string(data), "memsched units: memory=")
		f, err := os.Open(out)
		require.NoError(t, err)
		if c.format == "lp" {
			m, err := lpfile.Read(f, out)
			require.NoError(t, err)
			assert.Equal(t, c.cols, m.NumVars(), args)
		} else {
			m, err := mpsfile.Read(f, out)
			require.NoError(t, err)
			assert.Equal(t, c.cols, m.NumVars(), args)
		}
		f.Close()
	}
	code, _, stderr := run(t, "export", "--problem", "weight-offload-lb", "--chain", "../../instances/testdata/toy.json", "--graph-model", "--mem", "1GiB", "-o", "x")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "--graph-model needs --problem remat-ilp")
}

// TestRematGraphChainToy: the toy chain's graph at 90 MiB: the ILP's free-delete schedule
// (42.78 ms) beats C_MP (47.42 ms, 004's model); ā > a somewhere, so the bound is flagged as the
// graph model's only.
func TestRematGraphChainToy(t *testing.T) {
	if av := milp.Available(); !slices.Contains(av, "highs") {
		t.Skipf("HiGHS not in this build (have %v)", av)
	}
	code, out, stderr := run(t, "remat-graph", "--chain", "../../instances/testdata/toy.json", "--mem", "90MiB", "--json")
	require.Equal(t, 0, code, stderr)
	var rep RematGraphReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.NotNil(t, rep.Cost)
	require.NotNil(t, rep.DPPersistent)
	assert.InDelta(t, 42.78e-3, *rep.Cost, 1e-9)
	assert.InDelta(t, 47.42e-3, *rep.DPPersistent, 1e-9)
	assert.Equal(t, "ilp (free-delete variant)", rep.BestFrom)
	require.NotNil(t, rep.BoundBoundsChain)
	assert.False(t, *rep.BoundBoundsChain)
}

// TestRematAlgoILP: `remat --algo ilp` on the built-in toy chain is the chain-exact MILP: 004's
// 47.42 ms at 90 MiB, proven optimal and replayed; ilp-lp gives the certified LP bound below it
// with C_MP's sequence; an infeasible budget is a result; the other algorithms are untouched.
func TestRematAlgoILP(t *testing.T) {
	if av := milp.Available(); !slices.Contains(av, "highs") {
		t.Skipf("HiGHS not in this build (have %v)", av)
	}
	code, out, stderr := run(t, "remat", "--mem", "90MiB", "--algo", "ilp", "--json")
	require.Equal(t, 0, code, stderr)
	var rep RematILPReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, "optimal", rep.Status)
	require.NotNil(t, rep.Makespan)
	assert.InDelta(t, 47.42e-3, *rep.Makespan, 1e-9)
	assert.Equal(t, "ilp", rep.SequenceFrom)
	assert.True(t, rep.Verified)
	require.NotNil(t, rep.Bound)
	assert.InDelta(t, 47.42e-3, *rep.Bound, 1e-9)

	code, out, _ = run(t, "remat", "--mem", "90MiB", "--algo", "ilp-lp", "--json")
	require.Equal(t, 0, code)
	rep = RematILPReport{}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.NotNil(t, rep.Bound)
	assert.Less(t, *rep.Bound, 47.42e-3)
	assert.Equal(t, "dp-persistent", rep.SequenceFrom)

	code, out, _ = run(t, "remat", "--mem", "10MiB", "--algo", "ilp", "--json")
	require.Equal(t, 0, code)
	rep = RematILPReport{}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, "infeasible", rep.Status)
	require.NotNil(t, rep.Feasible)
	assert.False(t, *rep.Feasible)

	code, out, _ = run(t, "remat", "--mem", "90MiB")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "persistent")
}

// TestJSONVocabulary (issue 29): one vocabulary for the keys of every command's JSON — the
// algorithm's name is "algorithm" (remat-offload and offload-act wrote "algo"), a budget is
// "budget", a makespan "makespan", a bound "bound", a peak "peak_memory" (remat-graph wrote
// budget_bytes, cost_s, bound_s, peak_bytes). The old keys are still written, with the same
// values, until the next release (docs/README.md, "Changes").
func TestJSONVocabulary(t *testing.T) {
	decode := func(args ...string) map[string]any {
		t.Helper()
		code, out, stderr := run(t, append(args, "--json")...)
		require.Equal(t, 0, code, stderr)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &m))
		return m
	}
	if realMILPBackend() { // the diamond's ILP is beyond the enumerating referee
		g := decode("remat-graph", "--graph", diamondFile, "--mem", "9MiB")
		for now, old := range map[string]string{"budget": "budget_bytes", "makespan": "cost_s", "bound": "bound_s", "peak_memory": "peak_bytes"} {
			require.Contains(t, g, now)
			assert.Equal(t, g[now], g[old], "%s and its alias %s", now, old)
		}
		assert.Equal(t, "ilp", g["algorithm"])
	}
	for _, m := range []map[string]any{
		decode("remat-offload", "--mem", "80MiB", "--bandwidth", "1GB/s", "--algo", "all"),
		decode("offload-act", "--chain", "testdata/a2.json", "--mem", "40B", "--bandwidth", "10B/s"),
	} {
		for _, r := range m["results"].([]any) {
			res := r.(map[string]any)
			require.Contains(t, res, "algorithm")
			assert.Equal(t, res["algorithm"], res["algo"])
		}
	}
	r := decode("remat", "--mem", "90MiB")
	assert.Contains(t, r, "algorithm")
	assert.Contains(t, r, "budget")
}
