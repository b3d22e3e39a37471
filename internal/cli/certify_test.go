package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/report"
)

func certifyJSON(t *testing.T, args ...string) *report.Report {
	t.Helper()
	code, out, stderr := run(t, append([]string{"certify", "--json"}, args...)...)
	require.Equal(t, 0, code, stderr)
	var rep report.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	for _, name := range report.LeverNames {
		require.Contains(t, rep.Levers, name, "every lever is listed, run or skipped")
	}
	return &rep
}

func rowsByName(lr *report.LeverReport) map[string]report.Row {
	got := map[string]report.Row{}
	for _, r := range lr.Rows {
		got[r.Strategy] = r
	}
	return got
}

// TestCertifyToy: the main job on the built-in instance — the exhaustive optimum 47.42 ms,
// met by C_FL with sizes rounded down (a DP-certified bound), certifies floating and
// persistent as optimal and revolve at 1.1611.
func TestCertifyToy(t *testing.T) {
	rep := certifyJSON(t)
	lr := rep.Levers["remat"]
	assert.Empty(t, lr.Skipped)
	assert.True(t, lr.Optimal)
	assert.InDelta(t, 0.04742, lr.BestBound, 1e-12)
	var dpBound bool
	for _, b := range lr.Bounds {
		if b.Kind == report.DPRelaxation || b.Kind == report.DPOptimal {
			dpBound = true
			assert.InDelta(t, 0.04742, b.Value, 1e-12, "the DP certifies the optimum itself")
		}
		if b.Kind == report.Exhaustive {
			assert.InDelta(t, 0.04742, b.Value, 1e-12)
		}
	}
	assert.True(t, dpBound, "a bound certified by the DP")
	got := rowsByName(lr)
	for _, r := range lr.Rows {
		assert.True(t, r.Verified || !r.Feasible, r.Strategy)
	}
	assert.InDelta(t, 0.04742, got["floating"].Makespan, 1e-12)
	assert.InDelta(t, 0.04742, got["persistent"].Makespan, 1e-12)
	assert.InDelta(t, 1, got["floating"].Ratio, 1e-12)
	assert.InDelta(t, 1, got["persistent"].Ratio, 1e-12)
	assert.InDelta(t, 0.05506/0.04742, got["revolve"].Ratio, 1e-9)
	assert.False(t, got["sequential"].Feasible)
	assert.False(t, got["store-all"].Feasible)
	assert.Contains(t, rep.Levers["weight-offload"].Skipped, "bandwidth", "no --bandwidth: skipped with a reason")
	assert.NotEmpty(t, rep.Levers["act-offload"].Skipped)
}

// TestCertifyLargeChain: beyond the exhaustive search, the exact C_FL table in bytes certifies
// the optimum (ResNet-50, batch 8, at 700 MiB) and its sequence is the floating row; with its
// frontiers capped below their size the optimum is bracketed instead, between a certified lower
// bound (sizes rounded down) and the best sequence (sizes rounded up), and a note says the exact
// table was out of reach. The weight lever runs with a bandwidth and is bounded by at least Σu.
func TestCertifyLargeChain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r50.json")
	code, _, stderr := run(t, "gen", "zoo", "resnet", "--depth", "50", "--batch", "8", "-o", path)
	require.Equal(t, 0, code, stderr)
	exact := certifyJSON(t, "--chain", path, "--mem", "700MiB", "--slots", "200")
	el := exact.Levers["remat"]
	assert.Equal(t, "C_FL collapsed", el.BestBoundBy, "met by exact C_MP: no C_FL table needed")
	assert.True(t, el.Optimal)
	assert.InDelta(t, el.BestBound, el.BestAt, 1e-12*el.BestAt)
	for _, r := range el.Rows {
		if r.Strategy == "floating" {
			assert.InDelta(t, 1, r.Ratio, 1e-12, "the proven optimal sequence is the floating row")
		}
	}

	rep := certifyJSON(t, "--chain", path, "--mem", "700MiB", "--slots", "200", "--max-breakpoints", "2",
		"--bandwidth", "12GB/s", "--time-limit", "5")
	lr := rep.Levers["remat"]
	if !lr.Optimal {
		assert.Contains(t, strings.Join(lr.Notes, "\n"), "out of reach", "a cap that matters says so")
	}
	assert.Greater(t, lr.BestBound, 0.0)
	assert.LessOrEqual(t, lr.BestBound, el.BestBound*(1+1e-12), "the bracket holds the exact optimum")
	assert.GreaterOrEqual(t, lr.BestAt, el.BestAt*(1-1e-12))
	assert.LessOrEqual(t, lr.BestBound, lr.BestAt*(1+1e-12))
	assert.Equal(t, lr.BestAt <= lr.BestBound*(1+1e-9), lr.Optimal, "optimal exactly when a sequence meets the bound")
	for _, r := range lr.Rows {
		if r.Feasible {
			assert.GreaterOrEqual(t, r.Ratio, 1.0-1e-12, r.Strategy)
			assert.True(t, r.Verified, r.Strategy)
		}
	}
	wl := rep.Levers["weight-offload"]
	require.Empty(t, wl.Skipped)
	assert.Equal(t, "period", wl.Measure)
	require.NotEmpty(t, wl.Bounds)
	for _, r := range wl.Rows {
		if r.Feasible {
			assert.GreaterOrEqual(t, r.Ratio, 1.0-1e-9, r.Strategy)
		}
	}
}

