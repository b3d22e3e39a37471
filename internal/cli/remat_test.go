package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
)

// TestRematToy is issue 4's acceptance on the toy chain at 90 MiB: persistent, floating and
// exhaustive give 47.42 ms and 86.75 MiB with 004 §3.2's sequence, verified.
func TestRematToy(t *testing.T) {
	const published = `[{"op":"Fck","stage":1},{"op":"Fn","stage":2},{"op":"Fn","stage":3},{"op":"Fall","stage":4},{"op":"Fall","stage":5},{"op":"Fall","stage":6},{"op":"Fall","stage":7},{"op":"B","stage":7},{"op":"B","stage":6},{"op":"B","stage":5},{"op":"B","stage":4},{"op":"Fck","stage":1},{"op":"Fn","stage":2},{"op":"Fall","stage":3},{"op":"B","stage":3},{"op":"Fall","stage":1},{"op":"Fall","stage":2},{"op":"B","stage":2},{"op":"B","stage":1}]`
	for _, algo := range []string{"persistent", "floating", "exhaustive"} {
		code, out, stderr := run(t, "remat", "--mem", "90MiB", "--algo", algo, "--json")
		require.Equal(t, 0, code, stderr)
		var rep RematReport
		require.NoError(t, json.Unmarshal([]byte(out), &rep))
		assert.True(t, rep.Feasible, algo)
		assert.True(t, rep.Verified, algo)
		assert.InDelta(t, 0.04742, rep.Makespan, 1e-12, algo)
		assert.InDelta(t, 86.75, float64(rep.PeakMemory)/(1<<20), 0.005, algo)
		seq, err := json.Marshal(rep.Sequence)
		require.NoError(t, err)
		assert.JSONEq(t, published, string(seq), algo)
	}
}

// TestRematInfeasibleIsAResult: a budget below every sequence exits 0 with feasible false.
func TestRematInfeasibleIsAResult(t *testing.T) {
	for _, algo := range rematAlgos {
		code, out, stderr := run(t, "remat", "--mem", "60MiB", "--algo", algo, "--json")
		require.Equal(t, 0, code, "%s: %s", algo, stderr)
		var rep RematReport
		require.NoError(t, json.Unmarshal([]byte(out), &rep))
		assert.False(t, rep.Feasible, algo)
		assert.Empty(t, rep.Sequence, algo)
	}
}

func TestRematFrontier(t *testing.T) {
	code, out, _ := run(t, "remat", "--mem", "110MiB", "--frontier", "--json")
	require.Equal(t, 0, code)
	var pts []FrontierPoint
	require.NoError(t, json.Unmarshal([]byte(out), &pts))
	require.NotEmpty(t, pts)
	assert.InDelta(t, 0.03738, pts[len(pts)-1].Makespan, 1e-12)
}

func TestRematBadInput(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"remat"}, "--mem is required"},
		{[]string{"remat", "--mem", "90MB/s"}, "--mem"},
		{[]string{"remat", "--mem", "90MiB", "--algo", "magic"}, `unknown --algo "magic"`},
		{[]string{"remat", "--mem", "90MiB", "--slots", "0"}, "--slots must be a number in 1..100000 or exact"},
		{[]string{"remat", "--mem", "90MiB", "--slots", "100000000"}, "--slots must be a number in 1..100000 or exact"},
		{[]string{"remat", "--mem", "90MiB", "--frontier", "--algo", "exhaustive"}, "--frontier needs"},
		{[]string{"remat", "--mem", "90MiB", "--slots", "many"}, "--slots must be a number in 1..100000 or exact"},
		{[]string{"remat", "--mem", "90MiB", "--free-delete"}, "--free-delete needs --algo exhaustive"},
	}
	for _, c := range cases {
		code, _, stderr := run(t, c.args...)
		assert.NotEqual(t, 0, code, c.args)
		assert.Contains(t, stderr, c.want, c.args)
	}
}

// TestRematFreeDelete: on the toy at 90 MiB, deleting at no cost cannot be slower than 47.42 ms.
func TestRematFreeDelete(t *testing.T) {
	code, out, stderr := run(t, "remat", "--mem", "90MiB", "--algo", "exhaustive", "--free-delete", "--json")
	require.Equal(t, 0, code, stderr)
	var rep RematReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.True(t, rep.Feasible)
	assert.LessOrEqual(t, rep.Makespan, 0.04742+1e-12)
	assert.True(t, rep.Verified)
}

