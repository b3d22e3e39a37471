package oracle

import (
	"fmt"
	"math/big"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify/combined"
)

// MaxCombinedStages is the longest chain (loss stage included) Combined accepts: the class
// has 6,888 plans at 6 stages and grows about sixfold per stage.
const MaxCombinedStages = 7

// CombinedOptions switch parts of the combined class off.
type CombinedOptions struct {
	// NoOffload keeps every input on the GPU: the class is then the persistent sequences of
	// 004 (rotor's C_MP).
	NoOffload bool
	// NoRecompute makes every segment F_all^s alone: nothing is recomputed, only offloaded.
	NoRecompute bool
	// FreeTurn evaluates with combined.FluidFreeTurn (no idle at the turn).
	FreeTurn bool
}

// Combined returns an optimal plan of the combined class of SPEC §6 — top-level segments,
// each F_all^s alone or F_ck^s F_∅^{s+1} … F_∅^e with any persistent backward sequence of its
// stages, each segment's input (and the loss stage's) kept or offloaded — in the fluid model
// evaluated by verify/combined.Fluid, by enumerating every plan of the class, and its exact
// makespan; feasible = false when no plan fits. Ties go to fewer offloads, then the first plan
// enumerated. It fails only on chains longer than MaxCombinedStages.
func Combined(c *instances.Chain, budget int64, beta float64, opt CombinedOptions) (best *schedule.CombinedPlan, value *big.Rat, feasible bool, err error) {
	n := c.Len()
	if n > MaxCombinedStages {
		return nil, nil, false, fmt.Errorf("oracle: chain has %d stages, the exhaustive search of the combined class handles at most %d", n, MaxCombinedStages)
	}
	if err := c.Validate(); err != nil {
		return nil, nil, false, err
	}
	L := n - 1
	seqs := map[[2]int][]schedule.Sequence{}
	var persistent func(s, t int) []schedule.Sequence
	persistent = func(s, t int) []schedule.Sequence {
		if v, ok := seqs[[2]int{s, t}]; ok {
			return v
		}
		var out []schedule.Sequence
		fall, b := schedule.Op{Kind: schedule.Fall, Stage: s}, schedule.Op{Kind: schedule.B, Stage: s}
		if s == t {
			out = append(out, schedule.Sequence{fall, b})
		} else {
			for _, in := range persistent(s+1, t) {
				out = append(out, append(append(schedule.Sequence{fall}, in...), b))
			}
			for s2 := s + 1; s2 <= t; s2++ {
				fwd := schedule.Sequence{{Kind: schedule.Fck, Stage: s}}
				for j := s + 1; j < s2; j++ {
					fwd = append(fwd, schedule.Op{Kind: schedule.Fn, Stage: j})
				}
				for _, r := range persistent(s2, t) {
					for _, l := range persistent(s, s2-1) {
						seq := append(append(append(schedule.Sequence{}, fwd...), r...), l...)
						out = append(out, seq)
					}
				}
			}
		}
		seqs[[2]int{s, t}] = out
		return out
	}
	offs := []bool{false, true}
	if opt.NoOffload {
		offs = []bool{false}
	}
	var bestOff int
	var segs []schedule.CombinedSegment
	var try func() error
	try = func() error {
		for _, lossOff := range offs {
			p := &schedule.CombinedPlan{Segments: append([]schedule.CombinedSegment(nil), segs...), OffloadLoss: lossOff}
			eval := combined.Fluid
			if opt.FreeTurn {
				eval = combined.FluidFreeTurn
			}
			r, err := eval(c, budget, beta, p)
			if err != nil {
				return err
			}
			if !r.Feasible {
				continue
			}
			if k := p.Offloaded(); best == nil || r.Exact.Cmp(value) < 0 || r.Exact.Cmp(value) == 0 && k < bestOff {
				best, value, bestOff = p, r.Exact, k
			}
		}
		return nil
	}
	var walk func(s int) error
	walk = func(s int) error {
		if s > L {
			return try()
		}
		for _, off := range offs {
			segs = append(segs, schedule.CombinedSegment{Start: s, End: s, All: true, Offload: off})
			if err := walk(s + 1); err != nil {
				return err
			}
			segs = segs[:len(segs)-1]
			if opt.NoRecompute {
				continue
			}
			for e := s; e <= L; e++ {
				for _, sigma := range persistent(s, e) {
					segs = append(segs, schedule.CombinedSegment{Start: s, End: e, Offload: off, Backward: sigma})
					if err := walk(e + 1); err != nil {
						return err
					}
					segs = segs[:len(segs)-1]
				}
			}
		}
		return nil
	}
	if err := walk(1); err != nil {
		return nil, nil, false, err
	}
	return best, value, best != nil, nil
}
