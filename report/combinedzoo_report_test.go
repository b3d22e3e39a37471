package report_test

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/heuristics/checkpoint"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/instances/zoo"
	leverro "github.com/memsched/memsched/lever/rematoffload"
	"github.com/memsched/memsched/verify"
)

// comboNet is one network of the claims' table.
type comboNet struct {
	name  string
	chain func() (*instances.Chain, error)
}

func comboNets() []comboNet {
	cnn := func(f func(zoo.CNNConfig) (*instances.Chain, error), cfg zoo.CNNConfig) func() (*instances.Chain, error) {
		return func() (*instances.Chain, error) { return f(cfg) }
	}
	tr := func(kind string, seq, batch int) func() (*instances.Chain, error) {
		return func() (*instances.Chain, error) {
			return zoo.Transformer(zoo.TransformerConfig{Kind: kind, Hidden: 768, Heads: 12, Layers: 12, SeqLen: seq, Batch: batch})
		}
	}
	return []comboNet{
		{"ResNet-50", cnn(zoo.ResNet, zoo.CNNConfig{Depth: 50, Image: 224, Batch: 32})},
		{"ResNet-101", cnn(zoo.ResNet, zoo.CNNConfig{Depth: 101, Image: 224, Batch: 32})},
		{"ResNet-152", cnn(zoo.ResNet, zoo.CNNConfig{Depth: 152, Image: 224, Batch: 32})},
		{"DenseNet-121", cnn(zoo.DenseNet, zoo.CNNConfig{Depth: 121, Image: 224, Batch: 32})},
		{"DenseNet-201", cnn(zoo.DenseNet, zoo.CNNConfig{Depth: 201, Image: 224, Batch: 32})},
		{"Inception v3", cnn(zoo.InceptionV3, zoo.CNNConfig{Image: 299, Batch: 32})},
		{"GPT-2 (12 blocks)", tr("gpt2", 1024, 8)},
		{"BERT (12 blocks)", tr("bert", 512, 32)},
	}
}

// comboRun is the combined DP (pofo) and C_MP at the same slots at one budget: fluid and
// strict makespans of the combined plan, C_MP's makespan.
type comboRun struct {
	feasible, rematFeasible bool
	fluid, strict, remat    float64
}

func comboAt(t *testing.T, c *instances.Chain, budget int64, beta float64, slots int) comboRun {
	var out comboRun
	st, _ := leverro.Lookup("pofo")
	r, err := st.Run(c, budget, beta, leverro.Options{Slots: slots})
	require.NoError(t, err)
	if r.Feasible {
		out.feasible, out.fluid, out.strict = true, r.ModelFluid.Makespan, r.Report.Makespan
	}
	m, err := dp.Combined(c, budget, beta, dp.CombinedOptions{Slots: slots, NoOffload: true})
	require.NoError(t, err)
	if m.Feasible {
		out.rematFeasible, out.remat = true, m.Fluid.Makespan
	}
	return out
}

