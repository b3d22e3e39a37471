package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
	leverro "github.com/memsched/memsched/lever/rematoffload"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/combinedlb"
)

// TestRematOffloadToy: the toy case — at 80 MiB rematerialization alone is infeasible
// and activation offloading at 1 GB/s runs in 79.03 ms; every combined strategy returns a
// verified schedule with the JSON keys, pofo's is faster than activation offloading,
// no makespan is below Σu, and the schedule passes memsched verify with the same makespan.
func TestRematOffloadToy(t *testing.T) {
	code, _, stderr := run(t, "remat", "--mem", "80MiB")
	require.Equal(t, 0, code, stderr)
	code, out, stderr := run(t, "remat", "--mem", "80MiB", "--json")
	require.Equal(t, 0, code, stderr)
	var rm RematReport
	require.NoError(t, json.Unmarshal([]byte(out), &rm))
	require.False(t, rm.Feasible, "remat alone fits 80 MiB?")

	code, out, stderr = run(t, "remat-offload", "--mem", "80MiB", "--bandwidth", "1GB/s", "--algo", "all", "--json")
	require.Equal(t, 0, code, stderr)
	var raw map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &raw))
	require.Contains(t, raw, "lower_bounds")
	results := raw["results"].([]any)
	require.Len(t, results, len(leverro.Strategies))
	for _, r := range results {
		m := r.(map[string]any)
		for _, k := range []string{"algo", "feasible", "model_makespan", "makespan", "peak_memory", "offloaded", "verified", "schedule"} {
			assert.Contains(t, m, k)
		}
	}
	var rep ComboReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, "global", rep.LowerBounds.SumU.Scope)
	assert.Equal(t, "class", rep.LowerBounds.Class.Scope)
	assert.Nil(t, rep.LowerBounds.Class.Value) // slots: no class bound
	assert.InDelta(t, 37.38e-3, *rep.LowerBounds.SumU.Value, 1e-5)
	for _, r := range rep.Results {
		require.True(t, r.Feasible, r.Algo)
		assert.True(t, r.Verified)
		assert.GreaterOrEqual(t, *r.Makespan, *rep.LowerBounds.SumU.Value)
		assert.LessOrEqual(t, r.Peak, int64(80)<<20)
		if r.Algo == "pofo" {
			assert.Less(t, *r.Makespan, 79.03e-3, "pofo against activation offloading alone")
			assert.Positive(t, r.Offloaded)
			require.NotNil(t, r.DP)
			assert.Equal(t, "restricted", r.DP.Inner)
		}
	}
	// The exhaustive search passes its 512 Ki configurations here: what it proved by then is
	// the best global bound, above the link credit's, and says it is not the optimum.
	ex := rep.LowerBounds.Exhaustive
	require.NotNil(t, ex)
	require.NotNil(t, ex.Value, ex.Note)
	require.NotNil(t, rep.LowerBounds.LinkCredit.Value)
	assert.Greater(t, *ex.Value, *rep.LowerBounds.LinkCredit.Value)
	assert.Equal(t, "exhaustive", rep.LowerBounds.BestBy)
	assert.Contains(t, ex.CertifiedBy, "not the optimum")
	assert.Contains(t, ex.Note, "proven so far")
	// The pofo schedule through memsched verify.
	code, out, stderr = run(t, "remat-offload", "--mem", "80MiB", "--bandwidth", "1GB/s", "--json")
	require.Equal(t, 0, code, stderr)
	path := filepath.Join(t.TempDir(), "c.json")
	require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
	code, vout, stderr := run(t, "verify", "--problem", "remat-offload", "--mem", "80MiB", "--bandwidth", "1GB/s", "--schedule", path, "--json")
	require.Equal(t, 0, code, stderr)
	var vr VerifyReport
	require.NoError(t, json.Unmarshal([]byte(vout), &vr))
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.True(t, vr.Valid)
	assert.InDelta(t, *rep.Results[0].Makespan, vr.Makespan, 1e-12)
	// One byte less than its peak: the first violation, with its time.
	code, vout, _ = run(t, "verify", "--problem", "remat-offload", "--mem", "79MiB", "--bandwidth", "1GB/s", "--schedule", path)
	assert.Equal(t, 1, code)
	assert.Contains(t, vout, "rule memory")
}

