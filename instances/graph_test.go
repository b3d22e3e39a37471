package instances

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadGraphOrdersTopologically: the file lists the join first; the loader moves it after
// its dependencies and keeps the file's order otherwise, converting MiB and ms.
func TestReadGraphOrdersTopologically(t *testing.T) {
	g, err := LoadGraph("testdata/graphs/diamond.json")
	require.NoError(t, err)
	var names []string
	for _, n := range g.Nodes {
		names = append(names, n.Name)
	}
	assert.Equal(t, []string{"src", "left", "right", "join"}, names)
	assert.Equal(t, int64(1<<20), g.Fixed)
	assert.Equal(t, []int{1, 2}, g.Nodes[3].Deps)
	assert.Equal(t, int64(1<<19), g.Nodes[1].Temp)
	assert.InDelta(t, 3e-3, g.Nodes[1].Cost, 1e-15)
	assert.Equal(t, [][]int{{1, 2}, {3}, {3}, nil}, g.Users())
}

// TestGraphRoundTrip: WriteGraph then ReadGraph gives the same graph (bytes and seconds).
func TestGraphRoundTrip(t *testing.T) {
	for _, g := range []*Graph{GraphFromChain(Toy()), {Name: "one", Nodes: []Node{{Name: "x", Cost: 0.1, Size: 3}}}} {
		var buf bytes.Buffer
		require.NoError(t, WriteGraph(&buf, g))
		back, err := ReadGraph(&buf, "rt.json")
		require.NoError(t, err)
		for i := range g.Nodes {
			if len(g.Nodes[i].Deps) == 0 {
				g.Nodes[i].Deps = nil
			}
		}
		assert.Equal(t, g, back)
	}
}

func graphDoc(nodes string) string {
	return `{"format": "memsched.graph/v1", "nodes": [` + nodes + `]}`
}

// TestReadGraphRejects: one case per rejection rule of docs/graph-format.md; each error names
// the file, the JSON path and the value.
func TestReadGraphRejects(t *testing.T) {
	cases := []struct {
		name, input string
		want        []string
	}{
		{"wrong format", `{"format": "memsched.chain/v1", "nodes": []}`, []string{"g.json", "format", `"memsched.chain/v1"`, "unknown format"}},
		{"no nodes", graphDoc(``), []string{"nodes", "at least one node"}},
		{"unknown field", graphDoc(`{"name": "a", "size": 1, "flops": 3}`), []string{"nodes[0].flops", "unknown field"}},
		{"missing size", graphDoc(`{"name": "a"}`), []string{"nodes[0].size", "missing required field"}},
		{"negative size", graphDoc(`{"name": "a", "size": -1}`), []string{"nodes[0].size", "-1", "negative"}},
		{"empty name", graphDoc(`{"name": "", "size": 1}`), []string{"nodes[0].name", "must not be empty"}},
		{"duplicate name", graphDoc(`{"name": "a", "size": 1}, {"name": "a", "size": 2}`), []string{"nodes[1].name", `"a"`, "duplicate"}},
		{"unknown dep", graphDoc(`{"name": "a", "size": 1, "deps": ["b"]}`), []string{"nodes[0].deps[0]", `"b"`, "no node has this name"}},
		{"self dep", graphDoc(`{"name": "a", "size": 1, "deps": ["a"]}`), []string{"nodes[0].deps[0]", "itself"}},
		{"repeated dep", graphDoc(`{"name": "a", "size": 1}, {"name": "b", "size": 1, "deps": ["a", "a"]}`), []string{"nodes[1].deps[1]", "repeated"}},
		{"dep not a string", graphDoc(`{"name": "a", "size": 1, "deps": [0]}`), []string{"nodes[0].deps[0]", "must be a node name"}},
		{"cycle", graphDoc(`{"name": "a", "size": 1, "deps": ["c"]}, {"name": "b", "size": 1, "deps": ["a"]}, {"name": "c", "size": 1, "deps": ["b"]}, {"name": "d", "size": 1}`),
			[]string{"nodes", `"a", "b", "c"`, "cycle"}},
		{"bad unit", `{"format": "memsched.graph/v1", "units": {"memory": "MiBs"}, "nodes": [{"name": "a", "size": 1}]}`, []string{"units.memory", `"MiBs"`}},
		{"trailing", graphDoc(`{"name": "a", "size": 1}`) + `{}`, []string{"trailing data"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadGraph(strings.NewReader(c.input), "g.json")
			require.Error(t, err)
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// TestGraphFromChainToy: the toy chain (L = 6 + loss, δ^{L+1} = ω_a^7 > 0) becomes a loss
// source, 7 forwards and 7 backwards with rotor's dependencies.
func TestGraphFromChainToy(t *testing.T) {
	c := Toy()
	g := GraphFromChain(c)
	require.NoError(t, g.Validate())
	L1 := c.Len()
	off := 0
	if c.SizeDelta(L1) > 0 {
		off = 1
		assert.Equal(t, "dloss", g.Nodes[0].Name)
	}
	require.Equal(t, off+2*L1, g.Len())
	assert.Equal(t, c.A0, g.Fixed)
	b1 := g.Nodes[g.Len()-1]
	assert.Equal(t, "B1", b1.Name)
	assert.Equal(t, c.Delta0, b1.Size)
	assert.Equal(t, []int{off, off + 2*L1 - 2}, b1.Deps, "B1 reads F1 (ā^1) and B2 (δ^1)")
	b3 := g.Nodes[off+L1+L1-3]
	assert.Equal(t, "B3", b3.Name)
	assert.Equal(t, []int{off + 2, off + 1, off + L1 + L1 - 4}, b3.Deps)
	assert.Equal(t, c.Stage(3).OB, b3.Temp)
	var sum float64
	for _, n := range g.Nodes {
		sum += n.Cost
	}
	var want float64
	for _, s := range c.Stages {
		want += s.UF + s.UB
	}
	assert.InDelta(t, want, sum, 1e-12)
}
