//go:build highs

package pipemilp

import (
	"bytes"
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
	pl "github.com/memsched/memsched/instances/pipeline"
	"github.com/memsched/memsched/instances/zoo"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/model"
)

// TestNoScalingWarnings: HiGHS prints no "excessively small/large" warning on either model of
// zoo chains (GPT-2 with 12 blocks, ResNet-50; 4 GPUs, m = 8, 25 GB/s; weights counted) nor of
// SPEC §7's byte-scale chain, and says none of them is infeasible: the units chosen from the
// data keep every coefficient, bound and right-hand side far from the tolerances (SPEC §5).
func TestNoScalingWarnings(t *testing.T) {
	s := highs(t)[0]
	gpt, err := zoo.Transformer(zoo.TransformerConfig{Kind: "gpt2", Hidden: 768, Heads: 12, Layers: 12, SeqLen: 1024, Batch: 4, DType: "fp16"})
	require.NoError(t, err)
	rn, err := zoo.ResNet(zoo.CNNConfig{Depth: 50, Image: 224, Batch: 32})
	require.NoError(t, err)
	corpus := map[string]*pl.Problem{}
	for name, c := range map[string]*instances.Chain{"gpt2": gpt, "resnet50": rn} {
		var need int64
		for l := 1; l <= c.Len(); l++ {
			need += c.Stage(l).W + 8*c.Stage(l).ABar
		}
		corpus[name] = &pl.Problem{Chain: c, GPUs: 4, Memory: need / 3, Bandwidth: 25e9, MicroBatches: 8}
	}
	corpus["spec"] = specProblem(2, 1<<20, 1)
	for name, p := range corpus {
		for _, build := range []func() (*model.Model, error){
			func() (*model.Model, error) { f, err := BuildContiguous(p, ContiguousOptions{}); return f.Model, err },
			func() (*model.Model, error) {
				f, err := BuildContiguous(p, ContiguousOptions{Remat: true})
				return f.Model, err
			},
			func() (*model.Model, error) {
				a, err := BuildAllocation(p, AllocationOptions{Objective: Makespan, Remat: true})
				return a.Model, err
			},
			func() (*model.Model, error) {
				a, err := BuildAllocation(p, AllocationOptions{Objective: Period})
				return a.Model, err
			},
		} {
			m, err := build()
			require.NoError(t, err, name)
			var log bytes.Buffer
			res, err := milp.Solve(context.Background(), s, m, milp.Params{Log: &log, TimeLimit: time.Second})
			require.NoError(t, err, name)
			require.NotEqual(t, milp.Infeasible, res.Status, "%s %s", name, m.Name)
			require.NotEmpty(t, log.String(), name)
			assert.NotContains(t, log.String(), "xcessively", "%s %s:\n%s", name, m.Name, log.String())
			assert.False(t, math.IsNaN(res.Bound), "%s %s", name, m.Name)
		}
	}
}
