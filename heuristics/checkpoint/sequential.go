package checkpoint

import (
	"errors"
	"fmt"
	"math"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
)

// Sequential is PyTorch's checkpoint_sequential (004 §5.4) on the L+1 stages: the first
// segments−1 segments have ⌊(L+1)/segments⌋ stages each and run forward without saving
// (F_ck on their first stage keeps the segment's input, F_∅ on the others); the last segment
// takes the remaining stages and runs with F_all, then back-propagates. Each earlier segment,
// from the last to the first, is then recomputed from its input with F_all and back-propagated.
// With one segment it is StoreAll. It fails when segments is not in 1..L+1.
func Sequential(c *instances.Chain, segments int) (schedule.Sequence, error) {
	n := c.Len()
	if segments < 1 || segments > n {
		return nil, fmt.Errorf("checkpoint: %d segments for %d stages (want 1..%d)", segments, n, n)
	}
	size := n / segments
	var starts []int // first stage of each checkpointed segment
	for k := 0; k < segments-1; k++ {
		starts = append(starts, 1+k*size)
	}
	last := 1 + (segments-1)*size
	var seq schedule.Sequence
	op := func(k schedule.OpKind, l int) { seq = append(seq, schedule.Op{Kind: k, Stage: l}) }
	for _, b := range starts {
		op(schedule.Fck, b)
		for l := b + 1; l < b+size; l++ {
			op(schedule.Fn, l)
		}
	}
	for l := last; l <= n; l++ {
		op(schedule.Fall, l)
	}
	for l := n; l >= last; l-- {
		op(schedule.B, l)
	}
	for k := len(starts) - 1; k >= 0; k-- {
		b := starts[k]
		for l := b; l < b+size; l++ {
			op(schedule.Fall, l)
		}
		for l := b + size - 1; l >= b; l-- {
			op(schedule.B, l)
		}
	}
	return seq, nil
}

// SequentialResult is one checkpoint_sequential run, replayed by the simulator.
type SequentialResult struct {
	Segments int
	Sequence schedule.Sequence
	verify.RematResult
}

// BestSequential tries the segment counts 004 §5.4 uses, 2 … ⌈2√(L+1)⌉ (and 1, store-all),
// replays each, and returns the fastest whose peak fits budget; feasible is false when none
// fits.
func BestSequential(c *instances.Chain, budget int64) (best SequentialResult, feasible bool, err error) {
	return BestSequentialUntil(c, budget, nil)
}

// ErrStopped says that BestSequentialUntil was stopped before it had tried every segment count.
var ErrStopped = errors.New("checkpoint: stopped before every segment count was tried")

// BestSequentialUntil is BestSequential ended with ErrStopped when stop closes (checked
// before each segment count: each replays the chain, and a 20 001-stage chain has 283 of them).
func BestSequentialUntil(c *instances.Chain, budget int64, stop <-chan struct{}) (best SequentialResult, feasible bool, err error) {
	n := c.Len()
	top := min(n, int(math.Ceil(2*math.Sqrt(float64(n)))))
	for k := 1; k <= max(top, 1); k++ {
		select {
		case <-stop:
			return SequentialResult{}, false, ErrStopped
		default:
		}
		seq, err := Sequential(c, k)
		if err != nil {
			return SequentialResult{}, false, err
		}
		res, err := verify.Remat(c, seq, verify.RematOptions{})
		if err != nil {
			return SequentialResult{}, false, fmt.Errorf("checkpoint: internal error: %w", err)
		}
		if res.Peak > budget {
			continue
		}
		if !feasible || res.Makespan < best.Makespan {
			best, feasible = SequentialResult{Segments: k, Sequence: seq, RematResult: res}, true
		}
	}
	return best, feasible, nil
}
