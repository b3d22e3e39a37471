package verify

import (
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
)

// FirstOverflow replays a valid seq (one Remat accepts) and returns the index of the first
// operation during which the memory in use exceeds budget, with that memory in bytes; index −1
// means the initial state (a^0, δ^{L+1}) alone exceeds it, and ok = false that nothing does.
// It panics on an invalid sequence (check it with Remat first).
func FirstOverflow(c *instances.Chain, seq schedule.Sequence, budget int64, opt RematOptions) (index int, mem int64, ok bool) {
	s := InitialState(c)
	if m := s.Memory(c); m > budget {
		return -1, m, true
	}
	for i, op := range seq {
		m, _, err := s.Apply(c, op)
		if err != nil {
			panic("verify: FirstOverflow on an invalid sequence: " + err.Error())
		}
		if m > budget {
			return i, m, true
		}
	}
	return 0, 0, false
}
