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
	"github.com/memsched/memsched/instances/offload"
	"github.com/memsched/memsched/instances/reduce"
)

// TestGenRoundTrip: every gen subcommand writes a chain that loads back and that info and
// remat accept.
func TestGenRoundTrip(t *testing.T) {
	dir := t.TempDir()
	cases := [][]string{
		{"zoo", "resnet", "--depth", "50", "--batch", "4"},
		{"zoo", "resnet", "--depth", "1001", "--batch", "2"},
		{"zoo", "densenet", "--depth", "121", "--batch", "2", "--dtype", "fp16"},
		{"zoo", "inception", "--batch", "2", "--device", "h100"},
		{"zoo", "vgg", "--depth", "19", "--batch", "2"},
		{"zoo", "gpt2", "--hidden", "768", "--heads", "12", "--layers", "4", "--seq", "128", "--batch", "2"},
		{"zoo", "bert", "--hidden", "1024", "--heads", "16", "--layers", "4", "--seq", "128", "--batch", "2"},
		{"random", "--seed", "7", "--stages", "9"},
		{"toy"},
		{"fig4", "--n", "5"},
		{"remat-2partition", "--values", "3,1,1,2,2,1"},
		{"act-3partition", "--values", "6,7,6,7,6,8"},
		{"act-2partition", "--values", "3,1,1,2,2,1"},
		{"weights-3partition", "--values", "4,5,6,4,5,6"},
	}
	for i, args := range cases {
		path := filepath.Join(dir, strings.Join(args[:1], "")+string(rune('a'+i))+".json")
		code, _, stderr := run(t, append(append([]string{"gen"}, args...), "-o", path)...)
		require.Equal(t, 0, code, "%v: %s", args, stderr)
		c, err := instances.LoadChain(path)
		require.NoError(t, err, args)
		code, _, stderr = run(t, "info", "--chain", path)
		assert.Equal(t, 0, code, "%v: %s", args, stderr)
		code, _, stderr = run(t, "remat", "--chain", path, "--mem", "1TiB", "--slots", "50")
		assert.Equal(t, 0, code, "%v: %s", args, stderr)
		assert.Greater(t, c.Len(), 1)
	}
	// gen toy to stdout is the built-in toy, byte for byte through the writer.
	code, out, _ := run(t, "gen", "toy")
	require.Equal(t, 0, code)
	c, err := instances.ReadChain(strings.NewReader(out), "stdout")
	require.NoError(t, err)
	assert.Equal(t, instances.Toy(), c)
}

func TestGenBadInput(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"gen", "zoo", "alexnet"}, "unknown family"},
		{[]string{"gen", "zoo", "resnet", "--depth", "7"}, "ResNet depth 7"},
		{[]string{"gen", "zoo", "gpt2", "--hidden", "100", "--heads", "3"}, "multiple"},
		{[]string{"gen", "fig4", "--n", "2"}, "n ≥ 3"},
		{[]string{"gen", "remat-2partition", "--values", "1,2"}, "odd"},
		{[]string{"gen", "random", "--max-size", "lots"}, "--max-size"},
	}
	for _, c := range cases {
		code, _, stderr := run(t, c.args...)
		assert.Equal(t, 2, code, c.args)
		assert.Contains(t, stderr, c.want, c.args)
	}
}

// TestGenWeightsThreePartition (issue 18): gen writes 002 Thm 1's instance, the fourth
// reduction (the others were writable already). The chain read back is the reduction's
// problem exactly, and the proof's certificate for the yes-instance 4,5,6,4,5,6 (m = 2, V = 15)
// validates on it through verify with period 2m = 4 s; bound certifies 4 s; --json reports
// the --mem, --bandwidth and target to use.
func TestGenWeightsThreePartition(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "w3p.json")
	code, out, stderr := run(t, "gen", "weights-3partition", "--values", "4,5,6,4,5,6", "-o", path, "--json")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "M_GPU = 45 B (--mem 45B), β = 15 B/s (--bandwidth 15B/s), T = 4 s")
	var rep GenReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, GenReport{File: path, Name: "weights 3-partition M_GPU=45B beta=15B/s T=4s", Stages: 10, Mem: 45, Bandwidth: 15, Target: 4}, rep)

	values := []int64{4, 5, 6, 4, 5, 6}
	want, cert, err := reduce.WeightsThreePartition(values, [][]int{{0, 1, 2}, {3, 4, 5}})
	require.NoError(t, err)
	c, err := instances.LoadChain(path)
	require.NoError(t, err)
	got, err := offload.FromChain(c, want.MGPU, want.Beta)
	require.NoError(t, err)
	assert.Equal(t, want, got, "the chain is the reduction's problem")

	certFile := filepath.Join(dir, "cert.json")
	b, err := json.Marshal(cert)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(certFile, b, 0o644))
	code, vout, stderr := run(t, "verify", "--problem", "weight-offload", "--chain", path, "--mem", "45B", "--bandwidth", "15B/s", "--schedule", certFile)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, vout, "valid: weight-offload period 4000.00 ms")
	if realMILPBackend() {
		code, bout, stderr := run(t, "bound", "--chain", path, "--mem", "45B", "--bandwidth", "15B/s", "--json")
		require.Equal(t, 0, code, stderr)
		var br BoundReport
		require.NoError(t, json.Unmarshal([]byte(bout), &br))
		require.NotNil(t, br.LowerBound)
		assert.InDelta(t, 4, *br.LowerBound, 1e-9)
	}
}

// TestGenJSON (issue 18): gen --json was accepted and printed nothing; with -o it prints what
// it wrote, and without -o the chain itself (JSON already).
func TestGenJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "toy.json")
	code, out, stderr := run(t, "gen", "toy", "-o", path, "--json")
	require.Equal(t, 0, code, stderr)
	var rep GenReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, GenReport{File: path, Name: instances.Toy().Name, Stages: 7}, rep)
	code, out, _ = run(t, "gen", "toy", "--json")
	require.Equal(t, 0, code)
	c, err := instances.ReadChain(strings.NewReader(out), "stdout")
	require.NoError(t, err)
	assert.Equal(t, instances.Toy(), c)
}
