package reduce

import (
	"fmt"

	act "github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/schedule"
)

// checkValues checks that the values are positive and sum to a multiple of parts, and
// returns the sum.
func checkValues(kind string, us []int64, parts int64) (sum int64, err error) {
	if sum, err = sumValues(kind, us); err != nil {
		return 0, err
	}
	if sum%parts != 0 {
		return 0, fmt.Errorf("reduce: %s values sum to %d, not a multiple of %d", kind, sum, parts)
	}
	return sum, nil
}

// ActThreePartition is the reduction of 001 Thm 1 from 3-Partition to Problem 1, in SPEC §2's
// indices. For u_0..u_{3m−1} with Σ u = mV it builds L = 5m−1 with |x_i| = u_i for i < 3m,
// |x_{3m}| = 0 and, for k = 0..m−1, F_{3m+2k} of time 1 writing |x_{3m+2k+1}| = 0 and
// F_{3m+2k+1} of time 0 writing |x_{3m+2k+2}| = V; u_B = 0 except u_{B_{3m}} = m; every y and
// ex 0; β = V bytes/s, M_GPU = mV. A schedule of makespan T = 2m exists iff the values split
// into m sets of sum V: during each F_{3m+2k} exactly V bytes must leave the GPU. With every
// u_i in (V/4, V/2) (the strong form of 3-Partition) such sets are triples; without it the
// instance decides the partition into m sets of sum V of any size.
func ActThreePartition(us []int64) (p *act.Problem, target float64, err error) {
	if len(us) == 0 || len(us)%3 != 0 {
		return nil, 0, fmt.Errorf("reduce: 3-partition needs 3m values, got %d", len(us))
	}
	m := len(us) / 3
	sum, err := checkValues("3-partition", us, int64(m))
	if err != nil {
		return nil, 0, err
	}
	v := sum / int64(m)
	L := 5*m - 1
	p = newAct(L, v, sum)
	copy(p.X, us)
	for k := 0; k < m; k++ {
		p.UF[3*m+2*k] = 1
		p.X[3*m+2*k+2] = v
	}
	p.UB[3*m] = float64(m)
	return p, float64(2 * m), p.Validate()
}

// ActTwoPartition is the reduction of 001 Thm 3 from 2-Partition to Problem 2 (interruptible
// transfers), in SPEC §2's indices. For u_1..u_n with Σ u = 2V it builds L = n+2 with
// |x_i| = u_{i+1} for i < n, |x_n| = |x_{n+1}| = 0, |x_{n+2}| = V, |x_{n+3}| = 0; F_n and B_n
// take time 1, every other operation 0; y, ex 0; β = V, M_GPU = 2V. With interruptible
// transfers a schedule of makespan T = 2 exists iff the values split into two halves of sum V.
func ActTwoPartition(us []int64) (p *act.Problem, target float64, err error) {
	if len(us) == 0 {
		return nil, 0, fmt.Errorf("reduce: 2-partition needs at least one value")
	}
	sum, err := checkValues("2-partition", us, 2)
	if err != nil {
		return nil, 0, err
	}
	v := sum / 2
	n := len(us)
	p = newAct(n+2, v, 2*v)
	copy(p.X, us)
	p.X[n+2] = v
	p.UF[n], p.UB[n] = 1, 1
	return p, 2, p.Validate()
}

func newAct(L int, beta, mem int64) *act.Problem {
	return &act.Problem{
		X: make([]int64, L+2), Y: make([]int64, L+2),
		UF: make([]float64, L+1), UB: make([]float64, L+1),
		ExF: make([]int64, L+1), ExB: make([]int64, L+1),
		MGPU: mem, Beta: float64(beta),
	}
}

