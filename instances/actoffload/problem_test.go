package actoffload

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
)

// small is a 3-operation instance (L = 2) with every quantity distinct, so that an index slip
// in m_{F_i} or m_{B_i} changes a number.
func small() *Problem {
	return &Problem{
		X:    []int64{1, 20, 300, 4000},
		Y:    []int64{5, 60, 700, 8000},
		UF:   []float64{1, 2, 3},
		UB:   []float64{4, 5, 6},
		ExF:  []int64{10000, 0, 0},
		ExB:  []int64{0, 90000, 0},
		MGPU: 1 << 20, Beta: 1,
	}
}

func TestMemoryFormulas(t *testing.T) {
	p := small()
	require.NoError(t, p.Validate())
	// m_{F_i} = ex_i^F + Σ_{j≤i+1}|x_j|.
	assert.Equal(t, int64(10000+1+20), p.MemF(0))
	assert.Equal(t, int64(1+20+300), p.MemF(1))
	assert.Equal(t, int64(4321), p.MemF(2))
	// m_{B_i} = ex_i^B + |y_i| + |y_{i+1}| + Σ_{j≤i+1}|x_j|.
	assert.Equal(t, int64(5+60+21), p.MemB(0))
	assert.Equal(t, int64(90000+60+700+321), p.MemB(1))
	assert.Equal(t, int64(700+8000+4321), p.MemB(2))
	assert.Equal(t, int64(91081), p.Peak(), "the peak is B_1 with its 90000 temporary bytes")
	assert.Equal(t, 21.0, p.Compute())
	assert.Equal(t, int64(90000+60+700+20+300), p.MinMemory())
}

func TestValidateRejects(t *testing.T) {
	cases := []struct {
		name string
		edit func(p *Problem)
	}{
		{"no operations", func(p *Problem) { *p = Problem{MGPU: 1, Beta: 1} }},
		{"short X", func(p *Problem) { p.X = p.X[:3] }},
		{"short ExB", func(p *Problem) { p.ExB = p.ExB[:2] }},
		{"zero memory", func(p *Problem) { p.MGPU = 0 }},
		{"zero bandwidth", func(p *Problem) { p.Beta = 0 }},
		{"infinite bandwidth", func(p *Problem) { p.Beta = 1 / zero }},
		{"negative time", func(p *Problem) { p.UB[1] = -1 }},
		{"NaN time", func(p *Problem) { p.UF[0] = zero / zero }},
		{"negative size", func(p *Problem) { p.Y[3] = -1 }},
		{"negative temporary", func(p *Problem) { p.ExF[2] = -1 }},
		{"memory above 2^60 B", func(p *Problem) { p.MGPU = instances.MaxBytes + 1 }},
		{"sizes total above 2^60 B", func(p *Problem) { p.X[1], p.Y[2] = 1<<59, 1<<59 }},
		{"sizes that wrap int64", func(p *Problem) { p.X[1], p.X[2] = math.MaxInt64, math.MaxInt64 }},
	}
	for _, c := range cases {
		p := small()
		c.edit(p)
		assert.Error(t, p.Validate(), c.name)
	}
}

var zero = 0.0

// The mapping of SPEC §2 on the toy chain of 004 Table 2: x_0 = a^0, x_i = ā^i, y_i = δ^i,
// and the round trip through ToChain.
func TestFromChainToy(t *testing.T) {
	c := instances.Toy()
	p, err := FromChain(c, instances.ToyBudget, 12e9)
	require.NoError(t, err)
	require.Equal(t, c.Len()-1, p.L())
	assert.Equal(t, c.A0, p.X[0])
	for i := 0; i <= p.L(); i++ {
		s := c.Stage(i + 1)
		assert.Equal(t, s.ABar, p.X[i+1])
		assert.Equal(t, s.Delta, p.Y[i+1])
		assert.Equal(t, s.OF, p.ExF[i])
		assert.Equal(t, s.UB, p.UB[i])
	}
	assert.Equal(t, c.Delta0, p.Y[0])
	// Without offloading, every ā is kept: the peak is the store-all peak of the model of
	// SPEC §2, computed here by brute force over the operations.
	var want int64
	for i := 0; i <= p.L(); i++ {
		want = max(want, p.MemF(i), p.MemB(i))
	}
	assert.Equal(t, want, p.Peak())
	q, err := FromChain(p.ToChain("back"), p.MGPU, p.Beta)
	require.NoError(t, err)
	assert.Equal(t, p, q)
}

// On verify/timed's tiny instance (x_0 out and back, makespan 7 at best): Prop. 3 is the compute
// time 4; the fluid relaxation must wait 1 s before B_0 to bring back the 2 bytes that B_1
// still needs away, so OPT_frac = 5.
func TestBoundsTiny(t *testing.T) {
	for _, unit := range []int64{1, 1 << 30} {
		p := &Problem{
			X: []int64{4 * unit, 4 * unit, 2 * unit}, Y: []int64{0, 0, 0},
			UF: []float64{1, 1}, UB: []float64{1, 1}, ExF: []int64{0, 0}, ExB: []int64{0, 0},
			MGPU: 8 * unit, Beta: 2 * float64(unit),
		}
		assert.Equal(t, 4.0, p.Prop3())
		assert.Equal(t, 5.0, p.Fractional())
		p.MGPU = 10 * unit
		assert.Equal(t, 4.0, p.Fractional(), "nothing needs to move")
		p.MGPU = 5 * unit // B_1 needs x_1 + x_2 = 6 on the GPU
		assert.True(t, math.IsInf(p.Fractional(), 1))
		// Slow link: the transfer term of Prop. 3 dominates.
		p.MGPU, p.Beta = 8*unit, float64(unit)/10
		assert.Equal(t, 40.0, p.Prop3())
		assert.GreaterOrEqual(t, p.Fractional(), 40.0)
	}
}
