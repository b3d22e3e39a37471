package milp_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/model"
)

// mock returns a fixed result, whatever the model: a backend that lies.
type mock struct{ res milp.Result }

func (m mock) Name() string { return "mock" }
func (m mock) Solve(context.Context, *model.Model, milp.Params) (*milp.Result, error) {
	r := m.res
	return &r, nil
}

// knapsack: max 60a + 100b + 120c, 10a + 20b + 30c ≤ 50, binaries; optimum 220 at (0, 1, 1).
func knapsack() *model.Model {
	m := model.New("k")
	a, b, c := m.AddBinary("a"), m.AddBinary("b"), m.AddBinary("c")
	var w, v model.Expr
	m.AddLE("cap", *w.Add(a, 10).Add(b, 20).Add(c, 30), 50)
	m.SetObjective(model.Maximize, *v.Add(a, 60).Add(b, 100).Add(c, 120))
	return m
}

// TestSolveRejectsLies: milp.Solve re-checks every answer; each kind of wrong answer is refused
// — Status SolverError, no solution, no bound, the evidence in Refused — never a result and
// never a missing status.
func TestSolveRejectsLies(t *testing.T) {
	cases := []struct {
		name string
		res  milp.Result
		want string
	}{
		{"infeasible point", milp.Result{Status: milp.Optimal, HasSolution: true, Values: []float64{1, 1, 1}, Objective: 280, Bound: 280}, `mock claimed optimal, objective 280; refused: infeasible point: point violates row "cap" by 0.2`},
		{"fractional point", milp.Result{Status: milp.Optimal, HasSolution: true, Values: []float64{1, 1, 2.0 / 3}, Objective: 240, Bound: 240}, `integrality of variable "c"`},
		{"out of bounds", milp.Result{Status: milp.Optimal, HasSolution: true, Values: []float64{0, 0, -1}, Objective: -120, Bound: -120}, `bound of variable "c"`},
		{"objective misreported", milp.Result{Status: milp.Optimal, HasSolution: true, Values: []float64{0, 1, 1}, Objective: 230, Bound: 230}, "reported objective 230 but its point evaluates to 220"},
		{"bound on the wrong side", milp.Result{Status: milp.TimeLimit, HasSolution: true, Values: []float64{0, 1, 1}, Objective: 220, Bound: 200}, "mock claimed time-limit, objective 220; refused: reported bound 200 on the wrong side"},
		{"optimal without a point", milp.Result{Status: milp.Optimal}, "mock claimed optimal; refused: optimal without a solution"},
		{"too few values (columns dropped)", milp.Result{Status: milp.Optimal, HasSolution: true, Values: []float64{1, 1}, Objective: 160, Bound: 160}, "returned 2 values for 3 variables"},
	}
	for _, c := range cases {
		res, err := milp.Solve(context.Background(), mock{c.res}, knapsack(), milp.Params{})
		require.NoError(t, err, c.name)
		assert.Equal(t, milp.SolverError, res.Status, c.name)
		assert.False(t, res.HasSolution, c.name)
		assert.Nil(t, res.Values, c.name)
		assert.True(t, math.IsNaN(res.Bound), c.name)
		assert.Contains(t, res.Refused, c.want, c.name)
		assert.Equal(t, "mock", res.Solver, c.name)
	}
	// An honest time-limited answer passes, with its gap recomputed.
	res, err := milp.Solve(context.Background(), mock{milp.Result{Status: milp.TimeLimit, HasSolution: true,
		Values: []float64{1, 1, 0}, Objective: 160, Bound: 230}}, knapsack(), milp.Params{})
	require.NoError(t, err)
	assert.Equal(t, "mock", res.Solver)
	assert.Empty(t, res.Refused)
	assert.InDelta(t, 70.0/160, res.Gap, 1e-12)
}

func TestSolveValidatesFirst(t *testing.T) {
	_, err := milp.Solve(context.Background(), mock{}, model.New("empty"), milp.Params{})
	assert.ErrorContains(t, err, "empty model")
}

func TestRegistry(t *testing.T) {
	_, err := milp.Lookup("no-such-solver")
	assert.ErrorContains(t, err, `solver "no-such-solver" not available`)
	assert.Panics(t, func() { milp.Register("", nil) })
	milp.Register("mock-test", func() (milp.Solver, error) { return mock{}, nil })
	assert.Panics(t, func() { milp.Register("mock-test", func() (milp.Solver, error) { return mock{}, nil }) })
	s, err := milp.Lookup("mock-test")
	require.NoError(t, err)
	assert.Equal(t, "mock", s.Name())
	assert.Contains(t, milp.Available(), "mock-test")
}

func TestStatusStrings(t *testing.T) {
	for s := milp.NotSolved; s <= milp.SolverError; s++ {
		assert.NotContains(t, s.String(), "Status(", "status %d has a name", int(s))
	}
	assert.Equal(t, "time-limit", milp.TimeLimit.String())
}
