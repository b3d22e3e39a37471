package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
)

// verifyFile writes text to a file and runs verify on it.
func verifyFile(t *testing.T, text string, args ...string) (int, VerifyReport, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	code, out, stderr := run(t, append([]string{"verify", "--json", "--schedule", path}, args...)...)
	var rep VerifyReport
	if code != 2 {
		require.NoError(t, json.Unmarshal([]byte(out), &rep), out+stderr)
	}
	return code, rep, stderr
}

const storeAllToy = "Fall^1 Fall^2 Fall^3 Fall^4 Fall^5 Fall^6 Fall^7 B^7 B^6 B^5 B^4 B^3 B^2 B^1"

// TestVerifyRematRejects: hand-made wrong sequences on the toy chain, each rejected at the
// right step with the right reason (store-all fits in 110 MiB, not in 90 MiB).
func TestVerifyRematRejects(t *testing.T) {
	cases := []struct {
		name, seq, mem string
		step           int // 1-based; 0: before the first operation
		want           string
	}{
		{"memory overflow: store-all in 90 MiB", storeAllToy, "90MiB", 9, "memory overflow"},
		{"budget below the initial state", storeAllToy, "1MiB", 0, "memory overflow"},
		{"missing dependency: backward first", "B^1", "110MiB", 1, "δ^1 is not stored"},
		{"missing input: F_∅^2 before a^1 exists", "Fn^2", "110MiB", 1, "input a^1 is not stored"},
		{"F_∅ over a stored ā", "Fall^1 Fn^2", "110MiB", 2, "needs a plain a^1"},
		{"recomputing what is stored", "Fall^1 Fall^1", "110MiB", 2, "ā^1 is already stored"},
		{"stage out of range", "Fall^9", "110MiB", 1, "out of range"},
		{"backward without ā (F_ck kept only a)", "Fall^1 Fall^2 Fall^3 Fall^4 Fall^5 Fall^6 Fck^7 B^7", "110MiB", 8, "ā^7 is not stored"},
		{"sequence ends early", "Fall^1 Fall^2 Fall^3 Fall^4 Fall^5 Fall^6 Fall^7 B^7 B^6", "110MiB", 10, "ends before δ^0"},
		{"operation after the end", storeAllToy + " Fall^1", "110MiB", 15, "already complete"},
		{"Del outside the free-delete variant", "Fall^1 Del^1", "110MiB", 2, "free-delete"},
		{"forward behind the gradient", "Fall^1 Fall^2 Fall^3 Fall^4 Fall^5 Fall^6 Fall^7 B^7 Fall^7", "110MiB", 9, "already back-propagated"},
	}
	for _, tc := range cases {
		code, rep, stderr := verifyFile(t, tc.seq, "--problem", "remat", "--mem", tc.mem)
		require.Equal(t, 1, code, "%s: %s", tc.name, stderr)
		assert.False(t, rep.Valid, tc.name)
		require.NotNil(t, rep.Error, tc.name)
		require.NotNil(t, rep.Error.Step, tc.name)
		assert.Equal(t, tc.step, *rep.Error.Step+1, tc.name)
		assert.Contains(t, rep.Error.Reason, tc.want, tc.name)
	}
	// The text output names the step and the operation.
	path := filepath.Join(t.TempDir(), "s.txt")
	require.NoError(t, os.WriteFile(path, []byte("Fall^1 Fn^2"), 0o644))
	code, out, _ := run(t, "verify", "--problem", "remat", "--mem", "90MiB", "--schedule", path)
	assert.Equal(t, 1, code)
	assert.Equal(t, "invalid: step 2 (Fn^2): F_∅^2 needs a plain a^1, but ā^1 is stored\n", out)
}

