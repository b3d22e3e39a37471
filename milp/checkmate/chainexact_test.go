package checkmate_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/heuristics/checkpoint"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/checkmate"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
)

// TestChainModelSize: the toy chain (n = 7): phase ℓ has F_ck^1..F_ck^{ℓ−1} (21 in all),
// F_∅^2..F_∅^{ℓ−1} (15), F_all^1..F_all^ℓ (28), for ℓ < 7 P^1..P^{ℓ−1} (15) and Q^1..Q^ℓ (21),
// and U^1..U^ℓ (28), and the column "backwards" fixed to 1: 129 columns. The units line is the
// first comment.
func TestChainModelSize(t *testing.T) {
	f, err := checkmate.BuildChain(instances.Toy(), instances.ToyBudget)
	require.NoError(t, err)
	require.NoError(t, f.Model.Validate())
	assert.Equal(t, 129, f.Model.NumVars())
	assert.Equal(t, f.Units.Comment(), f.Model.Comments[0])
	_, err = checkmate.BuildChain(instances.Toy(), -1)
	assert.ErrorContains(t, err, "negative")
}

// TestChainPoint: the sequences of rotor's C_MP (dp.SolvePersistent) and of store-all, on
// random chains of 3–40 stages in bytes and in GiB at budgets from the smallest feasible to the
// store-all peak, are points of the chain-exact model (every row holds, checked by Point) whose
// objective is their replayed makespan; Sequence reads the same sequence back.
func TestChainPoint(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 14))
	points := 0
	for it := 0; it < 30; it++ {
		p := instances.RandomParams{Stages: 3 + r.IntN(38), WithABar: true, WithOverheads: it%3 != 0, WithDelta: it%2 == 0}
		if it%2 == 0 {
			p.MaxSize, p.MaxTime, p.Integer = 20, 5, true
		} else {
			p.MaxSize, p.MaxTime = 4<<30, 0.02
		}
		c := instances.Random(r, p)
		lo := verify.MinBudget(c)
		all, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
		require.NoError(t, err)
		for _, b := range []int64{lo, lo + (all.Peak-lo)/3, lo + 2*(all.Peak-lo)/3, all.Peak} {
			f, err := checkmate.BuildChain(c, b)
			require.NoError(t, err)
			seqs := []schedule.Sequence{}
			if b == all.Peak {
				seqs = append(seqs, checkpoint.StoreAll(c))
			}
			res, err := dp.SolvePersistent(c, b, dp.Options{})
			require.NoError(t, err)
			if res.Feasible {
				seqs = append(seqs, res.Sequence)
			}
			for _, seq := range seqs {
				x, err := f.Point(seq)
				require.NoError(t, err, "chain %d budget %d: %v", it, b, seq)
				rep := f.Model.Check(x)
				require.NoError(t, rep.Err(milp.FeasTol))
				sim, err := verify.Remat(c, seq, verify.RematOptions{})
				require.NoError(t, err)
				assert.InDelta(t, sim.Makespan, rep.Objective*f.Units.Time, 1e-9*sim.Makespan)
				assert.Equal(t, seq, f.Sequence(x))
				points++
			}
		}
	}
	t.Logf("%d sequences converted", points)
	assert.Greater(t, points, 100)
}

// TestChainPointOutside: sequences the model leaves out are refused with the reason.
func TestChainPointOutside(t *testing.T) {
	c := instances.Toy()
	f, err := checkmate.BuildChain(c, 1<<40)
	require.NoError(t, err)
	op := func(k schedule.OpKind, l int) schedule.Op { return schedule.Op{Kind: k, Stage: l} }
	for _, tc := range []struct {
		seq  schedule.Sequence
		want string
	}{
		// F_all^1 in phase 3 over the a^1 stored since phase 7 (valid in 004's model, never
		// needed by an optimum).
		{schedule.Sequence{op(schedule.Fck, 1), op(schedule.Fck, 2), op(schedule.Fall, 3), op(schedule.Fall, 4),
			op(schedule.Fall, 5), op(schedule.Fall, 6), op(schedule.Fall, 7), op(schedule.B, 7), op(schedule.B, 6), op(schedule.B, 5),
			op(schedule.B, 4), op(schedule.Fall, 1), op(schedule.B, 3), op(schedule.Fall, 2), op(schedule.B, 2), op(schedule.B, 1)}, "replaces a stored a^1"},
		// F_ck^2 before F_ck^1 in one phase is not valid at all.
		{schedule.Sequence{op(schedule.Fck, 2)}, "does not replay"},
		// F^1 again after F_∅^2 in phase 7: out of index order.
		{schedule.Sequence{op(schedule.Fck, 1), op(schedule.Fn, 2), op(schedule.Fck, 1), op(schedule.Fall, 3), op(schedule.Fall, 4),
			op(schedule.Fall, 5), op(schedule.Fall, 6), op(schedule.Fall, 7), op(schedule.B, 7), op(schedule.B, 6), op(schedule.B, 5),
			op(schedule.B, 4), op(schedule.B, 3), op(schedule.Fall, 2), op(schedule.B, 2), op(schedule.Fall, 1), op(schedule.B, 1)}, "not in index order"},
	} {
		_, err := f.Point(tc.seq)
		assert.ErrorContains(t, err, tc.want, tc.seq)
	}
}
