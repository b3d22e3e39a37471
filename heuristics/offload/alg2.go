package offload

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"

	inst "github.com/memsched/memsched/instances/offload"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify/periodic"
)

// alg2 is one run of 002 Alg. 2 (greedy scheduling) for one cut point. It works in Alg. 2's
// frame, which starts at B_L: operations B_L … B_1, F_1 … F_L, each placed as early as its
// weights, the previous operation and the memory allow; a prefetch as early as its channel, its
// data and the memory allow; offloads first in, first out. Items are placed once, in that
// order, on a memory profile (memProfile), so a later item never delays an earlier one.
//
// The cut point c says which communications of the cyclic sequence are "assumed performed
// before B_L" (002 §5): here, the first c prefetches of the backward phase (Pre_L, Pre_{L−1}, …
// for the layers with choice (k,1)). They run at the end of the frame, after F_k has released
// w_k, overlapping the last forward operations; their weights are on the GPU when the frame
// starts. Offloads cannot be moved before the cut: each depends on an operation of the frame.
type alg2 struct {
	p    *inst.Problem
	L    int
	acts []int64 // acts[i] = Σ_{k≤i}|a^k|
	prof *memProfile

	opStart          []float64 // by schedule.Periodic's operation index
	prevEnd          float64
	prevJ            int
	preFree, offFree float64
	transfers        []schedule.Transfer
	deletes          []schedule.Delete
}

func (a *alg2) w(k int) int64   { return a.p.Layer(k).W }
func (a *alg2) d(k int) float64 { return float64(a.w(k)) / a.p.Beta }
func (a *alg2) fIdx(k int) int  { return schedule.PeriodicIndex(a.L, k, false) }
func (a *alg2) bIdx(k int) int  { return schedule.PeriodicIndex(a.L, k, true) }
func (a *alg2) opDur(j int) float64 {
	if i, b := opOf(a.L, j); b {
		return a.p.Layer(i).UB
	} else {
		return a.p.Layer(i).UF
	}
}

// need is operation j's memory beside its own weights (002 eq. 1): activations Σ_{k≤i}|a^k|,
// plus the gradient |w_i| for B_i.
func (a *alg2) need(j int) int64 {
	i, b := opOf(a.L, j)
	if b {
		return a.acts[i] + a.w(i)
	}
	return a.acts[i]
}

// after is the memory kept between operation j and the next: Σ_{k≤i}|a^k| after F_i,
// Σ_{k<i}|a^k| after B_i (the rule verify/periodic checks).
func (a *alg2) after(j int) int64 {
	i, b := opOf(a.L, j)
	if b {
		return a.acts[i-1]
	}
	return a.acts[i]
}

var opOf = schedule.PeriodicOp

// timeEps is verify/periodic's tolerance: events closer than this happen at the same instant.
const timeEps = 1e-9

var errNoFit = fmt.Errorf("offload: Alg. 2 finds no time at which an item fits in memory")

// placeOp starts operation j at the earliest feasible time after the previous operation and
// ready; it returns its end.
func (a *alg2) placeOp(j int, ready float64) (float64, error) {
	u := a.opDur(j)
	lp := a.after(a.prevJ)
	t := a.prof.earliest(max(a.prevEnd, ready), u, a.need(j)-lp, a.after(j)-lp, a.p.MGPU)
	if math.IsInf(t, 1) {
		return 0, errNoFit
	}
	end := t + u
	// A zero-length operation still needs its memory at its instant: keep one ulp of it in the
	// profile so that later items see it.
	a.prof.add(t, max(end, math.Nextafter(t, math.Inf(1))), a.need(j)-lp)
	a.prof.add(end, math.Inf(1), a.after(j)-lp)
	a.opStart[j], a.prevEnd, a.prevJ = t, end, j
	return end, nil
}

// placePrefetch brings w_k back at the earliest time after ready at which the channel is free
// and its buffer fits for good (until a later delete); it returns the end.
func (a *alg2) placePrefetch(k int, ready float64) (float64, error) {
	t := a.prof.earliest(max(a.preFree, ready), math.Inf(1), a.w(k), a.w(k), a.p.MGPU)
	if math.IsInf(t, 1) {
		return 0, errNoFit
	}
	a.prof.add(t, math.Inf(1), a.w(k))
	a.transfers = append(a.transfers, schedule.Transfer{Layer: k, Kind: schedule.Prefetch, Start: t})
	a.preFree = t + a.d(k)
	return a.preFree, nil
}

