package checkpoint_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/heuristics/checkpoint"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
)

// TestCoarseExpansionFits: the coarse chain's sizes bound its expansion. On random chains at
// byte and GiB scale, every grouping, and sequences of the coarse chain of every kind (C_MP's
// at several budgets: F_ck, F_∅, F_all and B; sequential checkpointing; store-all), the expanded
// sequence replays on the fine chain with the same makespan and a peak no larger than the
// coarse sequence's.
func TestCoarseExpansionFits(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 23))
	n := 150
	if testing.Short() {
		n = 40
	}
	checked := 0
	for k := 0; k < n; k++ {
		var c *instances.Chain
		if k%2 == 0 {
			c = instances.RandomTiny(r, k)
		} else {
			c = instances.Random(r, instances.RandomParams{Stages: 3 + r.IntN(40), MaxSize: 1 << 20, MaxTime: 0.01, WithABar: true, WithOverheads: true, WithDelta: true})
		}
		if k%3 == 0 {
			c = c.Scaled(1 << 30)
		}
		for g := 1; g <= c.Len(); g++ {
			co, err := checkpoint.NewCoarse(c, g)
			require.NoError(t, err)
			require.Len(t, co.Chain.Stages, g)
			sa, err := verify.Remat(co.Chain, checkpoint.StoreAll(co.Chain), verify.RematOptions{})
			require.NoError(t, err)
			lo := verify.MinBudget(co.Chain)
			seqs := []schedule.Sequence{checkpoint.StoreAll(co.Chain)}
			for j := 0; j < 3; j++ {
				res, err := dp.SolvePersistent(co.Chain, lo+r.Int64N(max(sa.Peak-lo, 0)+1), dp.Options{Slots: 40})
				require.NoError(t, err)
				if res.Feasible {
					seqs = append(seqs, res.Sequence)
				}
			}
			for segs := 2; segs <= min(g, 4); segs++ {
				seq, err := checkpoint.Sequential(co.Chain, segs)
				require.NoError(t, err)
				seqs = append(seqs, seq)
			}
			for _, seq := range seqs {
				name := fmt.Sprintf("chain %d, %d groups, %v", k, g, seq)
				coarse, err := verify.Remat(co.Chain, seq, verify.RematOptions{})
				require.NoError(t, err, name)
				fine, err := verify.Remat(c, co.Expand(seq), verify.RematOptions{})
				require.NoError(t, err, name)
				assert.LessOrEqual(t, fine.Peak, coarse.Peak, name)
				assert.InDelta(t, coarse.Makespan, fine.Makespan, 1e-9*coarse.Makespan+1e-15, name)
				checked++
			}
		}
	}
	t.Logf("%d coarse sequences expanded and replayed", checked)
}

func TestNewCoarseRefusesBadGroups(t *testing.T) {
	c := instances.RandomTiny(rand.New(rand.NewPCG(1, 2)), 0)
	for _, g := range []int{0, -1, c.Len() + 1} {
		_, err := checkpoint.NewCoarse(c, g)
		assert.Error(t, err, "%d groups", g)
	}
}
