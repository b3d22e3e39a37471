package offload

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	inst "github.com/memsched/memsched/instances/offload"
	"github.com/memsched/memsched/verify/periodic"
)

// TestGreedyReserveNeverWorse: on 150 random instances GreedyReserve's schedule re-validates
// independently with the reported period, is never longer than Greedy's (r = 0 is among its
// candidates) and never shorter than the exhaustive search over selections (L ≤ 4).
func TestGreedyReserveNeverWorse(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	for k := 0; k < 150; k++ {
		p := inst.Random(r, 1+r.IntN(4))
		for _, disc := range []bool{true, false} {
			_, _, g, gerr := Greedy(p, disc)
			_, s, rep, err := GreedyReserve(p, disc)
			if gerr == nil {
				require.NoError(t, err, "instance %d: Greedy succeeded, GreedyReserve must too", k)
			}
			if err != nil {
				continue
			}
			again, err := periodic.Validate(p, s)
			require.NoError(t, err, "instance %d", k)
			assert.InDelta(t, rep.Period, again.Period, 1e-9, "instance %d", k)
			if gerr == nil {
				assert.LessOrEqual(t, rep.Period, g.Period+1e-9, "instance %d discount=%v", k, disc)
			}
			if disc {
				_, ex, err := Exhaustive(p)
				if err == nil {
					assert.GreaterOrEqual(t, rep.Period, ex.Period-1e-9, "instance %d", k)
				}
			}
		}
	}
}