// TestCertifyBeyondFloating: 337 stages is above C_FL's limit (was: "dp: floating: 337 stages
// is too many"); C_FL collapsed, with C_MP's rows, still proves exact C_MP optimal (ResNet-1001,
// batch 8, at 512 MiB: 10.13 ms, where Σ(u_f+u_b) says 9.12 ms).
func TestCertifyBeyondFloating(t *testing.T) {
	if testing.Short() {
		t.Skip("ResNet-1001 DP tables take seconds")
	}
	path := filepath.Join(t.TempDir(), "r1001.json")
	code, _, stderr := run(t, "gen", "zoo", "resnet", "--depth", "1001", "--batch", "8", "-o", path)
	require.Equal(t, 0, code, stderr)
	rep := certifyJSON(t, "--chain", path, "--mem", "512MiB", "--slots", "100")
	lr := rep.Levers["remat"]
	assert.True(t, lr.Optimal)
	assert.Equal(t, "C_FL collapsed", lr.BestBoundBy)
	assert.InDelta(t, 0.010126, lr.BestBound, 1e-6)
	assert.Equal(t, "persistent", lr.Best)
}

func TestCertifyInfeasible(t *testing.T) {
	code, out, _ := run(t, "certify", "--mem", "60MiB")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "infeasible")
	rep := certifyJSON(t, "--mem", "60MiB")
	assert.True(t, rep.Levers["remat"].Infeasible)
	code, _, stderr := run(t, "certify", "--mem", "lots")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "--mem")
}

// TestCertifyResNet101Closed: ResNet-101 (224, batch 32) at 2 GiB — the bracket was
// [203.82, 205.60] ms with 500 slots; C_FL collapsed in bytes closes it at 205.60 ms (exact C_MP
// is optimal), and so does, when the exact tables are capped, the chain-exact MILP (with a
// backend: 0.5 s) or refining the slotted C_FL within the time limit (without one).
func TestCertifyResNet101Closed(t *testing.T) {
	if testing.Short() {
		t.Skip("two C_FL tables of 1000 slots")
	}
	path := filepath.Join(t.TempDir(), "r101.json")
	code, _, stderr := run(t, "gen", "zoo", "resnet", "--depth", "101", "--batch", "32", "-o", path)
	require.Equal(t, 0, code, stderr)
	rep := certifyJSON(t, "--chain", path, "--mem", "2GiB")
	lr := rep.Levers["remat"]
	assert.True(t, lr.Optimal, "closed")
	assert.InDelta(t, 0.20560, lr.BestAt, 5e-6)
	assert.Equal(t, "C_FL collapsed", lr.BestBoundBy)

	rep = certifyJSON(t, "--chain", path, "--mem", "2GiB", "--max-breakpoints", "2")
	lr = rep.Levers["remat"]
	assert.True(t, lr.Optimal, "closed by the MILP (with a backend) or by refining the slots")
	assert.InDelta(t, 0.20560, lr.BestAt, 5e-6)
	assert.Greater(t, lr.BestBound, 0.20382)
	assert.True(t, strings.Contains(lr.BestBoundBy, "C_FL floored") || strings.Contains(lr.BestBoundBy, "MILP (chain-exact"), lr.BestBoundBy)
}

