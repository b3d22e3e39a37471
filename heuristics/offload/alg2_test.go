package offload

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	inst "github.com/memsched/memsched/instances/offload"
	"github.com/memsched/memsched/instances/reduce"
	"github.com/memsched/memsched/verify/periodic"
)

// TestAlg2EveryCutValidates: Alg. 2's memory profile and verify/periodic agree. On random
// instances with tight memory, for Alg. 1's selection and for arbitrary selections, every cut
// point either finds no feasible placement or yields a schedule the validator accepts (period
// closed, memory never above M_GPU, channels, data dependencies). One rejection is a bug in the
// scheduler or in the validator.
func TestAlg2EveryCutValidates(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	runs, valid, noFit, cutHelps := 0, 0, 0, 0
	for n := 0; n < 3000; n++ {
		p := inst.Random(r, 1+r.IntN(8))
		var maxOp int64
		for i := 1; i <= p.L(); i++ {
			maxOp = max(maxOp, p.OpMemory(i, true))
		}
		p.MGPU = maxOp + r.Int64N(p.MGPU-maxOp) // often below what L2L needs
		sel, err := Select(p, n%3 != 0)
		if err != nil {
			continue
		}
		if n%2 == 1 {
			sel = randomSelection(r, p.L())
		}
		first, best := -1.0, -1.0
		for cut := 0; cut <= len(backPrefetches(sel, p.L())); cut++ {
			runs++
			s, err := runAlg2(p, sel, n%3 != 0, cut)
			if errors.Is(err, errNoFit) {
				noFit++
				continue
			}
			require.NoError(t, err)
			rep, err := periodic.Validate(p, s)
			require.NoError(t, err, "instance %d %+v, selection %v, cut %d", n, p, sel, cut)
			valid++
			if cut == 0 {
				first = rep.Period
			}
			if best < 0 || rep.Period < best {
				best = rep.Period
			}
		}
		if first >= 0 && best < first-1e-9 {
			cutHelps++
		}
	}
	t.Logf("%d runs: %d valid, %d found no room; a cut point > 0 is strictly better on %d instances", runs, valid, noFit, cutHelps)
	assert.Greater(t, valid, 4000)
	assert.Greater(t, cutHelps, 25)
}

func randomSelection(r *rand.Rand, L int) Selection {
	sel := make(Selection, L+1)
	for i := 1; i <= L; i++ {
		sel[i] = [2]bool{r.IntN(2) == 1, r.IntN(2) == 1}
	}
	return sel
}

// TestCutPoint: w_2 leaves between F_2 and B_2 (choice (2,1)) and takes 4 s each way. Without a
// cut, its prefetch runs during B_3 (1 s) and B_2 waits 3 s: period 13. With the prefetch
// before the cut, it runs at the end of the previous period during F_3 (5 s) after the upload
// of w_2, which starts right after B_2: no idle, period Σu = 10.
func TestCutPoint(t *testing.T) {
	p := &inst.Problem{Layers: []inst.Layer{{UF: 1, UB: 1, W: 1}, {UF: 1, UB: 1, W: 4}, {UF: 5, UB: 1, W: 1}}, MGPU: 100, Beta: 1}
	sel := Selection{{}, {}, {false, true}, {}}
	s0, err := runAlg2(p, sel, true, 0)
	require.NoError(t, err)
	rep0, err := periodic.Validate(p, s0)
	require.NoError(t, err)
	assert.InDelta(t, 13, rep0.Period, 1e-12)
	_, rep, err := Schedule(p, sel, true)
	require.NoError(t, err)
	assert.InDelta(t, 10, rep.Period, 1e-12)
	assert.InDelta(t, 0, rep.Idle, 1e-12)
	assert.Equal(t, int64(4), rep.Offloaded)
	assert.Equal(t, int64(4), rep.Prefetched)
}

// TestExhaustiveThreePartition: on 002 Thm 1's instance for m = 1 (L = 5), the best selection
// scheduled by Alg. 2 reaches the certificate's period 2m, which is optimal (nothing runs in
// less than Σu = 2).
func TestExhaustiveThreePartition(t *testing.T) {
	p, _, err := reduce.WeightsThreePartition([]int64{3, 3, 4}, [][]int{{0, 1, 2}})
	require.NoError(t, err)
	_, rep, err := Exhaustive(p)
	require.NoError(t, err)
	assert.InDelta(t, 2, rep.Period, 1e-9)
}
