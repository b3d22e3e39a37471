package actoffload

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	act "github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/schedule"
)

// allOrders calls f with every link sequence over the activations in cand (each chosen one
// offloaded once and later prefetched once), the empty one included.
func allOrders(cand []int, f func([]schedule.ActTransfer)) {
	state := map[int]int{}
	var seq []schedule.ActTransfer
	var rec func()
	rec = func() {
		open := false
		for _, j := range cand {
			if state[j] == 1 {
				open = true
			}
		}
		if !open {
			f(seq)
		}
		for _, j := range cand {
			switch state[j] {
			case 0:
				state[j] = 1
				seq = append(seq, schedule.ActTransfer{Kind: schedule.Offload, Index: j})
			case 1:
				state[j] = 2
				seq = append(seq, schedule.ActTransfer{Kind: schedule.Prefetch, Index: j})
			default:
				continue
			}
			rec()
			seq = seq[:len(seq)-1]
			state[j]--
		}
	}
	rec()
}

// Exact's branch and bound against plain enumeration of every link sequence through NoWait, on
// 300 seeded instances with at most 4 operations; GREEDY and VDNN are never better.
func TestExactAgainstEnumeration(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 1))
	moved, infeasible := 0, 0
	for it := 0; it < 300; it++ {
		unit := int64(1)
		if it%2 == 1 {
			unit = 1 << 30
		}
		p := act.Random(r, 1+r.IntN(4), unit)
		var cand []int
		for j := 0; j <= p.L(); j++ {
			if p.X[j] > 0 {
				cand = append(cand, j)
			}
		}
		best := math.Inf(1)
		allOrders(cand, func(seq []schedule.ActTransfer) {
			res, err := NoWait(p, seq)
			require.NoError(t, err)
			best = math.Min(best, res.Makespan())
		})
		e, st, err := Exact(p, ExactOptions{})
		require.NoError(t, err)
		require.Equal(t, Optimal, st)
		if !e.Feasible {
			infeasible++
		} else if len(e.Offloaded) > 0 {
			moved++
		}
		prop3, frac := p.Prop3(), p.Fractional()
		assert.LessOrEqual(t, prop3, frac*(1+1e-12), "instance %d", it)
		assert.LessOrEqual(t, frac, best*(1+1e-12), "instance %d: fractional bound above the optimum", it)
		assert.InDelta(t, best, e.Makespan(), 1e-9*math.Max(1, best), "instance %d: %+v", it, p)
		for name, f := range map[string]func(*act.Problem) (*Result, error){
			"greedy": Greedy,
			"vdnn":   func(p *act.Problem) (*Result, error) { return VDNN(p, VDNNBoth) },
		} {
			h, err := f(p)
			require.NoError(t, err)
			assert.GreaterOrEqual(t, h.Makespan(), e.Makespan()*(1-1e-12), "%s on instance %d", name, it)
		}
	}
	t.Logf("%d instances need transfers, %d have no schedule", moved, infeasible)
	assert.Greater(t, moved, 100, "the corpus must exercise offloading")
}
