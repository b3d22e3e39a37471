package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The 3-partition yes-instance [6,7,6,7,6,8] (m = 2, V = 20) through the CLI: gen prints M_GPU
// and β, every algorithm's schedule is verified, the exact search reaches T = 2m = 4 s while
// the ordered GREEDY cannot (index order is no partition), and the bounds are ordered.
func TestOffloadActCLI(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a3.json")
	code, _, stderr := run(t, "gen", "act-3partition", "--values", "6,7,6,7,6,8", "-o", path)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "M_GPU = 40 B")
	assert.Contains(t, stderr, "β = 20 B/s")
	code, out, stderr := run(t, "offload-act", "--chain", path, "--mem", "40B", "--bandwidth", "20B/s", "--algo", "all", "--json")
	require.Equal(t, 0, code, stderr)
	var rep struct {
		Makespan    float64 `json:"makespan"`
		PeakMemory  int64   `json:"peak_memory"`
		Verified    bool    `json:"verified"`
		Offloaded   []int   `json:"offloaded"`
		Schedule    struct{ Ops, Transfers []json.RawMessage }
		LowerBounds struct {
			Prop3, Fractional, Interruptible float64
			Exact, Split                     *float64
		} `json:"lower_bounds"`
		Results []struct {
			Algo     string
			Makespan float64
			Verified bool
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.InDelta(t, 4.0, rep.Makespan, 1e-12)
	assert.True(t, rep.Verified)
	assert.Equal(t, int64(40), rep.PeakMemory)
	assert.Len(t, rep.Schedule.Ops, 20)
	assert.Len(t, rep.Schedule.Transfers, 12)
	require.NotNil(t, rep.LowerBounds.Exact)
	assert.InDelta(t, 4.0, *rep.LowerBounds.Exact, 1e-12)
	lb := rep.LowerBounds
	assert.LessOrEqual(t, lb.Prop3, lb.Fractional)
	assert.LessOrEqual(t, lb.Fractional, lb.Interruptible)
	require.NotNil(t, lb.Split)
	assert.LessOrEqual(t, *lb.Split, 4.0+1e-12, "the peak split is a lower bound")
	want := 5
	if realMILPBackend() {
		want = 6 // the MILP runs in --algo all where a backend is compiled in
	}
	require.Len(t, rep.Results, want)
	for _, r := range rep.Results {
		assert.True(t, r.Verified, r.Algo)
		assert.GreaterOrEqual(t, r.Makespan, 4.0-1e-12, r.Algo)
	}
	assert.Greater(t, rep.Results[0].Makespan, 4.0, "greedy offloads in index order")

	code, out, stderr = run(t, "bound", "--problem", "act-offload", "--chain", path, "--mem", "40B", "--bandwidth", "20B/s", "--json")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, `"lower_bound": 4`)
	code, out, _ = run(t, "offload-act", "--chain", path, "--mem", "40B", "--bandwidth", "20B/s", "--algo", "greedy")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "bound fractional")
	assert.Contains(t, out, "bound whole")
	assert.True(t, strings.Contains(out, "greedy"))
}

func TestOffloadActCLIErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a2.json")
	code, _, stderr := run(t, "gen", "act-2partition", "--values", "3,1,1,2,2,1", "-o", path)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "M_GPU = 10 B")
	cases := []struct {
		name string
		args []string
	}{
		{"unknown algorithm", []string{"offload-act", "--chain", path, "--mem", "10B", "--algo", "magic"}},
		{"bad memory", []string{"offload-act", "--chain", path, "--mem", "ten"}},
		{"bad bandwidth", []string{"offload-act", "--chain", path, "--mem", "10B", "--bandwidth", "fast"}},
		{"missing chain", []string{"offload-act", "--mem", "10B"}},
		{"negative slots", []string{"offload-act", "--chain", path, "--mem", "10B", "--slots", "-1"}},
		{"odd 2-partition", []string{"gen", "act-2partition", "--values", "1,2"}},
		{"3-partition of 4 values", []string{"gen", "act-3partition", "--values", "1,2,3,4"}},
	}
	for _, c := range cases {
		code, _, stderr := run(t, c.args...)
		assert.Equal(t, 2, code, c.name)
		assert.Equal(t, 1, strings.Count(strings.TrimSpace(stderr), "\n")+1, "%s: one line: %q", c.name, stderr)
	}
	// Below the smallest feasible memory: a result, not an error.
	code, out, _ := run(t, "offload-act", "--chain", path, "--mem", "4B", "--bandwidth", "5B/s", "--algo", "greedy", "--json")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, `"feasible": false`)
	// Exact DYNPROG bound on the 2-partition yes-instance: exactly T = 2.
	code, out, _ = run(t, "bound", "--problem", "act-offload", "--chain", path, "--mem", "10B", "--bandwidth", "5B/s", "--exact", "--json")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, `"interruptible": 2`)
	// The whole-transfer windows are printed too, and stay below the optimum T = 2.
	var rep struct {
		LowerBounds struct {
			Whole *float64 `json:"whole"`
		} `json:"lower_bounds"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.NotNil(t, rep.LowerBounds.Whole)
	assert.LessOrEqual(t, *rep.LowerBounds.Whole, 2.0)
	assert.Greater(t, *rep.LowerBounds.Whole, 0.0)
}

// The exact MILP through the CLI on the 3-partition yes-instance: --algo milp reaches the
// optimum T = 2m = 4 s that GREEDY misses, proves it (lower_bounds.milp = 4, status optimal),
// and its schedule is verified; bound reports the same bound; export writes the model with its
// units line, and cbc reads the same optimum back from the file.
func TestOffloadActMILPCLI(t *testing.T) {
	if !realMILPBackend() {
		t.Skip("no MILP backend compiled in (make builds with HiGHS)")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "a3.json")
	code, _, stderr := run(t, "gen", "act-3partition", "--values", "6,7,6,7,6,8", "-o", path)
	require.Equal(t, 0, code, stderr)
	args := []string{"--chain", path, "--mem", "40B", "--bandwidth", "20B/s"}
	code, out, stderr := run(t, append([]string{"offload-act", "--algo", "milp", "--time-limit", "30", "--json"}, args...)...)
	require.Equal(t, 0, code, stderr)
	var rep struct {
		Algo, Status string
		Makespan     float64
		Verified     bool
		LowerBounds  struct {
			MILP       *float64 `json:"milp"`
			MILPStatus string   `json:"milp_status"`
			Best       float64
		} `json:"lower_bounds"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, "milp", rep.Algo)
	assert.Equal(t, "optimal", rep.Status)
	assert.True(t, rep.Verified)
	assert.InDelta(t, 4.0, rep.Makespan, 1e-9)
	require.NotNil(t, rep.LowerBounds.MILP)
	assert.InDelta(t, 4.0, *rep.LowerBounds.MILP, 1e-6)
	assert.InDelta(t, 4.0, rep.LowerBounds.Best, 1e-6)

	// bound: the peak split's schedule meets the bound (4 s), so the MILP is not needed.
	code, out, stderr = run(t, append([]string{"bound", "--problem", "act-offload", "--time-limit", "30"}, args...)...)
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `best schedule\s+4000.00 ms \(split, verified by verify/timed\), proven optimal`, out)

	for _, format := range []string{"lp", "mps"} {
		file := filepath.Join(dir, "a3."+format)
		code, _, stderr = run(t, append([]string{"export", "--problem", "act-offload", "--format", format, "-o", file}, args...)...)
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, stderr, "memsched units: memory=")
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		assert.Contains(t, string(data), "memsched units:")
	}
	code, _, stderr = run(t, append([]string{"offload-act", "--algo", "milp", "--time-limit", "0"}, args...)...)
	assert.Equal(t, 2, code, stderr)
	code, _, stderr = run(t, "export", "--problem", "act-offload", "--chain", path, "--mem", "1B", "--bandwidth", "20B/s", "-o", filepath.Join(dir, "x.mps"))
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "no schedule fits")
}

