package pipeline

import (
	"fmt"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
)

// act is what a micro-batch stores of activation ℓ on a part: nothing, a^ℓ, or ā^ℓ.
type act uint8

const (
	none act = iota
	plain
	full
)

// profile is what one micro-batch does on one part, the same for every micro-batch: its
// forward phase (the operations before the first B) and backward phase, their durations, and
// the memory of its own operations.
type profile struct {
	first, last, end int // the part's stages and its loss stage: L+1 on the last part, else last+1
	// f and b are the durations of the forward and backward phases.
	f, b float64
	// held is what the micro-batch stores between its phases (its input included).
	held int64
	// peakF and peakB are the largest memory of the micro-batch's own operations in each
	// phase (the stored state counts: the input at the start of the forward, the held state
	// and δ at the start of the backward); opF and opB the index in seq of the operation that
	// reaches it first (-1: the state at the start of the phase).
	peakF, peakB int64
	opF, opB     int
	seq          schedule.Sequence
	w            int64 // Σ w over the stages first..end
}

// SequenceError is a part's sequence that breaks 004's rules or the pipeline's (SPEC §7): the
// part, the operation (index in the sequence, -1 for the sequence as a whole) and why.
type SequenceError struct {
	Part  int
	Index int
	Op    schedule.Op
	Msg   string
}

func (e *SequenceError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("pipeline: part %d: sequence: %s", e.Part, e.Msg)
	}
	return fmt.Sprintf("pipeline: part %d: sequence operation %d (%v): %s", e.Part, e.Index, e.Op, e.Msg)
}

// storeAll is the sequence F_all^first … F_all^end, B^end … B^first.
func storeAll(first, end int) schedule.Sequence {
	seq := make(schedule.Sequence, 0, 2*(end-first+1))
	for l := first; l <= end; l++ {
		seq = append(seq, schedule.Op{Kind: schedule.Fall, Stage: l})
	}
	for l := end; l >= first; l-- {
		seq = append(seq, schedule.Op{Kind: schedule.B, Stage: l})
	}
	return seq
}

