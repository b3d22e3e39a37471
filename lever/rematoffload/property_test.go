package rematoffload_test

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/dp"
	hact "github.com/memsched/memsched/heuristics/actoffload"
	heur "github.com/memsched/memsched/heuristics/rematoffload"
	"github.com/memsched/memsched/instances"
	act "github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/lever/rematoffload"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
	"github.com/memsched/memsched/verify/combined"
	"github.com/memsched/memsched/verify/timed"
)

func describe(c *instances.Chain) string {
	out := fmt.Sprintf("a0=%d δ0=%d", c.A0, c.Delta0)
	for l, st := range c.Stages {
		out += fmt.Sprintf("\n  %d: uf=%g ub=%g a=%d ā=%d δ=%d of=%d ob=%d", l+1, st.UF, st.UB, st.A, st.ABar, st.Delta, st.OF, st.OB)
	}
	return out
}

func ratOf(x float64) *big.Rat { return new(big.Rat).SetFloat64(x) }

// TestStrictSchedules: on 500 random tiny chains (at byte scale and the same chains at GiB
// scale), between the smallest budget the class fits in and the store-all peak:
//   - every strategy's schedule validates under strict timing (verify/combined.Check), its
//     strict makespan is at least its fluid one without the turn's idle (FluidFreeTurn), and
//     no strategy's fluid makespan is below the exact DP's optimum; each strategy's strict
//     makespan is counted against its fluid one (above, and below: the turn); pofo's strict
//     makespan is never above C_MP's (exact);
//   - with recomputation disabled, the DP's plan re-timed is a schedule of 001 that
//     verify/timed accepts with the same makespan, and 001's exact search
//     (heuristics/actoffload.Exact, optimal among no-wait schedules) is never above it; the
//     fluid optimum without recomputation (F) against 001's optimum (A) is F < A (the fluid
//     model relaxes whole-tensor transfers; A is at most a valid schedule of the class, so
//     A ≤ its strict makespan) or F = A or F > A, and every F > A is the turn: without the
//     turn's idle (FreeTurn) the class's optimum is at most A;
//   - GiB scale gives the same makespans, fluid and strict.
func TestStrictSchedules(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 2021))
	chains := 500
	if testing.Short() {
		chains = 100
	}
	var feasible, fBelowA, fEqualA, fAboveA, noRe int
	var heurs [2]int // strategies at the optimum
	strictAbove, strictBelow := map[string]int{}, map[string]int{}
	gap := map[string]float64{} // largest strict/fluid − 1
	for k := 0; k < chains; k++ {
		c := instances.RandomTiny(r, k)
		peak := storeAll(t, c)
		beta := float64(1 + r.IntN(4))
		lo := minBudget(t, c, beta, peak)
		budget := lo + r.Int64N(peak-lo+1)
		name := fmt.Sprintf("chain %d (M = %d, β = %g)\n%s", k, budget, beta, describe(c))
		var opt *big.Rat
		for i, st := range rematoffload.Strategies {
			if st.Direct() {
				continue // no plan of the class: TestSoundness judges it
			}
			for _, f := range []int64{1, 1 << 30} {
				cc, b, bb := c, budget, beta
				if f > 1 {
					cc, b, bb = c.Scaled(f), budget*f, beta*float64(f)
				}
				out, err := st.Run(cc, b, bb, rematoffload.Options{Exact: true, Slots: 64})
				require.NoError(t, err, "%s %s ×%d", name, st.Name, f)
				if st.Name == "pofo" {
					require.True(t, out.Feasible, name)
				}
				if !out.Feasible {
					continue
				}
				relaxed, err := combined.FluidFreeTurn(cc, b, bb, out.Plan)
				require.NoError(t, err)
				require.GreaterOrEqual(t, out.Report.Exact.Cmp(relaxed.Exact), 0, name)
				if f > 1 {
					continue
				}
				switch out.Report.Exact.Cmp(out.Fluid.Exact) {
				case -1:
					strictBelow[st.Name]++
				case 1:
					strictAbove[st.Name]++
					g, _ := new(big.Rat).Quo(out.Report.Exact, out.Fluid.Exact).Float64()
					gap[st.Name] = max(gap[st.Name], g-1)
				}
				if st.Name == "pofo" {
					feasible++
					opt = out.ModelFluid.Exact // the DP's own plan, before polishing
					// Never slower than rematerialization alone (C_MP in exact mode).
					pe, err := dp.NewPersistentExact(c, budget, dp.ExactOptions{})
					require.NoError(t, err)
					if cm, err := pe.Solve(budget); err == nil && cm.Feasible {
						require.LessOrEqual(t, out.Report.Makespan, cm.Makespan*(1+1e-12), "%s: pofo's strict schedule slower than C_MP", name)
					}
				}
				require.NotNil(t, opt)
				require.GreaterOrEqual(t, out.ModelFluid.Exact.Cmp(opt), 0, "%s: %s below the optimum", name, st.Name)
				require.GreaterOrEqual(t, out.Fluid.Exact.Cmp(opt), 0, "%s: %s's polished plan below the optimum", name, st.Name)
				if i > 0 && out.ModelFluid.Exact.Cmp(opt) == 0 {
					heurs[i-1]++
				}
			}
		}
		// Recomputation disabled against 001.
		nr, err := dp.Combined(c, budget, beta, dp.CombinedOptions{Exact: true, NoRecompute: true})
		require.NoError(t, err)
		p, err := act.FromChain(c, budget, beta)
		require.NoError(t, err)
		ax, st, err := hact.Exact(p, hact.ExactOptions{})
		require.NoError(t, err)
		require.Equal(t, hact.Optimal, st)
		if !nr.Feasible {
			continue
		}
		noRe++
		s, rep, err := heur.Retime(c, budget, beta, nr.Plan)
		require.NoError(t, err, name)
		ts, err := heur.ToTimed(s, rep)
		require.NoError(t, err)
		trep, err := timed.Check(p, ts)
		require.NoError(t, err, "%s: %v", name, nr.Plan)
		require.InDelta(t, rep.Makespan, trep.Makespan, 1e-9, name)
		require.True(t, ax.Feasible, "%s: 001 has no schedule but the class does", name)
		require.LessOrEqual(t, ax.Report.Makespan, rep.Makespan+1e-9, "%s: 001's optimum above a valid schedule", name)
		// 001's schedulers work in float64: equal within 1e-9.
		F, A := nr.Fluid.Makespan, ax.Report.Makespan
		switch {
		case F < A*(1-1e-9):
			fBelowA++
		case F <= A*(1+1e-9):
			fEqualA++
		default:
			// The class's fluid timing idles at the turn; 001's schedules need not. Without
			// that idle the class's optimum is at most 001's: every such case is explained.
			fAboveA++
			fr, err := dp.Combined(c, budget, beta, dp.CombinedOptions{Exact: true, NoRecompute: true, FreeTurn: true})
			require.NoError(t, err)
			require.LessOrEqual(t, fr.Fluid.Makespan, A*(1+1e-9), "%s: without recomputation the fluid optimum %g (%g without the turn's idle) is above 001's %g\nplan %v\n001: %v",
				name, F, fr.Fluid.Makespan, A, nr.Plan, ax.Schedule)
		}
	}
	for _, st := range rematoffload.Strategies {
		if st.Direct() {
			continue
		}
		t.Logf("%s: strict makespan above the fluid one on %d chains (by at most %.1f%%), below it on %d (the turn)",
			st.Name, strictAbove[st.Name], 100*gap[st.Name], strictBelow[st.Name])
	}
	t.Logf("%d chains: remat-then-offload at the optimum on %d, offload-then-remat on %d", feasible, heurs[0], heurs[1])
	t.Logf("without recomputation (%d feasible): fluid optimum below 001's optimum on %d, equal on %d, above on %d (each because of the turn's idle)", noRe, fBelowA, fEqualA, fAboveA)
	assert.Equal(t, chains, feasible)
}

func storeAll(t *testing.T, c *instances.Chain) int64 {
	s := verify.InitialState(c)
	var peak int64
	for l := 1; l <= c.Len(); l++ {
		m, _, err := s.Apply(c, fallOp(l))
		require.NoError(t, err)
		peak = max(peak, m)
	}
	for l := c.Len(); l >= 1; l-- {
		m, _, err := s.Apply(c, bOp(l))
		require.NoError(t, err)
		peak = max(peak, m)
	}
	return peak
}

// minBudget is the smallest budget at which the class has a plan (feasibility is monotone).
func minBudget(t *testing.T, c *instances.Chain, beta float64, peak int64) int64 {
	lo, hi := int64(0), peak
	for lo < hi {
		mid := (lo + hi) / 2
		r, err := dp.Combined(c, mid, beta, dp.CombinedOptions{Exact: true, Inner: dp.InnerRestricted})
		require.NoError(t, err)
		if r.Feasible {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

func fallOp(l int) schedule.Op { return schedule.Op{Kind: schedule.Fall, Stage: l} }
func bOp(l int) schedule.Op    { return schedule.Op{Kind: schedule.B, Stage: l} }
