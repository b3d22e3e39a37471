package dp

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	act "github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/instances/zoo"
)

// ResNet-152 (224×224, batch 32, β = 12 GB/s) at 75 % of the way from the smallest memory to
// M_peak: DYNPROG's schedule (286.41 ms) was 1.0102 × the best bound before the staircase (the
// fluid and whole-transfer windows, 283.51 ms; the MILP stopped at a 1 % gap after 60 s); the
// staircase of the windows proves it optimal in milliseconds. And the staircase never exceeds
// a verified schedule at the other budgets.
func TestStaircaseProvesDynProgResNet152(t *testing.T) {
	c, err := zoo.ResNet(zoo.CNNConfig{Depth: 152, Image: 224, Batch: 32})
	require.NoError(t, err)
	p0, err := act.FromChain(c, 1, 12e9)
	require.NoError(t, err)
	lo, hi := p0.MinMemory(), p0.Peak()
	for _, pct := range []int64{10, 25, 50, 75} {
		p, err := act.FromChain(c, lo+(hi-lo)*pct/100, 12e9)
		require.NoError(t, err)
		r, err := DynProg(p, ActOptions{})
		require.NoError(t, err)
		require.True(t, r.Feasible)
		ms := r.Report.Makespan
		b, ok := p.Staircase(act.StaircaseOptions{Upper: ms})
		require.True(t, ok, "%d %%", pct)
		assert.LessOrEqual(t, b, ms*(1+1e-12), "%d %%", pct)
		assert.GreaterOrEqual(t, b, p.WholeTransfers(), "%d %%", pct)
		if pct == 75 {
			assert.InDelta(t, 0.28641, ms, 5e-6)
			assert.Greater(t, ms, p.WholeTransfers()*1.01, "the windows alone leave it open")
			assert.GreaterOrEqual(t, b, ms*(1-1e-6), "the staircase proves DYNPROG optimal")
		}
	}
}
