package combined_test

import (
	"math/big"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
)

func chainAD() *instances.Chain { return instances.SpecCombinedAD() }

func chainE() *instances.Chain { return instances.SpecCombinedE() }

// specCase is one row of SPEC §6's table: values in seconds, nil = infeasible.
type specCase struct {
	name                     string
	chain                    *instances.Chain
	budget                   int64
	beta                     float64
	combined, remat, offload *big.Rat
	plan                     *schedule.CombinedPlan // the optimum SPEC §6 describes
}

var (
	fall = func(l int) schedule.Op { return schedule.Op{Kind: schedule.Fall, Stage: l} }
	bop  = func(l int) schedule.Op { return schedule.Op{Kind: schedule.B, Stage: l} }
)

func specCases() []specCase {
	storeAllOffA0 := &schedule.CombinedPlan{Segments: []schedule.CombinedSegment{
		{Start: 1, End: 1, All: true, Offload: true}, {Start: 2, End: 2, All: true}}}
	ckNoTransfer := &schedule.CombinedPlan{Segments: []schedule.CombinedSegment{
		{Start: 1, End: 1, Backward: schedule.Sequence{fall(1), bop(1)}}, {Start: 2, End: 2, All: true}}}
	ckOffA0 := &schedule.CombinedPlan{Segments: []schedule.CombinedSegment{
		{Start: 1, End: 1, Offload: true, Backward: schedule.Sequence{fall(1), bop(1)}}, {Start: 2, End: 2, All: true}}}
	e := &schedule.CombinedPlan{Segments: []schedule.CombinedSegment{
		{Start: 1, End: 1, Offload: true, Backward: schedule.Sequence{fall(1), bop(1)}},
		{Start: 2, End: 2, All: true, Offload: true}, {Start: 3, End: 3, All: true}}}
	plans := map[string]*schedule.CombinedPlan{"A": storeAllOffA0, "B": storeAllOffA0, "C": ckNoTransfer, "D": ckOffA0, "E": e}
	var out []specCase
	for _, c := range instances.SpecCombinedCases() {
		out = append(out, specCase{c.Name, c.Chain, c.Budget, c.Beta, c.Combined, c.Remat, c.Offload, plans[c.Name]})
	}
	return out
}
