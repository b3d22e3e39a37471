package dp

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	hact "github.com/memsched/memsched/heuristics/actoffload"
	act "github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/instances/zoo"
)

// TestActZooReport is the replica of 001 Fig. 5: ResNet 18–152, DenseNet 121–201 and
// Inception v3 from instances/zoo (224×224, batch 32, fp32 on the zoo's V100 profile, β =
// 12.2 GB/s as measured in 001 §6.1), memory from the smallest feasible to M_peak in 20 steps.
// For each point it prints Prop. 3, OPT_frac, the interruptible bound (S = 500, sizes rounded
// down), the best certified bound, and GREEDY, DYNPROG (S = 500) and VDNN makespans with
// their ratios to Prop. 3 (001's yardstick) and to the best bound. It asserts every bound ≤
// every validated schedule. Runs only with MEMSCHED_ACTZOO_REPORT=1; writes the table to
// MEMSCHED_ACTZOO_OUT when set.
func TestActZooReport(t *testing.T) {
	if os.Getenv("MEMSCHED_ACTZOO_REPORT") != "1" {
		t.Skip("set MEMSCHED_ACTZOO_REPORT=1: minutes of DYNPROG on the zoo")
	}
	type net struct {
		name string
		cfg  zoo.CNNConfig
	}
	var nets []net
	for _, d := range []int{18, 34, 50, 101, 152} {
		nets = append(nets, net{fmt.Sprintf("resnet%d", d), zoo.CNNConfig{Depth: d, Image: 224, Batch: 32}})
	}
	for _, d := range []int{121, 161, 169, 201} {
		nets = append(nets, net{fmt.Sprintf("densenet%d", d), zoo.CNNConfig{Depth: d, Image: 224, Batch: 32}})
	}
	nets = append(nets, net{"inception_v3", zoo.CNNConfig{Image: 224, Batch: 32}})
	var out strings.Builder
	fmt.Fprintf(&out, "net\tL\tmem%%\tM_GPU_MiB\tprop3_ms\tfrac_ms\tinterr_ms\tgreedy_ms\tdynprog_ms\tvdnn_ms\tgreedy/prop3\tdynprog/prop3\tvdnn/prop3\tgreedy/best\tdynprog/best\tvdnn/best\n")
	const beta = 12.2e9
	for _, nt := range nets {
		var err error
		var p *act.Problem
		switch {
		case strings.HasPrefix(nt.name, "resnet"):
			c, e := zoo.ResNet(nt.cfg)
			err = e
			if e == nil {
				p, err = act.FromChain(c, 1, beta)
			}
		case strings.HasPrefix(nt.name, "densenet"):
			c, e := zoo.DenseNet(nt.cfg)
			err = e
			if e == nil {
				p, err = act.FromChain(c, 1, beta)
			}
		default:
			c, e := zoo.InceptionV3(nt.cfg)
			err = e
			if e == nil {
				p, err = act.FromChain(c, 1, beta)
			}
		}
		require.NoError(t, err, nt.name)
		lo, hi := p.MinMemory(), p.Peak()
		worst := map[string][2]float64{}
		start := time.Now()
		for k := 0; k <= 20; k++ {
			p.MGPU = lo + (hi-lo)*int64(k)/20
			prop3, frac := p.Prop3(), p.Fractional()
			ib, err := InterruptibleBound(p, ActOptions{})
			require.NoError(t, err)
			best := math.Max(prop3, math.Max(frac, ib))
			g, err := hact.Greedy(p)
			require.NoError(t, err)
			d, err := DynProg(p, ActOptions{})
			require.NoError(t, err)
			v, err := hact.VDNN(p, hact.VDNNBoth)
			require.NoError(t, err)
			for name, r := range map[string]*hact.Result{"greedy": g, "dynprog": d, "vdnn": v} {
				if r.Feasible {
					assert.LessOrEqual(t, best, r.Makespan()*(1+1e-9), "%s %s at %d", nt.name, name, p.MGPU)
					w := worst[name]
					worst[name] = [2]float64{math.Max(w[0], r.Makespan()/prop3), math.Max(w[1], r.Makespan()/best)}
				}
			}
			ms := func(x float64) string {
				if math.IsInf(x, 1) {
					return "inf"
				}
				return fmt.Sprintf("%.2f", 1e3*x)
			}
			ratio := func(x, b float64) string {
				if math.IsInf(x, 1) || math.IsInf(b, 1) {
					return "-"
				}
				return fmt.Sprintf("%.3f", x/b)
			}
			fmt.Fprintf(&out, "%s\t%d\t%d\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", nt.name, p.L(), 5*k,
				float64(p.MGPU)/(1<<20), ms(prop3), ms(frac), ms(ib), ms(g.Makespan()), ms(d.Makespan()), ms(v.Makespan()),
				ratio(g.Makespan(), prop3), ratio(d.Makespan(), prop3), ratio(v.Makespan(), prop3),
				ratio(g.Makespan(), best), ratio(d.Makespan(), best), ratio(v.Makespan(), best))
		}
		t.Logf("%s (L = %d, %v): worst ratio to Prop. 3 / to the best bound: greedy %.3f / %.3f, dynprog %.3f / %.3f, vdnn %.3f / %.3f",
			nt.name, p.L(), time.Since(start).Round(time.Millisecond), worst["greedy"][0], worst["greedy"][1],
			worst["dynprog"][0], worst["dynprog"][1], worst["vdnn"][0], worst["vdnn"][1])
	}
	if path := os.Getenv("MEMSCHED_ACTZOO_OUT"); path != "" {
		require.NoError(t, os.WriteFile(path, []byte(out.String()), 0o644))
	}
}
