"""Networks as chains of stages (nn.Modules), the way memsched sees them (004 §5.1, rotor's split).

A `Net` is stages 1..L (named nn.Modules called one after the other), the loss stage L+1 and the
input batch a^0. Splits:

- torchvision ResNets (resnet*, wide_resnet*, resnext*): the stem (conv, BN, ReLU, max-pool), one
  stage per residual block, the head (avg-pool, flatten, fc);
- torchvision VGGs: the children of `features`, then the classifier (avg-pool, flatten, MLP);
- `mlp`: Linear–ReLU pairs (the small test network);
- `transformer`: a stack of nn.TransformerEncoderLayer (batch first, dropout 0.1), one stage per
  layer, on a float input (batch, seq, hidden);
- any nn.Sequential (`--sequential module:function`): one stage per child.

The loss stage is cross-entropy against class 0 for 2-D outputs, the mean otherwise.

A child whose output aliases its input — an in-place ReLU after a convolution, a flatten, an
identity — is not a stage of 004's model: there a^ℓ and a^{ℓ-1} are two values with their own
memory, and recomputing from a^{ℓ-1} after it was overwritten in place would be wrong. `split`
merges such a child into the stage before it (VGG's conv+ReLU pairs become one stage each), which
`Net.merged` lists.
"""

import importlib

import torch
from torch import nn


class ChainLoss(nn.Module):
    """The loss stage L+1: cross-entropy against class 0 for (batch, classes) logits, else the
    mean of the output."""

    def forward(self, z):
        if z.dim() == 2:
            target = torch.zeros(z.shape[0], dtype=torch.long, device=z.device)
            return nn.functional.cross_entropy(z, target)
        return z.float().mean()


class Net:
    """Stages 1..L (a list of (name, module)), the loss stage, and how to make the input a^0."""

    def __init__(self, label, stages, input_shape, input_dtype=torch.float32, merged=()):
        self.label = label
        self.stages = list(stages)
        self.loss = ChainLoss()
        self.input_shape = tuple(input_shape)
        self.input_dtype = input_dtype
        self.merged = list(merged)

    @property
    def modules(self):
        """Stages 1..L+1 as modules (the loss last)."""
        return [m for _, m in self.stages] + [self.loss]

    @property
    def names(self):
        return [n for n, _ in self.stages] + ["loss"]

    def parameters(self):
        for m in self.modules:
            yield from m.parameters()

    def to(self, device):
        for m in self.modules:
            m.to(device)
        return self

    def train(self, mode=True):
        for m in self.modules:
            m.train(mode)
        return self

    def make_input(self, batch, device="cpu", seed=0):
        g = torch.Generator().manual_seed(seed)
        if self.input_dtype.is_floating_point:
            x = torch.randn(batch, *self.input_shape, generator=g, dtype=self.input_dtype)
        else:
            x = torch.randint(0, 100, (batch, *self.input_shape), generator=g, dtype=self.input_dtype)
        return x.to(device)

    def state(self):
        """A copy of every buffer and parameter (to run several iterations from one state)."""
        return [{k: v.detach().clone() for k, v in m.state_dict().items()} for m in self.modules]

    def load_state(self, state):
        for m, s in zip(self.modules, state):
            m.load_state_dict(s)

    def zero_grad(self):
        for p in self.parameters():
            p.grad = None


def _resnet(name, m):
    stages = [("stem", nn.Sequential(m.conv1, m.bn1, m.relu, m.maxpool))]
    for li, layer in enumerate([m.layer1, m.layer2, m.layer3, m.layer4], 1):
        for bi, block in enumerate(layer):
            stages.append((f"layer{li}.{bi}", block))
    stages.append(("head", nn.Sequential(m.avgpool, nn.Flatten(1), m.fc)))
    return stages


def _vgg(name, m):
    stages = [(f"features.{i}", mod) for i, mod in enumerate(m.features)]
    stages.append(("classifier", nn.Sequential(m.avgpool, nn.Flatten(1), m.classifier)))
    return stages


def torchvision_stages(name):
    import torchvision

    ctor = getattr(torchvision.models, name, None)
    if ctor is None or not callable(ctor):
        raise ValueError(f"unknown torchvision model {name!r}")
    if name.startswith(("resnet", "wide_resnet", "resnext")):
        return _resnet(name, ctor(weights=None))
    if name.startswith("vgg"):
        return _vgg(name, ctor(weights=None))
    raise ValueError(f"no chain split known for {name!r}; wrap it as an nn.Sequential (--sequential)")


