package report

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/heuristics/checkpoint"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/instances/zoo"
	"github.com/memsched/memsched/verify"
	"github.com/memsched/memsched/verify/oracle"
)

// rematPoints returns the sweep's remat points keyed by budget.
func rematPoints(t *testing.T, res *SweepResult) map[int64]Point {
	t.Helper()
	pts := map[int64]Point{}
	for _, p := range res.Points {
		if p.Lever == "remat" {
			pts[p.Budget] = p
		}
	}
	require.Len(t, pts, len(res.Budgets))
	return pts
}

// TestSweepExactBoundsEqualExhaustive: on byte-scale random chains (≤ 8 stages, ā ≥ a,
// overheads) the sweep's one exact C_FL table gives, at every budget from the smallest feasible
// to the store-all peak, the optimum of the exhaustive search — as the bound and as the
// floating row.
func TestSweepExactBoundsEqualExhaustive(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 1))
	for k := 0; k < 12; k++ {
		c := instances.Random(r, instances.RandomParams{Stages: 3 + k%6, MaxSize: 40, MaxTime: 9,
			Integer: true, WithABar: true, WithOverheads: k%2 == 0})
		lo := verify.MinBudget(c)
		all, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
		require.NoError(t, err)
		res, err := Sweep(context.Background(), SweepOptions{Input: Input{Chain: c}, Budgets: Budgets(lo, max(all.Peak, lo+1), 6),
			Levers: []string{"remat"}})
		require.NoError(t, err)
		for b, p := range rematPoints(t, res) {
			_, want, ok, err := oracle.Remat(c, b, verify.RematOptions{})
			require.NoError(t, err)
			require.True(t, ok, "chain %d at %d B", k, b)
			assert.InDelta(t, want, p.BestBound, 1e-9*want, "chain %d at %d B: bound", k, b)
			for _, row := range p.Rows {
				if row.Strategy == "floating" {
					assert.InDelta(t, want, row.Makespan, 1e-9*want, "chain %d at %d B: floating", k, b)
				}
			}
		}
	}
}

// TestSweepExactGiB: ResNet-50 (224, batch 8) in GiB: every point is certified by the exact
// C_FL table; capping its frontiers (2 breakpoints) falls back to slots with a note, and the
// floored bounds then lie below the exact optimum at every budget.
func TestSweepExactGiB(t *testing.T) {
	c, err := zoo.ResNet(zoo.CNNConfig{Depth: 50, Image: 224, Batch: 8})
	require.NoError(t, err)
	budgets := Budgets(600<<20, 2<<30, 8)
	exact, err := Sweep(context.Background(), SweepOptions{Input: Input{Chain: c}, Budgets: budgets, Levers: []string{"remat"}})
	require.NoError(t, err)
	capped, err := Sweep(context.Background(), SweepOptions{Input: Input{Chain: c, MaxBreakpoints: 2}, Budgets: budgets, Levers: []string{"remat"}})
	require.NoError(t, err)
	assert.Contains(t, strings.Join(capped.Notes, "\n"), "C_FL exact in bytes is out of reach")
	ep, cp := rematPoints(t, exact), rematPoints(t, capped)
	for _, b := range budgets {
		e, c := ep[b], cp[b]
		if e.Infeasible {
			continue
		}
		assert.Equal(t, "C_FL exact", e.BestBoundBy, b)
		assert.LessOrEqual(t, c.BestBound, e.BestBound*(1+1e-12), b)
		for i, row := range e.Rows {
			if row.Feasible {
				assert.GreaterOrEqual(t, row.Ratio, 1-1e-12, "%s at %d", row.Strategy, b)
				if row.Strategy == "floating" {
					assert.InDelta(t, 1, row.Ratio, 1e-12, b)
					assert.LessOrEqual(t, row.Makespan, c.Rows[i].Makespan*(1+1e-12), "exact ≤ slotted at %d", b)
				}
			}
		}
	}
}

// TestSweepWeightsResident: with WeightsResident the remat and act-offload points at a GPU
// budget b are those of a plain sweep at b minus the chain's weights (byte-scale random chain
// with weights); where the weights alone fill b, both levers are infeasible.
func TestSweepWeightsResident(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	c := instances.Random(r, instances.RandomParams{Stages: 6, MaxSize: 40, MaxTime: 9, Integer: true,
		WithABar: true, WithOverheads: true, WithWeights: true})
	w := chainWeights(c)
	require.Positive(t, w)
	all, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
	require.NoError(t, err)
	lo := verify.MinBudget(c)
	acts := Budgets(lo, all.Peak, 4)
	gpu := make([]int64, len(acts))
	for k, b := range acts {
		gpu[k] = b + w
	}
	gpu = append([]int64{w / 2}, gpu...)
	levers := []string{"remat", "act-offload"}
	res, err := Sweep(context.Background(), SweepOptions{Input: Input{Chain: c, Bandwidth: 7, WeightsResident: true}, Budgets: gpu, Levers: levers})
	require.NoError(t, err)
	plain, err := Sweep(context.Background(), SweepOptions{Input: Input{Chain: c, Bandwidth: 7}, Budgets: acts, Levers: levers})
	require.NoError(t, err)
	byKey := func(res *SweepResult) map[string]Point {
		m := map[string]Point{}
		for _, p := range res.Points {
			m[fmt.Sprint(p.Lever, p.Budget)] = p
		}
		return m
	}
	require.Len(t, res.Points, len(levers)*len(gpu), "every lever at every budget")
	require.Len(t, plain.Points, len(levers)*len(acts))
	got, want := byKey(res), byKey(plain)
	for _, lever := range levers {
		assert.True(t, got[fmt.Sprint(lever, w/2)].Infeasible, lever)
		for k, b := range acts {
			g, p := got[fmt.Sprint(lever, gpu[k+1])], want[fmt.Sprint(lever, b)]
			assert.Equal(t, p.Infeasible, g.Infeasible, "%s at %d", lever, b)
			assert.InDelta(t, p.BestBound, g.BestBound, 1e-12, "%s at %d", lever, b)
		}
	}
}
