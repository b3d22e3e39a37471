// Package periodic validates periodic weight-offloading schedules (002 §3, SPEC §3): one period
// of a steady state in which the 2L operations run in the cyclic order F_1 … F_L, B_L … B_1 and
// weights move on a full-duplex link (one GPU→CPU and one CPU→GPU transfer at a time, each at β).
//
// Rules checked (a schedule that breaks one is invalid, with the first violation named):
//   - operations do not overlap, run in the cyclic order, and fit in [0, Period];
//   - w_i is fully on the GPU while F_i and B_i run; B_i makes the CPU copy stale;
//   - transfers start in [0, Period] and last at most a period; one that ends after Period
//     wraps around: in the steady state it is still in flight at time 0 of the period (its
//     copy from the previous period), so it holds its buffer and channel there. Transfers do
//     not overlap on their channel (on the circle of length Period), and an upload/offload of
//     w_i does not overlap B_i;
//   - an upload/offload needs w_i on the GPU; a prefetch needs w_i off the GPU and a current CPU
//     copy; a delete needs w_i on the GPU, not in use, and a current CPU copy;
//   - memory ≤ M_GPU at every instant: weights on the GPU, buffers of prefetches (from their
//     start) and offloads (until their end), plus the running operation's own memory (002 eq. 1,
//     its weight counted once), or between operations the activations kept: Σ_{k≤i}|a^k| after
//     F_i and Σ_{k<i}|a^k| after B_i (B_i consumed a^i), nothing before F_1;
//   - the state (weights on the GPU, current CPU copies) at Period equals the state at 0.
//     Resident and CPUValid describe time 0 before any event there; a wrapped transfer is in
//     flight at 0 (a wrapped prefetch's layer is not Resident, its buffer is counted), and the
//     CPU copy of a wrapped upload or offload becomes current when it ends.
package periodic

import (
	"fmt"
	"math"
	"sort"

	"github.com/memsched/memsched/instances/offload"
	"github.com/memsched/memsched/schedule"
)

// Report describes a valid periodic schedule.
type Report struct {
	Period float64
	// Idle is Period − Σ(u_F + u_B): time the GPU computes nothing.
	Idle float64
	// Peak is the largest memory use (bytes) over the period.
	Peak int64
	// Offloaded and Prefetched are bytes moved GPU→CPU and CPU→GPU per period.
	Offloaded, Prefetched int64
}

// Error is the first rule a schedule breaks.
type Error struct {
	Time float64
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("periodic: at t=%g: %s", e.Time, e.Msg) }

const eps = 1e-9

type event struct {
	t    float64
	rank int // order at equal times: transfer ends, op ends, deletes, zero-length ops, op starts, transfer starts
	kind int
	idx  int
	sub  int // a delete that follows a zero-length operation of its layer: (op index, 1)
	ref  int // index of the operation, transfer or delete the event belongs to
}

const (
	evTransferEnd = iota
	evOpEnd
	evDelete
	evOpInstant
	evOpStart
	evTransferStart
	evZeroTransferEnd // a zero-length transfer ends right after it starts
)

// opLayer returns the layer and direction of operation j.
var opLayer = schedule.PeriodicOp

