package weightoffload_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances/offload"
	"github.com/memsched/memsched/instances/zoo"
	"github.com/memsched/memsched/lever/weightoffload"
	"github.com/memsched/memsched/verify/periodic"
)

// TestStrategies: the names are unique and found by Lookup; on a small GPT-2 (3 blocks) with
// room for about half its weights every strategy returns a schedule that verify/periodic
// accepts with the figures Run reports, and with no room at all each says why it found none.
func TestStrategies(t *testing.T) {
	c, err := zoo.Transformer(zoo.TransformerConfig{Kind: "gpt2", Hidden: 256, Heads: 4, Layers: 3, SeqLen: 64, Batch: 2})
	require.NoError(t, err)
	p, err := offload.FromChain(c, 110<<20, 1e9)
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, st := range weightoffload.Strategies {
		assert.False(t, seen[st.Name], st.Name)
		seen[st.Name] = true
		got, ok := weightoffload.Lookup(st.Name)
		require.True(t, ok)
		assert.Equal(t, st.Summary, got.Summary)
		out, err := st.Run(p)
		require.NoError(t, err, st.Name)
		require.True(t, out.Feasible, "%s: %s", st.Name, out.Reason)
		rep, err := periodic.Validate(p, out.Schedule)
		require.NoError(t, err, st.Name)
		assert.Equal(t, rep, out.Report, st.Name)
		assert.LessOrEqual(t, out.Report.Peak, p.MGPU, st.Name)
	}
	assert.Equal(t, len(weightoffload.Strategies), len(weightoffload.Names()))
	_, ok := weightoffload.Lookup("milp")
	assert.False(t, ok, "the MILP-guided schedule needs a certificate: not in the registry")

	tiny, err := offload.FromChain(c, 1<<10, 1e9)
	require.NoError(t, err)
	for _, st := range weightoffload.Strategies {
		out, err := st.Run(tiny)
		require.NoError(t, err, st.Name)
		assert.False(t, out.Feasible, st.Name)
		assert.NotEmpty(t, out.Reason, st.Name)
	}
}