// TestVerifyWeightsRejects: hand-made wrong periodic schedules on a 3-layer chain (10 B of
// weights per layer, 1 s per operation, 10 B/s: a transfer takes 1 s), each an edit of one of
// two valid schedules, rejected at the right time with the right reason.
func TestVerifyWeightsRejects(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(t, err)
		return string(b)
	}
	resident, off := read("w3-resident.txt"), read("w3-offload.txt")
	cases := []struct {
		name, base, from, to, mem, bw string
		time                          float64
		want                          string
	}{
		{"operations overlap", resident, "op F 2 1", "op F 2 0.5", "100", "10B/s", 0.5, "starts before operation 0 ends"},
		{"operation outside the period", resident, "op B 1 5", "op B 1 5.5", "100", "10B/s", 5.5, "does not fit"},
		{"memory overflow: weights above M_GPU", resident, "", "", "25", "10B/s", 0, "exceeds M_GPU"},
		{"weight not on the GPU", resident, "resident 1 2 3", "resident 1 2", "100", "10B/s", 2, "needs w_3 on the GPU"},
		{"prefetch too late", off, "transfer prefetch 3 1", "transfer prefetch 3 1.5", "100", "10B/s", 2, "needs w_3 on the GPU"},
		{"prefetch of a resident weight", resident, "resident 1 2 3", "resident 1 2 3\ntransfer prefetch 2 0.2", "100", "10B/s", 0.2, "already on the GPU"},
		{"prefetch without a CPU copy", off, "cpu-valid 3", "", "100", "10B/s", 1, "without a current copy on the CPU"},
		{"transfers overlap on a channel", resident, "resident 1 2 3", "resident 1 2 3\ntransfer upload 1 1\ntransfer upload 2 1.5", "100", "10B/s", 1.5, "two transfers overlap"},
		{"offload during the layer's backward", off, "transfer offload 3 4", "transfer offload 3 3.5", "100", "10B/s", 3.5, "during B_3"},
		{"delete without a CPU copy", resident, "resident 1 2 3", "resident 1 2 3\ndelete 1 1.5", "100", "10B/s", 1.5, "without a current copy"},
		{"delete while in use", off, "transfer offload 3 4", "transfer upload 3 4.5\ndelete 3 3.5", "100", "10B/s", 3.5, "while it is in use"},
		{"the period does not close", off, "transfer offload 3 4\n", "", "100", "10B/s", 6, "does not close"},
		{"transfer longer than the period", off, "", "", "100", "1B/s", 1, "does not fit in a period"},
		{"memory overflow during a prefetch", off, "", "", "30", "10B/s", 1, "exceeds M_GPU"},
	}
	for _, tc := range cases { // an empty edit: the fault is in the flags (memory, bandwidth)
		text := tc.base
		if tc.from != "" {
			require.Contains(t, text, tc.from, tc.name)
			text = strings.Replace(text, tc.from, tc.to, 1)
		}
		code, rep, stderr := verifyFile(t, text, "--problem", "weight-offload", "--chain", "testdata/w3.json", "--mem", tc.mem, "--bandwidth", tc.bw)
		require.Equal(t, 1, code, "%s: %s", tc.name, stderr)
		require.NotNil(t, rep.Error, tc.name)
		assert.Contains(t, rep.Error.Reason, tc.want, tc.name)
		require.NotNil(t, rep.Error.Time, tc.name)
		assert.InDelta(t, tc.time, *rep.Error.Time, 1e-9, tc.name)
	}
}

