package instances

import "strconv"

// GraphFromChain converts a chain (SPEC §1) into the operation graph Checkmate's node model
// sees (SPEC §4, 004 §5.5):
//
//   - Fixed memory is a^0: it stays stored through B^1, which is the last operation.
//   - When the loss gradient δ^{L+1} has a size, a zero-cost source node "dloss" comes first.
//   - F^ℓ (ℓ = 1..L+1, the loss stage last) costs u_f^ℓ, depends on F^{ℓ-1} (a^0 is fixed), and
//     outputs ā^ℓ (ω_ā^ℓ bytes), with o_f^ℓ transient memory.
//   - B^ℓ (ℓ = L+1..1) costs u_b^ℓ, depends on F^ℓ (ā^ℓ), F^{ℓ-1} (a^{ℓ-1}, for ℓ ≥ 2) and
//     B^{ℓ+1} (δ^ℓ; "dloss" for ℓ = L+1), and outputs δ^{ℓ-1} (ω_δ^{ℓ-1} bytes), with o_b^ℓ
//     transient memory.
//
// A node has one output, so a forward cannot choose between keeping a^ℓ and keeping ā^ℓ: the
// graph keeps ā^ℓ whenever it keeps anything, which is what the chain model calls F_all.
// When ā = a this is rotor's model; otherwise schedules of the graph are schedules of the chain
// but not conversely (docs/graph-format.md).
func GraphFromChain(c *Chain) *Graph {
	L1 := c.Len()
	g := &Graph{Name: c.Name, Fixed: c.A0}
	loss := -1
	if d := c.SizeDelta(L1); d > 0 {
		loss = 0
		g.Nodes = append(g.Nodes, Node{Name: "dloss", Size: d})
	}
	fwd := make([]int, L1+1) // fwd[ℓ] = node index of F^ℓ
	for l := 1; l <= L1; l++ {
		s := c.Stage(l)
		n := Node{Name: "F" + strconv.Itoa(l), Cost: s.UF, Size: s.ABar, Temp: s.OF}
		if l > 1 {
			n.Deps = []int{fwd[l-1]}
		}
		fwd[l] = len(g.Nodes)
		g.Nodes = append(g.Nodes, n)
	}
	prev := loss // node producing δ^ℓ
	for l := L1; l >= 1; l-- {
		s := c.Stage(l)
		n := Node{Name: "B" + strconv.Itoa(l), Cost: s.UB, Size: c.SizeDelta(l - 1), Temp: s.OB}
		n.Deps = append(n.Deps, fwd[l])
		if l > 1 {
			n.Deps = append(n.Deps, fwd[l-1])
		}
		if prev >= 0 {
			n.Deps = append(n.Deps, prev)
		}
		prev = len(g.Nodes)
		g.Nodes = append(g.Nodes, n)
	}
	return g
}
