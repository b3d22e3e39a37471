package zoo

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/heuristics/checkpoint"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/verify"
)

func params(c *instances.Chain, bytes int64) int64 {
	var w int64
	for _, s := range c.Stages {
		w += s.W
	}
	return w / bytes
}

// TestParameterCounts: the shapes are exact when the parameter count equals torchvision's
// (conv and linear weights, linear biases, batch-norm weight and bias; no auxiliary classifier).
func TestParameterCounts(t *testing.T) {
	cases := []struct {
		name  string
		build func() (*instances.Chain, error)
		want  int64
	}{
		{"resnet18", func() (*instances.Chain, error) { return ResNet(CNNConfig{Depth: 18, Image: 224, Batch: 1}) }, 11_689_512},
		{"resnet34", func() (*instances.Chain, error) { return ResNet(CNNConfig{Depth: 34, Image: 224, Batch: 1}) }, 21_797_672},
		{"resnet50", func() (*instances.Chain, error) { return ResNet(CNNConfig{Depth: 50, Image: 224, Batch: 1}) }, 25_557_032},
		{"resnet101", func() (*instances.Chain, error) { return ResNet(CNNConfig{Depth: 101, Image: 224, Batch: 1}) }, 44_549_160},
		{"resnet152", func() (*instances.Chain, error) { return ResNet(CNNConfig{Depth: 152, Image: 224, Batch: 1}) }, 60_192_808},
		{"vgg16", func() (*instances.Chain, error) { return VGG(CNNConfig{Depth: 16, Image: 224, Batch: 1}) }, 138_357_544},
		{"vgg19", func() (*instances.Chain, error) { return VGG(CNNConfig{Depth: 19, Image: 224, Batch: 1}) }, 143_667_240},
		{"densenet121", func() (*instances.Chain, error) { return DenseNet(CNNConfig{Depth: 121, Image: 224, Batch: 1}) }, 7_978_856},
		{"densenet169", func() (*instances.Chain, error) { return DenseNet(CNNConfig{Depth: 169, Image: 224, Batch: 1}) }, 14_149_480},
		{"densenet201", func() (*instances.Chain, error) { return DenseNet(CNNConfig{Depth: 201, Image: 224, Batch: 1}) }, 20_013_928},
		{"densenet161", func() (*instances.Chain, error) { return DenseNet(CNNConfig{Depth: 161, Image: 224, Batch: 1}) }, 28_681_000},
		{"inception_v3", func() (*instances.Chain, error) { return InceptionV3(CNNConfig{Batch: 1}) }, 23_834_568},
		{"gpt2-small", func() (*instances.Chain, error) {
			return Transformer(TransformerConfig{Kind: "gpt2", Hidden: 768, Heads: 12, Layers: 12, SeqLen: 1024, Batch: 1})
		}, 124_439_808},
	}
	for _, c := range cases {
		ch, err := c.build()
		require.NoError(t, err, c.name)
		assert.Equal(t, c.want, params(ch, 4), c.name)
	}
}

// TestResNet50Sizes checks ResNet-50 at 224×224, batch 32, fp32 against hand computation.
func TestResNet50Sizes(t *testing.T) {
	c, err := ResNet(CNNConfig{Depth: 50, Image: 224, Batch: 32})
	require.NoError(t, err)
	require.Equal(t, 1+16+1+1, c.Len(), "stem, 16 blocks, head, loss")
	const b, f = 32, 4
	assert.Equal(t, int64(b*3*224*224*f), c.A0)
	stem := c.Stage(1)
	assert.Equal(t, int64(b*64*56*56*f), stem.A, "stem output 64×56×56")
	// ā(stem): BN input and ReLU output (64×112×112 each), max-pool indices (int64, 64×56×56),
	// output.
	assert.Equal(t, int64(2*b*64*112*112*f+b*64*56*56*8+b*64*56*56*f), stem.ABar)
	outs := []struct {
		stage int
		c, hw int64
	}{{2, 256, 56}, {4, 256, 56}, {5, 512, 28}, {8, 512, 28}, {9, 1024, 14}, {14, 1024, 14}, {15, 2048, 7}, {17, 2048, 7}}
	for _, o := range outs {
		assert.Equal(t, b*o.c*o.hw*o.hw*f, c.Stage(o.stage).A, "stage %d", o.stage)
	}
	// Block layer1.1 (identity shortcut, 256→64→64→256 at 56×56): saved conv1 input is the block
	// input (excluded); bn1 in, relu1 out, conv2 in (= relu1 out), bn2 in, relu2 out, conv3 in
	// (= relu2 out), bn3 in, final ReLU out (= output).
	n64 := int64(b * 64 * 56 * 56 * f)
	n256 := int64(b * 256 * 56 * 56 * f)
	assert.Equal(t, 2*n64+2*n64+n256+n256, c.Stage(3).ABar)
	// Forward FLOPs ≈ 4.09 GMAC per image (He et al.: 3.8 G "FLOPs" counted as multiply-adds).
	flops := 0.0
	dev := Devices["v100"]
	for _, s := range c.Stages {
		flops += s.UF * dev.PeakFP32 * dev.Efficiency
	}
	assert.InDelta(t, 4.09e9*2, flops/b, 0.02*8.18e9)
}

