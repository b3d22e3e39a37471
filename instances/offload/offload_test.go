package offload

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/memsched/memsched/instances"
)

// TestValidateSizeLimit: a problem built in code whose memory or sizes pass 2^60 B is refused,
// so that OpMemory's 2|w_i| + Σ|a^k| cannot wrap (issue 18: weights of 1.5e18 B on 7 layers
// gave a peak of 0 B).
func TestValidateSizeLimit(t *testing.T) {
	ok := func() *Problem {
		return &Problem{A0: 10, MGPU: 100, Beta: 1, Layers: []Layer{{UF: 1, UB: 2, W: 5, A: 3}, {UF: 1, UB: 2, W: 5, A: 3}}}
	}
	assert.NoError(t, ok().Validate())
	p := ok()
	p.MGPU = instances.MaxBytes + 1
	assert.ErrorContains(t, p.Validate(), "memory")
	p = ok()
	p.Layers[0].W, p.Layers[1].W = 1<<59, 1<<59
	assert.ErrorContains(t, p.Validate(), "layer 2: the sizes")
	p = ok()
	p.Layers[0].W, p.Layers[1].W = math.MaxInt64, math.MaxInt64
	assert.ErrorContains(t, p.Validate(), "2^60")
	p = ok()
	p.A0 = math.MaxInt64
	assert.ErrorContains(t, p.Validate(), "input size a0")
}