// TestVerifyAcceptsOwnOutput: every schedule memsched prints is accepted, in JSON and in the
// plain formats.
func TestVerifyAcceptsOwnOutput(t *testing.T) {
	dir := t.TempDir()
	for _, mem := range []string{"90MiB", "110MiB"} {
		for _, algo := range rematAlgos {
			code, out, stderr := run(t, "remat", "--mem", mem, "--algo", algo, "--json")
			require.Equal(t, 0, code, stderr)
			var rr RematReport
			require.NoError(t, json.Unmarshal([]byte(out), &rr))
			if !rr.Feasible {
				continue
			}
			path := filepath.Join(dir, algo+".json")
			require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
			code, vout, stderr := run(t, "verify", "--problem", "remat", "--mem", mem, "--schedule", path)
			require.Equal(t, 0, code, "%s at %s: %s%s", algo, mem, vout, stderr)
			txt := filepath.Join(dir, algo+".txt")
			require.NoError(t, os.WriteFile(txt, []byte(rr.Sequence.String()), 0o644))
			code, vout, stderr = run(t, "verify", "--problem", "remat", "--mem", mem, "--schedule", txt)
			require.Equal(t, 0, code, "%s text: %s%s", algo, vout, stderr)
			assert.Contains(t, vout, "valid: remat makespan "+formatDur(rr.Makespan))
		}
	}
	chain := filepath.Join(dir, "r18.json")
	code, _, stderr := run(t, "gen", "zoo", "resnet", "--depth", "18", "--batch", "8", "-o", chain)
	require.Equal(t, 0, code, stderr)
	accepted := 0
	for _, mem := range []string{"300MiB", "600MiB"} {
		for _, algo := range offloadAlgos {
			code, out, stderr := run(t, "offload-weights", "--chain", chain, "--mem", mem, "--bandwidth", "12GB/s", "--algo", algo, "--json")
			require.Equal(t, 0, code, stderr)
			var or OffloadReport
			require.NoError(t, json.Unmarshal([]byte(out), &or))
			if !or.Feasible {
				continue
			}
			path := filepath.Join(dir, algo+".json")
			require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
			code, vout, stderr := run(t, "verify", "--problem", "weight-offload", "--chain", chain, "--mem", mem, "--bandwidth", "12GB/s", "--schedule", path)
			require.Equal(t, 0, code, "%s at %s: %s%s", algo, mem, vout, stderr)
			var b strings.Builder
			require.NoError(t, schedule.WritePeriodicText(&b, or.Schedule))
			txt := filepath.Join(dir, algo+".txt")
			require.NoError(t, os.WriteFile(txt, []byte(b.String()), 0o644))
			code, vout, stderr = run(t, "verify", "--problem", "weight-offload", "--chain", chain, "--mem", mem, "--bandwidth", "12GB/s", "--schedule", txt)
			require.Equal(t, 0, code, "%s text at %s: %s%s", algo, mem, vout, stderr)
			accepted++
		}
	}
	assert.Greater(t, accepted, 4)
}

func formatDur(s float64) string {
	return instances.FormatDuration(s)
}

// TestVerifyBadInput: unreadable schedules exit 2 with one line naming the problem.
func TestVerifyBadInput(t *testing.T) {
	cases := []struct{ name, text, want string }{
		{"unknown operation", "Fzz^1", "unknown operation"},
		{"no stage", "Fall", "not KIND^STAGE"},
		{"bad JSON", `{"sequence": [{"op": "Fall"`, "--schedule"},
	}
	for _, tc := range cases {
		code, _, stderr := verifyFile(t, tc.text, "--problem", "remat", "--mem", "90MiB")
		assert.Equal(t, 2, code, tc.name)
		assert.Contains(t, stderr, tc.want, tc.name)
		assert.Equal(t, 1, strings.Count(stderr, "\n"), tc.name)
	}
	code, _, stderr := verifyFile(t, "period 6\nop F 1 0\n", "--problem", "weight-offload", "--chain", "testdata/w3.json", "--mem", "100", "--bandwidth", "12GB/s")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "is missing")
}