// TestRematExact: --slots exact (and its older spelling --exact) solves in bytes: on the toy at
// 90 MiB the 004 §3.2 optimum, at 1 GiB (2^30 one-byte slots, once out of reach) store-all's
// 37.38 ms; the exact frontier ends at the store-all makespan, reached at or below its peak.
func TestRematExact(t *testing.T) {
	for _, args := range [][]string{{"--slots", "exact"}, {"--exact"}} {
		for _, algo := range []string{"persistent", "floating", "revolve"} {
			code, out, stderr := run(t, append([]string{"remat", "--mem", "90MiB", "--algo", algo, "--json"}, args...)...)
			require.Equal(t, 0, code, stderr)
			var rep RematReport
			require.NoError(t, json.Unmarshal([]byte(out), &rep))
			assert.True(t, rep.Exact, algo)
			assert.True(t, rep.Verified, algo)
			if algo != "revolve" {
				assert.InDelta(t, 0.04742, rep.Makespan, 1e-12, algo)
			} else {
				assert.InDelta(t, 0.05506, rep.Makespan, 1e-12, algo)
			}
		}
	}
	code, out, stderr := run(t, "remat", "--mem", "1GiB", "--slots", "exact", "--algo", "floating", "--json")
	require.Equal(t, 0, code, stderr)
	var rep RematReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.InDelta(t, 0.03738, rep.Makespan, 1e-12)
	code, out, stderr = run(t, "remat", "--mem", "1GiB", "--slots", "exact", "--frontier", "--json")
	require.Equal(t, 0, code, stderr)
	var pts []FrontierPoint
	require.NoError(t, json.Unmarshal([]byte(out), &pts))
	require.NotEmpty(t, pts)
	assert.InDelta(t, 0.03738, pts[len(pts)-1].Makespan, 1e-12)
	assert.LessOrEqual(t, pts[len(pts)-1].Budget, int64(107<<20), "at most store-all's peak, 107 MiB (004 Table 2)")
}

// TestRematGivenSequence: --sequence replays another tool's sequence: 004 §3.2's at 90 MiB
// takes 47.42 ms and fits; at 80 MiB it is reported as not fitting; a malformed file is an error.
func TestRematGivenSequence(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "seq.json")
	require.NoError(t, os.WriteFile(path, []byte(`[{"op":"Fck","stage":1},{"op":"Fn","stage":2},{"op":"Fn","stage":3},{"op":"Fall","stage":4},{"op":"Fall","stage":5},{"op":"Fall","stage":6},{"op":"Fall","stage":7},{"op":"B","stage":7},{"op":"B","stage":6},{"op":"B","stage":5},{"op":"B","stage":4},{"op":"Fck","stage":1},{"op":"Fn","stage":2},{"op":"Fall","stage":3},{"op":"B","stage":3},{"op":"Fall","stage":1},{"op":"Fall","stage":2},{"op":"B","stage":2},{"op":"B","stage":1}]`), 0o644))
	code, out, stderr := run(t, "remat", "--mem", "90MiB", "--sequence", path, "--json")
	require.Equal(t, 0, code, stderr)
	var rep RematReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, "given", rep.Algorithm)
	assert.True(t, rep.Feasible)
	assert.InDelta(t, 0.04742, rep.Makespan, 1e-12)
	code, out, stderr = run(t, "remat", "--mem", "80MiB", "--sequence", path, "--json")
	require.Equal(t, 0, code, stderr)
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.False(t, rep.Feasible)
	assert.InDelta(t, 86.75, float64(rep.PeakMemory)/(1<<20), 0.005)
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`[{"op":"Jump","stage":1}]`), 0o644))
	code, _, stderr = run(t, "remat", "--mem", "90MiB", "--sequence", bad)
	assert.Equal(t, 2, code, "bad input")
	assert.Contains(t, stderr, "bad.json")
}

