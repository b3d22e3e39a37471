package rematoffload

import (
	"fmt"

	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify/combined"
)

// ToTimed writes a combined schedule that recomputes nothing — F_all^1 … F_all^{L+1},
// B^{L+1} … B^1, offloads of a^0 and ā^j only — as an activation-offloading schedule of 001
// (SPEC §2, instances/actoffload.FromChain's mapping: x_0 = a^0, x_j = ā^j, operation i is
// stage i+1), with the start times of rep (verify/combined.Check's), so that verify/timed can
// judge it under 001's rules.
func ToTimed(s *schedule.Combined, rep *combined.Report) (*schedule.Timed, error) {
	nOps := len(s.Ops)
	if nOps%2 != 0 {
		return nil, fmt.Errorf("rematoffload: %d operations: not F_all^1 … B^1", nOps)
	}
	n := nOps / 2
	t := &schedule.Timed{}
	for i, o := range s.Ops {
		want := schedule.Op{Kind: schedule.Fall, Stage: i + 1}
		if i >= n {
			want = schedule.Op{Kind: schedule.B, Stage: 2*n - i}
		}
		if o.Op != want {
			return nil, fmt.Errorf("rematoffload: operation %d is %v, want %v (a schedule without recomputation)", i+1, o.Op, want)
		}
		t.Ops = append(t.Ops, schedule.TimedOp{Backward: i >= n, Index: o.Stage - 1, Start: rep.OpStart[i]})
	}
	for j, tr := range s.Transfers {
		if tr.Tensor.Stage > 0 && !tr.Tensor.Full {
			return nil, fmt.Errorf("rematoffload: transfer %d moves %v: only a^0 and ā^j exist without recomputation", j+1, tr.Tensor)
		}
		t.Transfers = append(t.Transfers, schedule.ActTransfer{Kind: tr.Kind, Index: tr.Tensor.Stage, Start: rep.TransferStart[j]})
	}
	return t, nil
}
