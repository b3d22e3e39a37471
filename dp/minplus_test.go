package dp

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMinPlusKernel: the kernel of this build (AVX2 under GOEXPERIMENT=simd on amd64) gives
// bit for bit the generic result on random blocks of every length up
// to 70 with +∞ entries, ties, and sums that round.
func TestMinPlusKernel(t *testing.T) {
	t.Logf("kernel: %s", MinPlusKernel())
	r := rand.New(rand.NewPCG(23, 2))
	draw := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			switch r.IntN(6) {
			case 0:
				x[i] = math.Inf(1)
			case 1:
				x[i] = float64(r.IntN(4)) // ties
			default:
				x[i] = r.Float64() * 1e-3
			}
		}
		return x
	}
	for trial := 0; trial < 5000; trial++ {
		n := r.IntN(71)
		a, b, out := draw(n), draw(n), draw(n)
		pre := []float64{0, 1, r.Float64() * 1e-3, 0.1}[r.IntN(4)]
		o1, o2 := append([]float64(nil), out...), append([]float64(nil), out...)
		minPlusGeneric(pre, a, b, o1)
		minPlus(pre, a, b, o2)
		for i := range o1 {
			require.Equal(t, math.Float64bits(o1[i]), math.Float64bits(o2[i]), "trial %d index %d", trial, i)
		}
	}
}

func benchMinPlus(b *testing.B, f func(float64, []float64, []float64, []float64)) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 1 << 12
	x, y, out := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range x {
		x[i], y[i], out[i] = r.Float64(), r.Float64(), 1.5+r.Float64()
	}
	b.ResetTimer()
	for b.Loop() {
		for k := 0; k < n; k += 32 {
			f(0.1, x[k:k+32], y[k:k+32], out[k:k+32])
		}
	}
}

// BenchmarkMinPlus compares the kernels on blocks of 32 budgets (pruneBlock).
func BenchmarkMinPlus(b *testing.B) {
	b.Run("generic", func(b *testing.B) { benchMinPlus(b, minPlusGeneric) })
	b.Run("kernel", func(b *testing.B) { benchMinPlus(b, minPlus) })
}
