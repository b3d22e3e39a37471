// Package oracle computes exact optima of small rematerialization instances by exhaustive
// search: a shortest path (Dijkstra, durations as costs) over the memory states of 004's model,
// with every operation whose memory exceeds the budget removed. It is the referee of the
// dynamic programs (package dp) and of the closed forms in package verify; it decides nothing
// on its own and trusts no formula, only verify.RematState.Apply.
package oracle

import (
	"container/heap"
	"fmt"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
)

// MaxStages is the largest chain (loss stage included) Remat accepts: the state space has up
// to (L+2)·3^(L+2) states.
const MaxStages = 11

// node is a state of the search; its key is encode(state), plus in phase L+1 the last stage
// run so far in bits 56 and up (RematBudgeted tells first runs from it).
type node struct {
	key    uint64
	cost   float64
	ops    int
	parent uint64
	op     schedule.Op
	done   bool
}

// encode packs a state: T in the low 4 bits, then 2 bits per activation.
func encode(s verify.RematState) uint64 {
	k := uint64(s.T)
	for l, a := range s.Acts {
		k |= uint64(a) << (4 + 2*l)
	}
	return k
}

func decode(k uint64, n int) verify.RematState {
	s := verify.RematState{Acts: make([]verify.Act, n+1), T: int(k & 15)}
	for l := range s.Acts {
		s.Acts[l] = verify.Act(k >> (4 + 2*l) & 3)
	}
	return s
}

