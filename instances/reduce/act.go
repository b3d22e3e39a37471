package reduce

import (
	"fmt"

	act "github.com/memsched/memsched/instances/actoffload"
)

func checkValues(kind string, us []int64, parts int64) (sum int64, err error) {
	for i, u := range us {
		if u <= 0 {
			return 0, fmt.Errorf("reduce: %s value %d = %d must be positive", kind, i, u)
		}
		sum += u
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
// into m triples of sum V: during each F_{3m+2k} exactly V bytes must leave the GPU.
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
