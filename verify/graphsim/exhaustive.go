package graphsim

import (
	"container/heap"
	"math"
	"math/bits"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
)

// MaxExhaustive is the largest graph the exhaustive searches accept.
const MaxExhaustive = 12

// masks precomputes bit sets of a small graph.
type masks struct {
	g     *instances.Graph
	deps  []uint32
	users []uint32
}

func newMasks(g *instances.Graph) masks {
	if g.Len() > MaxExhaustive {
		panic("graphsim: graph too large for exhaustive search")
	}
	m := masks{g: g, deps: make([]uint32, g.Len()), users: make([]uint32, g.Len())}
	for j, nd := range g.Nodes {
		for _, i := range nd.Deps {
			m.deps[j] |= 1 << i
			m.users[i] |= 1 << j
		}
	}
	return m
}

func (m masks) size(set uint32) int64 {
	var s int64
	for ; set != 0; set &= set - 1 {
		s += m.g.Nodes[bits.TrailingZeros32(set)].Size
	}
	return s
}

// stage runs one stage on bit sets with Replay's rules and returns its cost, or ok = false.
func (m masks) stage(keep, comp, next uint32, budget int64) (cost float64, ok bool) {
	cur := keep
	mem := m.g.Fixed + m.size(keep)
	for c := comp; c != 0; c &= c - 1 {
		k := bits.TrailingZeros32(c)
		nd := m.g.Nodes[k]
		if cur&(1<<k) != 0 || m.deps[k]&^cur != 0 || mem+nd.Size+nd.Temp > budget {
			return 0, false
		}
		cur |= 1 << k
		mem += nd.Size
		cost += nd.Cost
		later := comp &^ (1<<(k+1) - 1)
		for f := m.deps[k] | 1<<k; f != 0; f &= f - 1 {
			i := bits.TrailingZeros32(f)
			if next&(1<<i) == 0 && m.users[i]&later == 0 {
				cur &^= 1 << i
				mem -= m.g.Nodes[i].Size
			}
		}
	}
	return cost, next&^cur == 0
}

// Staged returns an optimal staged schedule with Checkmate's frontier (SPEC §4: stage t computes
// node t and possibly recomputes nodes before it; R and S lower-triangular) by exhaustive dynamic
// programming over (stage, kept set), and its cost. ok is false when no such schedule fits the
// budget. The schedule is replayed before it is returned. It panics for graphs over
// MaxExhaustive nodes; the work grows as 8^n.
func Staged(g *instances.Graph, budget int64) (*schedule.GraphSchedule, float64, bool) {
	m := newMasks(g)
	n := g.Len()
	type choice struct {
		comp, next uint32
		cost       float64
	}
	memo := make([]map[uint32]choice, n+1)
	for t := range memo {
		memo[t] = map[uint32]choice{}
	}
	var best func(t int, keep uint32) choice
	best = func(t int, keep uint32) choice {
		if t == n {
			return choice{}
		}
		if c, ok := memo[t][keep]; ok {
			return c
		}
		res := choice{cost: math.Inf(1)}
		free := uint32(1<<t-1) &^ keep // nodes before t that could be recomputed
		for sub := free; ; sub = (sub - 1) & free {
			comp := sub | 1<<t
			avail := (keep | comp) & (1<<(t+1) - 1)
			if t == n-1 {
				avail = 0
			}
			for nx := avail; ; nx = (nx - 1) & avail {
				if c, ok := m.stage(keep, comp, nx, budget); ok {
					if rest := best(t+1, nx); c+rest.cost < res.cost {
						res = choice{comp: comp, next: nx, cost: c + rest.cost}
					}
				}
				if nx == 0 {
					break
				}
			}
			if sub == 0 {
				break
			}
		}
		memo[t][keep] = res
		return res
	}
	if math.IsInf(best(0, 0).cost, 1) {
		return nil, math.Inf(1), false
	}
	s := &schedule.GraphSchedule{}
	keep := uint32(0)
	for t := 0; t < n; t++ {
		c := best(t, keep)
		s.Stages = append(s.Stages, schedule.GraphStage{Keep: list(keep), Compute: list(c.comp)})
		keep = c.next
	}
	r, err := Replay(g, s, budget)
	if err != nil {
		panic("graphsim: exhaustive staged schedule does not replay: " + err.Error())
	}
	return s, r.Cost, true
}

func list(set uint32) []int {
	out := []int{}
	for ; set != 0; set &= set - 1 {
		out = append(out, bits.TrailingZeros32(set))
	}
	return out
}

// Unstaged returns the least total cost of any sequence of computations and frees (an output
// may be freed at any time at no cost; a node runs when its inputs are present and fixed memory,
// the present outputs, its output and its transient memory fit the budget) that computes every
// node at least once — Dijkstra over (present, ever computed). It has no stages and no frontier,
// so it is ≤ Staged; ok is false when nothing fits. It panics over MaxExhaustive nodes.
func Unstaged(g *instances.Graph, budget int64) (float64, bool) {
	m := newMasks(g)
	n := g.Len()
	all := uint32(1<<n - 1)
	type state struct{ cur, done uint32 }
	dist := map[state]float64{{}: 0}
	pq := &queue{{s: 0, d: 0}}
	enc := func(s state) uint64 { return uint64(s.cur)<<32 | uint64(s.done) }
	dec := func(x uint64) state { return state{uint32(x >> 32), uint32(x)} }
	for pq.Len() > 0 {
		it := heap.Pop(pq).(item)
		s := dec(it.s)
		if it.d > dist[s] {
			continue
		}
		if s.done == all {
			return it.d, true
		}
		push := func(ns state, d float64) {
			if old, ok := dist[ns]; !ok || d < old {
				dist[ns] = d
				heap.Push(pq, item{s: enc(ns), d: d})
			}
		}
		mem := g.Fixed + m.size(s.cur)
		for k := 0; k < n; k++ {
			nd := g.Nodes[k]
			if s.cur&(1<<k) == 0 && m.deps[k]&^s.cur == 0 && mem+nd.Size+nd.Temp <= budget {
				push(state{s.cur | 1<<k, s.done | 1<<k}, it.d+nd.Cost)
			}
			if s.cur&(1<<k) != 0 {
				push(state{s.cur &^ (1 << k), s.done}, it.d)
			}
		}
	}
	return math.Inf(1), false
}

type item struct {
	s uint64
	d float64
}

type queue []item

func (q queue) Len() int           { return len(q) }
func (q queue) Less(i, j int) bool { return q[i].d < q[j].d }
func (q queue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)        { *q = append(*q, x.(item)) }
func (q *queue) Pop() any          { o := *q; x := o[len(o)-1]; *q = o[:len(o)-1]; return x }