type queue []*node

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	if q[i].cost != q[j].cost {
		return q[i].cost < q[j].cost
	}
	if q[i].ops != q[j].ops {
		return q[i].ops < q[j].ops
	}
	return q[i].key < q[j].key
}
func (q queue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)   { *q = append(*q, x.(*node)) }
func (q *queue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// Remat returns a minimum-makespan valid sequence whose peak memory is at most budget (bytes,
// everything counted, a^0 included), or feasible = false when none exists. Among optimal
// sequences it returns one with the fewest operations, ties broken deterministically. It fails
// only when the chain has more than MaxStages stages.
//
// With opt.FreeDelete, dropping any stored activation (Del) is a zero-cost transition.
func Remat(c *instances.Chain, budget int64, opt verify.RematOptions) (seq schedule.Sequence, makespan float64, feasible bool, err error) {
	return remat(c, func(int, schedule.Op, bool) int64 { return budget }, false, opt)
}

// RematPhased is Remat with a budget per phase (004 Def. 4.2): an operation run while δ^ℓ is
// the current gradient (phase ℓ: after B^{ℓ+1}, up to and including B^ℓ; phase L+1 is the
// forward pass and B^{L+1}) must fit in budgets[ℓ], ℓ = 1..L+1 (budgets[0] is unused). It is
// the referee of the dynamic programs with phase budgets (dp.LinkCredit).
func RematPhased(c *instances.Chain, budgets []int64, opt verify.RematOptions) (seq schedule.Sequence, makespan float64, feasible bool, err error) {
	if len(budgets) != c.Len()+1 {
		panic(fmt.Sprintf("oracle: RematPhased with %d budgets for %d stages", len(budgets), c.Len()))
	}
	return remat(c, func(l int, _ schedule.Op, _ bool) int64 { return budgets[l] }, false, opt)
}

// RematBudgeted is Remat with a budget per operation: op, run in phase ℓ, must fit in
// budgetOf(ℓ, op, first), first saying that op is the first run of its stage's forward (in
// phase L+1, the stages run so far are 1..K and a forward of stage K+1 is a first run). It is
// the referee of the dynamic programs with phase budgets (dp.LinkCredit).
func RematBudgeted(c *instances.Chain, budgetOf func(phase int, op schedule.Op, first bool) int64, opt verify.RematOptions) (seq schedule.Sequence, makespan float64, feasible bool, err error) {
	return remat(c, budgetOf, true, opt)
}

func remat(c *instances.Chain, budgetOf func(phase int, op schedule.Op, first bool) int64, firsts bool, opt verify.RematOptions) (seq schedule.Sequence, makespan float64, feasible bool, err error) {
	n := c.Len()
	if n > MaxStages {
		return nil, 0, false, fmt.Errorf("oracle: chain has %d stages, the exhaustive search handles at most %d", n, MaxStages)
	}
	start := verify.InitialState(c)
	if start.Memory(c) > budgetOf(n, schedule.Op{Kind: schedule.Fall, Stage: 1}, true) {
		return nil, 0, false, nil
	}
	nodes := map[uint64]*node{}
	first := &node{key: encode(start)}
	nodes[first.key] = first
	q := &queue{first}
	ops := make([]schedule.Op, 0, 4*n)
	for l := 1; l <= n; l++ {
		ops = append(ops, schedule.Op{Kind: schedule.B, Stage: l})
	}
	for _, k := range []schedule.OpKind{schedule.Fall, schedule.Fck, schedule.Fn} {
		for l := 1; l <= n; l++ {
			ops = append(ops, schedule.Op{Kind: k, Stage: l})
		}
	}
	if opt.FreeDelete {
		for l := 0; l <= n; l++ {
			ops = append(ops, schedule.Op{Kind: schedule.Del, Stage: l})
		}
	}
	for q.Len() > 0 {
		cur := heap.Pop(q).(*node)
		if cur.done || nodes[cur.key] != cur { // stale entry superseded by a cheaper path
			continue
		}
		cur.done = true
		st := decode(cur.key, n)
		kmax := int(cur.key >> 56) // the stages run so far in phase L+1: 1..kmax
		if st.T == 0 {
			return rebuild(nodes, cur), cur.cost, true, nil
		}
		for _, op := range ops {
			next := verify.RematState{Acts: append([]verify.Act(nil), st.Acts...), T: st.T}
			mem, dur, err := next.Apply(c, op)
			first := firsts && st.T == n && op.Kind != schedule.B && op.Kind != schedule.Del && op.Stage > kmax
			if err != nil || mem > budgetOf(st.T, op, first) {
				continue
			}
			k := encode(next)
			if first {
				kmax = op.Stage
				k |= uint64(kmax) << 56
				kmax = int(cur.key >> 56)
			} else if firsts && next.T == n {
				k |= uint64(kmax) << 56
			}
			cost := cur.cost + dur
			if old, ok := nodes[k]; ok {
				if old.done || old.cost < cost || old.cost == cost && old.ops <= cur.ops+1 {
					continue
				}
			}
			nd := &node{key: k, cost: cost, ops: cur.ops + 1, parent: cur.key, op: op}
			nodes[k] = nd
			heap.Push(q, nd)
		}
	}
	return nil, 0, false, nil
}

func rebuild(nodes map[uint64]*node, end *node) schedule.Sequence {
	var seq schedule.Sequence
	for nd := end; nd.ops > 0; nd = nodes[nd.parent] {
		seq = append(seq, nd.op)
	}
	for i, j := 0, len(seq)-1; i < j; i, j = i+1, j-1 {
		seq[i], seq[j] = seq[j], seq[i]
	}
	return seq
}

// MinBudget returns the smallest budget for which a valid sequence exists, by bisection over
// Remat's feasibility (the referee of verify.MinBudget's closed form).
func MinBudget(c *instances.Chain) (int64, error) {
	lo, hi := int64(0), int64(1)
	for {
		_, _, ok, err := Remat(c, hi, verify.RematOptions{})
		if err != nil {
			return 0, err
		}
		if ok {
			break
		}
		lo, hi = hi, hi*2
	}
	for lo+1 < hi {
		mid := lo + (hi-lo)/2
		_, _, ok, _ := Remat(c, mid, verify.RematOptions{})
		if ok {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}
