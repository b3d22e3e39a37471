package report

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
)

// TestCertifyToyPureGo: without any MILP backend (pure Go build) the toy chain is certified by
// the exhaustive search and the DP; the weight lever is skipped for want of a bandwidth.
func TestCertifyToyPureGo(t *testing.T) {
	in := Input{Chain: instances.DefaultChain(), Budget: 90 << 20}
	rep, err := Certify(context.Background(), in, DefaultLevers())
	require.NoError(t, err)
	assert.Equal(t, LeverNames, rep.Order)
	lr := rep.Levers["remat"]
	assert.True(t, lr.Optimal)
	assert.InDelta(t, 0.04742, lr.BestBound, 1e-12)
	assert.Equal(t, "no bandwidth given (--bandwidth RATE)", rep.Levers["weight-offload"].Skipped)
}

// TestSummarize: the best bound is the largest; an infeasibility proof wins; ratios are
// makespan / best bound.
func TestSummarize(t *testing.T) {
	cases := []struct {
		name    string
		bounds  []Bound
		best    float64
		optimal bool
		infeas  bool
	}{
		{"largest of two bounds", []Bound{{Name: "a", Value: 1}, {Name: "b", Value: 2}}, 2, true, false},
		{"a bound below the best row", []Bound{{Name: "a", Value: 1.5}}, 1.5, false, false},
		{"infeasibility proof", []Bound{{Name: "a", Value: 1}, {Name: "x", Infeasible: true}}, 0, false, true},
	}
	for _, tc := range cases {
		lr := LeverReport{Bounds: tc.bounds, Rows: []Row{{Strategy: "s", Feasible: true, Makespan: 2}, {Strategy: "t", Feasible: true, Makespan: 3}, {Strategy: "u"}}}
		Summarize(&lr)
		assert.Equal(t, tc.best, lr.BestBound, tc.name)
		assert.Equal(t, tc.optimal, lr.Optimal, tc.name)
		assert.Equal(t, tc.infeas, lr.Infeasible, tc.name)
		assert.Equal(t, "s", lr.Best, tc.name)
		if tc.best > 0 {
			assert.InDelta(t, 3/tc.best, lr.Rows[1].Ratio, 1e-12, tc.name)
		}
		assert.Zero(t, lr.Rows[2].Ratio, tc.name)
	}
}

// TestCertifyActOffloadToy: with 12 GB/s, offloading hides every transfer on the toy chain at
// 90 MiB: greedy, vdnn and exact reach Σu = 37.38 ms, which 001 Prop. 3 certifies.
func TestCertifyActOffloadToy(t *testing.T) {
	in := Input{Chain: instances.DefaultChain(), Budget: 90 << 20, Bandwidth: 12e9}
	rep, err := Certify(context.Background(), in, DefaultLevers())
	require.NoError(t, err)
	lr := rep.Levers["act-offload"]
	require.Empty(t, lr.Skipped)
	assert.True(t, lr.Optimal)
	assert.InDelta(t, 0.03738, lr.BestBound, 1e-12)
	for _, r := range lr.Rows {
		if r.Strategy == "none" {
			assert.False(t, r.Feasible, "store-all peak 107 MiB > 90 MiB")
			continue
		}
		assert.True(t, r.Verified, r.Strategy)
		assert.InDelta(t, 1, r.Ratio, 1e-9, r.Strategy)
	}
	assert.Equal(t, "the chain has no weights (w = 0 on every stage)", rep.Levers["weight-offload"].Skipped)
}
