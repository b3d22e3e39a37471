//go:build goexperiment.simd && amd64

package dp

import (
	"simd/archsimd"
	"unsafe"
)

// laneMask[b] has the 16 bits of lane j set where bit j of b is (little-endian int16 lanes).
var laneMask = func() (m [16]uint64) {
	for b := range m {
		for j := 0; j < 4; j++ {
			if b&(1<<j) != 0 {
				m[b] |= 0xffff << (16 * j)
			}
		}
	}
	return m
}()

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
// additions in the same order, a strict comparison, and the arguments set lane by lane where
// it holds — bit for bit the generic result (TestMinPlusKernel).
func minPlus(pre float64, a, b, out []float64, arg []int16, id int16) {
	if !hasAVX2 {
		minPlusGeneric(pre, a, b, out, arg, id)
		return
	}
	n := len(a)
	b, out, arg = b[:n], out[:n], arg[:n]
	p := archsimd.BroadcastFloat64x4(pre)
	id4 := uint64(uint16(id)) * 0x0001_0001_0001_0001
	i := 0
	for ; i+4 <= n; i += 4 {
		o4 := (*[4]float64)(out[i : i+4])
		v := p.Add(archsimd.LoadFloat64x4((*[4]float64)(a[i : i+4]))).Add(archsimd.LoadFloat64x4((*[4]float64)(b[i : i+4])))
		o := archsimd.LoadFloat64x4(o4)
		bits := v.Less(o).ToBits()
		// VMINPD keeps o where v is not smaller (equal values are the same bits: sizes and
		// times are never −0 or NaN), and the arguments take id lane by lane without a branch.
		v.Min(o).Store(o4)
		g := (*uint64)(unsafe.Pointer(&arg[i]))
		*g = *g&^laneMask[bits] | id4&laneMask[bits]
	}
	// Back to scalar (SSE) code: without VZEROUPPER every later SSE instruction pays for the
	// dirty upper halves (measured: a block of 32 took 3× the scalar loop's time).
	archsimd.ClearAVXUpperBits()
	minPlusGeneric(pre, a[i:], b[i:], out[i:], arg[i:], id)
}
