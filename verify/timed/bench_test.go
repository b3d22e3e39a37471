package timed

import (
	"testing"

	"github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/schedule"
)

// BenchmarkCheck1000 validates a 1000-stage schedule in which every other activation moves:
// offloaded during the forward, prefetched (decreasing) after it, with room to spare.
func BenchmarkCheck1000(b *testing.B) {
	const n = 1000
	p := &actoffload.Problem{X: make([]int64, n+1), Y: make([]int64, n+1), UF: make([]float64, n), UB: make([]float64, n),
		ExF: make([]int64, n), ExB: make([]int64, n), MGPU: 1 << 40, Beta: 1}
	s := &schedule.Timed{}
	for i := 0; i <= n; i++ {
		p.X[i], p.Y[i] = 1, 1
	}
	for i := 0; i < n; i++ {
		p.UF[i], p.UB[i] = 1, 1
		s.Ops = append(s.Ops, schedule.TimedOp{Index: i, Start: float64(i)})
	}
	for i := n - 1; i >= 0; i-- {
		s.Ops = append(s.Ops, schedule.TimedOp{Backward: true, Index: i, Start: float64(3*n - 1 - i)})
	}
	t := 0.0
	for j := 0; j < n; j += 2 {
		s.Transfers = append(s.Transfers, schedule.ActTransfer{Kind: schedule.Offload, Index: j, Start: float64(j)})
	}
	t = float64(n + 1)
	for j := n - 2; j >= 0; j -= 2 {
		s.Transfers = append(s.Transfers, schedule.ActTransfer{Kind: schedule.Prefetch, Index: j, Start: t})
		t++
	}
	if _, err := Check(p, s); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Check(p, s); err != nil {
			b.Fatal(err)
		}
	}
}
