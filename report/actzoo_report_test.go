//go:build highs

package report

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
	act "github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/instances/zoo"
	_ "github.com/memsched/memsched/milp/highs"
)

// zooNet is one network of the activation-offloading zoo table.
type zooNet struct {
	name  string
	chain func() (*instances.Chain, error)
}

// actZooNets are the networks of issue 21's table: ResNet-18…152, DenseNet-121…201 and
// Inception v3 (224×224, batch 32, fp32, V100), a 36-block GPT-2 (hidden 3072, 24 heads, seq 1024,
// batch 16) and BERT-large (hidden 1024, 16 heads, 24 blocks, seq 512, batch 32, bf16, H100),
// as docs/zoo.md builds them.
func actZooNets() []zooNet {
	var nets []zooNet
	for _, d := range []int{18, 34, 50, 101, 152} {
		d := d
		nets = append(nets, zooNet{fmt.Sprintf("resnet%d", d), func() (*instances.Chain, error) {
			return zoo.ResNet(zoo.CNNConfig{Depth: d, Image: 224, Batch: 32})
		}})
	}
	for _, d := range []int{121, 161, 169, 201} {
		d := d
		nets = append(nets, zooNet{fmt.Sprintf("densenet%d", d), func() (*instances.Chain, error) {
			return zoo.DenseNet(zoo.CNNConfig{Depth: d, Image: 224, Batch: 32})
		}})
	}
	nets = append(nets,
		zooNet{"inception_v3", func() (*instances.Chain, error) { return zoo.InceptionV3(zoo.CNNConfig{Image: 224, Batch: 32}) }},
		zooNet{"gpt2-36", func() (*instances.Chain, error) {
			return zoo.Transformer(zoo.TransformerConfig{Kind: "gpt2", Hidden: 3072, Heads: 24, Layers: 36, SeqLen: 1024, Batch: 16})
		}},
		zooNet{"bert-large", func() (*instances.Chain, error) {
			return zoo.Transformer(zoo.TransformerConfig{Kind: "bert", Hidden: 1024, Heads: 16, Layers: 24, SeqLen: 512, Batch: 32, DType: "bf16", Device: "h100"})
		}})
	return nets
}

