"""Models people train, cut into the chains memsched schedules (004 §5.1: stages 1..L, each one
tensor to one tensor, then the loss).

`cut(model)` returns the stages of

- an `nn.Sequential`: its children;
- a torchvision ResNet (ResNet, Wide ResNet, ResNeXt): the stem, one stage per residual block,
  the head; a VGG: the children of `features`, then the classifier; a DenseNet: the children of
  `features` (a dense block is one stage: its layers concatenate their inputs), then the head
  (ReLU, average pool, classifier, as DenseNet.forward);
- a Hugging Face transformers model given as its block list: GPT-2 (`GPT2LMHeadModel`,
  `GPT2Model`), BERT (`BertModel`, `BertForMaskedLM`, `BertForSequenceClassification`) and
  Llama-style decoders (`LlamaForCausalLM` and the models of the same layout: `model.embed_tokens`,
  `model.layers`, `model.norm`, `model.rotary_emb`, `lm_head`): the embeddings, one stage per
  block, the head. Each stage calls the model's own modules with what the model's forward passes
  them (the attention mask and position ids made the way the model makes them, the rotary
  embeddings per layer), so the chain computes what the model computes, bit for bit (tested
  against the model's own forward). The chain's output is the head's (logits; the last hidden
  state for a bare `GPT2Model`/`BertModel`), not a ModelOutput; no attention mask, cache or past
  key values (a training batch of full sequences).

Anything else is refused with one line that says why (`ChainError`). The stages hold the model's
own modules: nothing is copied, the parameters are the model's.
"""

import torch
from torch import nn


class ChainError(ValueError):
    """A model that cannot be cut into a chain; the message is one line for the user."""


def _name(model):
    return type(model).__name__


def cut(model):
    """(label, [(name, module)]) for the model (see the module comment); ChainError otherwise."""
    if isinstance(model, nn.Sequential):
        if len(model) == 0:
            raise ChainError("an empty nn.Sequential has no stage")
        return "Sequential", [(f"{i}:{type(c).__name__}", c) for i, c in enumerate(model)]
    mod = type(model).__module__ or ""
    if mod.startswith("torchvision."):
        return _name(model), _torchvision(model)
    if mod.startswith("transformers."):
        return _name(model), _hf(model)
    if isinstance(model, (list, tuple, nn.ModuleList)):
        raise ChainError(f"a {type(model).__name__} of modules: wrap it as nn.Sequential(*modules) (its children "
                         "are called one after the other)")
    raise ChainError(f"{_name(model)} cannot be cut into a chain: its forward is not known to call its children "
                     "one after the other; give an nn.Sequential of stages (each one tensor to one tensor), a "
                     "torchvision ResNet/VGG/DenseNet or a Hugging Face GPT-2/BERT/Llama-style model")


# --- torchvision ---

class _DenseHead(nn.Module):
    """DenseNet.forward after `features`: ReLU (not in place: the stage's input must survive for a
    recomputation; the same values), average pool to 1×1, flatten, classifier."""

    def __init__(self, classifier):
        super().__init__()
        self.classifier = classifier

    def forward(self, x):
        out = nn.functional.relu(x)
        out = nn.functional.adaptive_avg_pool2d(out, (1, 1))
        return self.classifier(torch.flatten(out, 1))


def _torchvision(m):
    import torchvision.models as tvm

    from .models import _resnet, _vgg

    if isinstance(m, tvm.ResNet):
        return _resnet(_name(m), m)
    if isinstance(m, tvm.VGG):
        return _vgg(_name(m), m)
    if isinstance(m, tvm.DenseNet):
        stages = [(f"features.{n}", c) for n, c in m.features.named_children()]
        stages.append(("head", _DenseHead(m.classifier)))
        return stages
    raise ChainError(f"torchvision {_name(m)}: no chain split known (ResNet, VGG and DenseNet are); wrap its "
                     "stages as an nn.Sequential")


# --- Hugging Face transformers ---

def _positions(h):
    return torch.arange(h.shape[1], device=h.device).unsqueeze(0)


class _GPT2Embed(nn.Module):
    """GPT2Model.forward up to the blocks: token and position embeddings, dropout."""

    def __init__(self, tr):
        super().__init__()
        self.wte, self.wpe, self.drop = tr.wte, tr.wpe, tr.drop

    def forward(self, ids):
        emb = self.wte(ids)
        pos = self.wpe(_positions(emb))
        return self.drop(emb + pos.to(emb.device))


