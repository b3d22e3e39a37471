package pipeline

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
)

func tiny() *Problem {
	c := &instances.Chain{Stages: []instances.Stage{{UF: 1, UB: 2, A: 1, ABar: 1}, {UF: 1, UB: 2, A: 1, ABar: 1}, {}}}
	return &Problem{Chain: c, GPUs: 2, Memory: 10, Bandwidth: math.Inf(1), MicroBatches: 4}
}

// TestValidateNamesTheField: each bad value is refused naming its field and value.
func TestValidateNamesTheField(t *testing.T) {
	require.NoError(t, tiny().Validate())
	for _, tc := range []struct {
		name, field string
		edit        func(p *Problem)
	}{
		{"no GPU", "gpus = 0", func(p *Problem) { p.GPUs = 0 }},
		{"too many GPUs", "gpus = 5000", func(p *Problem) { p.GPUs = 5000 }},
		{"no memory", "memory = 0", func(p *Problem) { p.Memory = 0 }},
		{"memory past 2^60", "memory = ", func(p *Problem) { p.Memory = instances.MaxBytes + 1 }},
		{"zero bandwidth", "bandwidth = 0", func(p *Problem) { p.Bandwidth = 0 }},
		{"NaN bandwidth", "bandwidth = NaN", func(p *Problem) { p.Bandwidth = math.NaN() }},
		{"no micro-batch", "micro_batches = 0", func(p *Problem) { p.MicroBatches = 0 }},
		{"unknown schedule", "schedule = Schedule(7)", func(p *Problem) { p.Schedule = 7 }},
		{"loss stage only", "chain = 1 stage", func(p *Problem) { p.Chain.Stages = p.Chain.Stages[2:] }},
		{"bad chain", "stages[0].abar", func(p *Problem) { p.Chain.Stages[0].ABar = 0 }},
	} {
		p := tiny()
		tc.edit(p)
		err := p.Validate()
		require.Error(t, err, tc.name)
		assert.Contains(t, err.Error(), tc.field, tc.name)
	}
	_, err := ParseSchedule("zb")
	assert.ErrorContains(t, err, `"zb"`)
}

// TestOrders: the named orders as PyTorch runs them (Schedule1F1B's warm-up min(m, S−k)).
func TestOrders(t *testing.T) {
	text := func(as []schedule.Action) string {
		s := ""
		for i, a := range as {
			if i > 0 {
				s += " "
			}
			s += a.String()
		}
		return s
	}
	pl := schedule.NewContiguous([]int{1, 2, 3})
	as, err := Actions(pl, OneFOneB, 4, 3)
	require.NoError(t, err)
	assert.Equal(t, "0F0 0F1 0F2 0B0 0F3 0B1 0B2 0B3", text(as[0]))
	assert.Equal(t, "1F0 1F1 1B0 1F2 1B1 1F3 1B2 1B3", text(as[1]))
	assert.Equal(t, "2F0 2B0 2F1 2B1 2F2 2B2 2F3 2B3", text(as[2]))
	as, err = Actions(pl, OneFOneB, 2, 3) // m < S: warm-up min(m, S−k)
	require.NoError(t, err)
	assert.Equal(t, "0F0 0F1 0B0 0B1", text(as[0]))
	as, err = Actions(pl, GPipe, 2, 3)
	require.NoError(t, err)
	assert.Equal(t, "2F0 2F1 2B0 2B1", text(as[2]))
	// Two parts on GPU 0 (a looped placement): GPipe runs PyTorch's looped breadth-first
	// order, 1F1B has no named order.
	loop := &schedule.Pipeline{Parts: []schedule.Part{{First: 1, Last: 1, GPU: 0}, {First: 2, Last: 2, GPU: 1}, {First: 3, Last: 3, GPU: 0}}}
	as, err = Actions(loop, GPipe, 2, 2)
	require.NoError(t, err)
	assert.Equal(t, "0F0 0F1 2F0 2F1 2B0 2B1 0B0 0B1", text(as[0]))
	_, err = Actions(loop, OneFOneB, 2, 2)
	assert.ErrorContains(t, err, "actions")
}

// TestStoreAllCosts: the closed form against a hand count on SPEC §7's chain: part [1–2] holds
// its two ā (no input: ω_a^0 = 0), part [3–4] its input a^2 and ā^3, ā^4.
func TestStoreAllCosts(t *testing.T) {
	c := &instances.Chain{}
	for range 4 {
		c.Stages = append(c.Stages, instances.Stage{UF: 1, UB: 2, A: 1, ABar: 1, W: 5})
	}
	c.Stages = append(c.Stages, instances.Stage{W: 1})
	a := StoreAllCosts(c, 1, 2)
	assert.Equal(t, PartCosts{F: 2, B: 4, W: 10, Held: 2, Peak: 2}, a)
	b := StoreAllCosts(c, 3, 4)
	assert.Equal(t, PartCosts{F: 2, B: 4, W: 11, Held: 3, Peak: 3}, b)
	assert.Equal(t, int64(10+2+2), a.Memory(2))
	// Saturation, never a wrapped sum.
	big := PartCosts{Held: instances.MaxBytes}
	assert.Equal(t, instances.MaxBytes+1, big.Memory(1<<20))
}

// TestRandomTinyScales: the population is valid and its GiB copy has the same times.
func TestRandomTinyScales(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for k := range 50 {
		p := RandomTiny(r, k)
		require.NoError(t, p.Validate())
		q := p.Scaled(1 << 30)
		require.NoError(t, q.Validate())
		assert.Equal(t, p.Transfer(p.Chain.SizeA(1)), q.Transfer(q.Chain.SizeA(1)))
	}
}

// TestStoreAllSweep: the incremental sweep equals StoreAllCosts bit for bit on every part of
// 200 random chains (float times, with ā, overheads and weights), at byte and GiB scale, and
// stops when asked.
func TestStoreAllSweep(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for k := range 200 {
		c := instances.Random(r, instances.RandomParams{Stages: 2 + k%12, MaxSize: 1000, MaxTime: 5,
			WithABar: true, WithOverheads: true, WithWeights: true})
		for _, cc := range []*instances.Chain{c, c.Scaled(1 << 30)} {
			L := cc.Len() - 1
			for first := 1; first <= L; first++ {
				next := first
				StoreAllSweep(cc, first, func(last int, pc PartCosts) bool {
					require.Equal(t, next, last)
					require.Equal(t, StoreAllCosts(cc, first, last), pc, "chain %d part [%d, %d]", k, first, last)
					next++
					return true
				})
				require.Equal(t, L+1, next, "every part from %d", first)
			}
		}
	}
	c := instances.Random(r, instances.RandomParams{Stages: 10, MaxSize: 1000, MaxTime: 5})
	calls := 0
	StoreAllSweep(c, 1, func(int, PartCosts) bool { calls++; return calls < 3 })
	assert.Equal(t, 3, calls)
}
