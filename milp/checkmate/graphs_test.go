package checkmate_test

import (
	"math"

	"github.com/memsched/memsched/instances"
)

// Hand-built DAGs (sizes in units of unit bytes, unit costs unless noted). Each comment gives
// the store-everything peak and what recomputation buys, checked by hand; the tests compare the
// MILP with graphsim.Staged at every budget.

// diamond: src → left, right → join. Store-all peak 8 (src, left, right while computing right);
// no smaller budget works: the second branch always needs src and the first branch's output.
func diamond(unit int64) *instances.Graph {
	return &instances.Graph{Name: "diamond", Nodes: []instances.Node{
		{Name: "src", Cost: 1, Size: 4 * unit},
		{Name: "left", Cost: 2, Size: 2 * unit, Deps: []int{0}},
		{Name: "right", Cost: 3, Size: 2 * unit, Deps: []int{0}},
		{Name: "join", Cost: 1, Size: 1 * unit, Deps: []int{1, 2}},
	}}
}

// skip: x1 → x2 → x3 → y with x1 → y. Peak 6 at cost 4; at 5 x1 is recomputed (cost 5); 4 is
// infeasible.
func skip(unit int64) *instances.Graph {
	return &instances.Graph{Name: "skip", Nodes: []instances.Node{
		{Name: "x1", Cost: 1, Size: 2 * unit},
		{Name: "x2", Cost: 1, Size: 2 * unit, Deps: []int{0}},
		{Name: "x3", Cost: 1, Size: 2 * unit, Deps: []int{1}},
		{Name: "y", Cost: 1, Size: unit, Deps: []int{2, 0}},
	}}
}

// branches: two chains a1 → a2 and b1 → b2 join in j, which also reads a1 (transient memory 1).
// Storing everything peaks at 8 (a1, a2, b1, b2 while computing b2), cost 8; at 7 a1 is dropped
// before the b branch and recomputed for j (cost 9); 6 is infeasible (j holds a2, b2, a1, its
// output and its workspace: 7).
func branches(unit int64) *instances.Graph {
	return &instances.Graph{Name: "branches", Nodes: []instances.Node{
		{Name: "a1", Cost: 1, Size: 3 * unit},
		{Name: "a2", Cost: 3, Size: 1 * unit, Deps: []int{0}},
		{Name: "b1", Cost: 1, Size: 3 * unit},
		{Name: "b2", Cost: 2, Size: 1 * unit, Deps: []int{2}},
		{Name: "j", Cost: 1, Size: 1 * unit, Temp: 1 * unit, Deps: []int{1, 3, 0}},
	}}
}

// unet: encoder e1 → e2 → e3 (bottleneck), decoder d2 = f(e3, e2), d1 = f(d2, e1), and a loss.
// Storing everything peaks at 9 (e1, e2, e3, d2 while computing d2), cost 10; at 7 and 8 the
// skip e1 is dropped and recomputed for d1 (cost 11); 6 is infeasible (d1 holds d2, e1, d1: 7).
func unet(unit int64) *instances.Graph {
	return &instances.Graph{Name: "unet", Nodes: []instances.Node{
		{Name: "e1", Cost: 1, Size: 4 * unit},
		{Name: "e2", Cost: 2, Size: 2 * unit, Deps: []int{0}},
		{Name: "e3", Cost: 3, Size: 1 * unit, Deps: []int{1}},
		{Name: "d2", Cost: 2, Size: 2 * unit, Deps: []int{2, 1}},
		{Name: "d1", Cost: 1, Size: 1 * unit, Deps: []int{3, 0}},
		{Name: "loss", Cost: 1, Size: 0, Deps: []int{4}},
	}}
}

// handOptima are the hand-checked optima above: graph, budget in units, optimal cost (+Inf:
// infeasible).
var handOptima = []struct {
	g      func(int64) *instances.Graph
	budget int64
	cost   float64
	reason string
}{
	{diamond, 8, 7, "diamond: everything fits"},
	{diamond, 7, inf, "diamond: the second branch needs src and the first branch's output"},
	{skip, 6, 4, "skip: everything fits"},
	{skip, 5, 5, "skip: x1 is dropped and recomputed for y"},
	{skip, 4, inf, "skip: y needs x3, x1 and its own output"},
	{branches, 8, 8, "branches: everything fits"},
	{branches, 7, 9, "branches: a1 recomputed for the join"},
	{branches, 6, inf, "branches: the join alone needs 7"},
	{unet, 9, 10, "unet: everything fits"},
	{unet, 8, 11, "unet: e1 recomputed for d1"},
	{unet, 7, 11, "unet: e1 recomputed for d1"},
	{unet, 6, inf, "unet: d1 alone needs 7"},
}

var inf = math.Inf(1)