// smallest returns the least budget in [lo, hi] where ok holds (ok monotone), to 1/512 of hi.
func smallest(lo, hi int64, ok func(int64) bool) (int64, bool) {
	if !ok(hi) {
		return 0, false
	}
	for hi-lo > max(1, hi/512) {
		mid := lo + (hi-lo)/2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, true
}

// TestCombinedZooClaims measures 003's abstract on the zoo (V100 profile, β = 12 and 6 GB/s):
// (i) the share of rematerialization's overhead over Σu that the combined optimum removes,
// 1 − (T_comb − Σu)/(T_remat − Σu), at eight budgets from the smallest where rematerialization
// alone fits to the store-all peak; (ii) the smallest activation memory, as a fraction of the
// store-all peak, at which the combined makespan stays ≤ 1.2 Σu, against rematerialization
// alone (C_MP, the class without offloading, at the same slots). T_comb is pofo's fluid value
// and the strict makespan of its schedule. The slots of each network are the largest power of
// two times 50 whose DP takes under 4 s at the middle budget (at most 1600). Runs with
// MEMSCHED_COMBINED_ZOO=1 (tens of minutes on a shared machine; MEMSCHED_COMBINED_ZOO_NETS
// picks networks by name); writes the table to MEMSCHED_COMBINED_ZOO_OUT when set (and the
// per-budget points beside it, -points.tsv).
func TestCombinedZooClaims(t *testing.T) {
	if os.Getenv("MEMSCHED_COMBINED_ZOO") != "1" {
		t.Skip("set MEMSCHED_COMBINED_ZOO=1: tens of minutes of the combined DP on the zoo")
	}
	var out strings.Builder
	fmt.Fprintf(&out, "net\tbeta_GBps\tslots\tstages\tsum_u_ms\tstore_all_MiB\tremat_min_MiB\tshare_fluid_mean\tshare_fluid_min\tshare_fluid_max\tshare_strict_mean\tshare_strict_min\tshare_strict_max\tmem_comb_fluid\tmem_comb_strict\tmem_remat\tfactor_comb_fluid\tfactor_comb_strict\tfactor_remat\tseconds\n")
	var points strings.Builder
	fmt.Fprintf(&points, "net\tbeta_GBps\tbudget_MiB\tbudget_frac\tsum_u_ms\tremat_ms\tcomb_fluid_ms\tcomb_strict_ms\tshare_fluid\tshare_strict\n")
	only := os.Getenv("MEMSCHED_COMBINED_ZOO_NETS") // a comma-separated subset, e.g. "ResNet-50"
	for _, nt := range comboNets() {
		if only != "" && !strings.Contains(","+only+",", ","+nt.name+",") {
			continue
		}
		c, err := nt.chain()
		require.NoError(t, err, nt.name)
		all, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
		require.NoError(t, err)
		peak, sumU := all.Peak, c.ComputeTime()
		lo := verify.MinBudget(c)
		for _, beta := range []float64{12e9, 6e9} {
			start := time.Now()
			// Calibrate the slots at the middle budget.
			slots := 50
			for slots < 1600 {
				t0 := time.Now()
				comboAt(t, c, lo+(peak-lo)/2, beta, 2*slots)
				if time.Since(t0) > 4*time.Second {
					break
				}
				slots *= 2
			}
			// (i) the share of the overhead removed.
			var sf, ss []float64
			for k := 0; k < 8; k++ {
				b := lo + (peak-lo)*int64(k)/8
				r := comboAt(t, c, b, beta, slots)
				if !r.rematFeasible || !r.feasible || r.remat <= sumU*(1+1e-9) {
					continue
				}
				over := r.remat - sumU
				f, s := 1-(r.fluid-sumU)/over, 1-(r.strict-sumU)/over
				sf, ss = append(sf, f), append(ss, s)
				fmt.Fprintf(&points, "%s\t%g\t%.1f\t%.4f\t%.3f\t%.3f\t%.3f\t%.3f\t%.4f\t%.4f\n", nt.name, beta/1e9, float64(b)/(1<<20),
					float64(b)/float64(peak), sumU*1e3, r.remat*1e3, r.fluid*1e3, r.strict*1e3, f, s)
			}
			// (ii) the smallest memory at ≤ 1.2 Σu.
			target := 1.2 * sumU
			cache := map[int64]comboRun{}
			at := func(b int64) comboRun {
				if r, ok := cache[b]; ok {
					return r
				}
				r := comboAt(t, c, b, beta, slots)
				cache[b] = r
				return r
			}
			mf, okf := smallest(0, peak, func(b int64) bool { r := at(b); return r.feasible && r.fluid <= target })
			ms, oks := smallest(0, peak, func(b int64) bool { r := at(b); return r.feasible && r.strict <= target })
			mr, okr := smallest(0, peak, func(b int64) bool { r := at(b); return r.rematFeasible && r.remat <= target })
			frac := func(b int64, ok bool) string {
				if !ok {
					return "-"
				}
				return fmt.Sprintf("%.4f", float64(b)/float64(peak))
			}
			factor := func(b int64, ok bool) string {
				if !ok {
					return "-"
				}
				return fmt.Sprintf("%.2f", float64(peak)/float64(b))
			}
			mean, lo2, hi2 := stats(sf)
			smean, slo, shi := stats(ss)
			fmt.Fprintf(&out, "%s\t%g\t%d\t%d\t%.2f\t%.1f\t%.1f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%s\t%s\t%s\t%s\t%s\t%s\t%.0f\n",
				nt.name, beta/1e9, slots, c.Len(), sumU*1e3, float64(peak)/(1<<20), float64(lo)/(1<<20), mean, lo2, hi2, smean, slo, shi,
				frac(mf, okf), frac(ms, oks), frac(mr, okr), factor(mf, okf), factor(ms, oks), factor(mr, okr), time.Since(start).Seconds())
			t.Logf("%s β = %g GB/s: %d slots, share removed %.3f (strict %.3f), memory at 1.2Σu %s (strict %s) vs remat %s, %.0f s",
				nt.name, beta/1e9, slots, mean, smean, frac(mf, okf), frac(ms, oks), frac(mr, okr), time.Since(start).Seconds())
		}
	}
	fmt.Print(out.String())
	if path := os.Getenv("MEMSCHED_COMBINED_ZOO_OUT"); path != "" {
		require.NoError(t, os.WriteFile(path, []byte(out.String()), 0o644))
		require.NoError(t, os.WriteFile(strings.TrimSuffix(path, ".tsv")+"-points.tsv", []byte(points.String()), 0o644))
	}
}

func stats(v []float64) (mean, lo, hi float64) {
	if len(v) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range v {
		mean += x
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return mean / float64(len(v)), lo, hi
}
