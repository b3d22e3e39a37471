package rematoffload_test

import (
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
	for _, tc := range instances.SpecCombinedCases() {
		for _, st := range rematoffload.Strategies {
			out, err := st.Run(tc.Chain, tc.Budget, tc.Beta, rematoffload.Options{Exact: true, Slots: 100})
			require.NoError(t, err, "%s %s", tc.Name, st.Name)
			if !out.Feasible {
				assert.NotEqual(t, "pofo", st.Name, tc.Name)
				t.Logf("%s %s: no plan", tc.Name, st.Name)
				continue
			}
			if st.Direct() {
				// A schedule outside the class: at least the strict optimum, which equals the
				// class's here (oracle's TestStrictSpecCases).
				assert.GreaterOrEqual(t, out.Report.Exact.Cmp(tc.Combined), 0, "%s %s", tc.Name, st.Name)
				t.Logf("%s %s: strict %s (%s)", tc.Name, st.Name, out.Report.Exact.RatString(), out.Source)
				continue
			}
			assert.GreaterOrEqual(t, out.Fluid.Exact.Cmp(tc.Combined), 0, "%s %s", tc.Name, st.Name)
			assert.GreaterOrEqual(t, out.Report.Exact.Cmp(out.Fluid.Exact), 0)
			t.Logf("%s %s: fluid %s strict %s  %v", tc.Name, st.Name, out.Fluid.Exact.RatString(), out.Report.Exact.RatString(), out.Plan)
			if st.Name == "pofo" {
				assert.Zero(t, out.Fluid.Exact.Cmp(tc.Combined), tc.Name)
				assert.Zero(t, out.Report.Exact.Cmp(tc.Combined), tc.Name)
			}
		}
	}
}
