package timed

import (
	"fmt"
	"math"
	"sort"

	"github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/schedule"
)

// Rule names the assumption a schedule breaks.
type Rule string

// The rules Check enforces (001 §3.1 (A)–(E), SPEC §2).
const (
	// RuleOps: the compute operations are exactly F_0..F_L, B_L..B_0 in that order.
	RuleOps Rule = "ops"
	// RuleSequential: each compute operation starts after the previous one has ended.
	RuleSequential Rule = "sequential"
	// RuleTransfer: a transfer names an activation x_0..x_L, each x is offloaded at most once
	// and prefetched exactly once after its offload, and start times are finite and ≥ 0.
	RuleTransfer Rule = "transfer"
	// RuleProduced: an offload of x_j starts after F_{j−1} has produced x_j.
	RuleProduced Rule = "produced"
	// RuleReleased: a prefetch of x_j starts after x_j has left the GPU, i.e. after its
	// offload has ended and F_j has ended (001 (E)).
	RuleReleased Rule = "released"
	// RuleBack: the prefetch of x_j ends before B_j starts.
	RuleBack Rule = "back"
	// RuleLink: one transfer at a time (001 (B)).
	RuleLink Rule = "link"
	// RuleMemory: GPU memory ≤ M_GPU at every instant.
	RuleMemory Rule = "memory"
)

// Violation is the first broken rule, at time Time (seconds).
type Violation struct {
	Rule Rule
	Time float64
	Msg  string
}

func (v *Violation) Error() string {
	return fmt.Sprintf("timed: %s violated at t = %g: %s", v.Rule, v.Time, v.Msg)
}

// Report is what a valid schedule achieves.
type Report struct {
	// Makespan is the end of the last operation or transfer, in seconds.
	Makespan float64
	// Peak is the largest GPU memory at any instant, in bytes.
	Peak int64
	// Idle is the time the GPU does not compute: Makespan − Σ(u_F + u_B).
	Idle float64
	// LinkBusy is the total transfer time; Utilisation = LinkBusy / Makespan (0 when the
	// makespan is 0).
	LinkBusy, Utilisation float64
	// Offloaded is the number of activations moved, OffloadedBytes their total size.
	Offloaded      int
	OffloadedBytes int64
}