def mlp(width=64, depth=4, inputs=32, classes=10):
    layers = []
    d = inputs
    for _ in range(depth - 1):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    layers.append(nn.Linear(d, classes))
    return nn.Sequential(*layers)


def transformer(layers=12, hidden=256, heads=4, ff=None, dropout=0.1):
    return nn.Sequential(*[
        nn.TransformerEncoderLayer(hidden, heads, dim_feedforward=ff or 4 * hidden, dropout=dropout,
                                   batch_first=True)
        for _ in range(layers)])


def sequential_stages(seq, label):
    if not isinstance(seq, nn.Sequential):
        raise ValueError(f"{label} did not return an nn.Sequential")
    return [(f"{i}:{type(c).__name__}", c) for i, c in enumerate(seq)]


def sequential_from(spec):
    """Import 'module:function' and call it; it must return an nn.Sequential."""
    mod, _, fn = spec.partition(":")
    if not fn:
        raise ValueError(f"--sequential {spec!r}: want module:function")
    return sequential_stages(getattr(importlib.import_module(mod), fn)(), spec)


def build(model=None, sequential=None, image=224, input_shape=None, layers=12, hidden=256, heads=4,
          seq=64, width=64, depth=4, device="cpu", seed=0):
    """Build a Net for a model name (torchvision resnet*/vgg*, mlp, transformer) or an
    nn.Sequential factory, split and merged (see the module comment), in training mode."""
    torch.manual_seed(seed)
    dtype = torch.float32
    if sequential:
        if not input_shape:
            raise ValueError("--sequential needs --input-shape")
        stages = sequential_from(sequential)
        shape, label = tuple(input_shape), sequential
    elif model == "mlp":
        shape = (input_shape[0],) if input_shape else (32,)
        stages = sequential_stages(mlp(width=width, depth=depth, inputs=shape[0]), "mlp")
        label = f"mlp width={width} depth={depth}"
    elif model == "transformer":
        stages = [(f"layer{i}", m) for i, m in enumerate(transformer(layers, hidden, heads))]
        shape, label = (seq, hidden), f"transformer layers={layers} hidden={hidden} heads={heads}"
    elif model:
        stages = torchvision_stages(model)
        shape, label = (3, image, image), model
    else:
        raise ValueError("no model given (--model or --sequential)")
    net = Net(label, stages, shape, dtype)
    net.to(device).train()
    merge_aliasing(net, device)
    return net


def merge_aliasing(net, device="cpu", x=None):
    """Merge every stage whose output aliases its input (in place or a view) into the stage
    before it; found by one no-grad forward on x (default a batch of 2), buffers restored
    afterwards."""
    state = net.state()
    if x is None:
        x = net.make_input(2, device)
    stages = list(net.stages)
    out, merged = [], []
    first_aliases = False
    try:
        with torch.no_grad():
            for name, mod in stages:
                v0 = x._version
                key = x.untyped_storage()._cdata
                y = mod(x)
                if not isinstance(y, torch.Tensor):
                    raise ValueError(f"stage {name} returns {type(y).__name__}, not one tensor: "
                                     "a chain stage must map one tensor to one tensor")
                aliases = x._version != v0 or y.untyped_storage()._cdata == key
                if aliases and out:
                    pname, pmod = out.pop()
                    out.append((f"{pname}+{name}", nn.Sequential(pmod, mod)))
                    merged.append(name)
                elif aliases and x._version != v0:
                    raise ValueError(f"stage {name} modifies the network's input in place; "
                                     "a chain cannot recompute from it")
                else:
                    first_aliases = first_aliases or (aliases and not out)
                    out.append((name, mod))
                x = y
    finally:
        net.load_state(state)
    # A first stage that only views its input (e.g. Flatten) goes into the next one.
    if first_aliases and len(out) > 1:
        (n0, m0), (n1, m1) = out[0], out[1]
        out[:2] = [(f"{n0}+{n1}", nn.Sequential(m0, m1))]
        merged.append(n1)
    net.stages = out
    net.merged = merged
    return net
