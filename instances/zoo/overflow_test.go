package zoo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
)

// TestSizesDoNotWrap: parameters whose sizes do not fit instances.MaxBytes are refused with
// the parameters named; before issue 18, gpt2 --batch 1e9 --seq 1e9 wrapped s·b·h to a
// negative size and ResNet-50 at batch 10^12 to a wrong positive one.
func TestSizesDoNotWrap(t *testing.T) {
	_, err := Transformer(TransformerConfig{Kind: "gpt2", Hidden: 768, Heads: 12, Layers: 12, SeqLen: 1e9, Batch: 1e9})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "seq 1000000000, batch 1000000000")
	assert.Contains(t, err.Error(), "larger than 2^60 B")

	// Every tensor fits, the total does not.
	_, err = Transformer(TransformerConfig{Kind: "gpt2", Hidden: 768, Heads: 12, Layers: 12, SeqLen: 1e5, Batch: 1e5})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the chain's sizes total 1.31e+18 B")

	_, err = Transformer(TransformerConfig{Kind: "bert", Hidden: 4e9, Heads: 1, Layers: 1, SeqLen: 1, Batch: 1})
	assert.ErrorContains(t, err, "hidden 4000000000", "weights 12h² overflow")

	_, err = Transformer(TransformerConfig{Kind: "gpt2", Hidden: 768, Heads: 12, Layers: MaxLayers + 1, SeqLen: 8, Batch: 1})
	assert.ErrorContains(t, err, "at most 100000 blocks")

	_, err = ResNet(CNNConfig{Depth: 50, Image: 224, Batch: 1e12})
	assert.ErrorContains(t, err, "resnet50 image 224, batch 1000000000000")
	_, err = VGG(CNNConfig{Depth: 16, Image: 1e8, Batch: 32})
	assert.ErrorContains(t, err, "vgg16 image 100000000")
	_, err = DenseNet(CNNConfig{Depth: 121, Image: 224, Batch: 1 << 40})
	assert.ErrorContains(t, err, "larger than 2^60 B")
	_, err = InceptionV3(CNNConfig{Image: 299, Batch: 32, Classes: -3})
	assert.ErrorContains(t, err, "classes -3 must be positive")

	// The largest batch whose ResNet-50 fits is accepted, and its sizes are exact multiples of
	// batch 1's (no saturation below the limit).
	one, err := ResNet(CNNConfig{Depth: 50, Image: 224, Batch: 1})
	require.NoError(t, err)
	total, ok := one.TotalSize()
	require.True(t, ok)
	batch := instances.MaxBytes / total
	big, err := ResNet(CNNConfig{Depth: 50, Image: 224, Batch: int(batch)})
	require.NoError(t, err)
	for i := range one.Stages {
		assert.Equal(t, one.Stages[i].A*batch, big.Stages[i].A, "stage %d", i)
	}
	_, err = ResNet(CNNConfig{Depth: 50, Image: 224, Batch: int(2 * batch)})
	assert.ErrorContains(t, err, "the chain's sizes total")
}
