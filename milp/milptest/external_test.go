package milptest_test

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/milptest"
	"github.com/memsched/memsched/model"
	"github.com/memsched/memsched/model/lpfile"
	"github.com/memsched/memsched/model/mpsfile"
)

// TestIndependentReaders: CBC and GLPK read memsched's .lp and .mps files of every conformance
// problem with an optimum and reach the known optimal objective — for glpsol on an MPS file
// with an objective constant, the optimum minus twice the constant (GLPK's sign of the
// objective row's RHS is the opposite of the convention; docs/modeling.md).
func TestIndependentReaders(t *testing.T) {
	solvers := []struct{ name, format string }{{"cbc", "lp"}, {"cbc", "mps"}, {"glpsol", "lp"}, {"glpsol", "mps"}}
	for _, s := range solvers {
		t.Run(s.name+"-"+s.format, func(t *testing.T) {
			milptest.SkipWithoutExternal(t, s.name)
			checked := 0
			for _, p := range milptest.Problems() {
				if p.Status != milp.Optimal {
					continue
				}
				m := p.Build()
				path := filepath.Join(t.TempDir(), "m."+s.format)
				var buf bytes.Buffer
				if s.format == "lp" {
					require.NoError(t, lpfile.Write(&buf, m))
				} else {
					require.NoError(t, mpsfile.Write(&buf, m))
				}
				require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
				sense, _, constant := m.Objective()
				want := p.Objective
				if s.name == "glpsol" && constant != 0 {
					if s.format == "lp" {
						// GLPK's CPLEX LP reader rejects an objective constant: a known limitation.
						t.Logf("%s: skipped for glpsol --lp (objective constant %g)", p.Name, constant)
						continue
					}
					// GLPK's MPS reader takes the objective row's RHS as the constant, where the
					// MPS convention (CBC, HiGHS, memsched) takes its negation: glpsol's value is
					// the optimum minus twice the constant, for either sense.
					want = p.Objective - 2*constant
				}
				if s.name == "glpsol" && s.format == "lp" && m.NumRows() == 0 {
					// GLPK's CPLEX LP reader requires at least one constraint.
					t.Logf("%s: skipped for glpsol --lp (no rows)", p.Name)
					continue
				}
				got, ok := milptest.RunExternal(t, s.name, path, sense == model.Maximize)
				if assert.True(t, ok, "%s: %s found no optimum\n%s", p.Name, s.name, buf.String()) {
					assert.InDelta(t, want, got, 1e-6*math.Max(1, math.Abs(want)), "%s\n%s", p.Name, buf.String())
				}
				checked++
			}
			t.Logf("%s read %d %s files", s.name, checked, s.format)
		})
	}
}
