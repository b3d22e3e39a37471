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
	cases := []struct {
		name     string
		c        *instances.Chain
		m        int64
		beta     float64
		combined float64
	}{
		{"A", instances.SpecCombinedAD(), 12, 1, 7},
		{"B", instances.SpecCombinedAD(), 12, 2, 6.5},
		{"C", instances.SpecCombinedAD(), 11, 8, 7},
		{"D", instances.SpecCombinedAD(), 10, 1, 8},
		{"E", instances.SpecCombinedE(), 12, 2, 11},
	}
	for _, tc := range cases {
		b, err := combinedlb.Solve(context.Background(), highs(t), tc.c, tc.m, tc.beta, milp.Params{}, tc.combined, 0)
		require.NoError(t, err, tc.name)
		require.Equal(t, milp.Optimal, b.Status, tc.name)
		t.Logf("%s: bound %v (combined optimum %v, Σu %v)", tc.name, b.Value, tc.combined, b.SumU)
		assert.LessOrEqual(t, b.Value, tc.combined+1e-9, tc.name)
		assert.False(t, math.IsNaN(b.Value), tc.name)
	}
}
