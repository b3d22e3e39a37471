package rematoffload_test

import (
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
	for _, tc := range instances.SpecCombinedCases() {
		p, v, ok, err := oracle.Combined(tc.Chain, tc.Budget, tc.Beta, oracle.CombinedOptions{})
		require.NoError(t, err)
		require.True(t, ok)
		require.Zero(t, v.Cmp(tc.Combined), "%s: fluid %s", tc.Name, v.RatString())
		for _, pol := range []rematoffload.Policy{rematoffload.Earliest, rematoffload.JustInTime} {
			s, rep, err := rematoffload.RetimeWith(tc.Chain, tc.Budget, tc.Beta, p, pol)
			require.NoError(t, err, "%s %v", tc.Name, p)
			assert.Zero(t, rep.Exact.Cmp(tc.Combined), "%s policy %d: strict %s, fluid %s (%v)", tc.Name, pol, rep.Exact.RatString(), v.RatString(), p)
			r2, err := combined.Check(tc.Chain, tc.Budget, tc.Beta, s)
			require.NoError(t, err)
			assert.LessOrEqual(t, r2.Peak, tc.Budget)
		}
	}
}