// TestRematOffloadExact: SPEC §6 case E as a chain file in bytes and seconds: with --slots
// exact the DP's fluid makespan is 11 s, its strict schedule validates, the class bound (no
// idle at the turn) is given, at most 11 s, marked as bounding the class only, and the
// exhaustive search proves 11 s the optimum of every strict schedule.
func TestRematOffloadExact(t *testing.T) {
	path := filepath.Join(t.TempDir(), "e.json")
	require.NoError(t, instances.SaveChain(path, instances.SpecCombinedE()))
	code, out, stderr := run(t, "remat-offload", "--chain", path, "--mem", "12B", "--bandwidth", "2B/s", "--slots", "exact", "--json")
	require.Equal(t, 0, code, stderr)
	var rep ComboReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	r := rep.Results[0]
	require.True(t, r.Feasible)
	assert.InDelta(t, 11, *r.ModelMakespan, 1e-12)
	assert.InDelta(t, 11, *r.Makespan, 1e-12)
	assert.True(t, r.DP.Exact)
	require.NotNil(t, rep.LowerBounds.Class.Value)
	assert.LessOrEqual(t, *rep.LowerBounds.Class.Value, 11.0)
	assert.Contains(t, rep.LowerBounds.Class.CertifiedBy, "class only")
	// 4 stages: the exhaustive search of strict schedules proves 11 s optimal (global).
	require.NotNil(t, rep.LowerBounds.Exhaustive)
	require.NotNil(t, rep.LowerBounds.Exhaustive.Value, rep.LowerBounds.Exhaustive.Note)
	assert.InDelta(t, 11, *rep.LowerBounds.Exhaustive.Value, 1e-12)
	assert.InDelta(t, 11, rep.LowerBounds.Best, 1e-12)
	assert.Equal(t, "exhaustive", rep.LowerBounds.BestBy)
	if realMILPBackend() {
		// The relaxation of every strict schedule (milp/combinedlb): 10 s, between Σu = 9 and 11.
		require.NotNil(t, rep.LowerBounds.MILP)
		require.NotNil(t, rep.LowerBounds.MILP.Value)
		assert.InDelta(t, 10, *rep.LowerBounds.MILP.Value, 1e-6)
		assert.Equal(t, "global", rep.LowerBounds.MILP.Scope)
	} else {
		assert.Nil(t, rep.LowerBounds.MILP)
	}
	if realMILPBackend() {
		// The exported relaxation, solved by cbc from the file alone: the same 10 s.
		file := filepath.Join(t.TempDir(), "e.lp")
		code, _, stderr := run(t, "export", "--problem", "remat-offload", "--chain", path, "--mem", "12B", "--bandwidth", "2B/s", "--format", "lp", "-o", file)
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, stderr, "memsched units:")
		if _, err := exec.LookPath("cbc"); err == nil {
			out, err := exec.Command("cbc", file, "-ratio", "1e-9", "-solve", "-quit").CombinedOutput()
			require.NoError(t, err)
			m := regexp.MustCompile(`Objective value:\s+(\S+)`).FindSubmatch(out)
			require.NotNil(t, m, string(out))
			obj, err := strconv.ParseFloat(string(m[1]), 64)
			require.NoError(t, err)
			f, err := combinedlb.Build(instances.SpecCombinedE(), 12, 2)
			require.NoError(t, err)
			assert.InDelta(t, 10, obj*f.Units.Time, 1e-6)
		}
	}
	code, text, stderr := run(t, "remat-offload", "--chain", path, "--mem", "12B", "--bandwidth", "2B/s", "--slots", "exact")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, text, "pofo (exact)")
	// Below the smallest budget: a result, not an error.
	code, out, stderr = run(t, "remat-offload", "--chain", path, "--mem", "5B", "--bandwidth", "2B/s", "--slots", "exact", "--json")
	require.Equal(t, 0, code, stderr)
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.False(t, rep.Results[0].Feasible)
}

