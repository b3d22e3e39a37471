package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	leverpl "github.com/memsched/memsched/lever/pipeline"
	leverro "github.com/memsched/memsched/lever/rematoffload"
	"github.com/memsched/memsched/milp"
)

// TestBoundLimits: --time-limit counts from the command's start, model building included: a
// budget spent before the MILP's model is built leaves the closed-form bounds and says so;
// --max-memory below the MILP's estimated memory skips it with a note; both are results,
// not errors.
func TestBoundLimits(t *testing.T) {
	if _, err := milp.Lookup("highs"); err != nil {
		t.Skip("needs HiGHS")
	}
	chain := smallGPT(t)
	args := []string{"bound", "--chain", chain, "--mem", "110MiB", "--bandwidth", "1GB/s", "--json"}
	code, out, stderr := run(t, append(args, "--time-limit", "0.000001")...)
	require.Equal(t, 0, code, stderr)
	var b BoundReport
	require.NoError(t, json.Unmarshal([]byte(out), &b))
	assert.Equal(t, "time-limit", b.Status)
	assert.Contains(t, b.Note, "the time ran out")
	require.NotNil(t, b.LowerBound)
	assert.Equal(t, b.SumU, *b.LowerBound, "Σu stands")

	code, out, stderr = run(t, append(args, "--max-memory", "100KiB")...)
	require.Equal(t, 0, code, stderr)
	b = BoundReport{}
	require.NoError(t, json.Unmarshal([]byte(out), &b))
	assert.Equal(t, "not-solved", b.Status)
	assert.Contains(t, b.Note, "MILP not built: its 735 nonzeros would take about 373.24 KiB")

	code, _, stderr = run(t, append(args, "--max-memory", "0")...)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "--max-memory must be positive")
}

// TestRematTooLarge: a table above --max-memory is refused at once with its size and the
// slots that fit (exit 1: the input is valid, the command cannot complete within the limit),
// and the advice works; with --slots exact the table falls back to slots, announced.
func TestRematTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g.json")
	code, _, stderr := run(t, "gen", "zoo", "gpt2", "--hidden", "64", "--heads", "4", "--layers", "298", "--seq", "16", "--batch", "1", "-o", path)
	require.Equal(t, 0, code, stderr)
	args := []string{"remat", "--chain", path, "--mem", "1GiB", "--max-memory", "32MiB"}
	code, out, stderr := run(t, args...)
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Contains(t, stderr, "the C_MP (persistent) with 500 slots on 300 stages table would take 179.29 MiB")
	assert.Contains(t, stderr, "above the memory limit of 32.00 MiB (--max-memory); use --slots 84 or fewer")
	assert.Equal(t, 1, strings.Count(stderr, "\n"))
	code, out, stderr = run(t, append(args, "--slots", "84")...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "verified")
}

// TestCertifyTimeLines: certify prints, per lever, the time it took and its share of
// --time-limit (JSON: seconds, time_budget_seconds), and the MILP bounds' own limits.
func TestCertifyTimeLines(t *testing.T) {
	code, out, stderr := run(t, "certify", "--bandwidth", "12GB/s", "--time-limit", "30")
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `(?m)^time: \d+\.\d s of a 10\.0 s share`, out, "three levers run (the toy has no weights): 10 s each")
	code, out, stderr = run(t, "certify", "--bandwidth", "12GB/s", "--time-limit", "30", "--json")
	require.Equal(t, 0, code, stderr)
	var rep certifyLeverTimes
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.InDelta(t, 10, rep.Levers["remat"].TimeBudget, 0.5)
	assert.LessOrEqual(t, rep.Levers["remat"].Seconds, rep.Levers["remat"].TimeBudget)
	assert.Positive(t, rep.Levers["act-offload"].TimeBudget)
}

