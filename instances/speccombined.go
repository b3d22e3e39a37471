package instances

import "math/big"

// SpecCombinedAD is the chain of SPEC §6's hand-checked cases A–D of rematerialization and
// activation offloading together: L = 2, arrays by stage ℓ = 0..3 ω_a = [1,2,2,0],
// ω_ā = [1,4,4,0], ω_δ = [0,2,2,0], u_f = [·,1,1,0], u_b = [·,2,2,0], overheads 0 (Σu = 6 s,
// store-all peak 13 B). Sizes in bytes, times in seconds.
func SpecCombinedAD() *Chain {
	return specChain([]int64{1, 2, 2, 0}, []int64{1, 4, 4, 0}, []int64{0, 2, 2, 0}, []float64{0, 1, 1, 0}, []float64{0, 2, 2, 0})
}

// SpecCombinedE is the chain of SPEC §6's case E: L = 3, ω_a = ω_δ = [2,2,2,2,0],
// ω_ā = [2,4,4,4,0], u_f = 1, u_b = 2 (loss stage 0), overheads 0.
func SpecCombinedE() *Chain {
	return specChain([]int64{2, 2, 2, 2, 0}, []int64{2, 4, 4, 4, 0}, []int64{2, 2, 2, 2, 0}, []float64{0, 1, 1, 1, 0}, []float64{0, 2, 2, 2, 0})
}

// specChain builds a chain from arrays indexed by stage ℓ = 0..L+1 (index 0 of uf, ub unused).
func specChain(a, abar, delta []int64, uf, ub []float64) *Chain {
	c := &Chain{Name: "SPEC §6", A0: a[0], Delta0: delta[0]}
	for l := 1; l < len(a); l++ {
		name := "s"
		if l == len(a)-1 {
			name = "loss"
		}
		c.Stages = append(c.Stages, Stage{Name: name, UF: uf[l], UB: ub[l], A: a[l], ABar: abar[l], Delta: delta[l]})
	}
	return c
}

// SpecCombinedCase is one row of SPEC §6's table of hand-checked cases: the chain, the budget
// in bytes and the bandwidth in bytes per second, and the optimal makespans in seconds
// (exact) of the combined class, of rematerialization alone and of offloading alone; nil
// means that no schedule of that class fits.
type SpecCombinedCase struct {
	Name                     string
	Chain                    *Chain
	Budget                   int64
	Beta                     float64
	Combined, Remat, Offload *big.Rat
}

// SpecCombinedCases returns SPEC §6's cases A–E (each with a fresh chain): the published
// numbers every implementation of the combined lever is checked against.
func SpecCombinedCases() []SpecCombinedCase {
	q := func(a, b int64) *big.Rat { return big.NewRat(a, b) }
	return []SpecCombinedCase{
		{"A", SpecCombinedAD(), 12, 1, q(7, 1), q(7, 1), q(7, 1)},
		{"B", SpecCombinedAD(), 12, 2, q(13, 2), q(7, 1), q(13, 2)},
		{"C", SpecCombinedAD(), 11, 8, q(7, 1), q(7, 1), nil},
		{"D", SpecCombinedAD(), 10, 1, q(8, 1), nil, nil},
		{"E", SpecCombinedE(), 12, 2, q(11, 1), q(12, 1), q(12, 1)},
	}
}