// TestRematOffloadBadInput: usage errors exit 2 with one line naming the flag (more in
// testdata/bad-inputs.txt).
func TestRematOffloadBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"remat-offload", "--mem", "80MiB"}, "--bandwidth"},
		{[]string{"remat-offload", "--mem", "80MiB", "--bandwidth", "1GB/s", "--algo", "magic"}, `unknown --algo "magic"`},
		{[]string{"remat-offload", "--mem", "80MiB", "--bandwidth", "1GB/s", "--slots", "0"}, "--slots"},
		{[]string{"remat-offload", "--mem", "80MiB", "--bandwidth", "1GB/s", "--inner", "maybe"}, "--inner"},
		{[]string{"remat-offload", "--mem", "80MiB", "--bandwidth", "fast"}, "--bandwidth"},
	} {
		code, _, stderr := run(t, tc.args...)
		assert.Equal(t, 2, code, "%v: %s", tc.args, stderr)
		assert.Contains(t, stderr, tc.want, "%v", tc.args)
	}
}

// TestRematOffloadLimits: --time-limit covers the whole command — a DP still searching at the
// end of its share stops and its row says so, the heuristics have a verified schedule or say
// that their share ended first, and the MILP says it was not run — and --max-memory caps the relaxation MILP's model, which is
// then reported as not run with its size, not built.
func TestRematOffloadLimits(t *testing.T) {
	if _, err := milp.Lookup("highs"); err != nil {
		t.Skip("needs HiGHS")
	}
	path := filepath.Join(t.TempDir(), "g60.json")
	code, _, stderr := run(t, "gen", "zoo", "gpt2", "--layers", "60", "-o", path)
	require.Equal(t, 0, code, stderr)
	code, out, stderr := run(t, "remat-offload", "--chain", path, "--mem", "160GiB", "--bandwidth", "12GB/s", "--algo", "all", "--time-limit", "0.5", "--json")
	require.Equal(t, 0, code, stderr)
	var rep ComboReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Results, len(leverro.Strategies))
	assert.False(t, rep.Results[0].Feasible)
	assert.Contains(t, rep.Results[0].Note, "stopped at the end of its share of --time-limit")
	for _, r := range rep.Results[1:] {
		// Bound by the time limit too (each its share of it): a verified schedule — the
		// best found before its share ended, if it says so — or stopped without one.
		assert.True(t, r.Feasible && r.Verified || strings.Contains(r.Note, "stopped at the end of its share of --time-limit"), "%s: %s", r.Algo, r.Note)
	}
	require.NotNil(t, rep.LowerBounds.MILP)
	assert.Nil(t, rep.LowerBounds.MILP.Value)
	assert.Contains(t, rep.LowerBounds.MILP.CertifiedBy, "not run")

	// 256 KiB: the DP's table fits (it keeps --max-memory too), the MILP's model does not.
	code, out, stderr = run(t, "remat-offload", "--mem", "80MiB", "--bandwidth", "1GB/s", "--max-memory", "256KiB", "--json")
	require.Equal(t, 0, code, stderr)
	rep = ComboReport{}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.NotNil(t, rep.LowerBounds.MILP)
	assert.Nil(t, rep.LowerBounds.MILP.Value)
	assert.Contains(t, rep.LowerBounds.MILP.CertifiedBy, "above the memory limit of 256.00 KiB (--max-memory)")
	assert.True(t, rep.Results[0].Verified)
}

// TestRematOffloadNeverSlowerThanRemat: `gen random --seed 120 --stages 7 --integer --max-size
// 200 --max-time 10`, then `remat-offload --mem 913B --bandwidth 8B/s --slots N`: pofo is at
// most rematerialization alone (`remat --algo persistent --slots exact`, 75 s) at every N;
// it was 86.25 s with 50 and 100 slots (issue 29), and its note says what the schedule is.
func TestRematOffloadNeverSlowerThanRemat(t *testing.T) {
	dir := t.TempDir()
	chain := filepath.Join(dir, "c120.json")
	code, _, stderr := run(t, "gen", "random", "--seed", "120", "--stages", "7", "--integer", "--max-size", "200", "--max-time", "10", "-o", chain)
	require.Equal(t, 0, code, stderr)
	code, out, stderr := run(t, "remat", "--chain", chain, "--mem", "913B", "--algo", "persistent", "--slots", "exact", "--json")
	require.Equal(t, 0, code, stderr)
	var rm RematReport
	require.NoError(t, json.Unmarshal([]byte(out), &rm))
	require.True(t, rm.Feasible)
	for _, slots := range []string{"50", "100", "200", "exact"} {
		code, out, stderr := run(t, "remat-offload", "--chain", chain, "--mem", "913B", "--bandwidth", "8B/s", "--slots", slots, "--no-milp", "--json")
		require.Equal(t, 0, code, stderr)
		var rep ComboReport
		require.NoError(t, json.Unmarshal([]byte(out), &rep))
		require.True(t, rep.Results[0].Feasible)
		assert.LessOrEqual(t, *rep.Results[0].Makespan, rm.Makespan*(1+1e-12), "--slots %s", slots)
	}
}

