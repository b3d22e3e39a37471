package ref_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/milptest"
	"github.com/memsched/memsched/milp/ref"
	"github.com/memsched/memsched/model"
)

// TestConformance runs the suite on the referee, in memory and through memsched's MPS files,
// so that it runs on a machine without any C library.
func TestConformance(t *testing.T) {
	milptest.Run(t, ref.New, milptest.Config{
		Caps:       milptest.Capabilities{Integer: true, ProvesUnbounded: true},
		RoundTrips: []milptest.RoundTrip{milptest.MPS, milptest.LP},
	})
}

// TestRefusesLargeModels: beyond its enumeration or work caps the referee returns an error
// naming the reason instead of running for minutes.
func TestRefusesLargeModels(t *testing.T) {
	cases := []struct {
		name, want string
		build      func() *model.Model
	}{
		{"17 binaries: 2^17 assignments", "integer assignments", func() *model.Model {
			m := model.New("bins")
			var e model.Expr
			for i := 0; i < 17; i++ {
				e.Add(m.AddBinary(""), 1)
			}
			m.AddLE("c", e, 3)
			m.SetObjective(model.Maximize, e)
			return m
		}},
		{"LP with 20000 columns", "too large for enumeration", func() *model.Model {
			m := model.New("wide")
			var e model.Expr
			for i := 0; i < 20000; i++ {
				e.Add(m.AddContinuous("", 0, 1), 1)
			}
			m.AddLE("c", e, 3)
			m.SetObjective(model.Maximize, e)
			return m
		}},
	}
	for _, c := range cases {
		_, err := ref.Solver{}.Solve(context.Background(), c.build(), milp.Params{})
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
	}
}
