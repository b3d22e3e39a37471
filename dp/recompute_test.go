package dp

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
)

// TestTurnKnapsack: abarKnapsack.carry is the most value a set of items of at most room bytes
// holds — against every subset, byte and GiB scale, zero values and sizes — and past
// maxCapPoints (merged pairs, forced by values proportional to sizes) at least it, never
// less (ρ* must stay a lower bound).
func TestTurnKnapsack(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 43))
	merged := 0
	for k := 0; k < 80; k++ {
		n := 1 + r.IntN(12)
		scale := int64(1)
		if k%2 == 1 {
			scale = 1 << 30
		}
		prop := k%8 == 7 // every subset on the frontier: 2^n points, merged past 4096
		if prop {
			n = 13 + r.IntN(3)
		}
		w, v := make([]int64, n), make([]float64, n)
		kn := abarKnapsack{size: []int64{0}, value: []float64{0}}
		for i := range w {
			w[i] = r.Int64N(1000) * scale
			v[i] = float64(r.IntN(5)) * 0.25
			if prop {
				w[i] = (1 << i) * scale
				v[i] = float64(int64(1) << i)
			}
			kn.add(w[i], v[i])
		}
		require.LessOrEqual(t, len(kn.size), maxCapPoints)
		exact := len(kn.size) < maxCapPoints
		if !exact {
			merged++
		}
		for q := 0; q < 40; q++ {
			room := r.Int64N(int64(n)*1000*scale + 1)
			if prop {
				room = r.Int64N(int64(1)<<n*scale + 1)
			}
			best := 0.0
			for m := 0; m < 1<<n; m++ {
				var sw int64
				var sv float64
				for i := range w {
					if m>>i&1 == 1 {
						sw += w[i]
						sv += v[i]
					}
				}
				if sw <= room {
					best = max(best, sv)
				}
			}
			got := kn.carry(room)
			if exact {
				require.InDelta(t, best, got, 1e-9, "k=%d room=%d", k, room)
			} else {
				require.GreaterOrEqual(t, got, best-1e-9, "k=%d room=%d (merged)", k, room)
			}
		}
		require.Equal(t, -1.0, kn.carry(-1))
	}
	require.Positive(t, merged, "no set was merged: the test does not exercise it")
}

// TestTurnKnapsackChain: the chain's items are the ā^j of j ≤ L (ā^L by what it adds over a
// plain a^L) with u_f^j, and base is B^{L+1}'s memory without them: on a 3-stage chain, by
// hand.
func TestTurnKnapsackChain(t *testing.T) {
	c := &instances.Chain{A0: 1, Delta0: 1, Stages: []instances.Stage{
		{UF: 1, UB: 2, A: 2, ABar: 7, Delta: 3, OF: 1, OB: 1},
		{UF: 2, UB: 3, A: 1, ABar: 5, Delta: 2, OF: 1, OB: 4},
		{UF: 4, UB: 1, A: 0, ABar: 6, Delta: 9, OF: 2, OB: 8},
	}}
	k := newRecomputation(c).b[3]
	// δ^3 9 + ā^3 6 + δ^2 2 + o_b^3 8 + a^0 1 + min(a^2, ā^2) 1.
	require.Equal(t, int64(27), k.base)
	require.Equal(t, 3.0, k.total)
	// ā^2 adds 4 over a^2 and saves u_f^2 = 2; ā^1 alone (7 bytes, 1) is dominated by it.
	require.Equal(t, []int64{0, 4, 11}, k.size)
	require.Equal(t, []float64{0, 2, 3}, k.value)
	// Room for ā^2 only: ā^1 is recomputed after the turn, ρ = u_f^1 = 1.
	require.InDelta(t, 1.0, k.fixpoint(func(float64) int64 { return 27 + 4 }), 1e-9)
	// The cap falls with ρ. Room for both at ρ = 0: ρ* = 0. One byte less: ā^2 alone, ρ = 1,
	// and at ρ = 1 still ā^2 alone: ρ* = 1. Falling by 8 bytes per unit of ρ, that second
	// step leaves room for nothing, ρ = 3, and then B^3 cannot run at all.
	require.InDelta(t, 0.0, k.fixpoint(func(rho float64) int64 { return 27 + 11 - int64(8*rho) }), 1e-9)
	require.InDelta(t, 1.0, k.fixpoint(func(rho float64) int64 { return 27 + 10 - int64(rho) }), 1e-9)
	require.True(t, k.fixpoint(func(rho float64) int64 { return 27 + 10 - int64(8*rho) }) > 1e300)
	// Nothing fits: B^3 cannot run.
	require.True(t, k.fixpoint(func(float64) int64 { return 26 }) > 1e300)
}

// TestRecomputationSets: B^ℓ's knapsack carries, within any room, the most u_f of a set of
// ā^j, j < ℓ (ā^{ℓ−1} by what it adds over a plain a^{ℓ−1}), and the turn's suffix sets the
// most of one within (ℓ, L] — against every subset, on random chains of 2 to 9 stages, byte
// and GiB scale; and base is B^ℓ's memory without them.
func TestRecomputationSets(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 61))
	for k := 0; k < 60; k++ {
		maxSize := int64(20)
		if k%2 == 1 {
			maxSize = 1 << 32
		}
		c := instances.Random(r, instances.RandomParams{Stages: 2 + r.IntN(8), MaxSize: maxSize, MaxTime: 1, WithABar: true, WithDelta: true, WithOverheads: true})
		n := c.Len()
		rec := newRecomputation(c)
		size := func(l, j int) int64 { // item j's size in B^ℓ's set
			st := c.Stage(j)
			if j == l-1 {
				return st.ABar - min(st.A, st.ABar)
			}
			return st.ABar
		}
		best := func(l, from, to int, room int64) float64 { // items from..to of B^ℓ's set
			out := -1.0
			m := to - from + 1
			for mask := 0; mask < 1<<max(m, 0); mask++ {
				var w int64
				var v float64
				for i := 0; i < m; i++ {
					if mask>>i&1 == 1 {
						w += size(l, from+i)
						v += c.Stage(from + i).UF
					}
				}
				if w <= room {
					out = max(out, v)
				}
			}
			return out
		}
		for l := 1; l <= n; l++ {
			st := c.Stage(l)
			base := c.SizeDelta(l) + st.ABar + c.SizeDelta(l-1) + st.OB + c.A0
			if l >= 2 {
				in := c.Stage(l - 1)
				base += min(in.A, in.ABar)
			}
			require.Equal(t, base, rec.b[l].base, "k=%d ℓ=%d", k, l)
			for q := 0; q < 20; q++ {
				room := r.Int64N(int64(n) * maxSize)
				require.InDelta(t, best(l, 1, l-1, room), rec.b[l].carry(room), 1e-9, "k=%d B^%d room %d", k, l, room)
				if l <= n-2 {
					require.InDelta(t, best(n, l+1, n-1, room), rec.sfx[l].carry(room), 1e-9, "k=%d suffix (%d, L] room %d", k, l, room)
				}
			}
		}
	}
}
