package report

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/heuristics/checkpoint"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/instances/zoo"
	"github.com/memsched/memsched/verify"
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
// 90 MiB: greedy and vdnn reach Σu = 37.38 ms, which 001 Prop. 3 certifies, so the split's
// strategy and the exact search are not run (nothing left to find).
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
		if r.Strategy == "exact" || r.Strategy == "split" {
			assert.False(t, r.Feasible)
			assert.Contains(t, r.Note, "not run: the greedy row is proven optimal")
			continue
		}
		assert.True(t, r.Verified, r.Strategy)
		assert.InDelta(t, 1, r.Ratio, 1e-9, r.Strategy)
	}
	assert.Equal(t, "the chain has no weights (w = 0 on every stage)", rep.Levers["weight-offload"].Skipped)
}

// TestCertifyRematCollapsed: on zoo chains whose optimum is persistent, certify proves it with
// C_FL collapsed and exact C_MP (no C_FL table): GPT-2 (every block output the same size, so
// P = C_MP by construction) and ResNet-50 (a^1 smaller than a^2: one source table), 25 % of the
// way from the smallest budget to store-all. The persistent row is exact C_MP's sequence, the
// floating row the same proven-optimal sequence, and no bound lies above a verified row.
func TestCertifyRematCollapsed(t *testing.T) {
	gpt, err := zoo.Transformer(zoo.TransformerConfig{Kind: "gpt2", Hidden: 768, Heads: 12, Layers: 12, SeqLen: 1024, Batch: 8})
	require.NoError(t, err)
	rn, err := zoo.ResNet(zoo.CNNConfig{Depth: 50, Image: 224, Batch: 32})
	require.NoError(t, err)
	for _, c := range []*instances.Chain{gpt, rn} {
		lo := verify.MinBudget(c)
		all, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
		require.NoError(t, err)
		in := Input{Chain: c, Budget: lo + (all.Peak-lo)/4}
		lr, err := Remat{}.Run(context.Background(), in)
		require.NoError(t, err)
		Summarize(&lr)
		require.True(t, lr.Optimal, c.Name)
		assert.Equal(t, "C_FL collapsed", lr.BestBoundBy, c.Name)
		for _, b := range lr.Bounds {
			assert.NotEqual(t, "C_FL exact", b.Name, "no C_FL table when the bracket is closed")
			for _, r := range lr.Rows {
				if r.Feasible && !b.Infeasible {
					assert.LessOrEqual(t, b.Value, r.Makespan*(1+1e-9), "%s: %s above %s", c.Name, b.Name, r.Strategy)
				}
			}
		}
		for _, r := range lr.Rows {
			switch r.Strategy {
			case "persistent", "floating":
				assert.InDelta(t, lr.BestBound, r.Makespan, 1e-12*r.Makespan, "%s %s", c.Name, r.Strategy)
			}
		}
	}
}

// TestCertifyRematFloatingExact: where C_FL collapsed stays below exact C_MP (DenseNet-121 at
// 25 %, many sources), the exact C_FL table pruned by exact C_MP's makespan closes the bracket.
func TestCertifyRematFloatingExact(t *testing.T) {
	if testing.Short() {
		t.Skip("DenseNet-121's exact C_FL table: seconds")
	}
	c, err := zoo.DenseNet(zoo.CNNConfig{Depth: 121, Image: 224, Batch: 16})
	require.NoError(t, err)
	lo := verify.MinBudget(c)
	all, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
	require.NoError(t, err)
	lr, err := Remat{}.Run(context.Background(), Input{Chain: c, Budget: lo + (all.Peak-lo)/4})
	require.NoError(t, err)
	Summarize(&lr)
	require.True(t, lr.Optimal)
	assert.Equal(t, "C_FL exact", lr.BestBoundBy)
	var col, ex float64
	for _, b := range lr.Bounds {
		switch b.Name {
		case "C_FL collapsed":
			col = b.Value
		case "C_FL exact":
			ex = b.Value
		}
	}
	assert.Less(t, col, ex, "collapsed is below the optimum here")
}