// TestRematOffloadPlansForSlowerLinks: on the chain above (913 B, 8 B/s), pofo's plan for 8 B/s
// re-times to 75 s under strict timing; it also plans for slower links (leverro.SlowerLinks) and
// its plan for 5.6 B/s re-times, at 8 B/s, to 73 s — the optimum of every strict schedule
// (the exhaustive search's bound, printed beside it); the note names the rate. With
// --no-polish the plan for 8 B/s is reported as it is.
func TestRematOffloadPlansForSlowerLinks(t *testing.T) {
	chain := filepath.Join(t.TempDir(), "c120.json")
	code, _, stderr := run(t, "gen", "random", "--seed", "120", "--stages", "7", "--integer", "--max-size", "200", "--max-time", "10", "-o", chain)
	require.Equal(t, 0, code, stderr)
	pofo := func(extra ...string) (ComboResult, ComboReport) {
		code, out, stderr := run(t, append([]string{"remat-offload", "--chain", chain, "--mem", "913B", "--bandwidth", "8B/s", "--algo", "pofo", "--no-milp", "--json"}, extra...)...)
		require.Equal(t, 0, code, stderr)
		var rep ComboReport
		require.NoError(t, json.Unmarshal([]byte(out), &rep))
		require.True(t, rep.Results[0].Feasible, rep.Results[0].Note)
		require.True(t, rep.Results[0].Verified)
		return rep.Results[0], rep
	}
	r, rep := pofo()
	assert.Equal(t, 73.0, *r.Makespan)
	assert.Equal(t, "the plan for a 5.6 B/s link, re-timed at 8 B/s: faster under strict timing than the plan for 8 B/s", r.Note)
	require.NotNil(t, rep.LowerBounds.Exhaustive)
	require.NotNil(t, rep.LowerBounds.Exhaustive.Value)
	assert.Equal(t, 73.0, *rep.LowerBounds.Exhaustive.Value, "the optimum of every strict schedule")
	r, _ = pofo("--no-polish")
	assert.Greater(t, *r.Makespan, 73.0, "the plan for 8 B/s as it is")
	assert.NotContains(t, r.Note, "slower")
}

// offloadThenRemat201 runs remat-offload --algo offload-then-remat on `gen random --seed 3
// --stages 201` (one stage past C_FL's tables) at mem, 12 GB/s.
func offloadThenRemat201(t *testing.T, mem string) ComboReport {
	t.Helper()
	chain := filepath.Join(t.TempDir(), "c.json")
	code, _, stderr := run(t, "gen", "random", "--seed", "3", "--stages", "201", "-o", chain)
	require.Equal(t, 0, code, stderr)
	code, out, stderr := run(t, "remat-offload", "--chain", chain, "--mem", mem, "--bandwidth", "12GB/s", "--algo", "offload-then-remat", "--time-limit", "20", "--json")
	require.Equal(t, 0, code, stderr)
	var rep ComboReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	return rep
}

// TestRematOffloadLinkCreditPastItsStages: the link credit's table is C_FL's, at most 200
// stages; past them the bound is "not run" with why, and the command goes on (on a
// 400-stage chain `remat-offload --algo all` exited 1 with "link credit: dp: floating: 400
// stages is too many … use the persistent algorithm").
func TestRematOffloadLinkCreditPastItsStages(t *testing.T) {
	rep := offloadThenRemat201(t, "400MiB")
	require.True(t, rep.Results[0].Feasible, "offload-then-remat has a schedule: %s", rep.Results[0].Note)
	require.NotNil(t, rep.LowerBounds.LinkCredit)
	assert.Nil(t, rep.LowerBounds.LinkCredit.Value)
	assert.Equal(t, "not run: its C_FL table takes at most 200 stages, the chain has 201", rep.LowerBounds.LinkCredit.Note)
}