// TestGPT2Block: one GPT-2 block against Korthikanti et al.'s 34·sbh + 5·a·s²·b bytes (fp16).
func TestGPT2Block(t *testing.T) {
	const s, b, h, a = 1024, 8, 768, 12
	c, err := Transformer(TransformerConfig{Kind: "gpt2", Hidden: h, Heads: a, Layers: 2, SeqLen: s, Batch: b, DType: "fp16"})
	require.NoError(t, err)
	blk := c.Stage(2)
	want := float64(34*s*b*h + 5*a*s*s*b)
	assert.InEpsilon(t, want, float64(blk.ABar), 0.01)
	assert.Equal(t, int64(2*s*b*h), blk.A)
	assert.Equal(t, int64(2*(12*h*h+13*h)), blk.W)
	flops := blk.UF * Devices["v100"].PeakHalf * Devices["v100"].Efficiency
	assert.InEpsilon(t, float64(24*b*s*h*h+4*b*s*s*h), flops, 1e-9)
}

// TestResNet101Peak: 004's introduction says ResNet-101 at 224×224, batch 32 needs "around
// 5GB" of activations; memsched's store-all peak is of that order (docs/zoo.md explains the
// difference).
func TestResNet101Peak(t *testing.T) {
	c, err := ResNet(CNNConfig{Depth: 101, Image: 224, Batch: 32})
	require.NoError(t, err)
	res, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
	require.NoError(t, err)
	gb := float64(res.Peak) / 1e9
	t.Logf("ResNet-101 224/32 fp32 store-all peak: %.2f GB (%.2f GiB)", gb, float64(res.Peak)/(1<<30))
	assert.Greater(t, gb, 2.5)
	assert.Less(t, gb, 12.0)
}

// TestAllFamiliesValidateAndRoundTrip: every generator gives a chain that validates, loads back
// losslessly, and whose store-all sequence replays.
func TestAllFamiliesValidateAndRoundTrip(t *testing.T) {
	var chains []*instances.Chain
	add := func(c *instances.Chain, err error) {
		require.NoError(t, err)
		chains = append(chains, c)
	}
	for _, d := range []int{18, 34, 50, 101, 152, 200} {
		add(ResNet(CNNConfig{Depth: d, Image: 224, Batch: 2, Device: "h100"}))
	}
	add(ResNet(CNNConfig{Depth: 1001, Image: 32, Batch: 8}))
	for _, d := range []int{121, 161, 169, 201} {
		add(DenseNet(CNNConfig{Depth: d, Image: 224, Batch: 2, DType: "fp16"}))
	}
	add(InceptionV3(CNNConfig{Batch: 2}))
	add(VGG(CNNConfig{Depth: 16, Image: 224, Batch: 2}))
	add(VGG(CNNConfig{Depth: 19, Image: 224, Batch: 2}))
	add(Transformer(TransformerConfig{Kind: "gpt2", Hidden: 3072, Heads: 24, Layers: 36, SeqLen: 1024, Batch: 16}))
	add(Transformer(TransformerConfig{Kind: "bert", Hidden: 1024, Heads: 16, Layers: 24, SeqLen: 512, Batch: 32, DType: "bf16", Device: "h100"}))
	for _, c := range chains {
		require.NoError(t, c.Validate(), c.Name)
		var buf bytes.Buffer
		require.NoError(t, instances.WriteChain(&buf, c))
		back, err := instances.ReadChain(&buf, c.Name)
		require.NoError(t, err)
		assert.Equal(t, c, back, c.Name)
		_, err = verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
		assert.NoError(t, err, c.Name)
	}
	r1001, _ := ResNet(CNNConfig{Depth: 1001, Image: 32, Batch: 8})
	assert.Equal(t, 1+333+1+1+1, r1001.Len(), "ResNet-1001: stem, 333 blocks, final bn, head, loss (004: 339 stages)")
}

func TestBadConfigs(t *testing.T) {
	_, err := ResNet(CNNConfig{Depth: 42, Image: 224, Batch: 1})
	assert.ErrorContains(t, err, "depth 42")
	_, err = ResNet(CNNConfig{Depth: 50, Image: 224, Batch: 0})
	assert.Error(t, err)
	_, err = ResNet(CNNConfig{Depth: 50, Image: 224, Batch: 1, Device: "tpu"})
	assert.ErrorContains(t, err, `unknown device "tpu"`)
	_, err = Transformer(TransformerConfig{Kind: "gpt2", Hidden: 100, Heads: 3, Layers: 1, SeqLen: 8, Batch: 1})
	assert.ErrorContains(t, err, "multiple")
	_, err = Transformer(TransformerConfig{Kind: "t5", Hidden: 96, Heads: 3, Layers: 1, SeqLen: 8, Batch: 1})
	assert.Error(t, err)
}

// TestAgainstMeasuredResNet18 compares the analytic ResNet-18 (batch 8, 224×224, fp32) with a
// profile measured by tools/profile_torch.py (torch 2.15, CPU), shipped in testdata: outputs
// and weights equal, ā within 1% on every stage (PyTorch also saves batch-norm statistics, per
// channel, which the analytic model leaves out).
func TestAgainstMeasuredResNet18(t *testing.T) {
	measured, err := instances.LoadChain("../testdata/profiles/resnet18-b8-cpu-torch2.15.json")
	require.NoError(t, err)
	analytic, err := ResNet(CNNConfig{Depth: 18, Image: 224, Batch: 8})
	require.NoError(t, err)
	require.Equal(t, analytic.Len(), measured.Len())
	assert.Equal(t, analytic.A0, measured.A0)
	for l := 1; l <= analytic.Len(); l++ {
		a, m := analytic.Stage(l), measured.Stage(l)
		assert.Equal(t, a.A, m.A, "stage %d a", l)
		assert.Equal(t, a.W, m.W, "stage %d w", l)
		assert.InEpsilon(t, float64(a.ABar), float64(m.ABar), 0.01, "stage %d ā", l)
	}
}