// TestVerifyActsRejects: hand-made wrong activation-offloading schedules on a two-stage chain
// (10 B activations, 1 s operations, 10 B/s: a transfer takes 1 s; M_GPU = 40 B, 50 B without
// offloading), each an edit of the optimal schedule (5 s, certified by the fractional
// relaxation), rejected at the right time with the right rule.
func TestVerifyActsRejects(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "a2-offload.txt"))
	require.NoError(t, err)
	base := string(b)
	code, rep, stderr := verifyFile(t, base, "--problem", "act-offload", "--chain", "testdata/a2.json", "--mem", "40", "--bandwidth", "10B/s")
	require.Equal(t, 0, code, stderr)
	assert.InDelta(t, 5, rep.Makespan, 1e-12)
	// link: with B_1 at 4, x_1 can go and come back before it; x_0's prefetch then overlaps it.
	link := "op F 0 0\nop F 1 1\nop B 1 4\nop B 0 6\ntransfer offload 0 0\ntransfer offload 1 1\ntransfer prefetch 1 2\ntransfer prefetch 0 2.5\n"
	cases := []struct {
		name, from, to, mem string
		time                float64
		want                string
	}{
		{"memory overflow", "", "", "35", 2, "rule memory"},
		{"no offloading at all", "transfer offload 0 0\ntransfer prefetch 0 3\n", "", "40", 2, "rule memory"},
		{"operations overlap", "op F 1 1", "op F 1 0.5", "40", 0.5, "rule sequential"},
		{"operations out of order", "op B 1 2\nop B 0 4", "op B 0 4\nop B 1 2", "40", 4, "rule ops"},
		{"negative start", "op F 0 0", "op F 0 -1", "40", -1, "rule ops"},
		{"prefetch ends after the backward starts", "transfer prefetch 0 3", "transfer prefetch 0 3.5", "40", 4.5, "after B_0 starts"},
		{"prefetch before the activation left", "transfer prefetch 0 3", "transfer prefetch 0 0.5", "40", 0.5, "rule released"},
		{"offload before the activation exists", "transfer offload 0 0", "transfer offload 0 0\ntransfer offload 1 0.5\ntransfer prefetch 1 1.5", "100", 0.5, "before F_0 produces it"},
		{"offloaded twice", "transfer offload 0 0", "transfer offload 0 0\ntransfer offload 0 1", "40", 1, "offloaded twice"},
		{"offloaded, never prefetched", "transfer prefetch 0 3\n", "", "40", 0, "offloaded true but prefetched false"},
		{"the last activation cannot move", "transfer offload 0 0", "transfer offload 0 0\ntransfer offload 2 2", "40", 2, "only x_0..x_1"},
		{"two transfers on the link at once", base, link, "100", 2.5, "rule link"},
	}
	for _, tc := range cases {
		text := base
		if tc.from == base {
			text = tc.to
		} else if tc.from != "" {
			require.Contains(t, text, tc.from, tc.name)
			text = strings.Replace(text, tc.from, tc.to, 1)
		}
		code, rep, stderr := verifyFile(t, text, "--problem", "act-offload", "--chain", "testdata/a2.json", "--mem", tc.mem, "--bandwidth", "10B/s")
		require.Equal(t, 1, code, "%s: %s", tc.name, stderr)
		require.NotNil(t, rep.Error, tc.name)
		assert.Contains(t, rep.Error.Reason, tc.want, tc.name)
		require.NotNil(t, rep.Error.Time, tc.name)
		assert.InDelta(t, tc.time, *rep.Error.Time, 1e-9, tc.name)
	}
}

// TestVerifyCombinedIndicesAsInFile (issue 29): `verify --problem remat-offload` reported the
// file's 0-based wait and after indices as 1-based ("waits for transfer 0, not in 1..4" for
// an index of -1). Every index is now written as in the file: ops[i], transfers[j], 0-based.
func TestVerifyCombinedIndicesAsInFile(t *testing.T) {
	args := []string{"--problem", "remat-offload", "--mem", "80MiB", "--bandwidth", "1GB/s"}
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	// Four transfers; ops[1] waits for transfer -1.
	tr := `{"kind": "offload", "tensor": "a", "stage": 0, "after": -1}`
	neg := write("neg.json", `{"ops": [{"op": "Fall", "stage": 1}, {"op": "Fall", "stage": 2, "wait": [-1]}], "transfers": [`+
		strings.Repeat(tr+", ", 3)+tr+`]}`)
	code, out, stderr := run(t, append([]string{"verify", "--schedule", neg}, args...)...)
	require.Equal(t, 1, code, stderr)
	assert.Equal(t, "invalid: ops[1] (Fall^2): waits for transfer -1, not in 0..3 (rule index)\n", out)
	code, out, _ = run(t, append([]string{"verify", "--json", "--schedule", neg}, args...)...)
	require.Equal(t, 1, code)
	var rep VerifyReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.NotNil(t, rep.Error.Step)
	assert.Equal(t, 1, *rep.Error.Step)

	after := write("after.json", `{"ops": [{"op": "Fall", "stage": 1}], "transfers": [`+tr+`, {"kind": "offload", "tensor": "a", "stage": 1, "after": 1}]}`)
	code, out, stderr = run(t, append([]string{"verify", "--schedule", after}, args...)...)
	require.Equal(t, 1, code, stderr)
	assert.Contains(t, out, "invalid: transfers[1] (offload of a^1), t = ")
	assert.Contains(t, out, "after operation 1, not in -1..0 (-1: none)")
}
