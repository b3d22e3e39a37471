package milptest_test

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/milptest"
	"github.com/memsched/memsched/milp/ref"
	"github.com/memsched/memsched/model"
)

// liar wraps the referee and corrupts its answers in one way (mode). Each corruption is
// internally consistent where possible, so that it is the suite's known answers — not only
// milp.Solve's re-check — that must catch it.
type liar struct {
	inner milp.Solver
	mode  string
}

func (l liar) Name() string { return "liar-" + l.mode }

func (l liar) Solve(ctx context.Context, m *model.Model, p milp.Params) (*milp.Result, error) {
	res, err := l.inner.Solve(ctx, m, p)
	if err != nil || res.Status != milp.Optimal {
		return res, err
	}
	switch l.mode {
	case "infeasible": // claims every feasible problem infeasible (a consistent, no-point answer)
		return &milp.Result{Status: milp.Infeasible, Bound: res.Bound}, nil
	case "time-limit": // stops early with the optimal point but does not say optimal
		res.Status = milp.TimeLimit
	case "objective": // reports an objective its point does not have
		res.Objective += 1
	case "point": // moves the point off the feasible set and recomputes nothing
		for j := range res.Values {
			res.Values[j] += 0.37
		}
	}
	return res, nil
}

// liarEnv selects the corruption in the child process of TestRunFailsOnLiars.
const liarEnv = "MILPTEST_LIAR_MODE"

// TestLiarChild is the child half of TestRunFailsOnLiars: run directly it skips; run by the
// parent with MILPTEST_LIAR_MODE set, it runs the whole suite on a lying backend and must fail.
func TestLiarChild(t *testing.T) {
	mode := os.Getenv(liarEnv)
	if mode == "" {
		t.Skip("child of TestRunFailsOnLiars; runs only when " + liarEnv + " is set")
	}
	milptest.Run(t, func() (milp.Solver, error) {
		s, err := ref.New()
		return liar{s, mode}, err
	}, milptest.Config{Caps: milptest.Capabilities{Integer: true, ProvesUnbounded: true}})
}

// TestRunFailsOnLiars runs the suite end to end (Run, not only Compare) against backends that
// return wrong answers, in a child test process so that the expected failures do not fail this
// test: the child must exit non-zero and name the problem. A control run with honest answers
// ("none") must pass, so the check is not vacuous.
func TestRunFailsOnLiars(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite 5 times in child processes")
	}
	cases := []struct {
		mode, want, reason string
		fail               bool
	}{
		{"none", "PASS", "control: the referee's honest answers pass", false},
		{"infeasible", "status infeasible, want optimal", "feasible problems reported infeasible", true},
		{"time-limit", "status time-limit, want optimal", "a limit status is not an optimum", true},
		{"objective", "reported objective", "objective inconsistent with the point (milp.Solve's re-check)", true},
		{"point", "infeasible point", "point off the feasible set (milp.Solve's re-check)", true},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestLiarChild$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), liarEnv+"="+c.mode)
			out, err := cmd.CombinedOutput()
			if c.fail {
				require.Error(t, err, "%s: the suite passed a lying backend:\n%s", c.reason, out)
				var ee *exec.ExitError
				require.ErrorAs(t, err, &ee, "child did not run: %v", err)
			} else {
				require.NoError(t, err, "%s:\n%s", c.reason, out)
			}
			assert.Contains(t, string(out), c.want, c.reason)
			assert.Contains(t, string(out), "lp-basic", "the failing/passing problem is named")
		})
	}
}