// ActThreePartitionCertificate is the schedule of 001 Thm 1's proof for a known partition:
// triples[k] lists the three value indices whose activations leave during F_{3m+2k} (time k to
// k+1, V bytes at β = V); every backward runs at time m except B_{3m} (m to 2m), during which
// all 3m activations come back in decreasing index order. Its makespan is T = 2m.
func ActThreePartitionCertificate(us []int64, triples [][3]int) (*schedule.Timed, error) {
	m := len(us) / 3
	if len(triples) != m {
		return nil, fmt.Errorf("reduce: %d triples for %d values", len(triples), len(us))
	}
	sum, err := checkValues("3-partition", us, int64(m))
	if err != nil {
		return nil, err
	}
	v := sum / int64(m)
	seen := make([]bool, len(us))
	s := &schedule.Timed{}
	for k, tr := range triples {
		var part int64
		t := float64(k)
		for _, j := range tr {
			if j < 0 || j >= len(us) || seen[j] {
				return nil, fmt.Errorf("reduce: triple %d: index %d out of range or repeated", k, j)
			}
			seen[j] = true
			part += us[j]
			s.Transfers = append(s.Transfers, schedule.ActTransfer{Kind: schedule.Offload, Index: j, Start: t})
			t += float64(us[j]) / float64(v)
		}
		if part != v {
			return nil, fmt.Errorf("reduce: triple %d sums to %d, not V = %d", k, part, v)
		}
	}
	L := 5*m - 1
	for i := 0; i <= L; i++ {
		t := 0.0
		if i > 3*m {
			t = float64((i - 3*m + 1) / 2) // F_{3m+2k} at k, F_{3m+2k+1} at k+1
		}
		s.Ops = append(s.Ops, schedule.TimedOp{Index: i, Start: t})
	}
	for i := L; i >= 0; i-- {
		t := float64(m)
		if i < 3*m {
			t = float64(2 * m)
		}
		s.Ops = append(s.Ops, schedule.TimedOp{Backward: true, Index: i, Start: t})
	}
	t := float64(m)
	for j := 3*m - 1; j >= 0; j-- {
		s.Transfers = append(s.Transfers, schedule.ActTransfer{Kind: schedule.Prefetch, Index: j, Start: t})
		t += float64(us[j]) / float64(v)
	}
	return s, nil
}

// ActTwoPartitionCertificate is the schedule of 001 Thm 3's proof for a half (value indices,
// 0-based, of sum V): its activations leave during F_n (0 to 1) and come back during B_n (1 to
// 2); makespan T = 2. The transfers are not interrupted, so it is also valid for Problem 1.
func ActTwoPartitionCertificate(us []int64, half []int) (*schedule.Timed, error) {
	sum, err := checkValues("2-partition", us, 2)
	if err != nil {
		return nil, err
	}
	v := sum / 2
	n := len(us)
	var part int64
	s := &schedule.Timed{}
	t := 0.0
	seen := map[int]bool{}
	for _, j := range half {
		if j < 0 || j >= n || seen[j] {
			return nil, fmt.Errorf("reduce: half index %d out of range or repeated", j)
		}
		seen[j] = true
		part += us[j]
		s.Transfers = append(s.Transfers, schedule.ActTransfer{Kind: schedule.Offload, Index: j, Start: t})
		t += float64(us[j]) / float64(v)
	}
	if part != v {
		return nil, fmt.Errorf("reduce: the half sums to %d, not V = %d", part, v)
	}
	t = 1
	for k := len(half) - 1; k >= 0; k-- {
		j := half[k]
		s.Transfers = append(s.Transfers, schedule.ActTransfer{Kind: schedule.Prefetch, Index: j, Start: t})
		t += float64(us[j]) / float64(v)
	}
	L := n + 2
	for i := 0; i <= L; i++ {
		t := 0.0
		if i > n {
			t = 1
		}
		s.Ops = append(s.Ops, schedule.TimedOp{Index: i, Start: t})
	}
	for i := L; i >= 0; i-- {
		t := 1.0
		if i < n {
			t = 2
		}
		s.Ops = append(s.Ops, schedule.TimedOp{Backward: true, Index: i, Start: t})
	}
	return s, nil
}