// TestOffloadActNoScheduleWords (issue 18): a search stopped by --max-nodes printed
// "infeasible" where its JSON said node-limit. Now "infeasible" is said only where the exact
// search proved it, "none found" with the status when it stopped, "no schedule" for a
// heuristic; --max-nodes below 1 is refused.
func TestOffloadActNoScheduleWords(t *testing.T) {
	a2 := filepath.Join("testdata", "a2.json") // M_peak 50 B, min 40 B, one transfer of 1 s at 10 B/s
	code, out, stderr := run(t, "offload-act", "--chain", a2, "--mem", "40B", "--bandwidth", "10B/s", "--algo", "exact", "--max-nodes", "1")
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `exact \(node-limit\)\s+none found`, out)
	assert.NotContains(t, out, "infeasible")
	code, out, _ = run(t, "offload-act", "--chain", a2, "--mem", "40B", "--bandwidth", "10B/s", "--algo", "exact", "--max-nodes", "1", "--json")
	require.Equal(t, 0, code)
	var rep ActReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, "node-limit", rep.Status)
	assert.False(t, rep.Feasible)

	code, out, stderr = run(t, "offload-act", "--chain", a2, "--mem", "30B", "--bandwidth", "10B/s")
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `exact \(optimal\)\s+infeasible`, out, "below the minimum memory the exact search proves it")
	assert.Regexp(t, `greedy\s+no schedule`, out)

	code, _, stderr = run(t, "offload-act", "--chain", a2, "--mem", "40B", "--bandwidth", "10B/s", "--max-nodes", "0")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "--max-nodes")
}

