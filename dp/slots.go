package dp

import (
	"fmt"

	"github.com/memsched/memsched/instances"
)

// DefaultSlots is the number of memory slots of 004 §5.2 (S = 500).
const DefaultSlots = 500

// Options control the memory discretization. The zero value uses DefaultSlots slots.
type Options struct {
	// Slots is the number S of memory slots the budget is divided into (0: DefaultSlots).
	Slots int
	// Exact uses 1-byte slots: exact for integer instances, only practical for small sizes.
	Exact bool
	// MaxMemory caps the table's estimated memory in bytes (0: DefaultMaxMemory); above it the
	// constructor returns a *TooLargeError before allocating anything.
	MaxMemory int64
	// Stop, when closed, stops the fill between rows (and C_MP's allocation between chunks):
	// the constructor returns ErrStopped.
	Stop <-chan struct{}
	// lower rounds sizes DOWN (and gives the budget the slots of M, minus ⌊ω_a^0/q⌋): a
	// relaxation of the byte model whose optimum is a lower bound on the true one. Sequences
	// found that way may not fit in bytes, so only FloatingLowerBound sets it.
	lower bool
	// chunkBytes sizes C_MP's chunks (allocChunks; 0: the constant chunkBytes): tests make
	// them a few rows, so that the tables they check span many.
	chunkBytes int
}

// slotted is a chain with every size in whole slots of q bytes, rounded UP, so that a sequence
// feasible in slots is feasible in bytes (SPEC §1; 004 §5.2 says "round down", which could
// return sequences that exceed the budget).
type slotted struct {
	q          int64 // slot size in bytes
	n          int   // stages, loss included
	uf, ub     []float64
	a, abar, d []int // a^ℓ, ā^ℓ, δ^ℓ for ℓ = 0..n
	of, ob     []int
}

func ceilDiv(x, q int64) int64 { return (x + q - 1) / q }

// discretize returns the slotted chain and the budget in slots (rounded DOWN) available once
// a^0 is stored. budget is the whole budget in bytes, a^0 included.
func discretize(c *instances.Chain, budget int64, opt Options) (*slotted, int, error) {
	if err := c.Validate(); err != nil {
		return nil, 0, err
	}
	if budget < 0 {
		return nil, 0, fmt.Errorf("dp: negative budget %d", budget)
	}
	slots := opt.Slots
	if slots == 0 {
		slots = DefaultSlots
	}
	if slots < 1 {
		return nil, 0, fmt.Errorf("dp: slots must be positive, got %d", slots)
	}
	q := int64(1)
	if !opt.Exact {
		q = max(1, ceilDiv(budget, int64(slots)))
	}
	avail := budget - c.A0
	if avail < 0 {
		avail = -1
	}
	m := avail / q
	if avail < 0 {
		m = -1
	}
	if opt.lower && avail >= 0 {
		// Every real sequence has Σ sizes ≤ M during every operation, so Σ ⌊size/q⌋ ≤ ⌊M/q⌋:
		// it stays feasible in the floored chain with ⌊M/q⌋ slots in all.
		m = budget/q - c.A0/q
	}
	const maxSlots = 1 << 22
	if m > maxSlots {
		return nil, 0, fmt.Errorf("dp: %d memory slots of %d B is too many (at most %d); use fewer slots instead of exact mode", m, q, maxSlots)
	}
	// A size above the whole budget makes every operation using it infeasible; capping it at
	// budget+1 slots keeps that verdict and rules out integer overflow in sums of sizes.
	limit := m + 1
	round := ceilDiv
	if opt.lower {
		round = func(x, q int64) int64 { return x / q }
	}
	conv := func(x int64) int { return int(min(round(x, q), max(limit, 0))) }
	n := c.Len()
	s := &slotted{q: q, n: n, uf: make([]float64, n+1), ub: make([]float64, n+1),
		a: make([]int, n+1), abar: make([]int, n+1), d: make([]int, n+1), of: make([]int, n+1), ob: make([]int, n+1)}
	s.a[0] = conv(c.A0)
	s.abar[0] = s.a[0]
	s.d[0] = conv(c.Delta0)
	for l := 1; l <= n; l++ {
		st := c.Stage(l)
		s.uf[l], s.ub[l] = st.UF, st.UB
		s.a[l] = conv(st.A)
		s.abar[l] = conv(st.ABar)
		s.d[l] = conv(st.Delta)
		s.of[l] = conv(st.OF)
		s.ob[l] = conv(st.OB)
	}
	return s, int(m), nil
}

// splitPeak extends the peak of a split's forward steps (δ aside, checkpoint a^{s-1} outside)
// to the split ending at s': F_ck^s needs ω_a^s + o_f^s, each F_∅^j (s < j < s') needs
// ω_a^{j-1} + ω_a^j + o_f^j. Call it with s' = s+1, s+2, … passing the previous value; it is
// the exact per-split check of SPEC §1 that both C_MP and C_FL use.
func (sc *slotted) splitPeak(s, s2, prev int) int {
	if s2 == s+1 {
		return sc.a[s] + sc.of[s]
	}
	j := s2 - 1
	return max(prev, sc.a[j-1]+sc.a[j]+sc.of[j])
}