// Validate checks s against p and returns its report, or an *Error for the first violation.
func Validate(p *offload.Problem, s *schedule.Periodic) (Report, error) {
	if err := p.Validate(); err != nil {
		return Report{}, err
	}
	L := p.L()
	fail := func(t float64, format string, args ...any) (Report, error) {
		return Report{}, &Error{Time: t, Msg: fmt.Sprintf(format, args...)}
	}
	if len(s.OpStart) != 2*L || len(s.Resident) != L+1 || len(s.CPUValid) != L+1 {
		return fail(0, "schedule has %d operations and %d/%d layer states for %d layers", len(s.OpStart), len(s.Resident), len(s.CPUValid), L)
	}
	if !(s.Period >= 0) || math.IsInf(s.Period, 0) {
		return fail(0, "period %g must be finite and non-negative", s.Period)
	}
	dur := func(j int) float64 {
		i, b := opLayer(L, j)
		if b {
			return p.Layer(i).UB
		}
		return p.Layer(i).UF
	}
	var work float64
	for j := 0; j < 2*L; j++ {
		st := s.OpStart[j]
		work += dur(j)
		if math.IsNaN(st) || st < -eps || st+dur(j) > s.Period+eps {
			return fail(st, "operation %d does not fit in [0, %g]", j, s.Period)
		}
		if j > 0 && st < s.OpStart[j-1]+dur(j-1)-eps {
			return fail(st, "operation %d starts before operation %d ends", j, j-1)
		}
	}
	tdur := func(tr schedule.Transfer) float64 { return float64(p.Layer(tr.Layer).W) / p.Beta }
	for k, tr := range s.Transfers {
		if tr.Layer < 1 || tr.Layer > L {
			return fail(tr.Start, "transfer %d: layer %d out of range", k, tr.Layer)
		}
		if math.IsNaN(tr.Start) || tr.Start < -eps || tr.Start > s.Period+eps || tdur(tr) > s.Period+eps {
			return fail(tr.Start, "transfer %d (%v of w_%d, %g s) does not fit in a period [0, %g]", k, tr.Kind, tr.Layer, tdur(tr), s.Period)
		}
	}
	for k, d := range s.Deletes {
		if d.Layer < 1 || d.Layer > L || math.IsNaN(d.Time) || d.Time < -eps || d.Time > s.Period+eps {
			return fail(d.Time, "delete %d of layer %d out of range", k, d.Layer)
		}
	}
	// wraps reports whether a transfer ends after the period: its previous copy is in flight at 0.
	wraps := func(tr schedule.Transfer) bool { return tr.Start+tdur(tr) > s.Period+eps }
	// Channels: no overlap on the circle; a wrapped transfer is two intervals.
	for _, ch := range []bool{false, true} {
		var iv [][2]float64
		for _, tr := range s.Transfers {
			if (tr.Kind == schedule.Prefetch) == ch {
				end := tr.Start + tdur(tr)
				if wraps(tr) {
					iv = append(iv, [2]float64{0, end - s.Period})
					end = s.Period
				}
				iv = append(iv, [2]float64{tr.Start, end})
			}
		}
		sort.Slice(iv, func(a, b int) bool { return iv[a][0] < iv[b][0] })
		for k := 1; k < len(iv); k++ {
			if iv[k][0] < iv[k-1][1]-eps {
				name := "GPU→CPU"
				if ch {
					name = "CPU→GPU"
				}
				return fail(iv[k][0], "two transfers overlap on the %s channel", name)
			}
		}
	}
	// Events.
	var evs []event
	for j := 0; j < 2*L; j++ {
		if dur(j) <= 0 {
			evs = append(evs, event{s.OpStart[j], evOpInstant, evOpInstant, j, 0, j})
		} else {
			evs = append(evs, event{s.OpStart[j], evOpStart, evOpStart, j, 0, j}, event{s.OpStart[j] + dur(j), evOpEnd, evOpEnd, j, 0, j})
		}
	}
	for k, tr := range s.Transfers {
		endRank := evTransferEnd
		if tdur(tr) == 0 {
			endRank = evZeroTransferEnd
		}
		end := tr.Start + tdur(tr)
		if wraps(tr) {
			end -= s.Period // the end of the previous period's copy
		}
		evs = append(evs, event{tr.Start, evTransferStart, evTransferStart, k, 0, k}, event{end, endRank, evTransferEnd, k, 0, k})
	}
	for k, d := range s.Deletes {
		ev := event{d.Time, evDelete, evDelete, k, 0, k}
		// A delete at the instant of a zero-length operation on its layer comes right after it.
		for j := 0; j < 2*L; j++ {
			if i, _ := opLayer(L, j); i == d.Layer && dur(j) <= 0 && math.Abs(s.OpStart[j]-d.Time) <= eps {
				ev.rank, ev.idx, ev.sub = evOpInstant, j, 1
			}
		}
		evs = append(evs, ev)
	}
	sort.SliceStable(evs, func(a, b int) bool {
		if math.Abs(evs[a].t-evs[b].t) > eps {
			return evs[a].t < evs[b].t
		}
		if evs[a].rank != evs[b].rank {
			return evs[a].rank < evs[b].rank
		}
		if evs[a].idx != evs[b].idx {
			return evs[a].idx < evs[b].idx
		}
		return evs[a].sub < evs[b].sub
	})
	resident := append([]bool(nil), s.Resident...)
	valid := append([]bool(nil), s.CPUValid...)
	reserved := make([]bool, L+1)    // prefetch in progress
	outgoing := make([]int, L+1)     // uploads/offloads in progress
	inUse := make([]bool, L+1)       // F_i or B_i running
	for _, tr := range s.Transfers { // copies from the previous period still in flight at 0
		if !wraps(tr) {
			continue
		}
		i := tr.Layer
		if tr.Kind == schedule.Prefetch {
			if resident[i] || reserved[i] {
				return fail(0, "w_%d is both on the GPU and being prefetched at time 0", i)
			}
			reserved[i] = true
		} else {
			if !resident[i] {
				return fail(0, "w_%d is sent to the CPU across time 0 but is not on the GPU then", i)
			}
			outgoing[i]++
		}
	}
	reserved0 := append([]bool(nil), reserved...)
	outgoing0 := append([]int(nil), outgoing...)
	running := -1
	rep := Report{Period: s.Period, Idle: s.Period - work}
	weights := func() int64 {
		var m int64
		for i := 1; i <= L; i++ {
			if resident[i] || reserved[i] {
				m += p.Layer(i).W
			}
		}
		return m
	}
	opNeed := func(j int) int64 { // the operation's memory beside its own weight
		i, b := opLayer(L, j)
		return p.OpMemory(i, b) - p.Layer(i).W
	}
	acts := p.ActsPrefix()
	gapNeed := func(t float64) int64 {
		// Between operations only activations stay: those kept after the last operation that
		// ended (B_1 of the previous period before the first one).
		i, back := 1, true
		for j := 0; j < 2*L; j++ {
			if s.OpStart[j]+dur(j) <= t+eps {
				i, back = opLayer(L, j)
			}
		}
		if back {
			return acts[i-1]
		}
		return acts[i]
	}
	check := func(t float64, extra int64, what string) error {
		use := weights() + extra
		rep.Peak = max(rep.Peak, use)
		if use > p.MGPU {
			return &Error{Time: t, Msg: fmt.Sprintf("memory %d B exceeds M_GPU = %d B (%s)", use, p.MGPU, what)}
		}
		return nil
	}
	startOp := func(e event) error {
		i, b := opLayer(L, e.idx)
		if !resident[i] || reserved[i] {
			return &Error{Time: e.t, Msg: fmt.Sprintf("operation %d (%s_%d) needs w_%d on the GPU", e.idx, fb(b), i, i)}
		}
		if b && outgoing[i] > 0 {
			return &Error{Time: e.t, Msg: fmt.Sprintf("B_%d runs while w_%d is being sent to the CPU", i, i)}
		}
		inUse[i] = true
		return nil
	}
	endOp := func(e event) {
		i, b := opLayer(L, e.idx)
		inUse[i] = false
		if b {
			valid[i] = false // the update makes the CPU copy stale
		}
	}
	for k := 0; k < len(evs); {
		t := evs[k].t
		for ; k < len(evs) && math.Abs(evs[k].t-t) <= eps; k++ {
			e := evs[k]
			switch e.kind {
			case evTransferEnd:
				tr := s.Transfers[e.ref]
				i := tr.Layer
				switch tr.Kind {
				case schedule.Prefetch:
					reserved[i], resident[i] = false, true
				default:
					outgoing[i]--
					valid[i] = true // B_i cannot have run meanwhile (checked at both ends)
					if tr.Kind == schedule.Offload {
						if inUse[i] {
							return fail(t, "offload of w_%d ends while it is in use", i)
						}
						resident[i] = false
					}
				}
			case evOpEnd:
				endOp(e)
				running = -1
			case evOpInstant:
				if err := startOp(e); err != nil {
					return Report{}, err
				}
				if err := check(t, opNeed(e.idx), fmt.Sprintf("during operation %d", e.idx)); err != nil {
					return Report{}, err
				}
				endOp(e)
			case evOpStart:
				if err := startOp(e); err != nil {
					return Report{}, err
				}
				running = e.idx
			case evDelete:
				i := s.Deletes[e.ref].Layer
				switch {
				case !resident[i]:
					return fail(t, "delete of w_%d, which is not on the GPU", i)
				case inUse[i]:
					return fail(t, "delete of w_%d while it is in use", i)
				case !valid[i] || outgoing[i] > 0:
					return fail(t, "delete of w_%d without a current copy on the CPU", i)
				}
				resident[i] = false
			case evTransferStart:
				tr := s.Transfers[e.ref]
				i := tr.Layer
				switch tr.Kind {
				case schedule.Prefetch:
					if resident[i] || reserved[i] {
						return fail(t, "prefetch of w_%d, which is already on the GPU", i)
					}
					if !valid[i] {
						return fail(t, "prefetch of w_%d without a current copy on the CPU", i)
					}
					reserved[i] = true
					rep.Prefetched += p.Layer(i).W
				default:
					if !resident[i] || reserved[i] {
						return fail(t, "%v of w_%d, which is not on the GPU", tr.Kind, i)
					}
					if outgoing[i] > 0 {
						return fail(t, "two transfers of w_%d to the CPU at once", i)
					}
					if running >= 0 {
						if li, b := opLayer(L, running); b && li == i {
							return fail(t, "%v of w_%d during B_%d", tr.Kind, i, i)
						}
					}
					outgoing[i]++
					rep.Offloaded += p.Layer(i).W
				}
			}
		}
		extra, what := gapNeed(t), "between operations"
		if running >= 0 {
			extra, what = opNeed(running), fmt.Sprintf("during operation %d", running)
		}
		if err := check(t, extra, what); err != nil {
			return Report{}, err
		}
	}
	for i := 1; i <= L; i++ {
		if reserved[i] != reserved0[i] || outgoing[i] != outgoing0[i] {
			return fail(s.Period, "the period does not close: transfers of w_%d in flight at the end differ from those at the start", i)
		}
		if resident[i] != s.Resident[i] || valid[i] != s.CPUValid[i] {
			return fail(s.Period, "the period does not close: w_%d on GPU %v, CPU copy current %v at the end, %v, %v at the start",
				i, resident[i], valid[i], s.Resident[i], s.CPUValid[i])
		}
	}
	return rep, nil
}

func fb(backward bool) string {
	if backward {
		return "B"
	}
	return "F"
}
