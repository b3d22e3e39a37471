package remat_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
	leverremat "github.com/memsched/memsched/lever/remat"
)

// TestStrategies: on the toy chain at 90 MiB (004 Table 2) every strategy replays, the exact
// tables and the exhaustive search give the published optimum 47.42 ms, store-all does not fit
// (peak 107 MiB) nor does checkpoint_sequential (it does at 107 MiB), the slotted and exact C_MP agree within the slots' rounding, and the search
// refuses a chain beyond its reach with a *LimitError.
func TestStrategies(t *testing.T) {
	c := instances.Toy()
	budget := int64(90) << 20
	assert.Equal(t, []string{"persistent", "floating", "revolve", "sequential", "store-all"}, leverremat.Names(leverremat.InCertify))
	got := map[string]leverremat.Outcome{}
	for _, st := range leverremat.Strategies {
		for _, exact := range []bool{false, true} {
			if exact && !st.HasTable() {
				continue
			}
			out, err := st.Run(c, budget, leverremat.Options{Exact: exact})
			require.NoError(t, err, st.Name)
			assert.Equal(t, exact, out.Exact, st.Name)
			switch st.Name {
			case "store-all":
				assert.False(t, out.Feasible)
				assert.InDelta(t, 107<<20, out.Peak, 1<<14)
				continue
			case "sequential":
				// checkpoint_sequential stores each segment's whole tape: nothing fits 90 MiB.
				assert.False(t, out.Feasible)
				assert.False(t, out.Verified)
				continue
			}
			require.True(t, out.Feasible, st.Name)
			require.True(t, out.Verified, st.Name)
			assert.LessOrEqual(t, out.Peak, budget, st.Name)
			if exact {
				assert.Equal(t, int64(1), out.SlotSize)
				got[st.Name+" exact"] = out
			} else {
				got[st.Name] = out
			}
		}
	}
	assert.InDelta(t, 47.42e-3, got["floating exact"].Makespan, 1e-6)
	assert.InDelta(t, 47.42e-3, got["exhaustive"].Makespan, 1e-6)
	assert.InDelta(t, 47.42e-3, got["persistent exact"].Makespan, 1e-6)
	assert.GreaterOrEqual(t, got["persistent"].Makespan, got["persistent exact"].Makespan-1e-12)
	seq, _ := leverremat.Lookup("sequential")
	out, err := seq.Run(c, 107<<20, leverremat.Options{})
	require.NoError(t, err)
	require.True(t, out.Feasible)
	assert.Positive(t, out.Segments)

	long := &instances.Chain{Name: "long", A0: 1, Delta0: 1}
	for l := 0; l < 40; l++ {
		long.Stages = append(long.Stages, instances.Stage{Name: "s", UF: 1, UB: 1, A: 1, ABar: 1, Delta: 1})
	}
	st, ok := leverremat.Lookup("exhaustive")
	require.True(t, ok)
	_, err = st.Run(long, 100, leverremat.Options{})
	var le *leverremat.LimitError
	require.True(t, errors.As(err, &le), "%v", err)
	assert.Equal(t, 40, le.Stages)
}
