package zoo

import (
	"fmt"
	"strings"

	"github.com/memsched/memsched/instances"
)

// TransformerConfig parameterizes GPT-2 and BERT stacks.
type TransformerConfig struct {
	// Kind is "gpt2" (vocabulary 50257) or "bert" (vocabulary 30522).
	Kind string
	// Hidden h, Heads a, Layers, SeqLen s, Batch b.
	Hidden, Heads, Layers, SeqLen, Batch int
	// DType defaults to fp32, Device to v100.
	DType, Device string
}

// MaxLayers bounds TransformerConfig.Layers: a chain of 100 000 blocks is a 30 MB file, and a
// million blocks would be past the 64 MiB a chain file may hold.
const MaxLayers = 100000

// vocab sizes: GPT-2 (Radford et al. 2019), BERT (Devlin et al. 2019).
var vocab = map[string]int64{"gpt2": 50257, "bert": 30522}

// Transformer builds an embedding stage, one stage per transformer block and an output stage
// (final layer norm, the vocabulary projection tied to the embedding, cross-entropy) that is
// the loss stage.
//
// Per block, with s·b·h = N elements of one activation and d bytes per element
// (Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models",
// MLSys 2023, §4.1, which gives 34·sbh + 5·a·s²·b bytes for d = 2 with 1-byte dropout masks):
//
//	a^ℓ  = d·N                                              (the block output)
//	ā^ℓ  = d·(16·N + 2·a·s²·b) + (2·N + a·s²·b)              (saved tensors + dropout masks)
//	w    = d·(12·h² + 13·h)                                 (QKV, projection, MLP, 2 layer norms)
//	FLOPs_forward = 24·b·s·h² + 4·b·s²·h                    (Narayanan et al., SC 2021, §5.1)
//
// The saved tensors are: both layer-norm inputs (2N), the QKV input (N), Q and K (2N), the
// softmax output and the attention-dropout output (2·a·s²·b), V (N), the projection input (N),
// the MLP input (N), the GELU input and output (8N); masks: attention dropout (a·s²·b bytes),
// two residual dropouts (2N bytes). The block's input a^{ℓ-1} is the first layer-norm input,
// counted in ā in Korthikanti's formula; memsched's ā^ℓ excludes the input and includes the
// output, which have the same size, so the total is the same.
func Transformer(cfg TransformerConfig) (*instances.Chain, error) {
	kind := strings.ToLower(cfg.Kind)
	v, ok := vocab[kind]
	if !ok {
		return nil, fmt.Errorf("zoo: transformer kind %q (want gpt2 or bert)", cfg.Kind)
	}
	if cfg.Hidden < 1 || cfg.Heads < 1 || cfg.Layers < 1 || cfg.SeqLen < 1 || cfg.Batch < 1 {
		return nil, fmt.Errorf("zoo: transformer hidden %d, heads %d, layers %d, sequence %d, batch %d must all be positive",
			cfg.Hidden, cfg.Heads, cfg.Layers, cfg.SeqLen, cfg.Batch)
	}
	if cfg.Layers > MaxLayers {
		return nil, fmt.Errorf("zoo: transformer layers %d: at most %d blocks", cfg.Layers, MaxLayers)
	}
	if cfg.Hidden%cfg.Heads != 0 {
		return nil, fmt.Errorf("zoo: hidden size %d is not a multiple of %d heads", cfg.Hidden, cfg.Heads)
	}
	dt, dev, err := lookup(cfg.DType, cfg.Device)
	if err != nil {
		return nil, err
	}
	h, a, s, b, d := int64(cfg.Hidden), int64(cfg.Heads), int64(cfg.SeqLen), int64(cfg.Batch), dt.Bytes
	// Sizes through mul and add (checked.go): they saturate instead of wrapping, and
	// checkSizes refuses the chain below.
	n := mul(s, b, h)
	att := mul(a, s, s, b)
	c := &instances.Chain{Name: fmt.Sprintf("%s hidden=%d heads=%d layers=%d seq=%d batch=%d %s %s (memsched zoo, analytic)",
		kind, h, a, cfg.Layers, s, b, dt.Name, dev.Name)}
	// Input: token ids, int64.
	c.A0 = mul(s, b, 8)
	c.Delta0 = 0 // no gradient flows into integer token ids
	embW := mul(add(v, s), h, d)
	if kind == "bert" {
		embW = add(embW, mul(4, h, d)) // token types and the embedding layer norm
	}
	c.Stages = append(c.Stages, instances.Stage{Name: "embedding", A: mul(d, n), ABar: mul(d, n), Delta: mul(d, n), W: embW})
	fb, fs, fh := float64(b), float64(s), float64(h)
	uf, ub := dev.seconds(24*fb*fs*fh*fh+4*fb*fs*fs*fh, dt)
	block := instances.Stage{UF: uf, UB: ub, A: mul(d, n), ABar: add(mul(d, add(mul(16, n), mul(2, att))), mul(2, n), att), Delta: mul(d, n),
		OF: mul(d, 4, n), OB: mul(d, 4, n), W: mul(d, add(mul(12, h, h), mul(13, h)))}
	for l := 0; l < cfg.Layers; l++ {
		block.Name = fmt.Sprintf("block%d", l)
		c.Stages = append(c.Stages, block)
	}
	// Output: final layer norm (saves its input), logits b·s·v (saved by the softmax), loss.
	fu, bu := dev.seconds(2*fb*fs*fh*float64(v), dt)
	logits := mul(d, s, b, v)
	c.Stages = append(c.Stages, instances.Stage{Name: "lm-head+loss", UF: fu, UB: bu, A: 0,
		ABar: add(mul(d, n), logits), Delta: 0, OF: logits, OB: logits, W: mul(2, h, d)})
	if err := checkSizes(c, fmt.Sprintf("%s hidden %d, heads %d, layers %d, seq %d, batch %d", kind, h, a, cfg.Layers, s, b)); err != nil {
		return nil, err
	}
	return c, nil
}
