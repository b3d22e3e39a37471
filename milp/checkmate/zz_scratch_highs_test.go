//go:build highs

package checkmate_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/checkmate"
)

func TestZZScratch(t *testing.T) {
	if os.Getenv("SCRATCH") == "" {
		t.Skip()
	}
	s := solver(t)
	c, b := warmChain(t, 100)
	sum := 0.0
	for _, st := range c.Stages {
		sum += st.UF + st.UB
	}
	cmp, _ := dp.SolvePersistent(c, b, dp.Options{})
	t.Logf("sum %.3f ms, C_MP %.3f", sum*1e3, cmp.Makespan*1e3)
	f, _ := checkmate.BuildChain(c, b)
	lp, _ := milp.LPBound(context.Background(), s, f.Model, milp.Params{})
	t.Logf("LP bound %.3f ms (%v)", lp.Bound*f.Units.Time*1e3, lp.Status)
	for _, lim := range []time.Duration{10 * time.Second, 30 * time.Second} {
		st := time.Now()
		sol, _, err := checkmate.SolveChainExact(context.Background(), s, c, b, milp.Params{TimeLimit: lim, Log: nil}, cmp.Sequence)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("limit %v: %v %.3f ms bound %.3f gap %.3g%% in %v", lim, sol.Status, sol.Makespan*1e3, sol.Bound*1e3, sol.Gap*100, time.Since(st))
	}
}
