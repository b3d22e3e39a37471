package dp

import (
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
)

// The C_MP tables seen from their sub-chains: C_MP(s, t, ·) for every 1 ≤ s ≤ t ≤ L+1 (a^{s−1}
// stored outside the budget, δ^t inside it), what the pipeline planner (dp/pipeline) reads
// for the recomputation a part runs below the checkpoints it holds between its phases.

// NewPersistentLower fills C_MP on c with every size rounded DOWN to slots (and the budget's
// slots taken as ⌊budget/q⌋ − ⌊ω_a^0/q⌋): every persistent sequence that fits in bytes fits this
// table, so its values bound the persistent optimum of every sub-chain from below. Its
// sequences may not fit in bytes: it answers values, not sequences.
func NewPersistentLower(c *instances.Chain, budget int64, opt Options) (*Persistent, error) {
	opt.lower = true
	return newPersistent(c, budget, opt, false)
}

// TopSlots returns the largest slot count the table holds values for (its budget beside a^0),
// −1 when its budget is below ω_a^0.
func (p *Persistent) TopSlots() int { return p.m }

// SubRow returns C_MP(s, t, m) for m = 0..TopSlots() slots (+Inf where no persistent sequence
// of stages s..t fits m slots). The slice is the table's: do not modify it.
func (p *Persistent) SubRow(s, t int) []float64 {
	if p.m < 0 {
		return nil
	}
	return p.slice(p.rowOf(s, t))
}

// SubSequence returns the persistent sequence of stages s..t that reaches C_MP(s, t, m)
// (finite) with m slots: 004 Alg. 4's OptRecP.
func (p *Persistent) SubSequence(s, t, m int) schedule.Sequence {
	var seq schedule.Sequence
	p.rebuild(&seq, s, t, m)
	return seq
}

// SubFrontier returns the breakpoints of C_MP(s, t, ·) in bytes: the value val[i] holds from
// mem[i] bytes (beside a^{s−1}) to the next breakpoint; +Inf below mem[0]. The slices are the
// table's: do not modify them.
func (p *PersistentExact) SubFrontier(s, t int) (mem []int64, val []float64) {
	if p.avail < 0 {
		return nil, nil
	}
	r := p.row(s, t)
	return r.mem, r.val
}

// SubSequence returns the persistent sequence of stages s..t that reaches C_MP(s, t, m)
// (finite) with m bytes beside a^{s−1}.
func (p *PersistentExact) SubSequence(s, t int, m int64) schedule.Sequence {
	var seq schedule.Sequence
	p.rebuild(&seq, s, t, m)
	return seq
}