// TestBoundActOffloadSplitIncumbent (issue 29): `bound --problem act-offload` printed a 1.66 %
// gap on ResNet-101 at 1788.5 MiB and 12 GB/s (incumbent GREEDY's 398.57 ms) where the peak
// split proves 391.97 ms: the incumbent is now the best verified schedule, the split's
// included, and where it meets the bound the optimum is proven without a MILP.
func TestBoundActOffloadSplitIncumbent(t *testing.T) {
	chain := filepath.Join(t.TempDir(), "r101.json")
	code, _, stderr := run(t, "gen", "zoo", "resnet", "--depth", "101", "-o", chain)
	require.Equal(t, 0, code, stderr)
	code, out, stderr := run(t, "bound", "--problem", "act-offload", "--chain", chain, "--mem", "1788.5MiB", "--bandwidth", "12GB/s", "--time-limit", "30", "--json")
	require.Equal(t, 0, code, stderr)
	var rep struct {
		LowerBound    float64  `json:"lower_bound"`
		Gap           *float64 `json:"gap"`
		Incumbent     *float64 `json:"incumbent"`
		IncumbentFrom string   `json:"incumbent_from"`
		Optimal       bool     `json:"optimal"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.InDelta(t, 0.39197, rep.LowerBound, 5e-6)
	require.NotNil(t, rep.Incumbent)
	assert.InDelta(t, rep.LowerBound, *rep.Incumbent, 1e-9*rep.LowerBound)
	require.NotNil(t, rep.Gap)
	assert.Zero(t, *rep.Gap)
	assert.Equal(t, "split", rep.IncumbentFrom)
	assert.True(t, rep.Optimal)
}

// TestOffloadActSplitStops: on `gen random --seed 707244 --stages 20` (64 MiB, 10 ms) at
// 1040653605 B, 12 GB/s, the peak split's search over count vectors did not look at the
// clock: offload-act --algo all took 135 s under --time-limit 60, its heuristics "stopped
// before they had a schedule" (the bounds, first, had taken it all) although greedy meets Σu.
// Now greedy runs first and, its schedule meeting the relaxations' bound, the slow bounds and
// the searches are not run and say why (0.03 s); run alone, the split's strategy stops at the
// limit and says so. Heavy: about 25 s.
func TestOffloadActSplitStops(t *testing.T) {
	if testing.Short() {
		t.Skip("heavy: the bounds take their share of --time-limit")
	}
	dir := t.TempDir()
	c := genChain(t, dir, "r20.json", "random", "--seed", "707244", "--stages", "20", "--max-size", "64MiB", "--max-time", "0.01", "--weights")
	code, out, stderr := run(t, "offload-act", "--chain", c, "--mem", "1040653605", "--bandwidth", "12GB/s", "--algo", "all", "--json")
	require.Equal(t, 0, code, stderr)
	var rep ActReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	byAlgo := map[string]ActResult{}
	for _, r := range rep.Results {
		byAlgo[r.Algo] = r
	}
	require.True(t, byAlgo["greedy"].Feasible)
	require.NotNil(t, byAlgo["greedy"].Ratio)
	assert.InDelta(t, 1, *byAlgo["greedy"].Ratio, 1e-9, "greedy meets the bound (Σu)")
	assert.True(t, byAlgo["dynprog"].Feasible, "the other heuristics still run")
	for _, a := range []string{"split", "exact"} {
		assert.Equal(t, "not run: greedy's schedule meets the relaxations' bound", byAlgo[a].Status, a)
	}
	assert.Nil(t, rep.LowerBounds.Split)
	assert.Equal(t, "not computed: greedy's schedule meets the relaxations' bound", rep.LowerBounds.CertifiedBy["split"])

	start := time.Now()
	code, out, stderr = run(t, "offload-act", "--chain", c, "--mem", "1040653605", "--bandwidth", "12GB/s", "--algo", "split", "--time-limit", "5")
	require.Equal(t, 0, code, stderr)
	withinLimit(t, "offload-act --algo split", 5, time.Since(start))
	assert.Contains(t, out, "split (stopped at the time limit)")

	// certify's act-offload lever ran the same split past its share: 124 s under
	// --time-limit 20, the remat-offload and weight-offload levers "not run (time)".
	// Now the split's strategy is not run once a row meets the bound (as the exact search).
	start = time.Now()
	code, out, stderr = run(t, "certify", "--chain", c, "--mem", "1040653605", "--bandwidth", "12GB/s", "--time-limit", "10", "--json")
	require.Equal(t, 0, code, stderr)
	withinLimit(t, "certify", 10, time.Since(start))
	var cert struct {
		Levers map[string]struct {
			Strategies []struct{ Strategy, Note string } `json:"strategies"`
		} `json:"levers"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &cert))
	notes := map[string]string{}
	for _, r := range cert.Levers["act-offload"].Strategies {
		notes[r.Strategy] = r.Note
	}
	assert.Equal(t, "not run: the greedy row is proven optimal", notes["split"])
	// bound --problem act-offload took 118 s: every bound is computed there (it is the
	// command's purpose), the split's within half of the limit.
	start = time.Now()
	code, out, stderr = run(t, "bound", "--problem", "act-offload", "--chain", c, "--mem", "1040653605", "--bandwidth", "12GB/s", "--time-limit", "10")
	require.Equal(t, 0, code, stderr)
	withinLimit(t, "bound", 10, time.Since(start))
	assert.Contains(t, out, "proven optimal")
}

// TestOffloadActEventsStatus: the event search's row says how the search ended. It said
// "optimal" whether or not the search ended: on a 20-stage random chain, "events (optimal)"
// at 246.90 ms beside a bound of 208.69 ms, which the exact search later reached. With
// --max-nodes 20 on the 3-partition instance it stops at its node limit (200 nodes) with
// the optimum in hand, proven by the fractional bound, not by itself.
func TestOffloadActEventsStatus(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a3.json")
	code, _, stderr := run(t, "gen", "act-3partition", "--values", "6,7,6,7,6,8", "-o", path)
	require.Equal(t, 0, code, stderr)
	code, out, stderr := run(t, "offload-act", "--chain", path, "--mem", "40B", "--bandwidth", "20B/s", "--algo", "exact", "--max-nodes", "20")
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `events \(node-limit\)\s+4000.00 ms\s+1.0000`, out)
	assert.NotContains(t, out, "optimum (exact)", "no complete search, no exact bound")
	code, out, stderr = run(t, "offload-act", "--chain", path, "--mem", "40B", "--bandwidth", "20B/s", "--algo", "exact", "--max-nodes", "100")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "optimum (exact)")
}