// TestCertifyILP: with a MILP backend, certify solves the chain-exact MILP. On the toy chain
// (a cross-check) it agrees with the DP at 47.42 ms; on a 16-stage GiB-scale random chain with
// the exact C_FL table capped and 20 slots, the slotted DPs leave the bracket
// [216.93, 283.14] ms open and the MILP closes it at the optimum found by an uncapped run.
func TestCertifyILP(t *testing.T) {
	if s, err := milp.Lookup(""); err != nil || s.Name() == "ref" {
		t.Skip("no MILP backend that solves real models in this build")
	}
	toy := certifyJSON(t, "--mem", "90MiB")
	rows := rowsByName(toy.Levers["remat"])
	require.Contains(t, rows, "ilp")
	assert.InDelta(t, 0.04742, rows["ilp"].Makespan, 1e-12)
	assert.True(t, rows["ilp"].Verified)

	path := filepath.Join(t.TempDir(), "r16.json")
	code, _, stderr := run(t, "gen", "random", "--stages", "16", "--max-size", "2GiB", "--seed", "7", "-o", path)
	require.Equal(t, 0, code, stderr)
	exact := certifyJSON(t, "--chain", path, "--mem", "12GiB")
	require.True(t, exact.Levers["remat"].Optimal)
	require.Contains(t, []string{"C_FL exact", "C_FL collapsed"}, exact.Levers["remat"].BestBoundBy)
	opt := exact.Levers["remat"].BestBound

	rep := certifyJSON(t, "--chain", path, "--mem", "12GiB", "--slots", "20", "--max-breakpoints", "2", "--time-limit", "30")
	lr := rep.Levers["remat"]
	rows = rowsByName(lr)
	assert.Greater(t, rows["persistent"].Makespan, opt*1.01, "the slotted DP alone leaves a gap")
	require.Contains(t, rows, "ilp")
	assert.InDelta(t, opt, rows["ilp"].Makespan, 1e-9*opt)
	assert.True(t, lr.Optimal)
	assert.InDelta(t, opt, lr.BestBound, 1e-9*opt)
	assert.Contains(t, lr.BestBoundBy, "MILP (chain-exact")
}

// TestCertifyWeightsResident: with --weights-resident, --mem is the whole GPU: the remat and
// act-offload levers equal a plain run at --mem minus the chain's weights (a small GPT-2, 58.18
// MiB of weights, MiB-scale activations), the weight-offload lever is unchanged; when the
// weights alone fill --mem, both are infeasible with that reason and weight offloading alone runs.
func TestCertifyWeightsResident(t *testing.T) {
	chain := smallGPT(t)
	code, out, stderr := run(t, "info", "--chain", chain, "--json")
	require.Equal(t, 0, code, stderr)
	var info InfoReport
	require.NoError(t, json.Unmarshal([]byte(out), &info))
	require.Positive(t, info.Weights)
	gpu := info.Weights + info.StoreAllPeak - 1<<20 // activations get 1 MiB under the store-all peak
	res := certifyJSON(t, "--chain", chain, "--mem", fmt.Sprintf("%dB", gpu), "--bandwidth", "1GB/s", "--weights-resident", "--time-limit", "10")
	plain := certifyJSON(t, "--chain", chain, "--mem", fmt.Sprintf("%dB", gpu-info.Weights), "--bandwidth", "1GB/s", "--time-limit", "10")
	whole := certifyJSON(t, "--chain", chain, "--mem", fmt.Sprintf("%dB", gpu), "--bandwidth", "1GB/s", "--time-limit", "10")
	for _, lever := range []string{"remat", "act-offload"} {
		r, p := res.Levers[lever], plain.Levers[lever]
		require.False(t, r.Infeasible, lever)
		assert.InDelta(t, p.BestBound, r.BestBound, 1e-12, lever)
		assert.InDelta(t, p.BestAt, r.BestAt, 1e-12, lever)
		assert.Contains(t, strings.Join(r.Notes, "\n"), "budget for activations", lever)
	}
	assert.InDelta(t, whole.Levers["weight-offload"].BestAt, res.Levers["weight-offload"].BestAt, 1e-12, "weight offloading counts the weights itself")

	small := certifyJSON(t, "--chain", chain, "--mem", fmt.Sprintf("%dB", info.Weights-1), "--bandwidth", "1GB/s", "--weights-resident", "--time-limit", "10")
	for _, lever := range []string{"remat", "act-offload"} {
		assert.True(t, small.Levers[lever].Infeasible, lever)
		assert.Contains(t, strings.Join(small.Levers[lever].Notes, "\n"), "fill the budget", lever)
	}
}

