package actoffload

import (
	"math/rand/v2"
	"sort"

	act "github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/schedule"
)

// LocalOptions configure LocalSearch.
type LocalOptions struct {
	// Seed makes the search reproducible (the same seed, start and budget give the same result).
	Seed uint64
	// MaxEvals caps the schedules tried (0: 10⁵); Stop ends the search when closed.
	MaxEvals int
	Stop     <-chan struct{}
}

// LocalSearch improves a verified schedule by local search over link orders: from the order
// of start's transfers, it applies one or two random moves — move one transfer elsewhere in
// the order, swap two neighbours, drop an activation's round trip, add one (its offload and
// its prefetch at random places) — runs the no-wait schedule of the new order (NoWait,
// validated by verify/timed) and keeps it when it is no longer (equal ones let the search
// drift across plateaus). It returns the shortest schedule met, start itself when nothing was
// shorter. A heuristic: it proves nothing.
func LocalSearch(p *act.Problem, start *Result, o LocalOptions) (*Result, error) {
	if start == nil || !start.Feasible {
		return start, nil
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	maxEvals := o.MaxEvals
	if maxEvals <= 0 {
		maxEvals = 100_000
	}
	r := rand.New(rand.NewPCG(o.Seed, 0x6c6f63616c))
	cur := linkOrder(start.Schedule)
	curMs := start.Report.Makespan
	best := start
	var movable []int // activations that can be moved at all
	for j := 0; j <= p.L(); j++ {
		if p.X[j] > 0 {
			movable = append(movable, j)
		}
	}
	cand := make([]schedule.ActTransfer, 0, 2*len(movable))
	budget := searchBudget{max: maxEvals, stop: o.Stop}
	for !budget.spend() {
		cand = append(cand[:0], cur...)
		for m := 1 + r.IntN(2); m > 0; m-- {
			cand = perturb(r, cand, movable)
		}
		// Each no-wait simulation reads the stop too: on 2001 stages one takes seconds, and
		// certify's act-offload lever ran 15–20 s past a 3.3 s share in them.
		res, err := noWaitUntil(p, cand, o.Stop)
		if err == nil && res.Stopped {
			break
		}
		if err != nil || !res.Feasible {
			continue // an order that deadlocks, or a prefetch before its offload
		}
		if ms := res.Report.Makespan; ms <= curMs {
			cur, curMs = append(cur[:0], cand...), ms
			if ms < best.Report.Makespan {
				best = res
			}
		}
	}
	return best, nil
}

// linkOrder is the order of a schedule's transfers on the link (start times dropped).
func linkOrder(s *schedule.Timed) []schedule.ActTransfer {
	tr := append([]schedule.ActTransfer(nil), s.Transfers...)
	sort.SliceStable(tr, func(a, b int) bool { return tr[a].Start < tr[b].Start })
	for i := range tr {
		tr[i].Start = 0
	}
	return tr
}

// perturb applies one random move to the link order c (in place where it can).
func perturb(r *rand.Rand, c []schedule.ActTransfer, movable []int) []schedule.ActTransfer {
	switch r.IntN(4) {
	case 0: // move one transfer
		if len(c) < 2 {
			return c
		}
		i, j := r.IntN(len(c)), r.IntN(len(c))
		t := c[i]
		if i < j {
			copy(c[i:j], c[i+1:j+1])
		} else {
			copy(c[j+1:i+1], c[j:i])
		}
		c[j] = t
	case 1: // swap neighbours
		if len(c) < 2 {
			return c
		}
		i := r.IntN(len(c) - 1)
		c[i], c[i+1] = c[i+1], c[i]
	case 2: // drop a round trip
		if len(c) == 0 {
			return c
		}
		j := c[r.IntN(len(c))].Index
		out := c[:0]
		for _, t := range c {
			if t.Index != j {
				out = append(out, t)
			}
		}
		return out
	default: // add a round trip
		if len(movable) == 0 {
			return c
		}
		j := movable[r.IntN(len(movable))]
		for _, t := range c {
			if t.Index == j {
				return c
			}
		}
		a := r.IntN(len(c) + 1)
		c = append(c, schedule.ActTransfer{}, schedule.ActTransfer{})
		copy(c[a+1:], c[a:len(c)-1])
		c[a] = schedule.ActTransfer{Kind: schedule.Offload, Index: j}
		b := a + 1 + r.IntN(len(c)-a-1)
		copy(c[b+1:], c[b:len(c)-1])
		c[b] = schedule.ActTransfer{Kind: schedule.Prefetch, Index: j}
	}
	return c
}
