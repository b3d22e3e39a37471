package offload

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	inst "github.com/memsched/memsched/instances/offload"
)

// TestL2LValid: on random instances with enough memory for two layers' weights at a time, L2L
// builds a schedule the validator accepts, whose period is at least Σu and which moves every
// weight but w_1 out and back once.
func TestL2LValid(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 2))
	for k := 0; k < 200; k++ {
		L := 1 + r.IntN(8)
		p := &inst.Problem{Beta: float64(1 + r.IntN(8))}
		var sumU float64
		var maxW, maxOp int64
		for i := 0; i < L; i++ {
			l := inst.Layer{UF: float64(r.IntN(5)), UB: float64(r.IntN(9)), W: int64(r.IntN(10)), A: int64(r.IntN(4))}
			p.Layers = append(p.Layers, l)
			sumU += l.UF + l.UB
			maxW = max(maxW, l.W)
		}
		for i := 1; i <= L; i++ {
			maxOp = max(maxOp, p.OpMemory(i, true))
		}
		p.MGPU = maxOp + 3*maxW
		s, rep, err := L2L(p)
		require.NoError(t, err, "instance %d: %+v", k, p)
		assert.GreaterOrEqual(t, rep.Period, sumU-1e-9)
		assert.InDelta(t, rep.Period-sumU, rep.Idle, 1e-9)
		assert.Equal(t, rep.Period, s.Period)
	}
}
