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
)

// toyWith writes the toy chain with every stage changed by edit.
func toyWith(t *testing.T, edit func(s *instances.Stage)) string {
	t.Helper()
	c := instances.Toy()
	for i := range c.Stages {
		edit(&c.Stages[i])
	}
	// Written by hand: WriteChain refuses what does not validate.
	var b strings.Builder
	b.WriteString(`{"format": "memsched.chain/v1", "input": {"a": 8000635}, "stages": [`)
	for i, s := range c.Stages {
		if i > 0 {
			b.WriteString(", ")
		}
		j, err := json.Marshal(map[string]any{"uf": s.UF, "ub": s.UB, "a": s.A, "abar": s.ABar, "delta": s.Delta, "ob": s.OB, "w": s.W})
		require.NoError(t, err)
		b.Write(j)
	}
	b.WriteString("]}")
	path := filepath.Join(t.TempDir(), "chain.json")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}

// TestOverflowRefused: every input whose sizes do not fit int64 sums (issue 18) is refused
// with exit status 2 and one line naming the file or flag, the field and the value or sum.
// Before, these printed wrong results: "peak memory 0 B, verified yes" (offload-weights with
// weights of 1.5e18 B on 7 layers), negative GiB of weights (info), a wrapped store-all peak
// with "verified yes" (remat on activations of 2e18 B), a negative size (gen zoo).
func TestOverflowRefused(t *testing.T) {
	w15 := toyWith(t, func(s *instances.Stage) { s.W = 1.5e18 })
	w2 := toyWith(t, func(s *instances.Stage) { s.W = 2e17 }) // each fits, the sum does not
	a2 := toyWith(t, func(s *instances.Stage) { s.A, s.ABar, s.Delta = 2e18, 2e18, 2e18 })
	a3 := toyWith(t, func(s *instances.Stage) { s.A, s.ABar, s.Delta = 1e17, 1e17, 1e17 })
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"offload-weights, weights 1.5e18 B each", []string{"offload-weights", "--chain", w15, "--mem", "90MiB", "--bandwidth", "12GB/s"}, []string{w15, "stages[0].w", "above 2^60 B"}},
		{"offload-weights, weights summing past 2^60", []string{"offload-weights", "--chain", w2, "--mem", "90MiB", "--bandwidth", "12GB/s"}, []string{w2, "stages[5].w", "the chain's sizes total 1.4e+18 B"}},
		{"info, weights summing past 2^60", []string{"info", "--chain", w2}, []string{w2, "stages[5].w", "1.4e+18 B"}},
		{"remat store-all, activations 2e18 B", []string{"remat", "--chain", a2, "--algo", "store-all", "--mem", "90MiB"}, []string{a2, "stages[0].a", "above 2^60 B"}},
		{"remat store-all, activations summing past 2^60", []string{"remat", "--chain", a3, "--algo", "store-all", "--mem", "90MiB"}, []string{a3, "the chain's sizes total 2.1e+18 B"}},
		{"certify, weights summing past 2^60", []string{"certify", "--chain", w2, "--bandwidth", "12GB/s"}, []string{w2, "stages[5].w"}},
		{"budget above 2^60", []string{"remat", "--mem", "2e18"}, []string{"--mem", `"2e18"`, "above 2^60 B"}},
		{"gen zoo gpt2 --batch 1e9 --seq 1e9", []string{"gen", "zoo", "gpt2", "--batch", "1000000000", "--seq", "1000000000"}, []string{"seq 1000000000, batch 1000000000", "larger than 2^60 B"}},
		{"gen zoo, total past 2^60", []string{"gen", "zoo", "gpt2", "--batch", "100000", "--seq", "100000"}, []string{"seq 100000, batch 100000", "total 1.31e+18 B"}},
		{"gen random, max-size × stages past 2^60", []string{"gen", "random", "--max-size", "1e17", "--stages", "100"}, []string{"--max-size 1e17", "--stages 100", "6.02e+19 B"}},
		{"gen remat-2partition, values summing past 2^60", []string{"gen", "remat-2partition", "--values", "1000000000000000000,1000000000000000000"}, []string{"2-partition", "sum passes 2^60"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, stderr := run(t, c.args...)
			assert.Equal(t, 2, code, "stderr: %s", stderr)
			assert.Empty(t, out, "nothing printed as a result")
			for _, w := range c.want {
				assert.Contains(t, stderr, w)
			}
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line on stderr: %q", stderr)
		})
	}
}