// replayPart replays part j's sequence (store-all when pt.Sequence is empty) for one
// micro-batch under SPEC §7's rules, which are §1's (004 Table 1) on the part's own chain:
// stages first..last and a loss stage end, the chain's L+1 on the part that ends at L, else
// last+1, a zero-cost stand-in for the next GPU (no time, ā and δ of size 0): its F_all sends
// a^{last} (which must then be stored), its B receives δ^{last} and consumes a plain a^{last}
// (an ā^{last} stays). The input a^{first−1} is stored from the start of the forward phase
// (the operations before the first B), the gradient δ^{end} only from the start of the
// backward phase.
func replayPart(c *instances.Chain, j int, pt schedule.Part) (*profile, error) {
	L := c.Len() - 1
	pr := &profile{first: pt.First, last: pt.Last, end: pt.Last + 1}
	virtual := pt.Last < L
	for l := pr.first; l <= pt.Last; l++ {
		pr.w += c.Stage(l).W
	}
	if !virtual {
		pr.w += c.Stage(L + 1).W
	}
	// The part's chain: the stand-in loss stage has nothing but the gradient it passes on.
	stage := func(l int) instances.Stage {
		if virtual && l == pr.end {
			return instances.Stage{}
		}
		return *c.Stage(l)
	}
	sizeA := func(l int) int64 {
		if l == pr.first-1 {
			return c.SizeA(l)
		}
		return stage(l).A
	}
	sizeD := func(l int) int64 {
		if l == pr.first-1 {
			return c.SizeDelta(l)
		}
		return stage(l).Delta
	}
	seq := pt.Sequence
	if len(seq) == 0 {
		seq = storeAll(pr.first, pr.end)
	}
	pr.seq = seq
	bad := func(i int, format string, args ...any) error {
		e := &SequenceError{Part: j, Index: i, Msg: fmt.Sprintf(format, args...)}
		if i >= 0 {
			e.Op = seq[i]
		}
		return e
	}
	lo := pr.first - 1
	acts := make([]act, pr.end-lo+1) // acts[ℓ−lo]
	size := func(l int, a act) int64 {
		switch a {
		case plain:
			return sizeA(l)
		case full:
			if l == lo {
				return sizeA(l)
			}
			return stage(l).ABar
		}
		return 0
	}
	acts[0] = plain
	stored := sizeA(lo) // Σ sizes of acts, plus δ^T in the backward phase
	pr.peakF, pr.opF, pr.opB = stored, -1, -1
	set := func(l int, a act) {
		stored += size(l, a) - size(l, acts[l-lo])
		acts[l-lo] = a
	}
	T := -1 // the current gradient δ^T; -1 in the forward phase
	for i, op := range seq {
		l := op.Stage
		if op.Kind == schedule.Del {
			return nil, bad(i, "Del is not an operation of the pipeline model (no free deletion)")
		}
		if l < pr.first || l > pr.end {
			return nil, bad(i, "stage %d is not on the part (stages %d..%d)", l, pr.first, pr.end)
		}
		if virtual && l == pr.end && op.Kind != schedule.Fall && op.Kind != schedule.B {
			return nil, bad(i, "stage %d stands for the next GPU here: only F_all^%d (send a^%d) and B^%d (receive δ^%d)", l, l, pr.last, l, pr.last)
		}
		if T == lo {
			return nil, bad(i, "the sequence is already complete (δ^%d exists)", lo)
		}
		if op.Kind == schedule.B && T < 0 {
			// The backward phase starts: δ^{end} arrives (or is the loss gradient).
			pr.held = stored
			T = pr.end
			stored += sizeD(T)
			pr.peakB = stored
		}
		st := stage(l)
		prev := acts[l-1-lo]
		var mem int64
		switch op.Kind {
		case schedule.Fck, schedule.Fn, schedule.Fall:
			if T >= 0 && l > T {
				return nil, bad(i, "F^%d after δ^%d: stage %d is already back-propagated", l, T, l)
			}
			if prev == none {
				return nil, bad(i, "input a^%d is not stored", l-1)
			}
			if op.Kind == schedule.Fn && prev != plain {
				return nil, bad(i, "F_∅^%d needs a plain a^%d, but ā^%d is stored", l, l-1, l-1)
			}
			cur := acts[l-lo]
			if cur == full || (cur == plain && op.Kind != schedule.Fall) {
				return nil, bad(i, "stage %d's output is already stored", l)
			}
			out := st.A
			if op.Kind == schedule.Fall {
				out = st.ABar
			}
			mem = stored + out + st.OF
			if op.Kind == schedule.Fn {
				set(l-1, none)
			}
			if op.Kind == schedule.Fall {
				set(l, full)
			} else {
				set(l, plain)
			}
			if T < 0 {
				pr.f += st.UF
			} else {
				pr.b += st.UF
			}
		case schedule.B:
			if T != l {
				return nil, bad(i, "δ^%d is not stored (the current gradient is δ^%d)", l, T)
			}
			if acts[l-lo] != full {
				return nil, bad(i, "ā^%d is not stored", l)
			}
			if prev == none {
				return nil, bad(i, "input a^%d is not stored", l-1)
			}
			mem = stored + sizeD(l-1) + st.OB
			stored -= sizeD(l)
			set(l, none)
			if prev == plain {
				set(l-1, none)
			}
			T = l - 1
			stored += sizeD(T)
			pr.b += st.UB
		default:
			return nil, bad(i, "unknown operation kind")
		}
		if T < 0 {
			if mem > pr.peakF {
				pr.peakF, pr.opF = mem, i
			}
		} else if mem > pr.peakB || pr.opB < 0 {
			pr.peakB, pr.opB = mem, i
		}
	}
	if T != lo {
		if T < 0 {
			return nil, bad(-1, "it has no backward phase (no B)")
		}
		return nil, bad(-1, "it ends before δ^%d is computed (current gradient δ^%d)", lo, T)
	}
	return pr, nil
}
