package offload

import (
	"errors"

	inst "github.com/memsched/memsched/instances/offload"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify/periodic"
)

// ReserveBuffers is the largest number of weight buffers GreedyReserve keeps free.
const ReserveBuffers = 3

// GreedyReserve runs 002 Alg. 1 (Select) against a reduced memory M_GPU − r·max_i|w_i| for
// r = 0..ReserveBuffers and schedules each selection against the real M_GPU (Schedule, which
// validates); it returns the shortest valid period (r = 0 is plain Greedy).
//
// Why: Alg. 1 only makes each operation fit (E_o ≤ 0 at operation level, 002 §5): a weight it
// sends away for the operations just before its use must be absent during them, so its prefetch
// cannot overlap them and Alg. 2 has to wait for it (on the Table 1 replica, every idle interval
// of Greedy is such a prefetch). Keeping room for r weights in flight lets the prefetches
// overlap. This is memsched's variant, not in 002. Selections that fail (some operation no
// longer fits the reduced memory) are skipped.
func GreedyReserve(p *inst.Problem, discount bool) (Selection, *schedule.Periodic, periodic.Report, error) {
	return GreedyReserveUntil(p, discount, nil)
}

// GreedyReserveUntil is GreedyReserve ended with ErrStopped when stop closes.
func GreedyReserveUntil(p *inst.Problem, discount bool, stop <-chan struct{}) (Selection, *schedule.Periodic, periodic.Report, error) {
	bestSel, bestS, bestRep, err := GreedyUntil(p, discount, stop)
	if errors.Is(err, ErrStopped) {
		return nil, nil, periodic.Report{}, err
	}
	var maxW int64
	for _, l := range p.Layers {
		maxW = max(maxW, l.W)
	}
	for r := int64(1); r <= ReserveBuffers; r++ {
		q := *p
		q.MGPU -= r * maxW
		if q.MGPU <= 0 {
			break
		}
		sel, e := SelectUntil(&q, discount, stop)
		if errors.Is(e, ErrStopped) {
			return nil, nil, periodic.Report{}, e
		}
		if e != nil {
			continue
		}
		s, rep, e := Schedule(p, sel, discount)
		if e != nil {
			continue
		}
		if err != nil || rep.Period < bestRep.Period {
			bestSel, bestS, bestRep, err = sel, s, rep, nil
		}
	}
	return bestSel, bestS, bestRep, err
}
