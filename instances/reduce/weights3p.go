package reduce

import (
	"fmt"
	"slices"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/instances/offload"
	"github.com/memsched/memsched/schedule"
)

// WeightsThreePartition is the reduction of 002 Thm 1 from 3-Partition to OFF(L, M_GPU, β)
// (indices as SPEC §3 fixes them): for x_0..x_{3m−1} with Σ x = mV,
//
//	L = 5m, β = V, M_GPU = (m+1)V, target period T = 2m;
//	u_F = 0 and |a| = 0 everywhere, except u_{F_{2m}} = m;
//	layer 2k−1 (k = 1..m): u_B = 0, |w| = V;   layer 2k: u_B = 1, |w| = 0;
//	layer 2m+1+j (j = 0..3m−1): u_B = 0, |w| = x_j.
//
// When groups (m triples of indices, each summing to V) is given, it also returns the
// certificate schedule of the proof, of period exactly 2m: during F_{2m}, step k offloads
// w_{2k−1} while prefetching the k-th triple; during B_{2(m−k+1)}, it prefetches w_{2(m−k)+1}
// while offloading the k-th triple.
func WeightsThreePartition(xs []int64, groups [][]int) (*offload.Problem, *schedule.Periodic, error) {
	if len(xs) == 0 || len(xs)%3 != 0 {
		return nil, nil, fmt.Errorf("reduce: 3-partition needs 3m values, got %d", len(xs))
	}
	m := len(xs) / 3
	sum, err := sumValues("3-partition", xs)
	if err != nil {
		return nil, nil, err
	}
	if sum%int64(m) != 0 {
		return nil, nil, fmt.Errorf("reduce: 3-partition values sum to %d, not a multiple of m = %d", sum, m)
	}
	v := sum / int64(m)
	L := 5 * m
	mgpu, ok := instances.MulBytes(int64(m+1), v)
	if !ok {
		return nil, nil, fmt.Errorf("reduce: 3-partition values: M_GPU = (m+1)V = %d·%d is above 2^60 B, the most memsched computes with", m+1, v)
	}
	p := &offload.Problem{MGPU: mgpu, Beta: float64(v)}
	for i := 1; i <= L; i++ {
		var l offload.Layer
		switch {
		case i <= 2*m && i%2 == 1:
			l.W = v
		case i <= 2*m:
			l.UB = 1
		default:
			l.W = xs[i-2*m-1]
		}
		if i == 2*m {
			l.UF = float64(m)
		}
		p.Layers = append(p.Layers, l)
	}
	if err := p.Validate(); err != nil { // sizes total 2mV
		return nil, nil, fmt.Errorf("reduce: 3-partition values: %w", err)
	}
	if groups == nil {
		return p, nil, nil
	}
	if err := checkGroups(xs, groups, v); err != nil {
		return nil, nil, err
	}
	s := &schedule.Periodic{Period: float64(2 * m), OpStart: make([]float64, 2*L),
		Resident: make([]bool, L+1), CPUValid: make([]bool, L+1)}
	for i := 1; i <= L; i++ {
		s.Resident[i] = i <= 2*m // the small-index layers start on the GPU,
		s.CPUValid[i] = i > 2*m  // the x-layers on the CPU, current there
	}
	// Forward: F_1 … F_{2m−1} at 0, F_{2m} during [0, m), F_{2m+1} … F_L at m.
	for j := 0; j < L; j++ {
		if j+1 > 2*m {
			s.OpStart[j] = float64(m)
		}
	}
	// Backward (operation L+q is B_{L−q}): B_L … B_{2m+1} at m; then B_{2m−r} at m + ⌈r/2⌉.
	for q := 0; q < L; q++ {
		i := L - q
		if i > 2*m {
			s.OpStart[L+q] = float64(m)
			continue
		}
		s.OpStart[L+q] = float64(m) + float64((2*m-i+1)/2)
	}
	for k := 1; k <= m; k++ {
		t := float64(k - 1)
		s.Transfers = append(s.Transfers, schedule.Transfer{Layer: 2*k - 1, Kind: schedule.Offload, Start: t})
		s.Transfers = append(s.Transfers, prefetchGroup(groups[k-1], m, t, v, xs)...)
		// During B_{2(m−k+1)}, which runs [m+k−1, m+k): bring back w_{2(m−k)+1}, send group k.
		tb := float64(m + k - 1)
		s.Transfers = append(s.Transfers, schedule.Transfer{Layer: 2*(m-k) + 1, Kind: schedule.Prefetch, Start: tb})
		start := tb
		for _, j := range groups[k-1] {
			s.Transfers = append(s.Transfers, schedule.Transfer{Layer: 2*m + 1 + j, Kind: schedule.Offload, Start: start})
			start += float64(xs[j]) / float64(v)
		}
	}
	return p, s, nil
}

// prefetchGroup prefetches the x-layers of one triple back to back from t.
func prefetchGroup(g []int, m int, t float64, v int64, xs []int64) []schedule.Transfer {
	var out []schedule.Transfer
	for _, j := range g {
		out = append(out, schedule.Transfer{Layer: 2*m + 1 + j, Kind: schedule.Prefetch, Start: t})
		t += float64(xs[j]) / float64(v)
	}
	return out
}

func checkGroups(xs []int64, groups [][]int, v int64) error {
	if len(groups) != len(xs)/3 {
		return fmt.Errorf("reduce: %d groups for %d values", len(groups), len(xs))
	}
	seen := make([]bool, len(xs))
	for gi, g := range groups {
		var s int64
		for _, j := range g {
			if j < 0 || j >= len(xs) || seen[j] {
				return fmt.Errorf("reduce: group %d: bad or repeated index %d", gi, j)
			}
			seen[j] = true
			s += xs[j]
		}
		if s != v {
			return fmt.Errorf("reduce: group %d sums to %d, not V = %d", gi, s, v)
		}
	}
	if slices.Contains(seen, false) {
		return fmt.Errorf("reduce: groups do not cover every value")
	}
	return nil
}
