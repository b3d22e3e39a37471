//go:build highs

package highs

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/model"
	"github.com/memsched/memsched/model/lpfile"
	"github.com/memsched/memsched/model/mpsfile"
)

// TestLPDuals: min x + y s.t. x + 2y ≥ 2, 3x + y ≥ 3, x, y ≥ 0. Both rows bind at (0.8, 0.6),
// objective 1.4; the duals solve y₁ + 3y₂ = 1, 2y₁ + y₂ = 1: y = (0.4, 0.2), reduced costs 0.
// The same model with x integer is a MIP and gets no duals.
func TestLPDuals(t *testing.T) {
	build := func(xType model.VarType) *model.Model {
		m := model.New("duals")
		x := m.AddVar("x", xType, 0, 10)
		y := m.AddContinuous("y", 0, 10)
		var e model.Expr
		m.AddGE("r1", *e.Add(x, 1).Add(y, 2), 2)
		e = model.Expr{}
		m.AddGE("r2", *e.Add(x, 3).Add(y, 1), 3)
		e = model.Expr{}
		m.SetObjective(model.Minimize, *e.Add(x, 1).Add(y, 1))
		return m
	}
	s, _ := New()
	res, err := milp.Solve(context.Background(), s, build(model.Continuous), milp.Params{})
	require.NoError(t, err)
	require.Equal(t, milp.Optimal, res.Status)
	assert.InDelta(t, 1.4, res.Objective, 1e-9)
	assert.InDeltaSlice(t, []float64{0.4, 0.2}, res.RowDuals, 1e-9)
	assert.InDeltaSlice(t, []float64{0, 0}, res.ColDuals, 1e-9)

	res, err = milp.Solve(context.Background(), s, build(model.Integer), milp.Params{})
	require.NoError(t, err)
	require.Equal(t, milp.Optimal, res.Status)
	assert.InDelta(t, 1.5, res.Objective, 1e-9, "x = 0, y = 1.5 or x = 1, y = 0.5")
	assert.Nil(t, res.RowDuals)
	assert.Nil(t, res.ColDuals)
}

// tinyRow: min x, x integer in [0, 1], and the row x ≥ 5e-7, whose optimum is 1. x = 0
// violates the row by 5e-7, within HiGHS's default MIP feasibility tolerance (1e-6), so HiGHS
// claims 0 — the kind of wrong answer issue 10 found on byte-scale models.
func tinyRow() *model.Model {
	m := model.New("tiny")
	x := m.AddInteger("x", 0, 1)
	var e model.Expr
	m.AddGE("r", *e.Add(x, 1), 5e-7)
	e = model.Expr{}
	m.SetObjective(model.Minimize, *e.Add(x, 1))
	return m
}

// TestFeasTol: Params.FeasTol reaches HiGHS's tolerances by name (backend results, unchecked:
// the loose answer is exactly what a safer re-solve exists for).
func TestFeasTol(t *testing.T) {
	s, _ := New()
	cases := []struct {
		name   string
		p      milp.Params
		want   float64
		reason string
	}{
		{"defaults", milp.Params{}, 0, "x = 0 violates the row by 5e-7 < 1e-6"},
		{"tight", milp.Params{FeasTol: 1e-9}, 1, "5e-7 > 1e-9: x must be 1"},
		{"tight-no-presolve", milp.Params{FeasTol: 1e-9, NoPresolve: true}, 1, "the same without presolve"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := s.Solve(context.Background(), tinyRow(), c.p)
			require.NoError(t, err)
			require.Equal(t, milp.Optimal, res.Status)
			assert.InDelta(t, c.want, res.Objective, 1e-12, c.reason)
		})
	}
}

// hardKnapsack is an equality knapsack HiGHS does not finish in the tests' time.
func hardKnapsack(n int) *model.Model {
	m := model.New("hard")
	var e, obj model.Expr
	for i := 0; i < n; i++ {
		v := m.AddInteger("", 0, 10)
		e.Add(v, float64(1000+7*i*i%997))
		obj.Add(v, float64(1+i%13))
	}
	m.AddEq("eq", e, 123457)
	m.SetObjective(model.Minimize, obj)
	return m
}

// marketSplit is a Cornuéjols–Dawande market-split instance: 4 equality rows over 30 binaries,
// coefficients in [0, 99] from a fixed seed, each right-hand side half its row's sum. Branch and
// bound needs far more than the tests' time on these.
func marketSplit() *model.Model {
	rng := rand.New(rand.NewPCG(10, 5))
	m := model.New("market-split")
	x := make([]model.Var, 30)
	for j := range x {
		x[j] = m.AddBinary("")
	}
	for i := 0; i < 4; i++ {
		var e model.Expr
		sum := 0
		for j := range x {
			c := rng.IntN(100)
			e.Add(x[j], float64(c))
			sum += c
		}
		m.AddEq("", e, float64(sum/2))
	}
	m.SetObjective(model.Minimize, model.Expr{})
	return m
}

