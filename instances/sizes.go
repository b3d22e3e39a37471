package instances

import (
	"math/bits"
)

// MaxBytes is the largest number of bytes memsched computes with: 2^60 B (1 EiB). Every size
// and every budget is at most MaxBytes, and so is the total of every size of a chain (input.a,
// input.delta and each stage's a, ā, δ, o_f, o_b and w, all added up), of a graph, and of an
// offloading problem; loading, parsing and Validate refuse anything larger.
//
// The invariant lets everything downstream add sizes in plain int64 without checking: any sum
// that counts each size of one instance at most 7 times, plus a budget, stays below
// 8·2^60 = 2^63, the first value an int64 cannot hold. (The validators, dynamic programs and
// heuristics count a size at most twice in one expression, e.g. 002's 2|w_i| during B_i.)
// 1 EiB is about 10^7 times the memory of today's largest GPU, so no real profile comes near.
const MaxBytes int64 = 1 << 60

// maxBytesText names MaxBytes in messages.
const maxBytesText = "2^60 B (1 EiB), the most memsched computes with"

// SumBytes returns Σ xs and whether every term is in [0, MaxBytes] and the sum at most
// MaxBytes. It never overflows: it stops at the first term that takes the sum past MaxBytes.
func SumBytes(xs ...int64) (int64, bool) {
	var s int64
	for _, x := range xs {
		if x < 0 || x > MaxBytes {
			return s, false
		}
		s += x // both ≤ 2^60: no overflow
		if s > MaxBytes {
			return s, false
		}
	}
	return s, true
}

// MulBytes returns Π xs and whether every factor is non-negative and the product at most
// MaxBytes (0 when a factor is 0). Products that do not fit are detected, never wrapped.
func MulBytes(xs ...int64) (int64, bool) {
	p := uint64(1)
	ok := true
	for _, x := range xs {
		if x < 0 {
			return 0, false
		}
		hi, lo := bits.Mul64(p, uint64(x))
		if hi != 0 || lo > uint64(MaxBytes) {
			ok = false
			lo = uint64(MaxBytes) + 1 // keep going: a later factor 0 makes the product 0
		}
		p = lo
	}
	if p == 0 {
		return 0, true
	}
	if p > uint64(MaxBytes) {
		return int64(MaxBytes) + 1, false
	}
	return int64(p), ok
}

// TotalSize returns the sum of every size of c (input.a, input.delta, and each stage's a, ā,
// δ, o_f, o_b and w) and whether it is at most MaxBytes; every chain that passed Validate has
// one that is.
func (c *Chain) TotalSize() (int64, bool) {
	total, ok := SumBytes(c.A0, c.Delta0)
	for _, s := range c.Stages {
		if !ok {
			break
		}
		var t int64
		t, ok = SumBytes(total, s.A, s.ABar, s.Delta, s.OF, s.OB, s.W)
		total = t
	}
	return total, ok
}

// floatTotal is the exact-enough sum of every size of c in float64, for messages about a total
// that does not fit.
func (c *Chain) floatTotal() float64 {
	t := float64(c.A0) + float64(c.Delta0)
	for _, s := range c.Stages {
		t += float64(s.A) + float64(s.ABar) + float64(s.Delta) + float64(s.OF) + float64(s.OB) + float64(s.W)
	}
	return t
}
