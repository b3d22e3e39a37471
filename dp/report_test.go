package dp

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/verify"
)

// TestExactZooReport prints, for ResNet-50/101/152 (224×224, batch 32, fp32, V100) at 20
// budgets from the smallest feasible one to the store-all peak, the exact optimum of 004's
// model (C_FL in bytes, one table per budget, with its run time) inside the slotted bracket
// (C_FL with 500 slots, sizes rounded down ≤ exact ≤ sizes rounded up), and asserts the
// bracket. Issue 14's "must show"; it runs only with MEMSCHED_EXACT_REPORT=1 (about a minute).
func TestExactZooReport(t *testing.T) {
	if os.Getenv("MEMSCHED_EXACT_REPORT") != "1" {
		t.Skip("set MEMSCHED_EXACT_REPORT=1: about a minute of slotted C_FL")
	}
	for _, depth := range []int{50, 101, 152} {
		c, peak := zooResNet(t, depth)
		lo := verify.MinBudget(c)
		start := time.Now()
		whole, err := NewFloatingExact(c, peak, ExactOptions{})
		require.NoError(t, err)
		st := whole.Stats()
		fmt.Printf("ResNet-%d 224/32 (%d stages): exact C_FL frontier up to %.2f GiB in %v: %d points, %d breakpoints in %d frontiers (largest %d)\n",
			depth, c.Len(), float64(peak)/(1<<30), time.Since(start).Round(time.Millisecond), st.Top, st.Breakpoints, st.Frontiers, st.MaxBreakpoints)
		fmt.Printf("%10s  %12s  %9s  %12s  %12s  %9s  %s\n", "budget GiB", "exact ms", "time", "slot LB ms", "slot UB ms", "UB/exact", "exact C_MP ms")
		for k := 0; k < 20; k++ {
			b := lo + (peak-lo)*int64(k)/19
			start := time.Now()
			f, err := NewFloatingExact(c, b, ExactOptions{})
			require.NoError(t, err)
			ex, err := f.Solve(b)
			took := time.Since(start)
			require.NoError(t, err)
			require.True(t, ex.Feasible)
			fromWhole, err := whole.Solve(b)
			require.NoError(t, err)
			require.InDelta(t, ex.Makespan, fromWhole.Makespan, 1e-12, "one table serves every budget")
			lb, _, err := FloatingLowerBound(c, b, Options{Slots: 500})
			require.NoError(t, err)
			up, err := SolveFloating(c, b, Options{Slots: 500})
			require.NoError(t, err)
			require.LessOrEqual(t, lb, ex.Makespan+1e-12, "ResNet-%d at %d B", depth, b)
			ubs, ratio := "-", "-"
			if up.Feasible {
				require.LessOrEqual(t, ex.Makespan, up.Makespan+1e-12, "ResNet-%d at %d B", depth, b)
				ubs, ratio = fmt.Sprintf("%.4f", up.Makespan*1e3), fmt.Sprintf("%.5f", up.Makespan/ex.Makespan)
			}
			p, err := NewPersistentExact(c, b, ExactOptions{})
			require.NoError(t, err)
			mp, err := p.Solve(b)
			require.NoError(t, err)
			mps := "-"
			if mp.Feasible {
				require.GreaterOrEqual(t, mp.Makespan, ex.Makespan-1e-12)
				mps = fmt.Sprintf("%.4f", mp.Makespan*1e3)
			}
			fmt.Printf("%10.3f  %12.4f  %9v  %12.4f  %12s  %9s  %s\n", float64(b)/(1<<30), ex.Makespan*1e3, took.Round(time.Microsecond), lb*1e3, ubs, ratio, mps)
		}
	}
}