// TestRematSequenceReadsWhatVerifyReads (issue 18): remat --sequence and verify --problem remat
// read a sequence through one reader: the seq.json that remat --json writes (it was refused:
// "cannot unmarshal object"), a bare array, the text form and stdin all replay to the same
// 47.42 ms; a sequence that does not replay is bad input (exit 2, naming the file and the step;
// it was exit 1 with "given returned an invalid sequence").
func TestRematSequenceReadsWhatVerifyReads(t *testing.T) {
	dir := t.TempDir()
	code, out, stderr := run(t, "remat", "--mem", "90MiB", "--algo", "floating", "--json")
	require.Equal(t, 0, code, stderr)
	var own RematReport
	require.NoError(t, json.Unmarshal([]byte(out), &own))
	arr, err := json.Marshal(own.Sequence)
	require.NoError(t, err)
	files := map[string]string{"remat.json": out, "array.json": string(arr), "seq.txt": own.Sequence.String() + "  # text form\n"}
	for name, content := range files {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		code, out, stderr := run(t, "remat", "--mem", "90MiB", "--sequence", path, "--json")
		require.Equal(t, 0, code, "%s: %s", name, stderr)
		var rep RematReport
		require.NoError(t, json.Unmarshal([]byte(out), &rep))
		assert.InDelta(t, own.Makespan, rep.Makespan, 1e-12, name)
		assert.Equal(t, own.Sequence, rep.Sequence, name)
		code, vout, stderr := run(t, "verify", "--problem", "remat", "--mem", "90MiB", "--schedule", path)
		require.Equal(t, 0, code, "%s: %s", name, stderr)
		assert.Contains(t, vout, "valid: remat makespan 47.42 ms", name)
	}
	var o, e bytes.Buffer
	code = Main([]string{"remat", "--mem", "90MiB", "--sequence", "-", "--json"}, strings.NewReader(files["seq.txt"]), &o, &e)
	require.Equal(t, 0, code, e.String())
	assert.Contains(t, o.String(), `"makespan": 0.04742`)

	bad := filepath.Join(dir, "bad.txt")
	require.NoError(t, os.WriteFile(bad, []byte("Fall^1 B^2"), 0o644))
	code, out, stderr = run(t, "remat", "--mem", "90MiB", "--sequence", bad)
	assert.Equal(t, 2, code)
	assert.Empty(t, out)
	assert.Equal(t, "memsched: --sequence "+bad+": step 2 (B^2): δ^2 is not stored (the current gradient is δ^7)\n", stderr)
}

// TestHugeValuesPrintReadably (issue 18): a chain with u_f = 1e300 printed 300-digit cells;
// durations from 10⁶ s on print with four significant digits, every line stays short.
func TestHugeValuesPrintReadably(t *testing.T) {
	c := instances.Toy()
	c.Stages[0].UF = 1e300
	path := filepath.Join(t.TempDir(), "huge.json")
	require.NoError(t, instances.SaveChain(path, c))
	for _, args := range [][]string{
		{"remat", "--chain", path, "--mem", "90MiB"},
		{"info", "--chain", path},
		{"offload-act", "--chain", path, "--mem", "90MiB", "--bandwidth", "12GB/s", "--algo", "greedy"},
	} {
		code, out, stderr := run(t, args...)
		require.Equal(t, 0, code, "%v: %s", args, stderr)
		assert.Contains(t, out, "e+300 s", args)
		for _, line := range strings.Split(out, "\n") {
			if !strings.HasPrefix(line, "sequence") && !strings.HasPrefix(line, "bound ") {
				assert.Less(t, len(line), 120, "%v: %q", args, line)
			}
		}
	}
}

// TestRematExactFallback: when a frontier outgrows --max-breakpoints, remat says so on stderr and
// in the JSON note, and answers from the slotted table (never silently).
func TestRematExactFallback(t *testing.T) {
	code, out, stderr := run(t, "remat", "--mem", "90MiB", "--slots", "exact", "--max-breakpoints", "1", "--json")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "exact table out of reach")
	var rep RematReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.False(t, rep.Exact)
	assert.Contains(t, rep.Note, "fell back to 500 slots")
	assert.Greater(t, rep.SlotSize, int64(1))
	assert.InDelta(t, 0.04742, rep.Makespan, 1e-12)
}

// TestRematInfeasibleNotVerified (issue 29, wrong answer 5, as certify): `remat --algo
// store-all` above the budget was "feasible": false, "verified": true with a makespan. Now it
// has its peak only, and says why.
func TestRematInfeasibleNotVerified(t *testing.T) {
	code, out, stderr := run(t, "remat", "--algo", "store-all", "--mem", "90MiB", "--json")
	require.Equal(t, 0, code, stderr)
	var rep RematReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.False(t, rep.Feasible)
	assert.False(t, rep.Verified)
	assert.Zero(t, rep.Makespan)
	assert.Equal(t, int64(112187147), rep.PeakMemory)
	code, out, _ = run(t, "remat", "--algo", "store-all", "--mem", "90MiB")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "no: its peak 106.99 MiB exceeds the budget")
}
