package weightlb_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances/offload"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/ref"
	"github.com/memsched/memsched/milp/weightlb"
)

// TestNonzeros: the size estimate that guards the model's memory is Build's exact count.
func TestNonzeros(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, L := range []int{1, 2, 3, 7, 20} {
		p := offload.Random(r, L)
		m, _, err := weightlb.Build(p)
		require.NoError(t, err)
		assert.Equal(t, m.NumNonzeros(), weightlb.Nonzeros(L), "L = %d", L)
	}
}

// TestMemoryCapAndDeadline: above MaxMemory the MILP is not built (a note says why, the
// closed-form bounds stand); a deadline that passes while the model is built stops the build
// and reports time-limit without a bound.
func TestMemoryCapAndDeadline(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	p := offload.Random(r, 20)
	s, _ := ref.New()
	c, err := weightlb.LowerBound(context.Background(), p, weightlb.Options{Solvers: []milp.Solver{s}, MaxMemory: 1 << 20})
	require.NoError(t, err)
	assert.Nil(t, c.MILP)
	assert.Contains(t, c.Note, "MILP not built: its 11340 nonzeros would take about 5.62 MiB, above the memory limit of 1.00 MiB")
	assert.Equal(t, c.SumU, c.Value, "the closed-form bound stands")

	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Millisecond))
	defer cancel()
	c, err = weightlb.LowerBound(ctx, p, weightlb.Options{Solvers: []milp.Solver{s}})
	require.NoError(t, err)
	require.NotNil(t, c.MILP)
	assert.Equal(t, milp.TimeLimit, c.MILP.Status)
	assert.Contains(t, c.Note, "while its model was built")
}
