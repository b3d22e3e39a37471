package pipeline

import (
	"errors"
	"fmt"
	"math"

	"github.com/memsched/memsched/dp"
	hpl "github.com/memsched/memsched/heuristics/pipeline"
	pl "github.com/memsched/memsched/instances/pipeline"
	"github.com/memsched/memsched/schedule"
)

// classCosts returns the costs of the class the options choose: the upper ones (what a plan
// runs), lower ones for the bound when they differ (slotted recomputation tables, whose
// rounding up may cost time: the same tables with sizes rounded down bound it), whether the
// costs are exact, the slot size in bytes when they are not, and a note when exact tables fell
// back to slots.
//
// With recomputation, ub is an upper bound on the optimum (a plan's makespan, +Inf if none is
// known): no GPU of a faster plan runs a part whose m·Σ(u_f + u_b) is above it (its 2m actions
// run one after the other), so the tables answer only the shorter parts and the others count
// as not fitting — in the bound too, which is then a bound on the plans at least as fast as ub
// (and ub is reached by the plan that made it).
func classCosts(p *pl.Problem, o Options, maxS int, ub float64) (up, lo partCosts, exact bool, q int64, note string, err error) {
	sa, err := newStoreAll(p, o)
	if err != nil {
		return nil, nil, false, 0, "", err
	}
	if !o.Remat {
		return sa, nil, true, 0, "", nil
	}
	sMin := partStarts(p, ub)
	u, l, exact, q, err := newRematCosts(p, o, o.Slots, maxS, sMin, ub, true)
	if err != nil && o.Slots == 0 && !o.Exact && tooLarge(err) {
		note = fmt.Sprintf("the exact tables are too large (%v): %d slots instead", err, dp.DefaultSlots)
		u, l, exact, q, err = newRematCosts(p, o, dp.DefaultSlots, maxS, sMin, ub, true)
	}
	if err != nil {
		return nil, nil, false, 0, note, err
	}
	up = either{sa, u}
	if l != nil {
		lo = either{sa, l}
	}
	return up, lo, exact, q, note, nil
}

// tooLarge reports an exact table past its caps.
func tooLarge(err error) bool {
	var be *dp.BreakpointError
	var te *dp.TooLargeError
	return errors.As(err, &be) || errors.As(err, &te) || errors.Is(err, errSpineTooLarge)
}

// partStarts returns, for each part end e, the first stage of the longest part ending at e
// whose m·Σ(u_f + u_b) is at most ub (nil when ub is +Inf: every part). The parts of the plan
// that made ub stay (with a margin for the rounding of the sums).
func partStarts(p *pl.Problem, ub float64) []int {
	if math.IsInf(ub, 1) {
		return nil
	}
	L, m := p.L(), float64(p.MicroBatches)
	t := make([]float64, L+2) // prefix sums of u_f + u_b
	for l := 1; l <= L+1; l++ {
		t[l] = t[l-1] + p.Chain.Stage(l).UF + p.Chain.Stage(l).UB
	}
	sMin := make([]int, L+1)
	for e := 1; e <= L; e++ {
		end := e
		if e == L {
			end = L + 1
		}
		s := e + 1
		for s > 1 && m*(t[end]-t[s-2]) <= ub*(1+1e-9) {
			s--
		}
		sMin[e] = s
	}
	return sMin
}

// either is the faster of storing everything and recomputing, per part: the slotted tables
// round sizes up, so a part that fits storing everything in bytes may not fit them.
type either struct{ sa, re partCosts }

func (x either) cost(s, e, n int) (float64, float64, bool) {
	f, b, ok := x.sa.cost(s, e, n)
	f2, b2, ok2 := x.re.cost(s, e, n)
	if ok && (!ok2 || b <= b2) {
		return f, b, true
	}
	return f2, b2, ok2
}

func (x either) sequence(s, e, n int) (schedule.Sequence, error) {
	_, b, ok := x.sa.cost(s, e, n)
	_, b2, ok2 := x.re.cost(s, e, n)
	if ok && (!ok2 || b <= b2) {
		return nil, nil
	}
	return x.re.sequence(s, e, n)
}

// rematSeed is a first plan with recomputation when storing everything fits nowhere: the
// time-balanced cut of the chain on min(P, L) GPUs (chains on chains, memory aside), each part
// with its fastest sequence that fits. It returns its plan completed and replayed (complete,
// from the same tables: a search stopped later answers with it, without building them again)
// and its makespan, or nil when a part fits no sequence.
func rematSeed(p *pl.Problem, o Options, maxS int, sm *sim) (*Result, float64, error) {
	L := p.L()
	cuts := hpl.BalancedCuts(p, maxS) // the equal-time split, memory aside
	sMin := make([]int, L+1)
	for e := 1; e <= L; e++ {
		sMin[e] = e + 1
	}
	first := 1
	for _, e := range cuts {
		sMin[e] = first
		first = e + 1
	}
	slots := o.Slots
	u, _, exact, q, err := newRematCosts(p, o, slots, maxS, sMin, math.Inf(1), false)
	if err != nil && slots == 0 && !o.Exact && tooLarge(err) {
		u, _, exact, q, err = newRematCosts(p, o, dp.DefaultSlots, maxS, sMin, math.Inf(1), false)
	}
	if err != nil {
		return nil, 0, err
	}
	x := either{storeAllParts(p), u}
	S := len(cuts)
	f, b, cf, cb := make([]float64, S), make([]float64, S), make([]float64, S), make([]float64, S)
	first = 1
	for k, e := range cuts {
		var ok bool
		if f[k], b[k], ok = x.cost(first, e, p.InFlight(k, S)); !ok {
			return nil, 0, nil
		}
		if k+1 < S {
			cf[k], cb[k] = p.CutTimes(e)
		}
		first = e + 1
	}
	res, err := complete(p, cuts, x, true, &Result{Exact: exact, SlotSize: q, Complete: true})
	if err != nil || !res.Feasible {
		return nil, 0, err
	}
	return res, sm.run(f, b, cf, cb, 0, 0, 0), nil
}
