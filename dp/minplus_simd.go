//go:build goexperiment.simd && amd64

package dp

import (
	"simd/archsimd"
	"unsafe"
)

// hasAVX2 selects the vector kernel at run time.
var hasAVX2 = archsimd.X86.AVX2()

// MinPlusKernel names the kernel of C_MP's min-plus step in this build and on this CPU.
func MinPlusKernel() string {
	if hasAVX2 {
		return "avx2 (simd/archsimd)"
	}
	return "generic (no AVX2)"
}

// minPlus is minPlusGeneric four budgets at a time with AVX2 (Go's simd/archsimd): the same
// additions in the same order and VMINPD, which keeps out where the sum is not smaller (equal
// values are the same bits: sizes and times are never −0 or NaN) — bit for bit the generic
// result (TestMinPlusKernel). Blocks of fewer than four budgets take the generic loop.
//
// Eight budgets per iteration through unsafe pointers (the lengths are checked once, below):
// the loop is then the loads, additions, minima and stores alone, without bounds checks or
// index arithmetic: 10–30 % less time on runs of 32–96 budgets in L1, about even from L2 or
// memory (where the fill's runs mostly come from).
func minPlus(pre float64, a, b, out []float64) {
	n := len(a)
	if n < 4 || !hasAVX2 {
		minPlusGeneric(pre, a, b, out)
		return
	}
	_, _ = b[n-1], out[n-1] // every access below is in [0, n)
	pa, pb, po := unsafe.Pointer(&a[0]), unsafe.Pointer(&b[0]), unsafe.Pointer(&out[0])
	p := archsimd.BroadcastFloat64x4(pre)
	at := func(q unsafe.Pointer, i int) *[4]float64 { return (*[4]float64)(unsafe.Add(q, i*8)) }
	step := func(i int) {
		v := p.Add(archsimd.LoadFloat64x4(at(pa, i))).Add(archsimd.LoadFloat64x4(at(pb, i)))
		v.Min(archsimd.LoadFloat64x4(at(po, i))).Store(at(po, i))
	}
	i := 0
	for ; i+8 <= n; i += 8 {
		v0 := p.Add(archsimd.LoadFloat64x4(at(pa, i))).Add(archsimd.LoadFloat64x4(at(pb, i)))
		v1 := p.Add(archsimd.LoadFloat64x4(at(pa, i+4))).Add(archsimd.LoadFloat64x4(at(pb, i+4)))
		v0.Min(archsimd.LoadFloat64x4(at(po, i))).Store(at(po, i))
		v1.Min(archsimd.LoadFloat64x4(at(po, i+4))).Store(at(po, i+4))
	}
	if i+4 <= n {
		step(i)
		i += 4
	}
	// The last 1–3 budgets: the last four again, overlapping, since taking the minimum with
	// the same sums twice changes nothing.
	if i < n {
		step(n - 4)
	}
	// Back to scalar (SSE) code: without VZEROUPPER every later SSE instruction pays for the
	// dirty upper halves (measured: a block of 32 took 3× the scalar loop's time).
	archsimd.ClearAVXUpperBits()
}
