package graphsim

import (
	"math/rand/v2"

	"github.com/memsched/memsched/instances"
)

// RandomGraph returns a random test DAG of n nodes: each node reads 1–2 earlier nodes (the first
// none), sizes 1..5 units, costs 1..4, transient memory 0..1 units.
func RandomGraph(r *rand.Rand, n int, unit int64) *instances.Graph {
	g := &instances.Graph{Name: "random"}
	for j := 0; j < n; j++ {
		nd := instances.Node{Name: string(rune('a' + j)), Cost: float64(1 + r.IntN(4)), Size: int64(1+r.IntN(5)) * unit, Temp: int64(r.IntN(2)) * unit}
		if j > 0 {
			nd.Deps = []int{j - 1}
			if j > 1 && r.IntN(2) == 0 {
				nd.Deps = append(nd.Deps, r.IntN(j-1))
			}
		}
		g.Nodes = append(g.Nodes, nd)
	}
	return g
}
