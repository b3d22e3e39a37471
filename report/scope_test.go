package report

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/instances/zoo"
	leverremat "github.com/memsched/memsched/lever/remat"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
	"github.com/memsched/memsched/verify/combined"
)

// c123 is `memsched gen random --seed 123 --stages 5 --integer --max-size 200 --max-time 10`
// (issue 29): at 920 B and 1 B/s the combined DP's class optimum is 110 s, while the remat
// lever's floating sequence takes 99 s and is a strict combined schedule too.
func c123() *instances.Chain {
	return instances.Random(rand.New(rand.NewPCG(123, 123^0x9e3779b97f4a7c15)),
		instances.RandomParams{Stages: 5, MaxSize: 200, MaxTime: 10, Integer: true, WithABar: true, WithOverheads: true})
}

// TestClassBoundProvesNothingGlobal is issue 29's false certificate: certify called the
// remat-offload lever "optimal (meets the bound)" at 110 s with a bound of the combined DP's
// class only, while a 99 s schedule of the same model (the remat lever's, validated by
// verify/combined) exists. A class-only bound is listed with its scope and never makes a
// ratio, the best bound or "optimal".
func TestClassBoundProvesNothingGlobal(t *testing.T) {
	c := c123()
	in := Input{Chain: c, Budget: 920, Bandwidth: 1, TimeLimit: 20 * time.Second}
	rep, err := Certify(context.Background(), in, DefaultLevers())
	require.NoError(t, err)
	ro, rm := rep.Levers["remat-offload"], rep.Levers["remat"]
	require.Equal(t, 99.0, rm.BestAt, "the remat lever's best (floating)")
	var class *Bound
	for i, b := range ro.Bounds {
		if b.Scope == Class {
			class = &ro.Bounds[i]
		} else {
			assert.Equal(t, Global, b.Scope, b.Name)
		}
	}
	require.NotNil(t, class, "the class optimum is computed on this 5-stage integer chain")
	assert.Equal(t, 110.0, class.Value)
	assert.NotEqual(t, class.Name, ro.BestBoundBy)
	assert.LessOrEqual(t, ro.BestBound, 99.0, "the best bound is a global one, below the 99 s schedule")
	if ro.BestAt > 99 {
		assert.False(t, ro.Optimal, "remat-offload cannot be optimal at %g s above a 99 s schedule of its model", ro.BestAt)
		assert.Equal(t, "bracketed", ro.Outcome)
	}
	checkScopes(t, "c123 920 B 1 B/s", c, in, rep)
}

// TestCertifyScopeProperty runs certify on random integer chains (4–7 stages, sizes up to 200 B,
// times up to 10 s, issue 29's scan in small) from below the smallest feasible budget to 80 % of
// the way to store-all, at 1 to 16 B/s, and checks what the certificates may claim
// (checkScopes): no lever "optimal" above another verified schedule of its model, no global
// bound above a verified schedule of its model, "infeasible" only where nothing fits.
func TestCertifyScopeProperty(t *testing.T) {
	n := 10
	if testing.Short() {
		n = 3
	}
	r := rand.New(rand.NewPCG(29, 2029))
	for k := range n {
		seed := uint64(100 + k)
		c := instances.Random(rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
			instances.RandomParams{Stages: 4 + k%4, MaxSize: 200, MaxTime: 10, Integer: true, WithABar: true, WithOverheads: true})
		lo, hi := verify.MinBudget(c), storeAllPeak(t, c)
		budgets := []int64{lo - 1, lo + (hi-lo)*2/5, lo + (hi-lo)*4/5}
		beta := float64(1 + r.IntN(16))
		for _, b := range budgets {
			in := Input{Chain: c, Budget: b, Bandwidth: beta, TimeLimit: 20 * time.Second}
			rep, err := Certify(context.Background(), in, DefaultLevers())
			require.NoError(t, err)
			checkScopes(t, fmt.Sprintf("seed %d, %d stages, %d B, %g B/s", seed, c.Len(), b, beta), c, in, rep)
		}
	}
}

func storeAllPeak(t *testing.T, c *instances.Chain) int64 {
	st, ok := leverremat.Lookup("store-all")
	require.True(t, ok)
	out, err := st.Run(c, instances.MaxBytes, leverremat.Options{})
	require.NoError(t, err)
	return out.Peak
}

