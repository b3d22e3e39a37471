package instances

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	gograph "gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/simple"
	"gonum.org/v1/gonum/graph/topo"
)

// Node is one operation of a computation graph (Checkmate, Jain et al. 2020 §4; SPEC §4).
// Sizes are bytes, times seconds.
type Node struct {
	// Name labels the node; names are unique within a graph.
	Name string
	// Cost is the node's compute time C_i in seconds.
	Cost float64
	// Size is the size M_i in bytes of the node's output.
	Size int64
	// Temp is transient memory in bytes used only while the node runs (workspace, the
	// overheads o_f, o_b of a chain).
	Temp int64
	// Deps are the indices (into Graph.Nodes) of the nodes whose outputs this node reads. In a
	// valid graph every dependency comes earlier: Deps[k] < own index.
	Deps []int
}

// Graph is a DAG of operations in a fixed topological order: Nodes[i] depends only on nodes
// j < i. Fixed is memory present during the whole schedule (inputs, parameters), counted
// against the budget like everything else.
type Graph struct {
	Name  string
	Fixed int64
	Nodes []Node
}

// Len returns the number of nodes.
func (g *Graph) Len() int { return len(g.Nodes) }

// Users returns, for every node, the indices of the nodes that read its output, ascending.
func (g *Graph) Users() [][]int {
	u := make([][]int, len(g.Nodes))
	for j, n := range g.Nodes {
		for _, i := range n.Deps {
			u[i] = append(u[i], j)
		}
	}
	return u
}

// Validate checks a graph built in code: at least one node, unique names, non-negative sizes
// whose total (fixed, every size and temp) is at most MaxBytes, finite non-negative costs,
// dependencies in range, earlier than the node and not repeated.
func (g *Graph) Validate() error {
	file := g.Name
	if file == "" {
		file = "graph"
	}
	bad := func(path, value, msg string) error {
		return &FormatError{File: file, Path: path, Value: value, Msg: msg}
	}
	if len(g.Nodes) == 0 {
		return bad("nodes", "[]", "a graph needs at least one node")
	}
	if g.Fixed < 0 {
		return bad("fixed", strconv.FormatInt(g.Fixed, 10), "must not be negative")
	}
	total, ok := SumBytes(g.Fixed)
	if !ok {
		return bad("fixed", strconv.FormatInt(g.Fixed, 10), "is above "+maxBytesText)
	}
	seen := make(map[string]int, len(g.Nodes))
	for i, n := range g.Nodes {
		p := fmt.Sprintf("nodes[%d].", i)
		if n.Name == "" {
			return bad(p+"name", `""`, "must not be empty")
		}
		if j, dup := seen[n.Name]; dup {
			return bad(p+"name", strconv.Quote(n.Name), fmt.Sprintf("duplicate name (also nodes[%d])", j))
		}
		seen[n.Name] = i
		if math.IsNaN(n.Cost) || math.IsInf(n.Cost, 0) || n.Cost < 0 {
			return bad(p+"cost", strconv.FormatFloat(n.Cost, 'g', -1, 64), "must be a finite non-negative time")
		}
		if n.Size < 0 {
			return bad(p+"size", strconv.FormatInt(n.Size, 10), "must not be negative")
		}
		if n.Temp < 0 {
			return bad(p+"temp", strconv.FormatInt(n.Temp, 10), "must not be negative")
		}
		var ok bool
		if total, ok = SumBytes(total, n.Size, n.Temp); !ok {
			return bad(p+"size", strconv.FormatInt(n.Size, 10), fmt.Sprintf("the graph's sizes total %.3g B (fixed and every node's size and temp; the running total passes the limit here), above %s",
				g.floatTotal(), maxBytesText))
		}
		for k, d := range n.Deps {
			if d < 0 || d >= i {
				return bad(fmt.Sprintf("%sdeps[%d]", p, k), strconv.Itoa(d), "must name an earlier node (the node order is topological)")
			}
			for _, e := range n.Deps[:k] {
				if e == d {
					return bad(fmt.Sprintf("%sdeps[%d]", p, k), strconv.Itoa(d), "repeated dependency")
				}
			}
		}
	}
	return nil
}

// floatTotal is the sum of every size of g in float64, for messages.
func (g *Graph) floatTotal() float64 {
	t := float64(g.Fixed)
	for _, n := range g.Nodes {
		t += float64(n.Size) + float64(n.Temp)
	}
	return t
}

// topoOrder returns a topological order of nodes 0..n-1 under the edges dep → user, keeping
// the given order wherever the edges allow it (gonum's stabilized Tarjan sort). On a cycle it
// returns the cycles' node sets (topo.Unorderable).
func topoOrder(n int, deps [][]int) ([]int, error) {
	dg := simple.NewDirectedGraph()
	for i := 0; i < n; i++ {
		dg.AddNode(simple.Node(i))
	}
	for j, ds := range deps {
		for _, i := range ds {
			if i == j {
				return nil, topo.Unorderable{{simple.Node(i)}}
			}
			dg.SetEdge(simple.Edge{F: simple.Node(i), T: simple.Node(j)})
		}
	}
	sorted, err := topo.SortStabilized(dg, func(ns []gograph.Node) {
		sort.Slice(ns, func(a, b int) bool { return ns[a].ID() < ns[b].ID() })
	})
	if err != nil {
		return nil, err
	}
	order := make([]int, len(sorted))
	for k, v := range sorted {
		order[k] = int(v.ID())
	}
	return order, nil
}