// placeSend puts an upload or offload of w_k on the GPU→CPU channel at the earliest time after
// ready; an offload frees w_k when it ends. It returns the end.
func (a *alg2) placeSend(k int, kind schedule.TransferKind, ready float64) float64 {
	t := max(a.offFree, ready)
	a.transfers = append(a.transfers, schedule.Transfer{Layer: k, Kind: kind, Start: t})
	a.offFree = t + a.d(k)
	if kind == schedule.Offload {
		a.prof.add(a.offFree, math.Inf(1), -a.w(k))
	}
	return a.offFree
}

func (a *alg2) placeDelete(k int, t float64) {
	a.deletes = append(a.deletes, schedule.Delete{Layer: k, Time: t})
	a.prof.add(t, math.Inf(1), -a.w(k))
}

// backPrefetches lists the layers whose weights are prefetched for their backward (choice
// (k,1)), in the order Alg. 2 needs them: k = L … 1.
func backPrefetches(sel Selection, L int) []int {
	var ks []int
	for k := L; k >= 1; k-- {
		if sel[k][1] {
			ks = append(ks, k)
		}
	}
	return ks
}

// runAlg2 places one period in Alg. 2's frame for cut point cut and returns it as a
// schedule.Periodic in memsched's frame (F_1 first), not yet validated.
func runAlg2(p *inst.Problem, sel Selection, discount bool, cut int) (*schedule.Periodic, error) {
	L := p.L()
	a := &alg2{p: p, L: L, acts: p.ActsPrefix(), opStart: make([]float64, 2*L)}
	pre := backPrefetches(sel, L)
	early := make([]bool, L+1) // prefetched before the frame starts (before the cut)
	for _, k := range pre[:cut] {
		early[k] = true
	}
	// The frame starts before B_L, right after F_L: every weight is on the GPU except those of
	// layers (k,1) whose prefetch comes after the cut.
	v0 := a.acts[L]
	for k := 1; k <= L; k++ {
		if !sel[k][1] || early[k] {
			v0 += a.w(k)
		}
	}
	a.prof = newProfile(v0)
	a.prevJ = a.fIdx(L)

	endB := make([]float64, L+1)
	back := make([]float64, L+1)    // when w_k is back for F_k (choice (k,0))
	gone := make([]float64, L+1)    // when w_k left the GPU with a current CPU copy
	sentEnd := make([]float64, L+1) // end of an early upload of w_k (Alg. 2's waiting list)
	sent := make([]bool, L+1)
	var wl []int // layers (k,1) whose fresh weights still have to reach the CPU
	popWL := func(deadline float64) {
		for {
			best := -1
			for n, k := range wl {
				if max(a.offFree, endB[k])+a.d(k) <= deadline && (best < 0 || a.w(k) < a.w(wl[best])) {
					best = n
				}
			}
			if best < 0 {
				return
			}
			k := wl[best]
			wl = slices.Delete(wl, best, best+1)
			sentEnd[k], sent[k] = a.placeSend(k, schedule.Upload, endB[k]), true
		}
	}

	for k := L; k >= 1; k-- {
		ready := 0.0
		if sel[k][1] && !early[k] {
			end, err := a.placePrefetch(k, 0) // w_k left during the previous frame
			if err != nil {
				return nil, err
			}
			ready = end
		}
		end, err := a.placeOp(a.bIdx(k), ready)
		if err != nil {
			return nil, err
		}
		endB[k] = end
		switch {
		case sel[k][0]:
			popWL(end) // best-effort early uploads while the channel would idle
			gone[k] = a.placeSend(k, schedule.Offload, end)
		case sel[k][1]:
			wl = append(wl, k)
		}
	}
	for k := 1; k <= L; k++ {
		ready := 0.0
		if sel[k][0] {
			end, err := a.placePrefetch(k, gone[k])
			if err != nil {
				return nil, err
			}
			ready, back[k] = end, end
		}
		end, err := a.placeOp(a.fIdx(k), ready)
		if err != nil {
			return nil, err
		}
		if !sel[k][1] {
			continue
		}
		del := end
		switch {
		case sel[k][0] && discount: // the offload after B_k made the CPU copy current
		case sent[k]:
			del = max(del, sentEnd[k])
		default:
			// F_k does not change w_k: the upload may start as soon as the channel is free and
			// w_k is on the GPU (back from its offload, without the discount).
			del = max(del, a.placeSend(k, schedule.Upload, max(endB[k], back[k])))
			if n := slices.Index(wl, k); n >= 0 {
				wl = slices.Delete(wl, n, n+1)
			}
		}
		a.placeDelete(k, del)
		gone[k] = del
	}
	for _, k := range pre[:cut] { // the communications before the cut, for the next frame
		if _, err := a.placePrefetch(k, gone[k]); err != nil {
			return nil, err
		}
	}
	period := max(a.prevEnd, a.offFree, a.preFree)
	for _, d := range a.deletes {
		period = max(period, d.Time)
	}
	return a.rotate(period), nil
}

