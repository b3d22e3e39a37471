package rematoffload_test

import (
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/heuristics/rematoffload"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/verify/combined"
	"github.com/memsched/memsched/verify/oracle"
)

// TestRetimeSpecCases: SPEC §6's optimal plans (found by the exhaustive search) re-timed under
// strict timing: each schedule validates and meets its fluid value exactly — 7, 6.5, 7, 8 and
// 11 s for cases A–E — with both policies.
func TestRetimeSpecCases(t *testing.T) {
	for _, tc := range []struct {
		name   string
		c      *instances.Chain
		budget int64
		beta   float64
		want   *big.Rat
	}{
		{"A", instances.SpecCombinedAD(), 12, 1, big.NewRat(7, 1)},
		{"B", instances.SpecCombinedAD(), 12, 2, big.NewRat(13, 2)},
		{"C", instances.SpecCombinedAD(), 11, 8, big.NewRat(7, 1)},
		{"D", instances.SpecCombinedAD(), 10, 1, big.NewRat(8, 1)},
		{"E", instances.SpecCombinedE(), 12, 2, big.NewRat(11, 1)},
	} {
		p, v, ok, err := oracle.Combined(tc.c, tc.budget, tc.beta, oracle.CombinedOptions{})
		require.NoError(t, err)
		require.True(t, ok)
		require.Zero(t, v.Cmp(tc.want), "%s: fluid %s", tc.name, v.RatString())
		for _, pol := range []rematoffload.Policy{rematoffload.Earliest, rematoffload.JustInTime} {
			s, rep, err := rematoffload.RetimeWith(tc.c, tc.budget, tc.beta, p, pol)
			require.NoError(t, err, "%s %v", tc.name, p)
			assert.Zero(t, rep.Exact.Cmp(tc.want), "%s policy %d: strict %s, fluid %s (%v)", tc.name, pol, rep.Exact.RatString(), v.RatString(), p)
			r2, err := combined.Check(tc.c, tc.budget, tc.beta, s)
			require.NoError(t, err)
			assert.LessOrEqual(t, r2.Peak, tc.budget)
		}
	}
}
