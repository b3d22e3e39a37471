package rematoffload

import (
	"fmt"
	"math"
	"sort"

	"github.com/memsched/memsched/instances"
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

// FromTimed writes an activation-offloading schedule of 001 (instances/actoffload.FromChain's
// mapping of chain c: operation i is stage i+1, x_0 = a^0, x_j = ā^j) as a combined schedule:
// F_all^1 … F_all^{L+1}, B^{L+1} … B^1 and its transfers in order of their start times, with
// the dependencies its start times show (an operation that starts after the previous one ends
// waits for the transfer that ends then; a transfer that starts after the previous one ends
// follows the operation that ends then; the first operation using a prefetched tensor waits
// for its prefetch). verify/combined.Check then judges it under the combined model's rules,
// which differ from 001's where the chain has a loss gradient δ^{L+1} > 0 (004 counts it from
// the start, 001 from B_L) — a schedule valid in one may not be in the other. beta is the
// link's bandwidth, for the transfers' durations.
//
// A transfer of s that starts when neither the link nor an operation becomes free (001's
// schedules may start one at any time) starts at the last such event before it, or at the
// end of the operation running then (late: every such transfer; Mixed: the prefetches, whose
// memory is reserved from their start, while offloads start earlier). Each may break a rule
// that s kept (memory reserved earlier, a release or a reader delayed): Check decides.
func FromTimed(c *instances.Chain, s *schedule.Timed, beta float64, late bool) (*schedule.Combined, error) {
	mode := Earlier
	if late {
		mode = Later
	}
	return FromTimedShift(c, s, beta, mode)
}

// Shift is how FromTimedShift moves a transfer that does not start at an event.
type Shift uint8

const (
	// Earlier: to the last event before it.
	Earlier Shift = iota
	// Later: to the end of the operation running then.
	Later
	// Mixed: offloads earlier, prefetches later.
	Mixed
)

// FromTimedShift is FromTimed with the shift of each transfer that does not start at an
// event.
func FromTimedShift(c *instances.Chain, s *schedule.Timed, beta float64, mode Shift) (*schedule.Combined, error) {
	n := c.Len()
	if len(s.Ops) != 2*n {
		return nil, fmt.Errorf("rematoffload: the activation-offloading schedule has %d operations, the chain %d stages", len(s.Ops), n)
	}
	tol := 1e-12
	for _, o := range s.Ops {
		tol = max(tol, 1e-12*o.Start)
	}
	same := func(a, b float64) bool { return math.Abs(a-b) <= tol }
	out := &schedule.Combined{}
	opEnd := make([]float64, len(s.Ops))
	for i, o := range s.Ops {
		st := c.Stage(o.Index + 1)
		kind, d := schedule.Fall, st.UF
		if o.Backward {
			kind, d = schedule.B, st.UB
		}
		out.Ops = append(out.Ops, schedule.CombinedOp{Op: schedule.Op{Kind: kind, Stage: o.Index + 1}})
		opEnd[i] = o.Start + d
	}
	order := make([]int, len(s.Transfers))
	for j := range order {
		order[j] = j
	}
	sort.SliceStable(order, func(a, b int) bool { return s.Transfers[order[a]].Start < s.Transfers[order[b]].Start })
	// lastBefore(x) is the last operation that starts and ends by x. The operations run one
	// after another, so their ends ascend and a binary search finds it; a schedule whose do
	// not is scanned whole. (Scanning per transfer was quadratic: 16 s on 20 001 stages.)
	sorted := true
	for i := 1; i < len(opEnd); i++ {
		sorted = sorted && opEnd[i-1] <= opEnd[i] && s.Ops[i-1].Start <= s.Ops[i].Start
	}
	lastBefore := func(x float64) int {
		if sorted {
			return sort.Search(len(opEnd), func(i int) bool { return opEnd[i] > x || s.Ops[i].Start > x }) - 1
		}
		after := -1
		for i := range opEnd {
			if opEnd[i] <= x && s.Ops[i].Start <= x {
				after = i
			}
		}
		return after
	}
	trEnd := make([]float64, 0, len(order))
	prevEnd := 0.0
	for _, j := range order {
		t := s.Transfers[j]
		size := c.A0
		if t.Index > 0 {
			size = c.Stage(t.Index).ABar
		}
		after := lastBefore(t.Start + tol)
		start := t.Start
		if t.Start > prevEnd+tol && (after < 0 || !same(opEnd[after], t.Start)) {
			// Not at an event: the last one before it, or the end of the operation running.
			start = prevEnd
			if after >= 0 {
				start = math.Max(start, opEnd[after])
			}
			if (mode == Later || mode == Mixed && t.Kind == schedule.Prefetch) && after+1 < len(opEnd) {
				after++
				start = math.Max(prevEnd, opEnd[after])
			}
		}
		out.Transfers = append(out.Transfers, schedule.CombinedTransfer{Kind: t.Kind, Tensor: schedule.Tensor{Stage: t.Index, Full: t.Index > 0}, After: after})
		prevEnd = math.Max(prevEnd, start) + float64(size)/beta
		// The operations that waited for it in s keep waiting for it: matched by its end in s.
		trEnd = append(trEnd, t.Start+float64(size)/beta)
	}
	// The transfers by end time (ties by index), and the prefetches of each tensor in order.
	byEnd := make([]int, len(trEnd))
	for j := range byEnd {
		byEnd[j] = j
	}
	sort.SliceStable(byEnd, func(a, b int) bool { return trEnd[byEnd[a]] < trEnd[byEnd[b]] })
	prefetches := map[int][]int{}
	for j, tr := range out.Transfers {
		if tr.Kind == schedule.Prefetch {
			prefetches[tr.Tensor.Stage] = append(prefetches[tr.Tensor.Stage], j)
		}
	}
	waited := make([]bool, len(out.Transfers))
	for i, o := range s.Ops {
		prev := 0.0
		if i > 0 {
			prev = opEnd[i-1]
		}
		if o.Start > prev+tol {
			// The last transfer (by index) ending with it.
			w := -1
			for k := sort.Search(len(byEnd), func(k int) bool { return trEnd[byEnd[k]] >= o.Start-2*tol }); k < len(byEnd) && trEnd[byEnd[k]] <= o.Start+2*tol; k++ {
				if same(trEnd[byEnd[k]], o.Start) {
					w = max(w, byEnd[k])
				}
			}
			if w < 0 {
				// It starts when nothing ends (001's schedules may idle any time): from the last
				// transfer ended before it (the first of those ending then), or (Later) the
				// first one ending after it.
				k := sort.Search(len(byEnd), func(k int) bool { return trEnd[byEnd[k]] >= o.Start })
				if mode == Later {
					k = sort.Search(len(byEnd), func(k int) bool { return trEnd[byEnd[k]] > o.Start })
					if k < len(byEnd) {
						w = byEnd[k]
					}
				} else if k > 0 {
					e := trEnd[byEnd[k-1]]
					for k > 0 && trEnd[byEnd[k-1]] == e {
						k--
					}
					w = byEnd[k]
				}
			}
			if w >= 0 {
				out.Ops[i].Wait = append(out.Ops[i].Wait, w)
			}
		}
		// The first operation using a prefetched tensor waits for its prefetch (in index
		// order, of a^{ℓ-1} and a^ℓ alike).
		l := o.Index + 1
		cands := append(append([]int(nil), prefetches[l-1]...), prefetches[l]...)
		sort.Ints(cands)
		for _, j := range cands {
			if waited[j] || trEnd[j] > o.Start+tol {
				continue
			}
			waited[j] = true
			out.Ops[i].Wait = append(out.Ops[i].Wait, j)
		}
	}
	return out, nil
}
