package report

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
)

// TestCertifyRematOffload: certify's fourth lever on the toy chain at 80 MiB and 1 GB/s,
// where rematerialization alone is infeasible and activation offloading takes 79.03 ms: every
// strategy is verified, the best is below activation offloading's best, and the only bound is
// Σ(u_f+u_b) (the class bound needs β·u in whole bytes). On SPEC §6 case E (bytes) the class
// bound is computed, at most every row, and its note says it bounds the class only.
func TestCertifyRematOffload(t *testing.T) {
	in := Input{Chain: instances.Toy(), Budget: 80 << 20, Bandwidth: 1e9}
	rep, err := Certify(context.Background(), in, DefaultLevers())
	require.NoError(t, err)
	require.Contains(t, rep.Levers, "remat-offload")
	lr := rep.Levers["remat-offload"]
	require.Len(t, lr.Rows, 3)
	for _, r := range lr.Rows {
		require.True(t, r.Feasible, r.Strategy)
		assert.True(t, r.Verified)
		assert.LessOrEqual(t, r.Peak, int64(80<<20))
	}
	assert.True(t, rep.Levers["remat"].Infeasible)
	assert.Less(t, lr.BestAt, rep.Levers["act-offload"].BestAt)
	assert.Equal(t, "Σ(u_f+u_b)", lr.BestBoundBy)

	e := Input{Chain: instances.SpecCombinedE(), Budget: 12, Bandwidth: 2}
	rep, err = Certify(context.Background(), e, map[string]Lever{"remat-offload": RematOffload{}})
	require.NoError(t, err)
	lr = rep.Levers["remat-offload"]
	var class *Bound
	for i := range lr.Bounds {
		if lr.Bounds[i].Kind == DPRelaxation {
			class = &lr.Bounds[i]
		}
	}
	require.NotNil(t, class)
	assert.Contains(t, class.Note, "class only")
	assert.LessOrEqual(t, class.Value, 11.0)
	for _, r := range lr.Rows {
		if r.Feasible {
			assert.GreaterOrEqual(t, r.Makespan, class.Value-1e-12, r.Strategy)
		}
	}
	assert.Equal(t, 11.0, lr.BestAt)
}

// TestSweepRematOffload: the sweep's fourth lever has a point per budget with every strategy.
func TestSweepRematOffload(t *testing.T) {
	res, err := Sweep(context.Background(), SweepOptions{Input: Input{Chain: instances.Toy(), Bandwidth: 1e9},
		Budgets: Budgets(80<<20, 110<<20, 4), Levers: []string{"remat-offload"}})
	require.NoError(t, err)
	require.Len(t, res.Points, 4)
	for _, p := range res.Points {
		assert.Equal(t, "remat-offload", p.Lever)
		require.Len(t, p.Rows, 3)
		assert.True(t, p.Rows[0].Feasible)
		assert.GreaterOrEqual(t, p.Rows[0].Ratio, 1.0)
	}
}