// TestRematOffloadSkipsBoundsAtSumU: where a verified schedule meets Σ(u_f+u_b) it is optimal,
// and the slower bounds are not run, each saying so (on 2001 stages the relaxation MILP took
// 13 s to find its model too large after sequence-offload had met Σu in 0.3 s).
func TestRematOffloadSkipsBoundsAtSumU(t *testing.T) {
	rep := offloadThenRemat201(t, "1GiB")
	require.True(t, rep.Results[0].Feasible, rep.Results[0].Note)
	assert.InDelta(t, *rep.LowerBounds.SumU.Value, *rep.Results[0].Makespan, 1e-9**rep.LowerBounds.SumU.Value)
	require.NotNil(t, rep.LowerBounds.LinkCredit)
	assert.Nil(t, rep.LowerBounds.LinkCredit.Value)
	assert.Equal(t, "not run: a verified schedule meets Σ(u_f+u_b), proven optimal", rep.LowerBounds.LinkCredit.Note)
	require.NotNil(t, rep.LowerBounds.Kept)
	assert.Nil(t, rep.LowerBounds.Kept.Value)
	assert.Equal(t, "not run: a verified schedule meets Σ(u_f+u_b), proven optimal", rep.LowerBounds.Kept.Note)
	if rep.LowerBounds.MILP != nil {
		assert.Nil(t, rep.LowerBounds.MILP.Value)
		assert.Contains(t, rep.LowerBounds.MILP.CertifiedBy, "not run: a verified schedule meets Σ(u_f+u_b)")
	}
}

// TestRematOffloadThinnedLinkCredit: the link credit's first table is thinned
// (dp.LinkCreditThinOfSumU); where its bound meets the fastest result it is the bound and the
// exact table is not built — ResNet-101 at 75 %, 12 GB/s, where pofo's 191.77 ms is optimal
// (docs/combined-zoo.tsv); on the toy chain at 80 MiB the thinned bound (41.18 ms) is below
// pofo's 67.30 ms and the exact table, with whole tensors and the recomputation (dp/recompute.go),
// gives 43.62 ms (41.18 ms before the recomputation was counted).
func TestRematOffloadThinnedLinkCredit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r101.json")
	code, _, stderr := run(t, "gen", "zoo", "resnet", "--depth", "101", "-o", path)
	require.Equal(t, 0, code, stderr)
	code, out, stderr := run(t, "remat-offload", "--chain", path, "--mem", "3293151232B", "--bandwidth", "12GB/s", "--algo", "pofo", "--no-milp", "--json")
	require.Equal(t, 0, code, stderr)
	var rep ComboReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.True(t, rep.Results[0].Feasible, rep.Results[0].Note)
	lc := rep.LowerBounds.LinkCredit
	require.NotNil(t, lc)
	require.NotNil(t, lc.Value, lc.Note)
	assert.InDelta(t, *rep.Results[0].Makespan, *lc.Value, 1e-9**lc.Value)
	assert.Contains(t, lc.Note, "thinned table (frontiers within")
	assert.Contains(t, lc.Note, "it meets the fastest schedule at hand")
	require.NotNil(t, rep.LowerBounds.Kept)
	assert.Equal(t, "not run: the fastest result meets the link_credit bound", rep.LowerBounds.Kept.Note)

	code, out, stderr = run(t, "remat-offload", "--mem", "80MiB", "--bandwidth", "1GB/s", "--algo", "pofo", "--no-milp", "--json")
	require.Equal(t, 0, code, stderr)
	rep = ComboReport{}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	lc = rep.LowerBounds.LinkCredit
	require.NotNil(t, lc)
	require.NotNil(t, lc.Value, lc.Note)
	// Within the whole-tensor bisection's 10⁻⁶; 43.62 ms before the backwards had their own
	// credits (issue 31's stop of 2026-11-29, evening).
	assert.InDelta(t, 0.0447040, *lc.Value, 1e-6*0.0447)
	assert.Contains(t, lc.Note, "C_FL with phase budgets (31 breakpoints)")
	assert.Contains(t, lc.Note, "the exact fluid table pruned at")
}