// TestActMILPLimits: the exact MILP of Problem 1 (whose model grows as the cube of the chain's
// length) keeps --max-memory and --time-limit: `offload-act --algo milp` above the memory
// limit exits 1 with one line naming the model's size and the limit; `--algo all` and `bound`
// go on without it, saying why; a time limit spent while the model is built leaves the start
// schedule, status time-limit and no bound (a 60-block GPT-2's model: 0.05 s of time limit;
// with 0.2 s the model was sometimes built in time, in this test's warm process, and HiGHS
// stopped instead — both honest, but not the case tested).
func TestActMILPLimits(t *testing.T) {
	if _, err := milp.Lookup("highs"); err != nil {
		t.Skip("needs HiGHS")
	}
	dir := t.TempDir()
	small := filepath.Join(dir, "g12.json")
	code, _, stderr := run(t, "gen", "zoo", "gpt2", "--hidden", "256", "--heads", "4", "--layers", "12", "--seq", "128", "--batch", "4", "-o", small)
	require.Equal(t, 0, code, stderr)
	args := []string{"--chain", small, "--mem", "273489920B", "--bandwidth", "12GB/s", "--max-memory", "256KiB"}

	code, out, stderr := run(t, append([]string{"offload-act", "--algo", "milp"}, args...)...)
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	assert.Contains(t, stderr, "above the memory limit of 256.00 KiB (--max-memory)")

	code, out, stderr = run(t, append([]string{"offload-act", "--algo", "all", "--json"}, args...)...)
	require.Equal(t, 0, code, stderr)
	var rep ActReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Contains(t, rep.LowerBounds.MILPNote, "not run: ")
	assert.Nil(t, rep.LowerBounds.MILP)
	for _, r := range rep.Results {
		assert.NotEqual(t, "milp", r.Algo)
	}

	// bound: GREEDY's schedule meets the bounds here, so the MILP is not needed (issue 29:
	// the best verified schedule is the incumbent) and --max-memory does not matter.
	code, out, stderr = run(t, append([]string{"bound", "--problem", "act-offload"}, args...)...)
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `best schedule\s+16.60 ms \(greedy, verified by verify/timed\), proven optimal`, out)
	assert.NotContains(t, out, "bound milp")

	long := filepath.Join(dir, "g60.json")
	code, _, stderr = run(t, "gen", "zoo", "gpt2", "--layers", "60", "-o", long)
	require.Equal(t, 0, code, stderr)
	code, out, stderr = run(t, "offload-act", "--chain", long, "--mem", "160GiB", "--bandwidth", "12GB/s", "--algo", "milp", "--time-limit", "0.05", "--json")
	require.Equal(t, 0, code, stderr)
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, "time-limit", rep.LowerBounds.MILPStatus)
	assert.Nil(t, rep.LowerBounds.MILP)
	assert.Contains(t, rep.LowerBounds.CertifiedBy["milp"], "stopped while building the model")
	assert.True(t, rep.Verified)
}

// TestExportLimits: export of the offloading MILPs stops at --max-memory (their models grow as
// the cube of the chain) with one line naming the model's size and the limit, exit 1, and
// writes no file.
func TestExportLimits(t *testing.T) {
	dir := t.TempDir()
	chain := filepath.Join(dir, "r18.json")
	code, _, stderr := run(t, "gen", "zoo", "resnet", "--depth", "18", "--batch", "32", "-o", chain)
	require.Equal(t, 0, code, stderr)
	for _, problem := range []string{"act-offload", "remat-offload"} {
		out := filepath.Join(dir, problem+".lp")
		args := []string{"export", "--problem", problem, "--chain", chain, "--mem", "600MiB", "--bandwidth", "12GB/s", "--format", "lp", "-o", out}
		code, stdout, stderr := run(t, append(args, "--max-memory", "16KiB")...)
		assert.Equal(t, 1, code, problem)
		assert.Empty(t, stdout)
		assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
		assert.Contains(t, stderr, "above the memory limit of 16.00 KiB (--max-memory)", problem)
		assert.NoFileExists(t, out)
		code, _, stderr = run(t, args...)
		assert.Equal(t, 0, code, stderr)
		assert.FileExists(t, out)
	}
}

// limitSlack is how far past its --time-limit a command may end in these tests: the promise
// is 10 % + 1 s (docs/certify.md, "Time and memory limits"), and the tests allow a quarter
// and 2 s on top of the limit, for a shared 2-core machine under load. Each case took 30 s to
// minutes before the limits it checks held (issue 29's table), so the margin hides nothing.
func withinLimit(t *testing.T, what string, limit float64, wall time.Duration) {
	t.Helper()
	assert.LessOrEqual(t, wall.Seconds(), 1.25*limit+2, "%s: %.1f s under --time-limit %g", what, wall.Seconds(), limit)
}