// TestCancel: cancelling the context interrupts a running solve through HiGHS's interrupt
// callbacks, and the result says Interrupted (the minute's time limit is only a backstop; were
// the callback ignored, the status would be TimeLimit).
func TestCancel(t *testing.T) {
	s, _ := New()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(200 * time.Millisecond)
		cancel()
	}()
	res, err := s.Solve(ctx, marketSplit(), milp.Params{TimeLimit: time.Minute})
	require.NoError(t, err)
	assert.Equal(t, milp.Interrupted, res.Status)

	res, err = s.Solve(ctx, knapsack(), milp.Params{})
	require.NoError(t, err)
	assert.Equal(t, milp.Interrupted, res.Status, "a context cancelled before the call")
}

// TestLog: HiGHS's log goes to Params.Log; with Params.NoPresolve it says presolve is off.
func TestLog(t *testing.T) {
	s, _ := New()
	for _, noPresolve := range []bool{false, true} {
		var log bytes.Buffer
		res, err := milp.Solve(context.Background(), s, knapsack(), milp.Params{Log: &log, NoPresolve: noPresolve})
		require.NoError(t, err)
		assert.Equal(t, milp.Optimal, res.Status)
		assert.Contains(t, log.String(), "Running HiGHS 1.15")
		if noPresolve {
			assert.Contains(t, log.String(), "Presolve is switched off")
		} else {
			assert.Contains(t, log.String(), "Presolving model")
		}
	}
}

// TestInfos: a MIP's dual bound and node count are read by name.
func TestInfos(t *testing.T) {
	s, _ := New()
	res, err := s.Solve(context.Background(), hardKnapsack(25), milp.Params{NoPresolve: true})
	require.NoError(t, err)
	require.Equal(t, milp.Optimal, res.Status)
	assert.Positive(t, res.Nodes)
	assert.LessOrEqual(t, res.Bound, res.Objective+1e-6)
	assert.InDelta(t, res.Objective, res.Bound, 1e-4*res.Objective)
}

// TestWriteFile: HiGHS's writer produces files that memsched's own readers and HiGHS's reader
// both read back to the same optimum (the knapsack's 9).
func TestWriteFile(t *testing.T) {
	s, _ := New()
	readers := map[string]func(string) (*model.Model, error){
		"mps": func(p string) (*model.Model, error) {
			f, err := os.Open(p)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			return mpsfile.Read(f, p)
		},
		"lp": func(p string) (*model.Model, error) {
			f, err := os.Open(p)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			return lpfile.Read(f, p)
		},
	}
	for ext, read := range readers {
		path := filepath.Join(t.TempDir(), "k."+ext)
		require.NoError(t, WriteFile(knapsack(), path))
		for name, rd := range map[string]func(string) (*model.Model, error){"memsched": read, "highs": ReadFile} {
			m, err := rd(path)
			require.NoError(t, err, "%s reading %s", name, ext)
			res, err := milp.Solve(context.Background(), s, m, milp.Params{})
			require.NoError(t, err)
			assert.Equal(t, milp.Optimal, res.Status, "%s reading %s", name, ext)
			assert.InDelta(t, 9, res.Objective, 1e-9, "%s reading %s", name, ext)
		}
	}
}

// TestHandle: the native instance is reached inside lanl/highs's RawModel, and Close is
// idempotent.
func TestHandle(t *testing.T) {
	h, err := newHandle()
	require.NoError(t, err)
	assert.NotNil(t, h.p)
	assert.Equal(t, h.p, nativeOf(h.raw))
	// Before a run HiGHS 1.15 holds no valid infos: the query answers with a warning status
	// (lanl/highs turns it into an error) or, in older builds, a zero status.
	if v, err := h.infos().GetIntInfo("primal_solution_status"); err != nil {
		assert.Contains(t, err.Error(), "warning")
	} else {
		assert.Zero(t, v, "no solution before a run")
	}
	h.Close()
	h.Close()
	assert.Nil(t, h.p)
}

// TestProgress: during a MIP that runs for a while, Params.Progress receives the incumbent,
// the dual bound and the gap (model units) from a Go goroutine; the bound never passes the
// incumbent.
func TestProgress(t *testing.T) {
	s, _ := New()
	var mu sync.Mutex
	var calls [][3]float64
	p := milp.Params{NoPresolve: true, TimeLimit: 1500 * time.Millisecond, Progress: func(inc, bound, gap float64) {
		mu.Lock()
		calls = append(calls, [3]float64{inc, bound, gap})
		mu.Unlock()
	}}
	res, err := s.Solve(context.Background(), hardKnapsack(60), p)
	require.NoError(t, err)
	// A market-split instance runs into the time limit: progress is reported whatever the
	// machine's speed.
	p.TimeLimit = 800 * time.Millisecond
	split, err := s.Solve(context.Background(), marketSplit(), p)
	require.NoError(t, err)
	require.Equal(t, milp.TimeLimit, split.Status)
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, calls, "no progress reported")
	for _, c := range calls {
		if !math.IsInf(c[0], 0) && !math.IsInf(c[1], 0) {
			assert.LessOrEqual(t, c[1], c[0]+1e-6*math.Abs(c[0]), "bound ≤ incumbent (minimization)")
		}
	}
	assert.True(t, res.HasSolution)
}