// TestRematOffloadQuickFirst: RunRematOffload runs the quick heuristics first and hands their
// fastest verified makespan to the work started beside the others (the link credit) before
// pofo and sequence-offload, which then get half the memory limit; the rows keep the order
// asked for. Without quick heuristics nothing is started beside them.
func TestRematOffloadQuickFirst(t *testing.T) {
	c := instances.Toy()
	const budget, beta = 80 << 20, 1e9
	algos := []string{"pofo", "remat-then-offload", "offload-then-remat", "sequence-offload"}
	var uppers []float64
	rep, err := RunRematOffload(c, "toy", budget, beta, algos, leverro.Options{MaxMemory: 1 << 30}, func(upper float64) bool {
		uppers = append(uppers, upper)
		return true
	})
	require.NoError(t, err)
	got := make([]string, len(rep.Results))
	for i, r := range rep.Results {
		got[i] = r.Algo
	}
	assert.Equal(t, algos, got, "the rows in the order asked for")
	require.Len(t, uppers, 1)
	quick := min(*rep.Results[1].Makespan, *rep.Results[2].Makespan)
	assert.Equal(t, quick, uppers[0], "the quick heuristics' fastest, before pofo")
	assert.InDelta(t, 0.06730, uppers[0], 1e-5) // remat-then-offload's 67.30 ms (README)

	uppers = nil
	_, err = RunRematOffload(c, "toy", budget, beta, []string{"pofo", "sequence-offload"}, leverro.Options{}, func(upper float64) bool {
		uppers = append(uppers, upper)
		return true
	})
	require.NoError(t, err)
	assert.Empty(t, uppers, "no quick heuristic: the credit runs after the algorithms")
}

// TestRematOffloadKeptBound: the command computes the kept-activation bound as certify does —
// Inception v3 (`gen zoo inception`) at 75 % of the way from remat's smallest budget to the
// store-all peak, 12 GB/s, where no other bound rises above Σu (139.74 ms): it reaches
// 142.11 ms, becomes the ratios' reference and names itself; the fastest result, 142.28 ms
// (sequence-offload), is 0.12 % over it, and pofo's alone 0.27 %. Where the fastest result
// meets the bound before it, it is not run, saying so.
func TestRematOffloadKeptBound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inception.json")
	code, _, stderr := run(t, "gen", "zoo", "inception", "-o", path)
	require.Equal(t, 0, code, stderr)
	code, out, stderr := run(t, "remat-offload", "--chain", path, "--mem", "2735017696B", "--bandwidth", "12GB/s", "--algo", "all", "--no-milp", "--json")
	require.Equal(t, 0, code, stderr)
	var rep ComboReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	kb := rep.LowerBounds.Kept
	require.NotNil(t, kb)
	require.NotNil(t, kb.Value, kb.Note)
	assert.Equal(t, "global", kb.Scope)
	assert.InDelta(t, 142.11e-3, *kb.Value, 0.01e-3)
	assert.Greater(t, *kb.Value, *rep.LowerBounds.LinkCredit.Value*(1+1e-3), "above the link credit")
	assert.Equal(t, "kept_activations", rep.LowerBounds.BestBy)
	assert.Equal(t, *kb.Value, rep.LowerBounds.Best)
	assert.InDelta(t, 142.28e-3, comboUpper(&rep), 0.01e-3)
	code, text, stderr := run(t, "remat-offload", "--chain", path, "--mem", "2735017696B", "--bandwidth", "12GB/s", "--no-milp")
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `bound kept \(global\)\s+142\.11 ms`, text)
	assert.Contains(t, text, "+0.27%")

	// The toy chain at 90 MiB, 1 GB/s: nothing above the link credit (the exhaustive search,
	// after it, proves pofo optimal); its value is then null and its note says so.
	code, out, stderr = run(t, "remat-offload", "--mem", "90MiB", "--bandwidth", "1GB/s", "--no-milp", "--json")
	require.Equal(t, 0, code, stderr)
	rep = ComboReport{}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.NotNil(t, rep.LowerBounds.Kept)
	assert.Nil(t, rep.LowerBounds.Kept.Value)
	assert.Contains(t, rep.LowerBounds.Kept.Note, "no higher than the bounds before it (")
	assert.Equal(t, "exhaustive", rep.LowerBounds.BestBy)
}
