package offload

import (
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
// Why: Alg. 1 only makes each operation fit (E_o ≤ 0 at operation level, 002 §5), which leaves
// no room for a weight in flight during the previous operation, so transfers cannot overlap
// computation and are exposed one by one. Keeping room for r buffers is a stand-in for the
// slack 002's Alg. 2 (cut-point search, early offloads) finds; it is not Alg. 2 itself.
// Selections that fail (some operation no longer fits the reduced memory) are skipped.
func GreedyReserve(p *inst.Problem, discount bool) (Selection, *schedule.Periodic, periodic.Report, error) {
	bestSel, bestS, bestRep, err := Greedy(p, discount)
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
		sel, e := Select(&q, discount)
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
