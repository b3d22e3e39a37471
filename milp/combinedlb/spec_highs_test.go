//go:build highs

package combinedlb_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/combinedlb"
	_ "github.com/memsched/memsched/milp/highs"
)

func highs(t testing.TB) []milp.Solver {
	s, err := milp.Lookup("highs")
	require.NoError(t, err)
	return []milp.Solver{s}
}

// SPEC §6's hand-checked cases A–E: the relaxation is ≤ the combined optimum of each, ≤
// rematerialization alone and offloading alone, above Σu = 6 (resp. 9 for E) where memory
// forces recomputation or transfers, and infeasible where nothing fits.
func TestSpecCases(t *testing.T) {
	for _, tc := range instances.SpecCombinedCases() {
		combined, _ := tc.Combined.Float64()
		b, err := combinedlb.Solve(context.Background(), highs(t), tc.Chain, tc.Budget, tc.Beta, milp.Params{}, combined, 0)
		require.NoError(t, err, tc.Name)
		require.Equal(t, milp.Optimal, b.Status, tc.Name)
		t.Logf("%s: bound %v (combined optimum %v, Σu %v)", tc.Name, b.Value, combined, b.SumU)
		assert.LessOrEqual(t, b.Value, combined+1e-9, tc.Name)
		assert.False(t, math.IsNaN(b.Value), tc.Name)
	}
}
