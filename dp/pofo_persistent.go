package dp

import (
	"fmt"
	"math"

	"github.com/memsched/memsched/schedule"
)

// persistentRows reads sub-chain rows of a slotted C_MP table: the hook the combined DP
// needs from Persistent (its own methods answer the whole chain only). m is in the table's
// slots, beside the sub-chain's stored input.
type persistentRows struct{ p *Persistent }

func (r persistentRows) value(s, t int, m int64) float64 {
	p := r.p
	if m < 0 || p.m < 0 {
		return math.Inf(1)
	}
	return p.slice(p.rowOf(s, t))[min(m, int64(p.m))]
}

func (r persistentRows) appendSeq(seq *schedule.Sequence, s, t int, m int64) {
	r.p.rebuild(seq, s, t, int(min(m, int64(r.p.m))))
}

// Sub returns the best persistent sequence of stages s..t of the table's chain (004 Thm 4.8)
// with its input stored outside room bytes and δ^t inside, and its makespan; ok is false when
// none fits. room is rounded down to the table's slots. It is what the combined lever's
// strategies recompute a segment with.
func (p *Persistent) Sub(s, t int, room int64) (seq schedule.Sequence, makespan float64, ok bool) {
	if s < 1 || t > p.n || s > t {
		panic(fmt.Sprintf("dp: sub-chain %d..%d out of 1..%d", s, t, p.n))
	}
	if room < 0 || p.m < 0 {
		return nil, math.Inf(1), false
	}
	m := room / p.sc.q
	r := persistentRows{p}
	v := r.value(s, t, m)
	if math.IsInf(v, 1) {
		return nil, v, false
	}
	r.appendSeq(&seq, s, t, m)
	return seq, v, true
}

// SlotSize returns the table's slot size in bytes.
func (p *Persistent) SlotSize() int64 { return p.sc.q }
