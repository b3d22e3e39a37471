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

func q(a, b int64) *big.Rat { return big.NewRat(a, b) }

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
	return []specCase{
		{"A", chainAD(), 12, 1, q(7, 1), q(7, 1), q(7, 1), storeAllOffA0},
		{"B", chainAD(), 12, 2, q(13, 2), q(7, 1), q(13, 2), storeAllOffA0},
		{"C", chainAD(), 11, 8, q(7, 1), q(7, 1), nil, ckNoTransfer},
		{"D", chainAD(), 10, 1, q(8, 1), nil, nil, ckOffA0},
		{"E", chainE(), 12, 2, q(11, 1), q(12, 1), q(12, 1), e},
	}
}