class _Block(nn.Module):
    """One transformer block called as its model calls it: (hidden states) → hidden states, with
    the mask (and rotary embeddings) its model makes from the shape."""

    def __init__(self, block, config, kind, rotary=None):
        super().__init__()
        self.block = block
        self.kind = kind
        object.__setattr__(self, "config", config)  # not a module
        if rotary is not None:
            self.rotary = rotary  # a module without parameters (inv_freq is a buffer)

    def forward(self, h):
        from transformers.masking_utils import create_bidirectional_mask, create_causal_mask

        pos = _positions(h)
        if self.kind == "gpt2":
            mask = create_causal_mask(config=self.config, inputs_embeds=h, attention_mask=None,
                                      past_key_values=None, position_ids=pos)
            return self.block(h, None, mask, None, encoder_attention_mask=None, use_cache=False, position_ids=pos)
        if self.kind == "bert":
            mask = create_bidirectional_mask(config=self.config, inputs_embeds=h, attention_mask=None)
            return self.block(h, mask, None, encoder_attention_mask=None, past_key_values=None)
        mask = create_causal_mask(config=self.config, inputs_embeds=h, attention_mask=None, past_key_values=None,
                                  position_ids=pos)
        pe = self.rotary(h, position_ids=pos)
        return self.block(h, attention_mask=mask, position_embeddings=pe, position_ids=pos, past_key_values=None,
                          use_cache=False)


class _Head(nn.Module):
    """The modules after the last block, in the model's order (a final norm, an LM head on all
    positions; or BERT's MLM head; or its pooler, dropout and classifier)."""

    def __init__(self, kind, norm=None, head=None, pooler=None, dropout=None):
        super().__init__()
        self.kind = kind
        self.norm, self.head, self.pooler, self.dropout = norm, head, pooler, dropout

    def forward(self, h):
        if self.norm is not None:
            h = self.norm(h)
        if self.kind == "lm":
            return self.head(h[:, slice(0, None), :])  # the model's logits_to_keep=0 slice
        if self.kind == "classify":
            return self.head(self.dropout(self.pooler(h)))
        if self.kind == "mlm":
            return self.head(h)
        return h


def _hf(m):
    cfg = getattr(m, "config", None)
    kind = getattr(cfg, "model_type", None)
    name = _name(m)
    if getattr(cfg, "_attn_implementation", None) not in (None, "eager", "sdpa"):
        raise ChainError(f"{name}: attention implementation {cfg._attn_implementation!r}: want eager or sdpa")
    if kind == "gpt2":
        tr = getattr(m, "transformer", m)
        if getattr(cfg, "add_cross_attention", False):
            raise ChainError(f"{name}: cross-attention blocks take two inputs; a chain stage takes one")
        stages = [("embed", _GPT2Embed(tr))]
        stages += [(f"h.{i}", _Block(b, cfg, "gpt2")) for i, b in enumerate(tr.h)]
        lm = getattr(m, "lm_head", None)
        if name == "GPT2LMHeadModel":
            stages.append(("head", _Head("lm", norm=tr.ln_f, head=lm)))
        elif name == "GPT2Model":
            stages.append(("ln_f", _Head("hidden", norm=tr.ln_f)))
        else:
            raise ChainError(f"{name}: of GPT-2's heads only GPT2LMHeadModel and GPT2Model are cut into chains")
        return stages
    if kind == "bert":
        if getattr(cfg, "is_decoder", False):
            raise ChainError(f"{name}: a BERT decoder (is_decoder) is not cut into a chain; an encoder is")
        bert = getattr(m, "bert", m)
        stages = [("embeddings", bert.embeddings)]
        stages += [(f"layer.{i}", _Block(b, cfg, "bert")) for i, b in enumerate(bert.encoder.layer)]
        if name == "BertForMaskedLM":
            stages.append(("cls", _Head("mlm", head=m.cls)))
        elif name == "BertForSequenceClassification":
            stages.append(("classifier", _Head("classify", head=m.classifier, pooler=bert.pooler,
                                               dropout=m.dropout)))
        elif name != "BertModel":
            raise ChainError(f"{name}: of BERT's heads BertModel, BertForMaskedLM and BertForSequenceClassification "
                             "are cut into chains")
        return stages
    inner = getattr(m, "model", None)
    if inner is not None and all(hasattr(inner, a) for a in ("embed_tokens", "layers", "norm", "rotary_emb")):
        n = getattr(cfg, "num_hidden_layers", len(inner.layers))
        stages = [("embed_tokens", inner.embed_tokens)]
        stages += [(f"layers.{i}", _Block(b, cfg, "llama", rotary=inner.rotary_emb))
                   for i, b in enumerate(inner.layers[:n])]
        if not hasattr(m, "lm_head"):
            raise ChainError(f"{name}: a Llama-style model without lm_head: give the ForCausalLM model")
        stages.append(("head", _Head("lm", norm=inner.norm, head=m.lm_head)))
        return stages
    raise ChainError(f"{name} ({kind}): no chain split known for this transformers model (GPT-2, BERT and "
                     "Llama-style decoders are); give its stages as an nn.Sequential")
