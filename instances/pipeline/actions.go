package pipeline

import (
	"fmt"

	"github.com/memsched/memsched/schedule"
)

// Actions returns each GPU's order of actions (one list per GPU 0..gpus−1) for the parts of
// pl under schedule s with m micro-batches:
//   - a contiguous plan (part k on GPU k) gets s's order: GPipe F(0..m−1) B(0..m−1); 1F1B
//     w = min(m, S−k) forwards, then B(j) F(w+j) for j = 0..m−w−1, then the remaining
//     backwards (SPEC §7; PyTorch's Schedule1F1B needs m ≥ S, this order does not);
//   - a plan where a GPU holds several parts gets, under GPipe, PyTorch's looped breadth-first
//     order (ScheduleLoopedBFS): each local part in chain order, the forwards of every micro-
//     batch, then each local part in reverse, the backwards. Under 1F1B it has no named order:
//     give the plan's own Actions.
//
// A plan's own Actions, when present, are returned as they are (verify/pipeline checks them).
func Actions(pl *schedule.Pipeline, s Schedule, m, gpus int) ([][]schedule.Action, error) {
	if pl.Actions != nil {
		return pl.Actions, nil
	}
	out := make([][]schedule.Action, gpus)
	if pl.Contiguous() {
		S := len(pl.Parts)
		for k := 0; k < S && k < gpus; k++ {
			out[k] = contiguousOrder(s, k, S, m)
		}
		return out, nil
	}
	if s != GPipe {
		return nil, fmt.Errorf("pipeline: schedule %s has no named order for a GPU that holds several parts; give the plan's actions (or use gpipe: looped breadth-first)", s)
	}
	for g := range out {
		var local []int
		for j, pt := range pl.Parts {
			if pt.GPU == g {
				local = append(local, j)
			}
		}
		for _, j := range local {
			for mu := 0; mu < m; mu++ {
				out[g] = append(out[g], schedule.Action{Part: j, MicroBatch: mu})
			}
		}
		for i := len(local) - 1; i >= 0; i-- {
			for mu := 0; mu < m; mu++ {
				out[g] = append(out[g], schedule.Action{Part: local[i], Backward: true, MicroBatch: mu})
			}
		}
	}
	return out, nil
}

// contiguousOrder is GPU k's order of actions in a contiguous pipeline of S GPUs (its part is
// part k).
func contiguousOrder(s Schedule, k, S, m int) []schedule.Action {
	as := make([]schedule.Action, 0, 2*m)
	f := func(mu int) { as = append(as, schedule.Action{Part: k, MicroBatch: mu}) }
	b := func(mu int) { as = append(as, schedule.Action{Part: k, Backward: true, MicroBatch: mu}) }
	w := m
	if s == OneFOneB {
		w = min(m, S-k)
	}
	for mu := 0; mu < w; mu++ {
		f(mu)
	}
	for j := 0; j < m-w; j++ {
		b(j)
		f(w + j)
	}
	for j := m - w; j < m; j++ {
		b(j)
	}
	return as
}
