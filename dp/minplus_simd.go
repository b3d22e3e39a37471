//go:build goexperiment.simd && amd64

package dp

import "simd/archsimd"

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
func minPlus(pre float64, a, b, out []float64) {
	if !hasAVX2 {
		minPlusGeneric(pre, a, b, out)
		return
	}
	n := len(a)
	if n < 4 {
		minPlusGeneric(pre, a, b, out)
		return
	}
	b, out = b[:n], out[:n]
	p := archsimd.BroadcastFloat64x4(pre)
	step := func(i int) {
		o4 := (*[4]float64)(out[i : i+4])
		v := p.Add(archsimd.LoadFloat64x4((*[4]float64)(a[i : i+4]))).Add(archsimd.LoadFloat64x4((*[4]float64)(b[i : i+4])))
		v.Min(archsimd.LoadFloat64x4(o4)).Store(o4)
	}
	for i := 0; i+4 <= n; i += 4 {
		step(i)
	}
	// The last 1–3 budgets: the last four again, overlapping, since taking the minimum with
	// the same sums twice changes nothing.
	if n%4 != 0 {
		step(n - 4)
	}
	// Back to scalar (SSE) code: without VZEROUPPER every later SSE instruction pays for the
	// dirty upper halves (measured: a block of 32 took 3× the scalar loop's time).
	archsimd.ClearAVXUpperBits()
}
