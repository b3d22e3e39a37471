package dp

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestThinIsBelow: a thinned frontier (pareto.thin) is at or below the frontier at every
// budget and less than eps below it, keeps its least budget and its least makespan, and has
// at most (range of makespans)/eps + 1 breakpoints — on random staircases at byte and GiB budgets, eps from below the smallest step to above
// the whole range.
func TestThinIsBelow(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 31))
	for k := 0; k < 500; k++ {
		scale := int64(1)
		if k%2 == 1 {
			scale = 1 << 30
		}
		var p pareto
		m, v := r.Int64N(8)*scale, 1+r.Float64()
		for i := 0; i < 1+r.IntN(40); i++ {
			p.push(m, v, int32(i))
			m += (1 + r.Int64N(5)) * scale
			v -= r.Float64() * 0.05
		}
		orig := pareto{mem: append([]int64(nil), p.mem...), val: append([]float64(nil), p.val...), arg: append([]int32(nil), p.arg...)}
		eps := []float64{1e-6, 0.01, 0.03, 0.1, 10}[k%5]
		p.thin(eps)
		require.NotEmpty(t, p.mem)
		require.Equal(t, orig.mem[0], p.mem[0])
		require.Equal(t, orig.least(), p.least())
		for i := 1; i < len(p.mem); i++ {
			require.Greater(t, p.mem[i], p.mem[i-1])
			require.Less(t, p.val[i], p.val[i-1])
		}
		require.LessOrEqual(t, float64(len(p.mem)), (orig.val[0]-orig.least())/eps+1)
		for x := orig.mem[0] - scale; x <= orig.mem[len(orig.mem)-1]+scale; x += max(scale/3, 1) {
			require.LessOrEqual(t, p.value(x), orig.value(x), "budget %d, eps %g", x, eps)
			if x >= orig.mem[0] {
				require.Greater(t, p.value(x), orig.value(x)-eps, "budget %d, eps %g", x, eps)
			}
		}
		if eps == 1e-6 {
			require.Equal(t, len(orig.mem), len(p.mem)) // no two makespans that close here
		}
	}
}
