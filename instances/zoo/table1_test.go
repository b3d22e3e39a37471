package zoo_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/heuristics/offload"
	"github.com/memsched/memsched/instances/zoo"
)

// TestTable1Family: every Table 1 row gives Depth layers whose Σ(u_F + u_B) equals the printed
// Σu, whose weights exceed M_GPU (so offloading is needed, as in 002 §7), and on which Greedy
// and L2L produce validated schedules no shorter than Σu.
func TestTable1Family(t *testing.T) {
	for _, r := range zoo.Table1() {
		p, err := zoo.Table1Problem(r)
		require.NoError(t, err, "%s %d/%d", r.Kind, r.Depth, r.Batch)
		assert.Equal(t, r.Depth, p.L(), "%s %d/%d: layers", r.Kind, r.Depth, r.Batch)
		var sum float64
		var w int64
		for _, l := range p.Layers {
			sum += l.UF + l.UB
			w += l.W
		}
		assert.InEpsilon(t, r.SumU, sum*1000, 1e-9, "%s %d/%d: Σu", r.Kind, r.Depth, r.Batch)
		assert.Greater(t, w, p.MGPU, "%s %d/%d: weights must not fit", r.Kind, r.Depth, r.Batch)
		if testing.Short() {
			continue
		}
		_, _, g, err := offload.Greedy(p, true)
		require.NoError(t, err, "%s %d/%d greedy", r.Kind, r.Depth, r.Batch)
		_, l2l, err := offload.L2L(p)
		require.NoError(t, err, "%s %d/%d l2l", r.Kind, r.Depth, r.Batch)
		assert.GreaterOrEqual(t, g.Period*1000, r.SumU*(1-1e-9))
		assert.GreaterOrEqual(t, l2l.Period*1000, r.SumU*(1-1e-9))
	}
}
