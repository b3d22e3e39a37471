package rematoffload_test

import (
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/lever/rematoffload"
)

// TestSpecCases: SPEC §6's five cases through the registry: pofo in exact mode finds the
// tabulated optimum and its strict schedule meets it (7, 6.5, 7, 8, 11 s); the other
// strategies find plans that validate, never below the optimum.
func TestSpecCases(t *testing.T) {
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
		for _, st := range rematoffload.Strategies {
			out, err := st.Run(tc.c, tc.budget, tc.beta, rematoffload.Options{Exact: true, Slots: 100})
			require.NoError(t, err, "%s %s", tc.name, st.Name)
			if !out.Feasible {
				assert.NotEqual(t, "pofo", st.Name, tc.name)
				t.Logf("%s %s: no plan", tc.name, st.Name)
				continue
			}
			assert.GreaterOrEqual(t, out.Fluid.Exact.Cmp(tc.want), 0, "%s %s", tc.name, st.Name)
			assert.GreaterOrEqual(t, out.Report.Exact.Cmp(out.Fluid.Exact), 0)
			t.Logf("%s %s: fluid %s strict %s  %v", tc.name, st.Name, out.Fluid.Exact.RatString(), out.Report.Exact.RatString(), out.Plan)
			if st.Name == "pofo" {
				assert.Zero(t, out.Fluid.Exact.Cmp(tc.want), tc.name)
				assert.Zero(t, out.Report.Exact.Cmp(tc.want), tc.name)
			}
		}
	}
}
