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
	if cfg.Hidden%cfg.Heads != 0 {
		return nil, fmt.Errorf("zoo: hidden size %d is not a multiple of %d heads", cfg.Hidden, cfg.Heads)
	}
	dt, dev, err := lookup(cfg.DType, cfg.Device)
	if err != nil {
		return nil, err
	}
	h, a, s, b, d := int64(cfg.Hidden), int64(cfg.Heads), int64(cfg.SeqLen), int64(cfg.Batch), dt.Bytes
	n := s * b * h
	att := a * s * s * b
	c := &instances.Chain{Name: fmt.Sprintf("%s hidden=%d heads=%d layers=%d seq=%d batch=%d %s %s (memsched zoo, analytic)",
		kind, h, a, cfg.Layers, s, b, dt.Name, dev.Name)}
	// Input: token ids, int64.
	c.A0 = s * b * 8
	c.Delta0 = 0 // no gradient flows into integer token ids
	embW := (v + s) * h * d
	if kind == "bert" {
		embW += 2*h*d + 2*h*d // token types and the embedding layer norm
	}
	c.Stages = append(c.Stages, instances.Stage{Name: "embedding", A: d * n, ABar: d * n, Delta: d * n, W: embW})
	uf, ub := dev.seconds(float64(24*b*s*h*h+4*b*s*s*h), dt)
	block := instances.Stage{UF: uf, UB: ub, A: d * n, ABar: d*(16*n+2*att) + 2*n + att, Delta: d * n,
		OF: d * 4 * n, OB: d * 4 * n, W: d * (12*h*h + 13*h)}
	for l := 0; l < cfg.Layers; l++ {
		block.Name = fmt.Sprintf("block%d", l)
		c.Stages = append(c.Stages, block)
	}
	// Output: final layer norm (saves its input), logits b·s·v (saved by the softmax), loss.
	fu, bu := dev.seconds(float64(2*b*s*h*v), dt)
	c.Stages = append(c.Stages, instances.Stage{Name: "lm-head+loss", UF: fu, UB: bu, A: 0,
		ABar: d*n + d*s*b*v, Delta: 0, OF: d * s * b * v, OB: d * s * b * v, W: 2 * h * d})
	return c, nil
}