// checkScopes checks rep's claims against the verified schedules of each lever's model. The
// remat lever's best sequence is a strict combined schedule without transfers (replayed here
// by verify/combined at the same budget and bandwidth), so it belongs to the remat-offload
// lever's model as well as its own.
func checkScopes(t *testing.T, what string, c *instances.Chain, in Input, rep *Report) {
	t.Helper()
	model := map[string][]Row{} // every verified row of each lever's model
	for name, lr := range rep.Levers {
		for _, r := range lr.Rows {
			if r.Feasible {
				require.True(t, r.Verified, "%s: %s/%s", what, name, r.Strategy)
				model[name] = append(model[name], r)
			} else {
				assert.False(t, r.Verified, "%s: %s/%s: a row that does not fit is not verified", what, name, r.Strategy)
			}
		}
	}
	if rm := rep.Levers["remat"]; rm != nil && rm.Best != "" {
		st, ok := leverremat.Lookup("floating")
		require.True(t, ok)
		out, err := st.Run(c, in.Budget, leverremat.Options{Exact: true}) // C_FL in bytes: the optimum
		require.NoError(t, err)
		require.True(t, out.Feasible, what)
		s := &schedule.Combined{}
		for _, op := range out.Sequence {
			s.Ops = append(s.Ops, schedule.CombinedOp{Op: op})
		}
		cr, err := combined.Check(c, in.Budget, in.Bandwidth, s)
		require.NoError(t, err, "%s: a remat sequence is a strict combined schedule", what)
		assert.InDelta(t, out.Makespan, cr.Makespan, 1e-9*out.Makespan, what)
		assert.LessOrEqual(t, out.Makespan, rm.BestAt*(1+1e-9), "%s: floating is the remat optimum", what)
		model["remat-offload"] = append(model["remat-offload"], Row{Strategy: "remat's floating", Feasible: true, Verified: true, Makespan: cr.Makespan})
	}
	for name, lr := range rep.Levers {
		if lr.Skipped != "" {
			continue
		}
		rows := model[name]
		if lr.Optimal {
			for _, r := range rows {
				assert.LessOrEqual(t, lr.BestAt, r.Makespan*(1+1e-9), "%s: %s \"optimal\" at %g s above the verified %s (%g s) of its model", what, name, lr.BestAt, r.Strategy, r.Makespan)
			}
		}
		if lr.Infeasible {
			assert.Empty(t, rows, "%s: %s \"none fits\" (%s) while a schedule of its model fits", what, name, lr.BestBoundBy)
		}
		for _, b := range lr.Bounds {
			if b.Scope != Global {
				continue
			}
			for _, r := range rows {
				assert.False(t, b.Infeasible, "%s: %s: %s says infeasible, %s fits", what, name, b.Name, r.Strategy)
				assert.LessOrEqual(t, b.Value, r.Makespan*(1+1e-9), "%s: %s: global bound %s = %g above the verified %s (%g s)", what, name, b.Name, b.Value, r.Strategy, r.Makespan)
			}
		}
		for _, r := range rows { // the bound of the ratios and the bracket bounds every schedule of the model
			assert.LessOrEqual(t, lr.BestBound, r.Makespan*(1+1e-9), "%s: %s: best bound %s = %g above the verified %s (%g s)", what, name, lr.BestBoundBy, lr.BestBound, r.Strategy, r.Makespan)
		}
		if lr.BestBound > 0 {
			for _, r := range lr.Rows {
				if r.Feasible {
					assert.InDelta(t, r.Makespan/lr.BestBound, r.Ratio, 1e-12, "%s: %s/%s", what, name, r.Strategy)
				}
			}
		}
	}
}

// TestOutcomeNotRunIsNotInfeasible (issue 29, wrong answer 3): a lever whose time share was
// spent before its strategies ran said "none fits" in certify's summary. On ResNet-50 at
// 1 GiB (its smallest feasible budget is 802 MiB) with a limit spent at once, remat is "not
// run (time)", not infeasible; act-offload's "infeasible" is proven by a bound.
func TestOutcomeNotRunIsNotInfeasible(t *testing.T) {
	c, err := zoo.ResNet(zoo.CNNConfig{Depth: 50, Image: 224, Batch: 32})
	require.NoError(t, err)
	in := Input{Chain: c, Budget: 1 << 30, Bandwidth: 12e9, TimeLimit: time.Nanosecond}
	rep, err := Certify(context.Background(), in, DefaultLevers())
	require.NoError(t, err)
	rm := rep.Levers["remat"]
	assert.Empty(t, rm.Best)
	assert.False(t, rm.Infeasible)
	assert.True(t, rm.Stopped)
	assert.Equal(t, "not run (time)", rm.Outcome)
	assert.Equal(t, "infeasible", rep.Levers["act-offload"].Outcome)
	lr := LeverReport{Rows: []Row{{Strategy: "greedy", Note: "no schedule of this strategy fits"}}}
	Summarize(&lr)
	assert.Equal(t, "none found", lr.Outcome, "finished, found nothing, proved nothing")
}