// TestCertifyClassBoundScope (issue 29, wrong answer 1): on `gen random --seed 123 --stages 5
// --integer --max-size 200 --max-time 10` at 920 B and 1 B/s, certify called remat-offload's
// 110 s "optimal (meets the bound)" with the combined DP's class-only bound, while the remat
// lever's floating sequence (99 s) is a strict combined schedule too. The class bound is
// listed with its scope; the ratio, bracket and summary use global bounds only, and say so.
// Store-all's peak above the budget is written in KiB, not "0.00 MiB".
func TestCertifyClassBoundScope(t *testing.T) {
	chain := filepath.Join(t.TempDir(), "c123.json")
	code, _, stderr := run(t, "gen", "random", "--seed", "123", "--stages", "5", "--integer", "--max-size", "200", "--max-time", "10", "-o", chain)
	require.Equal(t, 0, code, stderr)
	args := []string{"certify", "--chain", chain, "--mem", "920B", "--bandwidth", "1B/s", "--time-limit", "10"}
	code, out, stderr := run(t, args...)
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `class optimum, fluid, free turn\s+110\.000 s\s+DP relaxation\s+class only`, out)
	assert.Contains(t, out, "the ratios and the summary use the global bounds only")
	assert.Contains(t, out, "best global bound")
	assert.NotRegexp(t, `remat-offload\s+\S+\s+110\.000 s\s+110\.000 s \(class optimum`, out)
	assert.NotContains(t, out, "0.00 MiB")
	assert.Contains(t, out, "peak 1.24 KiB exceeds the budget")

	code, out, stderr = run(t, append(args, "--json")...)
	require.Equal(t, 0, code, stderr)
	var rep report.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	ro := rep.Levers["remat-offload"]
	require.NotNil(t, ro)
	assert.Equal(t, 99.0, rep.Levers["remat"].BestAt)
	if ro.BestAt > 99 {
		assert.False(t, ro.Optimal, "remat-offload %g s is not optimal: a 99 s schedule of its model exists", ro.BestAt)
	}
	assert.LessOrEqual(t, ro.BestBound, 99.0)
	for _, b := range ro.Bounds {
		if strings.HasPrefix(b.Name, "class optimum") {
			assert.Equal(t, report.Class, b.Scope)
		} else {
			assert.Equal(t, report.Global, b.Scope, b.Name)
		}
	}
}

// TestCertifyNotRunIsNotInfeasible (issue 29, wrong answer 3): with a time limit too short
// for anything, certify's summary said "none fits" for levers that never ran (ResNet-50 at
// 1 GiB, whose smallest feasible budget is 802 MiB). "none fits" is said only where a bound
// proves it (act-offload's fractional relaxation here); a lever stopped by its time share is
// "not run (time)", in the text and in the JSON's outcome.
func TestCertifyNotRunIsNotInfeasible(t *testing.T) {
	chain := filepath.Join(t.TempDir(), "r50.json")
	code, _, stderr := run(t, "gen", "zoo", "resnet", "--depth", "50", "-o", chain)
	require.Equal(t, 0, code, stderr)
	args := []string{"certify", "--chain", chain, "--mem", "1GiB", "--bandwidth", "12GB/s", "--time-limit", "0.001"}
	code, out, stderr := run(t, args...)
	require.Equal(t, 0, code, stderr)
	// remat may find a sequence in the first millisecond or not (the machine's load decides);
	// remat-offload, the last lever, starts after the whole limit is spent.
	summary := out[strings.Index(out, "== summary =="):]
	assert.Regexp(t, `(?m)^act-offload\s+none fits\s+-\s+infeasible \(`, summary)
	assert.Regexp(t, `(?m)^remat-offload\s+not run \(time\)`, summary)
	assert.NotRegexp(t, `(?m)^remat\s+none fits`, summary)

	code, out, stderr = run(t, append(args, "--json")...)
	require.Equal(t, 0, code, stderr)
	var rep report.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	for name, lr := range rep.Levers {
		assert.Equal(t, lr.Infeasible, lr.Outcome == "infeasible", name)
		if lr.Best == "" && !lr.Infeasible && lr.Skipped == "" {
			assert.Equal(t, "not run (time)", lr.Outcome, name)
			assert.True(t, lr.Stopped, name)
		}
	}
	assert.False(t, rep.Levers["remat"].Infeasible)
	assert.Equal(t, "infeasible", rep.Levers["act-offload"].Outcome)
	assert.Equal(t, "not run (time)", rep.Levers["remat-offload"].Outcome)
}

// TestCertifyInfeasibleRowsNotVerified (issue 29, wrong answer 5): the toy chain's store-all
// row at 90 MiB (peak 106.99 MiB) was `"feasible": false, "verified": true` with a makespan;
// a consumer filtering on verified picked an over-budget schedule. A row that does not fit
// carries no makespan and no "verified": true; its peak stays, with the note saying why.
func TestCertifyInfeasibleRowsNotVerified(t *testing.T) {
	code, out, stderr := run(t, "certify", "--json")
	require.Equal(t, 0, code, stderr)
	var rep report.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	seen := false
	for name, lr := range rep.Levers {
		for _, r := range lr.Rows {
			if r.Feasible {
				continue
			}
			assert.False(t, r.Verified, "%s/%s", name, r.Strategy)
			assert.Zero(t, r.Makespan, "%s/%s", name, r.Strategy)
			if name == "remat" && r.Strategy == "store-all" {
				seen = true
				assert.Equal(t, int64(112187147), r.Peak)
				assert.Contains(t, r.Note, "peak 106.99 MiB exceeds the budget")
			}
		}
	}
	assert.True(t, seen, "the store-all row is there")
}
