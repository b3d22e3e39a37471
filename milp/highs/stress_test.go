//go:build highs

package highs

import (
	"context"
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/model"
)

// TestStressShortSolves runs many very short solves on several goroutines, with the context
// cancelled in every way a caller does it: right after Solve returns (a deferred cancel: the
// case of issue 18, where the watcher goroutine, scheduled late, raised the interrupt flag
// after Close had freed it and crashed about 1 certify run in 15), at a random moment during
// the solve, and before the call. Every solve must end Optimal or Interrupted with the
// right optimum when Optimal. Run it under -race (`go test -race -tags highs -run Stress
// ./milp/highs/`): the old watcher read h.flag while Close wrote it, which the race detector
// reports even on the runs that did not crash.
func TestStressShortSolves(t *testing.T) {
	s, err := New()
	require.NoError(t, err)
	models := []struct {
		build func() *model.Model
		opt   float64
	}{
		{func() *model.Model { return model.New("empty") }, 0},
		{knapsack, 9},
		{func() *model.Model { // min x + y s.t. x + 2y ≥ 2, LP: optimum 1 at y = 1
			m := model.New("lp")
			x, y := m.AddContinuous("x", 0, 10), m.AddContinuous("y", 0, 10)
			var e model.Expr
			m.AddGE("c", *e.Add(x, 1).Add(y, 2), 2)
			e = model.Expr{}
			m.SetObjective(model.Minimize, *e.Add(x, 1).Add(y, 1))
			return m
		}, 1},
	}
	workers, per := 8, 150
	if testing.Short() {
		per = 40
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(w)))
			for i := 0; i < per; i++ {
				mc := models[(w+i)%len(models)]
				ctx, cancel := context.WithCancel(context.Background())
				mode := i % 3
				switch mode {
				case 1:
					d := time.Duration(rng.Intn(2000)) * time.Microsecond
					go func() { time.Sleep(d); cancel() }()
				case 2:
					cancel()
				}
				p := milp.Params{}
				if i%2 == 0 {
					p.Progress = func(float64, float64, float64) {}
				}
				res, err := s.Solve(ctx, mc.build(), p)
				cancel() // mode 0: the deferred cancel right after the solve
				if !assert.NoError(t, err) {
					return
				}
				if mode == 2 {
					assert.Equal(t, milp.Interrupted, res.Status, "a context cancelled before the call")
					continue
				}
				switch res.Status {
				case milp.Optimal:
					assert.InDelta(t, mc.opt, res.Objective, 1e-9, "worker %d solve %d", w, i)
				case milp.Interrupted:
					assert.NotEqual(t, 0, mode, "worker %d solve %d: interrupted without a cancel during the solve", w, i)
				default:
					t.Errorf("worker %d solve %d: status %v", w, i, res.Status)
				}
			}
		}(w)
	}
	wg.Wait()
}
