package oracle

import (
	"math/big"
	"math/bits"
)

// tk is a time of the strict search in ticks: an unsigned 128-bit integer. A measured
// profile's durations are float64 seconds (u = m·2^e, e down to about −70 for microseconds)
// and its transfers take ω/β (β's odd part, 12e9's is 3·5^9, in the denominator), so their
// common tick is often 2^80 or more per second: GPT-2's block forward, 0.07222110612382165 s,
// at 12 GB/s needs 2^56·5^9·3 ticks a second. int64 ticks refused every such chain.
type tk struct{ hi, lo uint64 }

// maxTickBits bounds one duration in ticks (commonTick): with at most 2^17 items on a path
// (a chain of MaxStrictStages stages has far fewer) no sum reaches 2^128.
const maxTickBits = 110

// tkInf is above every time the search reaches (no pruning bound).
var tkInf = tk{hi: ^uint64(0), lo: ^uint64(0)}

func (a tk) add(b tk) tk {
	lo, c := bits.Add64(a.lo, b.lo, 0)
	hi, c := bits.Add64(a.hi, b.hi, c)
	if c != 0 {
		panic("oracle: tick overflow") // commonTick keeps every sum below 2^128
	}
	return tk{hi, lo}
}

// sub is a − b for b ≤ a.
func (a tk) sub(b tk) tk {
	lo, c := bits.Sub64(a.lo, b.lo, 0)
	hi, c := bits.Sub64(a.hi, b.hi, c)
	if c != 0 {
		panic("oracle: negative ticks")
	}
	return tk{hi, lo}
}

func (a tk) less(b tk) bool { return a.hi < b.hi || a.hi == b.hi && a.lo < b.lo }
func (a tk) isZero() bool   { return a.hi == 0 && a.lo == 0 }

func tkMax(a, b tk) tk {
	if a.less(b) {
		return b
	}
	return a
}

// tkOf is x, 0 ≤ x < 2^128.
func tkOf(x *big.Int) tk {
	var lo big.Int
	lo.And(x, new(big.Int).SetUint64(^uint64(0)))
	return tk{hi: new(big.Int).Rsh(x, 64).Uint64(), lo: lo.Uint64()}
}

func (a tk) big() *big.Int {
	x := new(big.Int).SetUint64(a.hi)
	x.Lsh(x, 64)
	return x.Or(x, new(big.Int).SetUint64(a.lo))
}

func (a tk) String() string { return a.big().String() }
