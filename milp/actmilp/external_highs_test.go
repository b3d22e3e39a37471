//go:build highs

package actmilp_test

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	heur "github.com/memsched/memsched/heuristics/actoffload"
	act "github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/actmilp"
	"github.com/memsched/memsched/milp/milptest"
	"github.com/memsched/memsched/model/lpfile"
	"github.com/memsched/memsched/model/mpsfile"
)

// TestExternalAgree: the exported model (.mps on even draws, .lp on odd ones) of 20 random
// instances that need transfers (3–6 operations, byte and GiB scale), solved by cbc from the
// file alone, has HiGHS's optimum — which is the exact search's; the objective read back with
// the units line is the makespan in seconds.
func TestExternalAgree(t *testing.T) {
	milptest.SkipWithoutExternal(t, "cbc")
	r := rand.New(rand.NewPCG(8, 19))
	files := 0
	for it := 0; files < 20 && it < 400; it++ {
		unit := int64(1)
		if it%2 == 1 {
			unit = 1 << 30
		}
		p := act.Random(r, 3+r.IntN(4), unit)
		if p.Peak() <= p.MGPU {
			continue
		}
		e, st, err := heur.Exact(p, heur.ExactOptions{MaxNodes: 1_000_000})
		require.NoError(t, err)
		if st != heur.Optimal || !e.Feasible {
			continue
		}
		h, name := bestHeuristic(t, p)
		sol, err := actmilp.Solve(context.Background(), highs(t), p, actmilp.SolveOptions{Start: h, StartName: name})
		require.NoError(t, err)
		require.Equal(t, milp.Optimal, sol.Status)
		f := sol.Formulation
		path := filepath.Join(t.TempDir(), "act.mps")
		if files%2 == 1 {
			path = filepath.Join(t.TempDir(), "act.lp")
		}
		w, err := os.Create(path)
		require.NoError(t, err)
		if files%2 == 1 {
			require.NoError(t, lpfile.Write(w, f.Model))
		} else {
			require.NoError(t, mpsfile.Write(w, f.Model))
		}
		require.NoError(t, w.Close())
		got, ok := milptest.RunExternal(t, "cbc", path, false, "-ratio", "1e-9")
		require.True(t, ok, "draw %d: cbc found no optimum in %s", it, path)
		assert.InEpsilon(t, e.Makespan(), got*f.Units.Time, 1e-6, "draw %d: cbc %v s, exact %v s", it, got*f.Units.Time, e.Makespan())
		assert.InEpsilon(t, sol.Makespan(), got*f.Units.Time, 1e-6, "draw %d: cbc against HiGHS", it)
		files++
	}
	assert.Equal(t, 20, files)
}
