package dp

import (
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
