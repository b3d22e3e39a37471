package verify_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/heuristics/checkpoint"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/verify"
)

// TestIncrementalMemory: the memory Apply keeps up to date equals the sum over the stored
// activations recomputed from scratch, after every operation of checkpoint_sequential's
// schedules (every operation kind) on random chains.
func TestIncrementalMemory(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for k := 0; k < 30; k++ {
		c := instances.Random(r, instances.RandomParams{Stages: 2 + r.IntN(30), MaxSize: 1 << 30, MaxTime: 1, WithABar: true, WithDelta: true, WithOverheads: true})
		for segs := 1; segs <= c.Len(); segs += 3 {
			seq, err := checkpoint.Sequential(c, segs)
			require.NoError(t, err)
			s := verify.InitialState(c)
			for i, op := range seq {
				_, _, err := s.Apply(c, op)
				require.NoError(t, err)
				fresh := verify.RematState{Acts: append([]verify.Act(nil), s.Acts...), T: s.T}
				require.Equal(t, fresh.Memory(c), s.Memory(c), "chain %d, %d segments, op %d", k, segs, i)
			}
		}
	}
}