// certifyLeverTimes is what certify's JSON says of each lever's time: the seconds it took and
// its share.
type certifyLeverTimes struct {
	Levers map[string]struct {
		Seconds    float64 `json:"seconds"`
		TimeBudget float64 `json:"time_budget_seconds"`
	} `json:"levers"`
}

// leversWithinShares checks, in certify's JSON out, that every lever with a time share kept to
// it (a quarter and 1 s on top, as withinLimit); where names the run in the messages.
func leversWithinShares(t *testing.T, out, where string) {
	t.Helper()
	var rep certifyLeverTimes
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	for name, lv := range rep.Levers {
		if lv.TimeBudget > 0 {
			assert.LessOrEqual(t, lv.Seconds, 1.25*lv.TimeBudget+1, "%s%s: a lever keeps to its share", name, where)
		}
	}
}

// genChain writes a chain with `memsched gen` args into dir and returns its path.
func genChain(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	code, _, stderr := run(t, append(append([]string{"gen"}, args...), "-o", path)...)
	require.Equal(t, 0, code, stderr)
	return path
}

// TestTimeLimitsHold: every --time-limit is the whole command's (issue 29, "Limits that do
// not hold"), each case one of the overruns measured there, reproduced before the fix:
//   - remat-offload --slots exact on ResNet-101: the class bound's exact table ran without a
//     deadline (5 s → 35–46 s, 5 GB RSS) and the pofo row said "0.51 s"; now the row's time
//     is the real time the command spent;
//   - remat-offload --algo all on a random 401-stage chain: the heuristics ran without one
//     (5 s → 101 s);
//   - certify on a random 20 001-stage chain: the act-offload lever's windows, vdnn and greedy
//     (10 s → 373 s, "369.8 s of a 3.9 s share");
//   - bound --problem act-offload on the 401-stage chain: the bounds before the MILP had no
//     deadline and the MILP's started at its own start (3 s → 10 s);
//   - offload-act --algo all on the 20 001-stage chain: its --time-limit bounded only the
//     MILP (3 s → minutes);
//   - remat-offload on DenseNet-121 at 3 GiB, the relaxation MILP: HiGHS past its limit in
//     phases that do not poll the clock (10 s → 24–35 s, depending on the load).
//
// Heavy: about a minute on 2 cores.
func TestTimeLimitsHold(t *testing.T) {
	if testing.Short() {
		t.Skip("heavy: about a minute")
	}
	dir := t.TempDir()
	r101 := genChain(t, dir, "r101.json", "zoo", "resnet", "--depth", "101")
	c401 := genChain(t, dir, "c401.json", "random", "--seed", "1", "--stages", "401")
	c20k := genChain(t, dir, "c20001.json", "random", "--seed", "1", "--stages", "20001")
	timed := func(args ...string) (int, string, string, time.Duration) {
		start := time.Now()
		code, out, stderr := run(t, args...)
		return code, out, stderr, time.Since(start)
	}

	t.Run("remat-offload exact", func(t *testing.T) {
		code, out, stderr, wall := timed("remat-offload", "--chain", r101, "--mem", "1800MiB", "--bandwidth", "12GB/s", "--slots", "exact", "--no-milp", "--time-limit", "3", "--json")
		require.Equal(t, 0, code, stderr)
		withinLimit(t, "remat-offload --slots exact", 3, wall)
		var rep ComboReport
		require.NoError(t, json.Unmarshal([]byte(out), &rep))
		require.Len(t, rep.Results, 1)
		assert.Contains(t, rep.Results[0].Note, "stopped at the end of its share of --time-limit")
		assert.GreaterOrEqual(t, rep.Results[0].Seconds, 0.5*wall.Seconds(), "the row's time is the time the command spent on it")
		assert.Contains(t, rep.LowerBounds.Class.Note, "not computed")
	})
	t.Run("remat-offload heuristics", func(t *testing.T) {
		code, out, stderr, wall := timed("remat-offload", "--chain", c401, "--mem", "1GiB", "--bandwidth", "12GB/s", "--algo", "all", "--time-limit", "3", "--json")
		require.Equal(t, 0, code, stderr)
		withinLimit(t, "remat-offload --algo all", 3, wall)
		var rep ComboReport
		require.NoError(t, json.Unmarshal([]byte(out), &rep))
		require.Len(t, rep.Results, len(leverro.Names()))
		for _, r := range rep.Results {
			if !r.Feasible {
				assert.NotEmpty(t, r.Note, "%s: a row without a plan says why", r.Algo)
			}
		}
	})
	t.Run("certify 20001 stages", func(t *testing.T) {
		code, out, stderr, wall := timed("certify", "--chain", c20k, "--mem", "2GiB", "--bandwidth", "12GB/s", "--time-limit", "5", "--json")
		require.Equal(t, 0, code, stderr)
		withinLimit(t, "certify", 5, wall)
		leversWithinShares(t, out, "")
	})
	t.Run("bound act-offload", func(t *testing.T) {
		code, _, stderr, wall := timed("bound", "--problem", "act-offload", "--chain", c401, "--mem", "1GiB", "--bandwidth", "12GB/s", "--time-limit", "3")
		require.Equal(t, 0, code, stderr)
		withinLimit(t, "bound --problem act-offload", 3, wall)
	})
	t.Run("offload-act", func(t *testing.T) {
		code, out, stderr, wall := timed("offload-act", "--chain", c20k, "--mem", "1GiB", "--bandwidth", "12GB/s", "--algo", "all", "--time-limit", "3", "--json")
		require.Equal(t, 0, code, stderr)
		withinLimit(t, "offload-act --algo all", 3, wall)
		var rep ActReport
		require.NoError(t, json.Unmarshal([]byte(out), &rep))
		stopped := 0
		for _, r := range rep.Results {
			if strings.Contains(r.Status, "stopped at the time limit") {
				stopped++
			}
		}
		assert.Positive(t, stopped, "what the limit stopped says so")
	})
	t.Run("certify 2001 stages, tight memory", func(t *testing.T) {
		// At 500 MiB (the smallest feasible budget is 361 MiB) one no-wait simulation of the
		// act-offload lever's local search took seconds and did not read the stop: certify
		// --time-limit 10 ran 22 s (the lever 18–23 s of a 3.3 s share).
		// And at 2 GiB, where act-offload's schedule meets Σu (with --time-limit 10
		// sequence-offload, seeded with it, replayed it 6 s past the combined lever's 2.8 s
		// share, 16.4 s in all; with 5 s the seed comes too late to show it).
		c2001 := genChain(t, dir, "c2001t.json", "random", "--seed", "1", "--stages", "2001")
		for _, mem := range []string{"500MiB", "2GiB"} {
			code, out, stderr, wall := timed("certify", "--chain", c2001, "--mem", mem, "--bandwidth", "12GB/s", "--time-limit", "5", "--json")
			require.Equal(t, 0, code, stderr)
			withinLimit(t, "certify at "+mem, 5, wall)
			leversWithinShares(t, out, " at "+mem)
		}
	})
	t.Run("pipeline", func(t *testing.T) {
		// On 2001 stages the store-all costs of every part were built one by one (O(L³)), the
		// baselines ran without the limit and the stopped planner completed its seed without
		// it: a minute and more past --time-limit 2. Each row now says what stopped it.
		c2001 := genChain(t, dir, "c2001.json", "random", "--seed", "1", "--stages", "2001")
		for _, algo := range []string{"exact", "uniform"} {
			code, out, stderr, wall := timed("pipeline", "--chain", c2001, "--gpus", "8", "--micro-batches", "16", "--mem", "64GiB",
				"--bandwidth", "12GB/s", "--algo", algo, "--time-limit", "2", "--json")
			require.Equal(t, 0, code, stderr)
			withinLimit(t, "pipeline --algo "+algo, 2, wall)
			var rep PipelineReport
			require.NoError(t, json.Unmarshal([]byte(out), &rep))
			require.Len(t, rep.Results, 1)
			r := rep.Results[0]
			if algo == "exact" {
				// Stopped, it answers with its seed (completed when found) and says so.
				assert.Contains(t, r.Note, "stopped before the recomputation tables were complete")
			} else {
				assert.False(t, r.Feasible)
				assert.Contains(t, r.Reason, "stopped at the time limit")
			}
			// The store-all DP gets a tenth of the limit: computed, or not and says so.
			assert.True(t, rep.StoreAllMinMemory > 0 || strings.Contains(rep.StoreAllNote, "not computed"), rep.StoreAllNote)
		}
		// Every strategy in one run (the packing DP built its part costs in O(L³) too: 12 s).
		code, _, stderr, wall := timed("pipeline", "--chain", c2001, "--gpus", "8", "--micro-batches", "16", "--mem", "64GiB",
			"--bandwidth", "12GB/s", "--algo", "all", "--time-limit", "2", "--json")
		require.Equal(t, 0, code, stderr)
		withinLimit(t, "pipeline --algo all", 2, wall)
		// The sweep gave its baselines no limit (more than ten minutes for --time-limit 2), and
		// `--algo all` gave each strategy the whole limit, so that the uniform split's part
		// tables took all of it and the exact search found nothing even with 20 s.
		code, _, stderr, wall = timed("pipeline", "--chain", c2001, "--gpus", "8", "--micro-batches", "16", "--mem", "64GiB",
			"--bandwidth", "12GB/s", "--time-limit", "2", "--sweep", filepath.Join(dir, "sweep2001"))
		require.Equal(t, 0, code, stderr)
		withinLimit(t, "pipeline --sweep", 2, wall)
		// 20 001 stages: the exact planner's L² tables (14.9 GiB) were refused with exit 1
		// after PipeDream's O(P·L²) planner and the equal-time split's O(P·L²) scan had run
		// 14 s past the limit. The refusal is a row now, PipeDream's planner obeys the limit,
		// the split is O(P·L·log L), and the fill-drain bound left out says so.
		code, out, stderr, wall := timed("pipeline", "--chain", c20k, "--gpus", "8", "--micro-batches", "16", "--mem", "64GiB",
			"--bandwidth", "12GB/s", "--algo", "all", "--time-limit", "2", "--json")
		require.Equal(t, 0, code, stderr)
		withinLimit(t, "pipeline --algo all (20 001 stages)", 2, wall)
		var rep PipelineReport
		require.NoError(t, json.Unmarshal([]byte(out), &rep))
		require.Len(t, rep.Results, len(leverpl.Names()))
		for _, r := range rep.Results {
			if r.Algo == "exact" {
				assert.Contains(t, r.Reason, "not run: ")
				assert.Contains(t, r.Reason, "--max-memory")
			}
			if !r.Feasible {
				assert.NotEmpty(t, r.Reason, "%s: a row without a plan says why", r.Algo)
			}
		}
		require.Len(t, rep.BoundNotes, 1)
		assert.Contains(t, rep.BoundNotes[0], "fill-drain: not computed")
	})
	t.Run("remat", func(t *testing.T) {
		// --time-limit stopped only --algo ilp. C_MP with 2000 slots on 401 stages took tens of
		// seconds then and takes 1.3 s now (an idle 2-core machine; it passed a 2 s limit once):
		// the limit is a fifth of that. Stopped, it says so on one line (exit 1: no sequence, no
		// wrong one).
		code, out, stderr, wall := timed("remat", "--chain", c401, "--mem", "1GiB", "--slots", "2000", "--time-limit", "0.25")
		assert.Equal(t, 1, code, stderr)
		assert.Empty(t, out)
		withinLimit(t, "remat --algo persistent", 0.25, wall)
		assert.Contains(t, stderr, "stopped at the time limit (--time-limit 0.25)")
		assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	})
	t.Run("relaxation MILP", func(t *testing.T) {
		if _, err := milp.Lookup("highs"); err != nil {
			t.Skip("needs HiGHS")
		}
		d121 := genChain(t, dir, "d121.json", "zoo", "densenet", "--depth", "121")
		code, _, stderr, wall := timed("remat-offload", "--chain", d121, "--mem", "3GiB", "--bandwidth", "12GB/s", "--time-limit", "4")
		require.Equal(t, 0, code, stderr)
		withinLimit(t, "remat-offload's relaxation MILP", 4, wall)
	})
}