// Check replays s on p and returns its report, or a *Violation for the first broken rule
// (earliest in time among the memory events; the structural rules are checked first).
//
// Memory model: x_0 is on the GPU from time 0; F_i allocates x_{i+1} and ex_i^F when it starts
// and frees ex_i^F when it ends; B_i allocates y_i and ex_i^B (and y_{L+1} for B_L) when it
// starts and frees ex_i^B, x_{i+1} and y_{i+1} when it ends. An offloaded x_j leaves the GPU at
// max(end of its offload, end of F_j) and comes back (|x_j| reserved) when its prefetch starts.
// At equal times, frees happen before allocations. Times are compared with a tolerance of 1e-9
// times the total duration of all operations and transfers.
func Check(p *actoffload.Problem, s *schedule.Timed) (*Report, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	L := p.L()
	n := L + 1
	var scale float64
	for i := 0; i < n; i++ {
		scale += p.UF[i] + p.UB[i]
	}
	for _, x := range p.X {
		scale += 2 * float64(x) / p.Beta
	}
	tol := 1e-9 * math.Max(scale, 1)

	// Compute operations.
	if len(s.Ops) != 2*n {
		return nil, &Violation{RuleOps, 0, fmt.Sprintf("%d operations, want 2(L+1) = %d", len(s.Ops), 2*n)}
	}
	fStart, fEnd := make([]float64, n), make([]float64, n)
	bStart, bEnd := make([]float64, n), make([]float64, n)
	prevEnd := 0.0
	for k, op := range s.Ops {
		wantB, wantI := k >= n, k
		if wantB {
			wantI = 2*n - 1 - k
		}
		if op.Backward != wantB || op.Index != wantI {
			return nil, &Violation{RuleOps, op.Start, fmt.Sprintf("operation %d is %v, want %s%d", k, op, map[bool]string{false: "F", true: "B"}[wantB], wantI)}
		}
		if !(op.Start >= 0) || math.IsInf(op.Start, 0) {
			return nil, &Violation{RuleOps, op.Start, fmt.Sprintf("%v: start time must be finite and ≥ 0", op)}
		}
		if op.Start < prevEnd-tol {
			return nil, &Violation{RuleSequential, op.Start, fmt.Sprintf("%v starts before the previous operation ends at %g", op, prevEnd)}
		}
		if wantB {
			bStart[wantI], bEnd[wantI] = op.Start, op.Start+p.UB[wantI]
			prevEnd = bEnd[wantI]
		} else {
			fStart[wantI], fEnd[wantI] = op.Start, op.Start+p.UF[wantI]
			prevEnd = fEnd[wantI]
		}
	}
	makespan := prevEnd

	// Transfers.
	offStart := make([]float64, n)
	preStart := make([]float64, n)
	offloaded := make([]bool, n)
	prefetched := make([]bool, n)
	dur := func(j int) float64 { return float64(p.X[j]) / p.Beta }
	for _, t := range s.Transfers {
		if t.Index < 0 || t.Index > L {
			return nil, &Violation{RuleTransfer, t.Start, fmt.Sprintf("%v: only x_0..x_%d can be transferred", t, L)}
		}
		if !(t.Start >= 0) || math.IsInf(t.Start, 0) {
			return nil, &Violation{RuleTransfer, t.Start, fmt.Sprintf("%v: start time must be finite and ≥ 0", t)}
		}
		j := t.Index
		switch t.Kind {
		case schedule.Offload:
			if offloaded[j] {
				return nil, &Violation{RuleTransfer, t.Start, fmt.Sprintf("x_%d offloaded twice", j)}
			}
			offloaded[j], offStart[j] = true, t.Start
		case schedule.Prefetch:
			if prefetched[j] {
				return nil, &Violation{RuleTransfer, t.Start, fmt.Sprintf("x_%d prefetched twice", j)}
			}
			prefetched[j], preStart[j] = true, t.Start
		default:
			return nil, &Violation{RuleTransfer, t.Start, fmt.Sprintf("%v: unknown kind", t)}
		}
	}
	release := make([]float64, n)
	var busy float64
	var nOff int
	var offBytes int64
	for j := 0; j < n; j++ {
		if offloaded[j] != prefetched[j] {
			return nil, &Violation{RuleTransfer, 0, fmt.Sprintf("x_%d: offloaded %v but prefetched %v", j, offloaded[j], prefetched[j])}
		}
		if !offloaded[j] {
			continue
		}
		nOff++
		offBytes += p.X[j]
		busy += 2 * dur(j)
		produced := 0.0
		if j > 0 {
			produced = fEnd[j-1]
		}
		if offStart[j] < produced-tol {
			return nil, &Violation{RuleProduced, offStart[j], fmt.Sprintf("offload of x_%d starts before F_%d produces it at %g", j, j-1, produced)}
		}
		release[j] = math.Max(offStart[j]+dur(j), fEnd[j])
		if preStart[j] < release[j]-tol {
			return nil, &Violation{RuleReleased, preStart[j], fmt.Sprintf("prefetch of x_%d starts before x_%d leaves the GPU at %g", j, j, release[j])}
		}
		if end := preStart[j] + dur(j); end > bStart[j]+tol {
			return nil, &Violation{RuleBack, end, fmt.Sprintf("prefetch of x_%d ends at %g, after B_%d starts at %g", j, end, j, bStart[j])}
		}
		makespan = math.Max(makespan, preStart[j]+dur(j))
	}
	order := append([]schedule.ActTransfer(nil), s.Transfers...)
	sort.SliceStable(order, func(a, b int) bool { return order[a].Start < order[b].Start })
	for k := 1; k < len(order); k++ {
		prev := order[k-1]
		if end := prev.Start + dur(prev.Index); order[k].Start < end-tol {
			return nil, &Violation{RuleLink, order[k].Start, fmt.Sprintf("%v starts while %v runs until %g", order[k], prev, end)}
		}
	}

	// Memory, event by event. Frees are keyed tol earlier so that they come first at equal times.
	type event struct {
		t     float64
		key   float64
		delta int64
		what  string
	}
	var ev []event
	alloc := func(t float64, b int64, what string) { ev = append(ev, event{t, t, b, what}) }
	free := func(t float64, b int64, what string) { ev = append(ev, event{t, t - tol, -b, what}) }
	alloc(0, p.X[0], "x_0")
	for i := 0; i < n; i++ {
		alloc(fStart[i], p.X[i+1]+p.ExF[i], fmt.Sprintf("F_%d (x_%d, ex^F)", i, i+1))
		free(fEnd[i], p.ExF[i], fmt.Sprintf("end of F_%d", i))
		in := p.Y[i] + p.ExB[i]
		if i == L {
			in += p.Y[L+1]
		}
		alloc(bStart[i], in, fmt.Sprintf("B_%d (y_%d, ex^B)", i, i))
		free(bEnd[i], p.ExB[i]+p.X[i+1]+p.Y[i+1], fmt.Sprintf("end of B_%d", i))
		if offloaded[i] {
			free(release[i], p.X[i], fmt.Sprintf("release of x_%d", i))
			alloc(preStart[i], p.X[i], fmt.Sprintf("prefetch of x_%d", i))
		}
	}
	sort.SliceStable(ev, func(a, b int) bool { return ev[a].key < ev[b].key })
	var cur, peak int64
	for _, e := range ev {
		cur += e.delta
		peak = max(peak, cur)
		if cur > p.MGPU {
			return nil, &Violation{RuleMemory, e.t, fmt.Sprintf("%d bytes after %s, M_GPU = %d", cur, e.what, p.MGPU)}
		}
	}
	r := &Report{Makespan: makespan, Peak: peak, Idle: makespan - p.Compute(), LinkBusy: busy,
		Offloaded: nOff, OffloadedBytes: offBytes}
	if makespan > 0 {
		r.Utilisation = busy / makespan
	}
	return r, nil
}
