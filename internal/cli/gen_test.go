package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
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
