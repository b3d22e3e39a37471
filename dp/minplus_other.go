//go:build !(goexperiment.simd && amd64)

package dp

// minPlus is minPlusGeneric: this build has no vector kernel (it needs GOEXPERIMENT=simd on
// amd64; the Makefile sets it).
func minPlus(pre float64, a, b, out []float64) { minPlusGeneric(pre, a, b, out) }

// MinPlusKernel names the kernel of C_MP's min-plus step in this build and on this CPU.
func MinPlusKernel() string { return "generic (built without GOEXPERIMENT=simd)" }