// rotate moves the frame's origin from B_L's frame start to F_1's start (schedule.Periodic's
// frame); transfers running across that instant wrap around the period. The state at time 0 is
// the state the period leaves behind (closeState).
func (a *alg2) rotate(period float64) *schedule.Periodic {
	tau := a.opStart[a.fIdx(1)]
	shift := func(t float64) float64 {
		if t < tau {
			return t - tau + period
		}
		return t - tau
	}
	s := &schedule.Periodic{Period: period, OpStart: make([]float64, 2*a.L)}
	for j, t := range a.opStart {
		s.OpStart[j] = t - tau
		if j >= a.L { // backward operations precede F_1 in the frame, even a zero-length B_1 at τ
			s.OpStart[j] += period
		}
	}
	for _, tr := range a.transfers {
		tr.Start = shift(tr.Start)
		s.Transfers = append(s.Transfers, tr)
	}
	for _, d := range a.deletes {
		d.Time = shift(d.Time)
		s.Deletes = append(s.Deletes, d)
	}
	closeState(a.p, s)
	return s
}

// closeState sets s.Resident and s.CPUValid to the state s leaves at the end of the period, so
// that the period closes if s is consistent (the validator checks it independently). The events
// that set a layer's state are replayed in time order with verify/periodic's order at equal
// times: transfer ends, operation ends, deletes.
func closeState(p *inst.Problem, s *schedule.Periodic) {
	L := p.L()
	type ev struct {
		t    float64
		rank int
		k    int
		res  int8 // -1 off the GPU, +1 on it, 0 unchanged
		val  int8 // -1 stale, +1 current, 0 unchanged
	}
	var evs []ev
	for _, tr := range s.Transfers {
		end := tr.Start + float64(p.Layer(tr.Layer).W)/p.Beta
		if end > s.Period+timeEps { // wraps around, as verify/periodic reads it
			end -= s.Period
		}
		switch tr.Kind {
		case schedule.Prefetch:
			evs = append(evs, ev{end, 0, tr.Layer, +1, 0})
		case schedule.Upload:
			evs = append(evs, ev{end, 0, tr.Layer, 0, +1})
		case schedule.Offload:
			evs = append(evs, ev{end, 0, tr.Layer, -1, +1})
		}
	}
	for k := 1; k <= L; k++ {
		rank := 1
		if p.Layer(k).UB == 0 {
			rank = 3 // an instant operation comes after the deletes at its time
		}
		evs = append(evs, ev{s.OpStart[schedule.PeriodicIndex(L, k, true)] + p.Layer(k).UB, rank, k, 0, -1}) // B_k stales the CPU copy
	}
	for _, d := range s.Deletes {
		evs = append(evs, ev{d.Time, 2, d.Layer, -1, 0})
	}
	sort.SliceStable(evs, func(x, y int) bool {
		if math.Abs(evs[x].t-evs[y].t) > timeEps {
			return evs[x].t < evs[y].t
		}
		return evs[x].rank < evs[y].rank
	})
	s.Resident, s.CPUValid = make([]bool, L+1), make([]bool, L+1)
	for k := 1; k <= L; k++ {
		s.Resident[k] = true
	}
	for _, e := range evs {
		if e.res != 0 {
			s.Resident[e.k] = e.res > 0
		}
		if e.val != 0 {
			s.CPUValid[e.k] = e.val > 0
		}
	}
}

// Schedule is 002 Alg. 2: it runs the greedy scheduling for every cut point (0 … the number of
// backward prefetches) and returns the shortest period that verify/periodic accepts. The
// candidates are validated shortest first, so normally one validation is paid for; a rejected
// candidate (a scheduler bug, which TestAlg2EveryCutValidates looks for) is skipped.
func Schedule(p *inst.Problem, sel Selection, discount bool) (*schedule.Periodic, periodic.Report, error) {
	var cands []*schedule.Periodic
	var firstErr error
	for cut := 0; cut <= len(backPrefetches(sel, p.L())); cut++ {
		s, err := runAlg2(p, sel, discount, cut)
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("cut %d: %w", cut, err)
			}
			continue
		}
		cands = append(cands, s)
	}
	slices.SortStableFunc(cands, func(a, b *schedule.Periodic) int { return cmp.Compare(a.Period, b.Period) })
	for _, s := range cands {
		rep, err := periodic.Validate(p, s)
		if err == nil {
			return s, rep, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, periodic.Report{}, fmt.Errorf("offload: Alg. 2 finds no valid schedule: %w", firstErr)
}