// TestActZooTable is issue 21's zoo table: for every network of actZooNets at 10, 25, 50, 75
// and 90 % of the way from the smallest feasible memory to M_peak (001's model), β = 12 GB/s,
// certify's activation-offloading lever with the exact MILP (milp/actmilp) given
// MEMSCHED_ACTZOO_LIMIT seconds (default 60) — the best verified schedule over the best
// certified bound before (strategies and relaxations only) and after (with the MILP's bound and
// its guided row), the MILP's status and gap, and the time per point — and the relaxation MILP
// of the combined lever (milp/combinedlb, same limit) against Σu and against every verified
// schedule of the point (activation offloading, rematerialization, the combined lever). It
// asserts that no bound exceeds a verified schedule. "Before" leaves out the MILP and the event
// search (heuristics/actoffload.EventSearch), rows and bounds; MEMSCHED_ACTZOO_NOCOMBO=1 skips
// the combined lever. Runs with MEMSCHED_ACTZOO_TABLE=1 (about an
// hour on two shared cores, `make bench`); MEMSCHED_ACTZOO_NETS=a,b restricts the networks;
// writes the table to MEMSCHED_ACTZOO_TABLE_OUT when set.
func TestActZooTable(t *testing.T) {
	if os.Getenv("MEMSCHED_ACTZOO_TABLE") != "1" {
		t.Skip("set MEMSCHED_ACTZOO_TABLE=1: an hour of MILP solves on the zoo")
	}
	limit := 60 * time.Second
	if s := os.Getenv("MEMSCHED_ACTZOO_LIMIT"); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err)
		limit = time.Duration(v * float64(time.Second))
	}
	only := os.Getenv("MEMSCHED_ACTZOO_NETS")
	const beta = 12e9
	var out strings.Builder
	fmt.Fprintf(&out, "net\tops\tpct\tM_GPU_MiB\tbest_before\tbound_before\tby_before\tratio_before\tbest_after\tfrom\tbound_after\tby_after\tratio_after\tmilp_status\tmilp_gap\tmilp_s\tpoint_s\tsum_u\tcombo\tcombo_status\tcombo/sum_u\tmin_verified\tcombo/min_verified\n")
	for _, nt := range actZooNets() {
		if only != "" && !strings.Contains(","+only+",", ","+nt.name+",") {
			continue
		}
		c, err := nt.chain()
		require.NoError(t, err, nt.name)
		p0, err := act.FromChain(c, 1, beta)
		require.NoError(t, err)
		lo, hi := p0.MinMemory(), p0.Peak()
		for _, pct := range []int{10, 25, 50, 75, 90} {
			budget := lo + (hi-lo)*int64(pct)/100
			in := Input{Chain: c, Budget: budget, Bandwidth: beta, TimeLimit: limit, Solver: "highs"}
			start := time.Now()
			lr, err := ActOffload{}.Run(context.Background(), in)
			require.NoError(t, err, "%s %d %%", nt.name, pct)
			pointSecs := time.Since(start).Seconds()
			before := lr
			before.Rows, before.Bounds = nil, nil
			var milpB *Bound
			for _, r := range lr.Rows {
				if r.Strategy != "milp" && r.Strategy != "events" && r.Strategy != "local" {
					before.Rows = append(before.Rows, r)
				}
			}
			for i, b := range lr.Bounds {
				switch {
				case b.Kind == MILP:
					milpB = &lr.Bounds[i]
				case strings.HasPrefix(b.Name, "event search"):
				default:
					before.Bounds = append(before.Bounds, b)
				}
			}
			Summarize(&before)
			Summarize(&lr)
			// The other levers at the same budget, and the combined relaxation.
			minVerified := math.Inf(1)
			for _, r := range lr.Rows {
				if r.Feasible {
					minVerified = math.Min(minVerified, r.Makespan)
				}
			}
			rm, err := Remat{}.Run(context.Background(), Input{Chain: c, Budget: budget, Slots: 500})
			require.NoError(t, err)
			for _, r := range rm.Rows {
				if r.Feasible {
					minVerified = math.Min(minVerified, r.Makespan)
				}
			}
			var combo LeverReport
			if os.Getenv("MEMSCHED_ACTZOO_NOCOMBO") != "1" {
				combo, err = RematOffload{}.Run(context.Background(), Input{Chain: c, Budget: budget, Bandwidth: beta, TimeLimit: limit, Solver: "highs"})
				require.NoError(t, err)
			}
			comboV, comboSt := math.NaN(), "-"
			for _, b := range combo.Bounds {
				if b.Kind == MILP {
					comboV, comboSt = b.Value, b.Status
				}
			}
			for _, r := range combo.Rows {
				if r.Feasible {
					minVerified = math.Min(minVerified, r.Makespan)
				}
			}
			for _, b := range lr.Bounds {
				if !b.Infeasible {
					assert.LessOrEqual(t, b.Value, lr.BestAt*(1+1e-9), "%s %d %%: %s above the best act-offload row", nt.name, pct, b.Name)
				}
			}
			if !math.IsNaN(comboV) {
				assert.LessOrEqual(t, comboV, minVerified*(1+1e-9), "%s %d %%: the combined relaxation above a verified schedule", nt.name, pct)
			}
			ms := func(x float64) string {
				if math.IsInf(x, 0) || math.IsNaN(x) || x == 0 {
					return "-"
				}
				return fmt.Sprintf("%.2f", 1e3*x)
			}
			ratio := func(a, b float64) string {
				if a == 0 || b == 0 || math.IsInf(a, 0) || math.IsInf(b, 0) || math.IsNaN(a) || math.IsNaN(b) {
					return "-"
				}
				return fmt.Sprintf("%.4f", a/b)
			}
			mst, mgap, msec := "-", "-", "-"
			if milpB != nil {
				mst, msec = milpB.Status, fmt.Sprintf("%.1f", milpB.Seconds)
				if milpB.Gap != nil {
					mgap = fmt.Sprintf("%.4f", *milpB.Gap)
				}
			}
			for _, n := range lr.Notes {
				if strings.HasPrefix(n, "milp:") {
					mst = strings.ReplaceAll(n, "\t", " ")
				}
			}
			fmt.Fprintf(&out, "%s\t%d\t%d\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\n",
				nt.name, p0.L()+1, pct, float64(budget)/(1<<20),
				ms(before.BestAt), ms(before.BestBound), before.BestBoundBy, ratio(before.BestAt, before.BestBound),
				ms(lr.BestAt), lr.Best, ms(lr.BestBound), lr.BestBoundBy, ratio(lr.BestAt, lr.BestBound),
				mst, mgap, msec, pointSecs,
				ms(c.ComputeTime()), ms(comboV), comboSt, ratio(comboV, c.ComputeTime()), ms(minVerified), ratio(comboV, minVerified))
			t.Logf("%s %d %%: before %s, after %s (%s, %s s), combo/Σu %s", nt.name, pct,
				ratio(before.BestAt, before.BestBound), ratio(lr.BestAt, lr.BestBound), mst, msec, ratio(comboV, c.ComputeTime()))
		}
	}
	if path := os.Getenv("MEMSCHED_ACTZOO_TABLE_OUT"); path != "" {
		require.NoError(t, os.WriteFile(path, []byte(out.String()), 0o644))
	}
}
