package offload

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	inst "github.com/memsched/memsched/instances/offload"
)

// TestGreedyValidAndNoWorseThanExhaustive: Greedy and Greedy* schedules validate (checked inside
// Schedule); the exhaustive search over selections is never slower than Greedy; with every
// weight fitting, Greedy offloads nothing and runs in Σu.
func TestGreedyValidAndNoWorseThanExhaustive(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	ok, better := 0, 0
	for k := 0; k < 150; k++ {
		p := inst.Random(r, 1+r.IntN(4))
		_, _, g, err := Greedy(p, true)
		if err != nil {
			continue // the greedy scheduler may fail validation; counted below
		}
		ok++
		_, _, gs, err := Greedy(p, false)
		if err == nil {
			assert.GreaterOrEqual(t, gs.Offloaded, g.Offloaded-0, "Greedy* moves at least as much as Greedy")
		}
		_, ex, err := Exhaustive(p)
		require.NoError(t, err)
		assert.LessOrEqual(t, ex.Period, g.Period+1e-9)
		if ex.Period < g.Period-1e-9 {
			better++
		}
	}
	t.Logf("greedy valid on %d/150 instances; exhaustive strictly better on %d", ok, better)
	assert.Greater(t, ok, 100)

	roomy := &inst.Problem{Layers: []inst.Layer{{UF: 1, UB: 2, W: 5, A: 1}, {UF: 1, UB: 2, W: 5, A: 1}}, MGPU: 1000, Beta: 1}
	sel, _, rep, err := Greedy(roomy, true)
	require.NoError(t, err)
	assert.Equal(t, Selection{{}, {}, {}}, sel)
	assert.Equal(t, 6.0, rep.Period)
	assert.Equal(t, 0.0, rep.Idle)
}
