package combined

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestClockIsExact: a clock's ticks are the rationals they stand for. Random walks of the
// replay's arithmetic (add a duration or a transfer, take the later of two instants) run in
// ticks and in big.Rat side by side, with durations and bandwidths from the byte scale to the
// GiB scale and the float64 extremes (subnormal, 2^±1000); every instant, compared, rounded
// and in seconds, is the same both ways.
func TestClockIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 2026))
	pick := func() float64 {
		switch rng.IntN(6) {
		case 0:
			return float64(rng.IntN(5)) // integer instances, 0 included
		case 1:
			return 0.0722211 * rng.Float64() // measured durations (seconds)
		case 2:
			return math.Ldexp(rng.Float64(), rng.IntN(80)-40)
		case 3:
			return math.SmallestNonzeroFloat64 * float64(1+rng.IntN(9)) // subnormal
		case 4:
			return math.Ldexp(1+rng.Float64(), 1000)
		default:
			return 1e-3 * float64(1+rng.IntN(1000))
		}
	}
	betas := []float64{1, 3, 12e9, 6e9, 1.5, math.Ldexp(1, -1060), 1e300, 0.1}
	for trial := 0; trial < 400; trial++ {
		durs := make([]float64, 1+rng.IntN(6))
		for i := range durs {
			durs[i] = pick()
		}
		beta := betas[trial%len(betas)]
		if trial >= len(betas)*10 {
			beta = math.Abs(pick()) + math.SmallestNonzeroFloat64
		}
		cl := newClock(durs, beta)
		sizes := []int64{0, 1, 7, 1 << 30, 3 << 30, 123456789}
		ticks := []*big.Int{new(big.Int)}
		rats := []*big.Rat{new(big.Rat)}
		for step := 0; step < 40; step++ {
			k := rng.IntN(len(ticks))
			var n *big.Int
			var r *big.Rat
			switch rng.IntN(3) {
			case 0:
				d := durs[rng.IntN(len(durs))]
				n = new(big.Int).Add(ticks[k], cl.dur(d))
				r = new(big.Rat).Add(rats[k], new(big.Rat).SetFloat64(d))
			case 1:
				sz := sizes[rng.IntN(len(sizes))]
				n = new(big.Int).Add(ticks[k], cl.transfer(sz))
				r = new(big.Rat).Add(rats[k], new(big.Rat).Quo(new(big.Rat).SetInt64(sz), new(big.Rat).SetFloat64(beta)))
			default:
				h := rng.IntN(len(ticks))
				n, r = ticks[k], rats[k]
				if ticks[h].Cmp(n) > 0 {
					n, r = ticks[h], rats[h]
				}
			}
			ticks, rats = append(ticks, n), append(rats, r)
		}
		for i := range ticks {
			require.Zero(t, cl.rat(ticks[i]).Cmp(rats[i]), "trial %d, instant %d: %v ticks = %v, want %v", trial, i, ticks[i], cl.rat(ticks[i]), rats[i])
			want, _ := rats[i].Float64()
			require.Equal(t, want, cl.seconds(ticks[i]), "trial %d, instant %d: seconds", trial, i)
			for j := range ticks {
				require.Equal(t, rats[i].Cmp(rats[j]), ticks[i].Cmp(ticks[j]), "trial %d: order of instants %d and %d", trial, i, j)
			}
		}
	}
}

func TestDyadic(t *testing.T) {
	for _, x := range []float64{0, 1, 0.5, 3, 12e9, 0.1, math.SmallestNonzeroFloat64, math.MaxFloat64, 0x1p-1022} {
		m, e := dyadic(x)
		got := new(big.Rat).SetInt(new(big.Int).SetUint64(m))
		if e >= 0 {
			got.Mul(got, new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), uint(e))))
		} else {
			got.Quo(got, new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), uint(-e))))
		}
		require.Zero(t, got.Cmp(new(big.Rat).SetFloat64(x)), "%g = %d·2^%d", x, m, e)
		if x != 0 {
			require.Equal(t, uint64(1), m&1, "%g: the mantissa is odd", x)
		}
	}
}
