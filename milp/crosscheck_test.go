//go:build highs && lpsolve

package milp_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/milp"
	_ "github.com/memsched/memsched/milp/highs"
	_ "github.com/memsched/memsched/milp/lpsolve"
	"github.com/memsched/memsched/model"
)

// TestBackendsAgree solves the same small MILPs through HiGHS and lp_solve: both must reach the
// same optimum, found independently.
func TestBackendsAgree(t *testing.T) {
	cases := []struct {
		name  string
		build func() *model.Model
		want  float64
	}{
		{"assignment-with-setup", func() *model.Model {
			// min Σ c_ij x_ij + 7 y, 3 jobs on 2 machines, machine 2 needs setup y.
			m := model.New("assign")
			cost := [3][2]float64{{4, 2}, {3, 1}, {5, 2}}
			var x [3][2]model.Var
			var obj model.Expr
			y := m.AddBinary("y")
			obj.Add(y, 7)
			for i := range cost {
				var e model.Expr
				for k := range cost[i] {
					x[i][k] = m.AddBinary("")
					e.Add(x[i][k], 1)
					obj.Add(x[i][k], cost[i][k])
				}
				m.AddEq("", e, 1)
				var link model.Expr
				link.Add(x[i][1], 1).Add(y, -1)
				m.AddLE("", link, 0)
			}
			m.SetObjective(model.Minimize, obj)
			return m
		}, 12}, // all on machine 1 costs 12; using machine 2 saves 7, exactly the setup
		{"integer-ranged", func() *model.Model {
			// max 3x + 2y, 2 ≤ x + y ≤ 4.5, x − y ∈ [−1, 1.5], x, y ∈ ℤ ∩ [−3, 10].
			m := model.New("ranged")
			x, y := m.AddInteger("x", -3, 10), m.AddInteger("y", -3, 10)
			var e, f, o model.Expr
			m.AddRow("sum", 2, *e.Add(x, 1).Add(y, 1), 4.5)
			m.AddRow("diff", -1, *f.Add(x, 1).Add(y, -1), 1.5)
			m.SetObjective(model.Maximize, *o.Add(x, 3).Add(y, 2))
			return m
		}, 10}, // x + y ≤ 4 and x − y ≤ 1 in integers: (2, 2) → 10
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var objs []float64
			for _, name := range []string{"highs", "lpsolve"} {
				s, err := milp.Lookup(name)
				require.NoError(t, err)
				res, err := milp.Solve(context.Background(), s, c.build(), milp.Params{})
				require.NoError(t, err, name)
				require.Equal(t, milp.Optimal, res.Status, name)
				objs = append(objs, res.Objective)
			}
			assert.InDelta(t, objs[0], objs[1], 1e-9, "highs vs lpsolve")
			assert.InDelta(t, c.want, objs[0], 1e-9)
		})
	}
}
