//go:build highs

package weightlb_test

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/instances/offload"
	"github.com/memsched/memsched/instances/reduce"
	"github.com/memsched/memsched/instances/zoo"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/highs"
	"github.com/memsched/memsched/milp/weightlb"
)

// scalingCorpus is what issue 10 names: zoo chains, byte-scale random instances and 002 Thm 1's
// 3-partition instances.
func scalingCorpus(t *testing.T) map[string]*offload.Problem {
	out := map[string]*offload.Problem{}
	gpt, err := zoo.Transformer(zoo.TransformerConfig{Kind: "gpt2", Hidden: 3072, Heads: 24, Layers: 12, SeqLen: 1024, Batch: 16, DType: "fp16"})
	require.NoError(t, err)
	out["gpt2-12 at 3 GiB"], err = offload.FromChain(gpt, 3<<30, 12e9)
	require.NoError(t, err)
	bert, err := zoo.Transformer(zoo.TransformerConfig{Kind: "bert", Hidden: 3072, Heads: 24, Layers: 12, SeqLen: 512, Batch: 32, DType: "fp16"})
	require.NoError(t, err)
	out["bert-12 at 4 GiB"], err = offload.FromChain(bert, 4<<30, 12e9)
	require.NoError(t, err)
	for name, build := range map[string]func(zoo.CNNConfig) (*instances.Chain, error){
		"resnet50": zoo.ResNet, "densenet121": zoo.DenseNet, "inception_v3": zoo.InceptionV3, "vgg16": zoo.VGG,
	} {
		cfg := zoo.CNNConfig{Depth: 50, Image: 224, Batch: 32}
		switch name {
		case "densenet121":
			cfg.Depth = 121
		case "inception_v3":
			cfg.Image = 299
		case "vgg16":
			cfg.Depth = 16
		}
		c, err := build(cfg)
		require.NoError(t, err, name)
		mem := int64(2 << 30)
		if name == "vgg16" {
			mem = 8 << 30 // its classifier's weights: an operation alone needs more than 2 GiB
		}
		out[name], err = offload.FromChain(c, mem, 12e9)
		require.NoError(t, err, name)
	}
	r := rand.New(rand.NewPCG(3, 3))
	for k := 0; k < 5; k++ {
		out["bytes "+string(rune('a'+k))] = propertyInstance(r, k)
	}
	p, _, err := reduce.WeightsThreePartition([]int64{4, 5, 6, 4, 5, 6}, [][]int{{0, 1, 2}, {3, 4, 5}})
	require.NoError(t, err)
	out["3-partition m=2"] = p
	return out
}

// TestNoScalingWarnings: HiGHS prints no "excessively small/large" warning on any model of the
// corpus: units chosen from the data keep every coefficient, bound and side near 1.
func TestNoScalingWarnings(t *testing.T) {
	s, err := highs.New()
	require.NoError(t, err)
	for name, p := range scalingCorpus(t) {
		m, _, err := weightlb.Build(p)
		require.NoError(t, err)
		var log bytes.Buffer
		res, err := milp.Solve(context.Background(), s, m, milp.Params{Log: &log, TimeLimit: 20e9})
		require.NoError(t, err, name)
		require.NotEqual(t, milp.Infeasible, res.Status, name)
		require.NotEmpty(t, log.String(), name)
		assert.NotContains(t, log.String(), "xcessively", "%s:\n%s", name, log.String())
	}
}

// TestSafeBoundOnZooRelaxations: the safe LP bound of the MILP's relaxation is within 1e-9
// relative of HiGHS's LP value on well-scaled zoo models, and never above the MILP's bound.
func TestSafeBoundOnZooRelaxations(t *testing.T) {
	s, err := highs.New()
	require.NoError(t, err)
	for name, p := range scalingCorpus(t) {
		m, _, err := weightlb.Build(p)
		require.NoError(t, err)
		lp, err := milp.LPBound(context.Background(), s, m, milp.Params{})
		require.NoError(t, err, name)
		require.Equal(t, milp.Optimal, lp.Status, name)
		require.False(t, math.IsInf(lp.Bound, 0), name)
		assert.InEpsilon(t, lp.SolverValue, lp.Bound, 1e-9, name)
		assert.LessOrEqual(t, lp.Bound, lp.SolverValue, name)
		res, err := milp.Solve(context.Background(), s, m, milp.Params{TimeLimit: 20e9})
		require.NoError(t, err, name)
		assert.LessOrEqual(t, lp.Bound, res.Bound*(1+1e-9), name)
		t.Logf("%s: safe LP bound %.12g, HiGHS LP %.12g, MILP bound %.12g (model units)", name, lp.Bound, lp.SolverValue, res.Bound)
	}
}
