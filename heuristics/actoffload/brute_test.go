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

// randomProblem draws a small instance with L+1 = n operations, sizes in [0, 9]·unit, times in
// [0, 3] and M_GPU between the smallest feasible memory and M_peak.
func randomProblem(r *rand.Rand, n int, unit int64) *act.Problem {
	p := &act.Problem{
		X: make([]int64, n+1), Y: make([]int64, n+1),
		UF: make([]float64, n), UB: make([]float64, n), ExF: make([]int64, n), ExB: make([]int64, n),
		Beta: float64(unit) * float64(1+r.IntN(4)),
	}
	for i := range p.X {
		p.X[i] = unit * int64(r.IntN(10))
		if r.IntN(3) == 0 {
			p.Y[i] = unit * int64(r.IntN(4))
		}
	}
	for i := 0; i < n; i++ {
		p.UF[i], p.UB[i] = float64(r.IntN(4)), float64(r.IntN(4))
		if r.IntN(3) == 0 {
			p.ExF[i] = unit * int64(r.IntN(4))
		}
		if r.IntN(3) == 0 {
			p.ExB[i] = unit * int64(r.IntN(4))
		}
	}
	lo, hi := p.MinMemory(), p.Peak()
	p.MGPU = max(1, lo+(hi-lo)*int64(r.IntN(5))/4)
	return p
}

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
		p := randomProblem(r, 1+r.IntN(4), unit)
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
