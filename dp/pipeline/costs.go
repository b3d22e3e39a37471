package pipeline

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/memsched/memsched/dp"

	pl "github.com/memsched/memsched/instances/pipeline"
	"github.com/memsched/memsched/schedule"
)

// partCosts gives the search what it needs of part [s, e] on a GPU with n micro-batches in
// flight: its forward and least backward duration among the sequences of the class that fit
// the GPU, and that sequence.
type partCosts interface {
	// cost returns F and B of the part, ok false when nothing of the class fits.
	cost(s, e, n int) (f, b float64, ok bool)
	// sequence returns the part's sequence at that cost (nil: store everything).
	sequence(s, e, n int) (schedule.Sequence, error)
}

// storeAll is the class of one sequence per part: store everything (instances/pipeline
// StoreAllCosts), which fits when Σw + (n−1)·held + its own peak ≤ M. With a table (pcs) it
// answers every part in O(1); without one (storeAllParts) each answer costs O(part length),
// for callers that read a few parts.
type storeAll struct {
	p   *pl.Problem
	L   int
	pcs []pl.PartCosts // at (s−1)*L + (e−1); nil: computed per call
}

// storeAllEntryBytes is the memory of one entry of newStoreAll's table.
const storeAllEntryBytes = int64(unsafe.Sizeof(pl.PartCosts{}))

// newStoreAll builds the table of every part's costs, one sweep per first stage
// (pl.StoreAllSweep: O(L²) in all; part by part it was O(L³), minutes on 2001 stages and no
// end in sight on 20 001 whatever the time limit). L² entries past o.MaxMemory are refused
// (*dp.TooLargeError); o's stop or deadline stops it between rows (ErrStopped).
func newStoreAll(p *pl.Problem, o Options) (*storeAll, error) {
	L := p.L()
	if err := tableFits(fmt.Sprintf("pipeline store-all costs on %d stages", L), L, storeAllEntryBytes, o); err != nil {
		return nil, err
	}
	poll := dp.Poll{Stop: o.Stop, Deadline: o.Deadline}
	if poll.Stopped() {
		return nil, ErrStopped // before allocating (160 MB on 2001 stages)
	}
	t := &storeAll{p: p, L: L, pcs: make([]pl.PartCosts, L*L)}
	for s := 1; s <= L; s++ {
		if poll.Stopped() {
			return nil, ErrStopped
		}
		row := t.pcs[(s-1)*L:]
		pl.StoreAllSweep(p.Chain, s, func(e int, pc pl.PartCosts) bool {
			row[e-1] = pc
			return true
		})
	}
	return t, nil
}

// storeAllParts answers part by part, without a table.
func storeAllParts(p *pl.Problem) *storeAll { return &storeAll{p: p, L: p.L()} }

// tableFits refuses a table of L² entries of entry bytes each past o.MaxMemory (0: dp's
// default), naming it.
func tableFits(name string, L int, entry int64, o Options) error {
	return dp.CheckTable(name, int64(L)*int64(L), entry, o.MaxMemory,
		"the planner reads every part [s, e] of the chain: merge stages (fewer, coarser layers) or raise --max-memory")
}

func (t *storeAll) costs(s, e int) pl.PartCosts {
	if t.pcs == nil {
		return pl.StoreAllCosts(t.p.Chain, s, e)
	}
	return t.pcs[(s-1)*t.L+e-1]
}

func (t *storeAll) cost(s, e, n int) (float64, float64, bool) {
	pc := t.costs(s, e)
	if pc.Memory(n) > t.p.Memory {
		return pc.F, math.Inf(1), false
	}
	return pc.F, pc.B, true
}

func (t *storeAll) sequence(int, int, int) (schedule.Sequence, error) { return nil, nil }
