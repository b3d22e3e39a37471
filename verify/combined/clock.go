package combined

import (
	"math"
	"math/big"
	"math/bits"
)

// clock counts a replay's time exactly on one integer grid. Every instant of a combined
// schedule is a sum of operation durations (float64s: dyadic rationals m·2^e) and transfer
// times |x|/β along a chain of dependencies, so with β = m_β·2^{e_β} (m_β odd) and K ≥ every
// −e and ≥ e_β, each is an integer number of ticks of 1/Q, Q = m_β·2^K:
//
//	d     = m·2^e        → m·2^{e+K}·m_β ticks,
//	|x|/β = |x|/(m_β·2^{e_β}) → |x|·2^{K−e_β} ticks.
//
// Ticks are added and compared as integers: the same judgement as rationals, without the
// normalisation (a GCD per addition) and cross-multiplication (per comparison) that made
// big.Rat most of the replay of a 20 001-stage schedule.
type clock struct {
	k  uint     // K
	mb *big.Int // m_β
	eb int      // e_β
	q  *big.Int // Q = m_β·2^K

	qf, x, z *big.Float // Q, and scratch of seconds
}

// dyadic returns x = m·2^e with m odd (m = 0, e = 0 for x = 0); x finite and ≥ 0.
func dyadic(x float64) (m uint64, e int) {
	if x == 0 {
		return 0, 0
	}
	fr, ex := math.Frexp(x) // x = fr·2^ex, fr in [0.5, 1)
	m = uint64(math.Ldexp(fr, 53))
	e = ex - 53
	tz := bits.TrailingZeros64(m)
	return m >> tz, e + tz
}

// newClock returns the clock of durations durs (finite, ≥ 0) and bandwidth beta (finite, > 0).
func newClock(durs []float64, beta float64) *clock {
	mb, eb := dyadic(beta)
	k := max(0, eb)
	for _, d := range durs {
		if m, e := dyadic(d); m != 0 && -e > k {
			k = -e
		}
	}
	cl := &clock{k: uint(k), mb: new(big.Int).SetUint64(mb), eb: eb}
	cl.q = new(big.Int).Lsh(cl.mb, cl.k)
	cl.qf = new(big.Float).SetPrec(uint(cl.q.BitLen())).SetInt(cl.q)
	cl.x = new(big.Float)
	cl.z = new(big.Float).SetPrec(53).SetMode(big.ToNearestEven)
	return cl
}

// dur returns d's ticks (d one of the durations the clock was made with).
func (cl *clock) dur(d float64) *big.Int {
	m, e := dyadic(d)
	n := new(big.Int).SetUint64(m)
	n.Lsh(n, uint(e+int(cl.k)))
	return n.Mul(n, cl.mb)
}

// transfer returns the ticks of moving size bytes (size ≥ 0).
func (cl *clock) transfer(size int64) *big.Int {
	n := big.NewInt(size)
	return n.Lsh(n, uint(int(cl.k)-cl.eb))
}

// rat returns n ticks in seconds, exactly.
func (cl *clock) rat(n *big.Int) *big.Rat { return new(big.Rat).SetFrac(n, cl.q) }

// seconds returns n ticks (n ≥ 0) in seconds, rounded to the nearest float64 as
// big.Rat.Float64 rounds.
func (cl *clock) seconds(n *big.Int) float64 {
	if n.Sign() == 0 {
		return 0
	}
	cl.x.SetPrec(uint(max(n.BitLen(), 1))).SetInt(n) // exact
	f, _ := cl.z.Quo(cl.x, cl.qf).Float64()          // one rounding, to nearest
	if f < 0x1p-1022 || math.IsInf(f, 0) {
		// Below the normal range a second rounding could differ from the exact one.
		f, _ = cl.rat(n).Float64()
	}
	return f
}
