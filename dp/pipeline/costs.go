package pipeline

import (
	"math"

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
// StoreAllCosts), which fits when Σw + (n−1)·held + its own peak ≤ M.
type storeAll struct {
	p   *pl.Problem
	L   int
	pcs []pl.PartCosts // at (s−1)*L + (e−1)
}

func newStoreAll(p *pl.Problem) *storeAll {
	L := p.L()
	t := &storeAll{p: p, L: L, pcs: make([]pl.PartCosts, L*L)}
	for s := 1; s <= L; s++ {
		for e := s; e <= L; e++ {
			t.pcs[(s-1)*L+e-1] = pl.StoreAllCosts(p.Chain, s, e)
		}
	}
	return t
}

func (t *storeAll) cost(s, e, n int) (float64, float64, bool) {
	pc := t.pcs[(s-1)*t.L+e-1]
	if pc.Memory(n) > t.p.Memory {
		return pc.F, math.Inf(1), false
	}
	return pc.F, pc.B, true
}

func (t *storeAll) sequence(int, int, int) (schedule.Sequence, error) { return nil, nil }
