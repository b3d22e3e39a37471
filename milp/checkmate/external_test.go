//go:build highs

package checkmate_test

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/checkmate"
	"github.com/memsched/memsched/milp/milptest"
	"github.com/memsched/memsched/model"
	"github.com/memsched/memsched/model/lpfile"
	"github.com/memsched/memsched/model/mpsfile"
	"github.com/memsched/memsched/verify"
	"github.com/memsched/memsched/verify/graphsim"
)

// TestExternalSolvers: 24 exported models (the hand DAGs at their feasible budgets, random
// DAGs, a chain's graph) written as .lp and .mps; cbc and glpsol reach HiGHS's optimum on each.
// Skipped when the binaries are absent (make setup installs coinor-cbc and glpk-utils).
func TestExternalSolvers(t *testing.T) {
	var cases []*checkmate.Formulation
	add := func(g *instances.Graph, b int64) {
		if g.Len() <= graphsim.MaxExhaustive {
			if _, _, ok := graphsim.Staged(g, b); !ok {
				return
			}
		}
		f, err := checkmate.Build(g, b)
		require.NoError(t, err)
		cases = append(cases, f)
	}
	for _, c := range handOptima {
		add(c.g(1<<20), c.budget<<20)
	}
	r := rand.New(rand.NewPCG(7, 7))
	for len(cases) < 22 {
		g := graphsim.RandomGraph(r, 4+r.IntN(4), 1<<30)
		add(g, int64(6+r.IntN(8))<<30)
	}
	c := instances.Toy()
	add(instances.GraphFromChain(c), instances.ToyBudget)
	add(instances.GraphFromChain(c), 100<<20)
	require.GreaterOrEqual(t, len(cases), 20)
	var models []*model.Model
	for _, f := range cases {
		models = append(models, f.Model)
	}
	externalAgree(t, models)
}

// TestExternalSolversChainExact: 20 chain-exact models (the toy chain at 90 and 100 MiB, 18
// random chains of 3–12 stages in bytes and in GiB, budgets between the smallest feasible and
// the store-all peak), with Σ u_b as the cost of a fixed column, written as .lp and .mps: cbc and
// glpsol reach HiGHS's optimum on each.
func TestExternalSolversChainExact(t *testing.T) {
	if testing.Short() {
		t.Skip("80 external solver runs")
	}
	var models []*model.Model
	add := func(c *instances.Chain, b int64) {
		f, err := checkmate.BuildChain(c, b)
		require.NoError(t, err)
		models = append(models, f.Model)
	}
	add(instances.Toy(), instances.ToyBudget)
	add(instances.Toy(), 100<<20)
	r := rand.New(rand.NewPCG(8, 8))
	for i := 0; len(models) < 20; i++ {
		p := instances.RandomParams{Stages: 3 + r.IntN(6), WithABar: true, WithOverheads: true, WithDelta: i%2 == 0}
		if i%2 == 0 {
			p.MaxSize, p.MaxTime, p.Integer = 10, 5, true
		} else {
			p.MaxSize, p.MaxTime = 4<<30, 0.01
		}
		c := instances.Random(r, p)
		lo := verify.MinBudget(c)
		add(c, lo+(storeAllChainPeak(t, c)-lo)*int64(1+r.IntN(3))/4)
	}
	externalAgree(t, models)
}

// externalAgree solves each model with HiGHS, writes it as .lp and .mps, and checks that cbc and
// glpsol (each skipped when absent) find the same optimum.
func externalAgree(t *testing.T, models []*model.Model) {
	s := solver(t)
	for _, name := range []string{"cbc", "glpsol"} {
		t.Run(name, func(t *testing.T) {
			milptest.SkipWithoutExternal(t, name)
			for i, m := range models {
				res, err := milp.Solve(context.Background(), s, m, milp.Params{})
				require.NoError(t, err)
				require.Equal(t, milp.Optimal, res.Status)
				for _, format := range []string{"lp", "mps"} {
					var buf bytes.Buffer
					if format == "lp" {
						require.NoError(t, lpfile.Write(&buf, m))
					} else {
						require.NoError(t, mpsfile.Write(&buf, m))
					}
					path := filepath.Join(t.TempDir(), "m."+format)
					require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
					got, ok := milptest.RunExternal(t, name, path, false)
					require.True(t, ok, "case %d %s: %s found no optimum", i, format, name)
					assert.InDelta(t, res.Objective, got, 1e-6*math.Max(1, math.Abs(res.Objective)), "case %d %s", i, format)
				}
			}
			t.Logf("%s solved %d models as .lp and .mps", name, len(models))
		})
	}
}
