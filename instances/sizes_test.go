package instances

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSumAndMulBytes(t *testing.T) {
	s, ok := SumBytes(1, 2, 3)
	assert.True(t, ok)
	assert.Equal(t, int64(6), s)
	_, ok = SumBytes(MaxBytes, 0)
	assert.True(t, ok, "the limit itself fits")
	_, ok = SumBytes(MaxBytes, 1)
	assert.False(t, ok)
	_, ok = SumBytes(math.MaxInt64, math.MaxInt64) // would wrap to -2 unchecked
	assert.False(t, ok)
	_, ok = SumBytes(5, -1)
	assert.False(t, ok)

	p, ok := MulBytes(1<<20, 1<<20, 1<<20)
	assert.True(t, ok)
	assert.Equal(t, MaxBytes, p)
	_, ok = MulBytes(1<<20, 1<<20, 1<<21)
	assert.False(t, ok)
	// gen zoo gpt2 --batch 1e9 --seq 1e9: s·b·h = 7.68e20 wraps int64 to a negative size.
	_, ok = MulBytes(1e9, 1e9, 768)
	assert.False(t, ok)
	_, ok = MulBytes(math.MaxInt64, math.MaxInt64)
	assert.False(t, ok)
	p, ok = MulBytes(math.MaxInt64, math.MaxInt64, 0)
	assert.True(t, ok, "a factor 0 makes the product 0")
	assert.Zero(t, p)
	_, ok = MulBytes(-1, 2)
	assert.False(t, ok)
}

// TestValidateTotal: a chain built in code whose sizes total more than MaxBytes is refused by
// Validate (the dynamic programs, heuristics and validators call it), naming the field where
// the running total passes the limit and the total; TotalSize agrees.
func TestValidateTotal(t *testing.T) {
	c := Toy()
	total, ok := c.TotalSize()
	require.True(t, ok)
	assert.Positive(t, total)
	for i := range c.Stages {
		c.Stages[i].W = 1 << 58 // 7 · 2^58 > 2^60
	}
	_, ok = c.TotalSize()
	assert.False(t, ok)
	err := c.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "stages[3].w")
	assert.Contains(t, err.Error(), "the chain's sizes total 2.02e+18 B")

	c = Toy()
	c.Stages[2].ABar = math.MaxInt64
	require.Error(t, c.Validate())
	assert.Contains(t, c.Validate().Error(), "stages[2].abar: 9223372036854775807: is above 2^60 B")
}

// TestGraphValidateTotal: the same rule for computation graphs.
func TestGraphValidateTotal(t *testing.T) {
	g := &Graph{Name: "g", Fixed: 1 << 59, Nodes: []Node{{Name: "x", Size: 1 << 59}, {Name: "y", Size: 1, Deps: []int{0}}}}
	err := g.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nodes[1].size")
	assert.Contains(t, err.Error(), "above 2^60 B")
	g.Nodes[1].Size = 0
	assert.NoError(t, g.Validate())
	g.Fixed = math.MaxInt64
	assert.ErrorContains(t, g.Validate(), "fixed")
}

// TestScaled: every size is multiplied, times are kept, the original is untouched, and a
// factor that would pass MaxBytes panics with the chain's name instead of wrapping.
func TestScaled(t *testing.T) {
	c := DefaultChain()
	c.Stages[0].W = 3
	s := c.Scaled(1 << 30)
	assert.Equal(t, c.A0<<30, s.A0)
	assert.Equal(t, c.Delta0<<30, s.Delta0)
	for i, st := range s.Stages {
		o := c.Stages[i]
		assert.Equal(t, []int64{o.A << 30, o.ABar << 30, o.Delta << 30, o.OF << 30, o.OB << 30, o.W << 30},
			[]int64{st.A, st.ABar, st.Delta, st.OF, st.OB, st.W})
		assert.Equal(t, o.UF, st.UF)
		assert.Equal(t, o.UB, st.UB)
	}
	assert.Equal(t, int64(3), c.Stages[0].W, "the original is unchanged")
	assert.PanicsWithValue(t, `instances: Scaled(1152921504606846976) of "`+c.Name+`": a size leaves [0, MaxBytes]`,
		func() { c.Scaled(MaxBytes) })
}
