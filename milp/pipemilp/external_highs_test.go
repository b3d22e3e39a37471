//go:build highs

package pipemilp

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	pl "github.com/memsched/memsched/instances/pipeline"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/milptest"
	"github.com/memsched/memsched/model"
	"github.com/memsched/memsched/model/lpfile"
	"github.com/memsched/memsched/model/mpsfile"
)

// writeModel writes m as .mps (even n) or .lp (odd n) into a temporary directory.
func writeModel(t *testing.T, m *model.Model, n int) string {
	path := filepath.Join(t.TempDir(), "pipe.mps")
	if n%2 == 1 {
		path = filepath.Join(t.TempDir(), "pipe.lp")
	}
	w, err := os.Create(path)
	require.NoError(t, err)
	if n%2 == 1 {
		require.NoError(t, lpfile.Write(w, m))
	} else {
		require.NoError(t, mpsfile.Write(w, m))
	}
	require.NoError(t, w.Close())
	return path
}

// TestExternalAgree: the exported contiguous model (every part storing everything) of 12
// random tiny instances with a feasible plan (byte and GiB scale, both schedules, links free or
// not), written as .mps and .lp in turn and solved by cbc from the file alone, has HiGHS's
// optimum — the exhaustive referee's makespan — once the objective is read back with the
// units line; so do 6 allocation models (period and makespan objectives).
func TestExternalAgree(t *testing.T) {
	milptest.SkipWithoutExternal(t, "cbc")
	r := rand.New(rand.NewPCG(30, 9))
	files, allocs := 0, 0
	for it := 0; (files < 12 || allocs < 6) && it < 400; it++ {
		p := pl.RandomTiny(r, it)
		if it%2 == 1 {
			p = p.Scaled(1 << 30)
		}
		if files < 12 {
			sol, err := SolveContiguous(context.Background(), highs(t), p, ContiguousSolveOptions{})
			require.NoError(t, err)
			if sol.Status == milp.Optimal && sol.Feasible {
				f, err := BuildContiguous(p, ContiguousOptions{})
				require.NoError(t, err)
				path := writeModel(t, f.Model, files)
				got, ok := milptest.RunExternal(t, "cbc", path, false, "-ratio", "1e-9")
				require.True(t, ok, "draw %d: cbc found no optimum in %s", it, path)
				assert.InEpsilon(t, sol.Value, got*f.Units.Time, 1e-6, "draw %d: cbc %v s, HiGHS %v s", it, got*f.Units.Time, sol.Value)
				assert.InEpsilon(t, sol.Makespan, got*f.Units.Time, 1e-6, "draw %d: cbc against the replayed optimum", it)
				files++
			}
		}
		if allocs < 6 && it%3 == 0 {
			obj := []Objective{Period, Makespan}[allocs%2]
			sol, err := SolveAllocation(context.Background(), highs(t), p, AllocationSolveOptions{Objective: obj})
			require.NoError(t, err)
			if sol.Status == milp.Optimal {
				a, err := BuildAllocation(p, AllocationOptions{Objective: obj})
				require.NoError(t, err)
				path := writeModel(t, a.Model, allocs+1)
				got, ok := milptest.RunExternal(t, "cbc", path, false, "-ratio", "1e-9")
				require.True(t, ok, "draw %d: cbc found no optimum in %s", it, path)
				assert.InEpsilon(t, sol.Value, got*a.Units.Time, 1e-6, "draw %d %v: cbc %v s, HiGHS %v s", it, obj, got*a.Units.Time, sol.Value)
				allocs++
			}
		}
	}
	assert.Equal(t, 12, files)
	assert.Equal(t, 6, allocs)
}
