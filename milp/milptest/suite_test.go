package milptest_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/milptest"
)

// TestCompareCatchesWrongAnswers feeds Compare the outcomes a broken backend would report:
// the suite must flag every one of them (a suite that cannot fail is worthless).
func TestCompareCatchesWrongAnswers(t *testing.T) {
	probs := map[string]milptest.Problem{}
	for _, p := range milptest.Problems() {
		probs[p.Name] = p
	}
	require := func(name string) milptest.Problem {
		p, ok := probs[name]
		if !ok {
			t.Fatalf("no problem %q", name)
		}
		return p
	}
	wrong := []struct {
		name string
		p    milptest.Problem
		res  milp.Result
	}{
		{"objective off", require("lp-basic"), milp.Result{Status: milp.Optimal, HasSolution: true, Objective: 35.9}},
		{"optimal without point", require("lp-basic"), milp.Result{Status: milp.Optimal, Objective: 36}},
		{"infeasible called optimal", require("lp-infeasible"), milp.Result{Status: milp.Optimal, HasSolution: true}},
		{"infeasible with a point", require("lp-infeasible"), milp.Result{Status: milp.Infeasible, HasSolution: true}},
		{"unbounded called infeasible", require("lp-unbounded"), milp.Result{Status: milp.Infeasible}},
		{"time limit called optimal", require("mip-knapsack"), milp.Result{Status: milp.TimeLimit, HasSolution: true, Objective: 220}},
		{"LP relaxation value", require("mip-integer-rounding"), milp.Result{Status: milp.Optimal, HasSolution: true, Objective: 4.5}},
	}
	for _, w := range wrong {
		assert.NotEmpty(t, milptest.Compare(w.p, &w.res, 0), w.name)
	}
	right := milp.Result{Status: milp.Optimal, HasSolution: true, Objective: 36 + 1e-9}
	assert.Empty(t, milptest.Compare(require("lp-basic"), &right, 0))
}

// TestAtLeastThirty: the issue asks for at least 30 problems, with unique names and reasons.
func TestAtLeastThirty(t *testing.T) {
	ps := milptest.Problems()
	assert.GreaterOrEqual(t, len(ps), 30)
	seen := map[string]bool{}
	for _, p := range ps {
		assert.False(t, seen[p.Name], p.Name)
		seen[p.Name] = true
		assert.NotEmpty(t, p.Reason, p.Name)
		m := p.Build()
		assert.NoError(t, m.Validate(), p.Name)
	}
}
