#!/usr/bin/env python3
"""Profile a PyTorch model as a memsched chain (format memsched.chain/v1).

The model is split into a chain of stages as rotor does (004 §5.1): for an nn.Sequential, one
stage per child; for torchvision ResNets, the stem, one stage per residual block, the head; for
torchvision VGGs, one stage per child of `features` and the classifier. A cross-entropy loss
stage ends the chain. For every stage it measures, as 004 §5.1 describes:

  uf, ub   median over --runs runs of the forward (no_grad) and backward times
  a        bytes of the stage output
  abar     bytes of every activation the stage's backward saves (torch.autograd.graph
           saved_tensors_hooks, each storage counted once), the stage input and the parameters
           excepted, plus the output: what F_all keeps
  delta    bytes of the gradient of the output (= a)
  of, ob   CUDA: peak memory of the forward (no_grad) and of the backward above what is
           stored before and after (torch.cuda.max_memory_allocated); CPU: 0 (no allocator
           counters), which the file's name says
  w        bytes of the stage's parameters

Usage:
  python3 tools/profile_torch.py --model resnet18 --batch 8 --image 224 [--device cuda] -o r18.json
  python3 tools/profile_torch.py --sequential mypkg.models:build --input-shape 3,32,32 -o net.json

It runs on CPU and on CUDA. Only torch (and torchvision for --model) are needed.
"""

import argparse
import importlib
import json
import statistics
import sys
import time


def _torch():
    import torch  # imported lazily so that --help works without torch

    return torch


def split_model(name):
    """Return (stages, input_channels) for a torchvision model name."""
    torch = _torch()
    import torchvision

    nn = torch.nn
    ctor = getattr(torchvision.models, name, None)
    if ctor is None:
        raise SystemExit(f"profile_torch: unknown torchvision model {name!r}")
    m = ctor(weights=None)
    if name.startswith("resnet") or name.startswith("wide_resnet") or name.startswith("resnext"):
        stages = [("stem", nn.Sequential(m.conv1, m.bn1, m.relu, m.maxpool))]
        for li, layer in enumerate([m.layer1, m.layer2, m.layer3, m.layer4], 1):
            for bi, block in enumerate(layer):
                stages.append((f"layer{li}.{bi}", block))
        stages.append(("head", nn.Sequential(m.avgpool, nn.Flatten(1), m.fc)))
        return stages
    if name.startswith("vgg"):
        stages = [(f"features.{i}", mod) for i, mod in enumerate(m.features)]
        stages.append(("classifier", nn.Sequential(m.avgpool, nn.Flatten(1), m.classifier)))
        return stages
    raise SystemExit(f"profile_torch: no chain split known for {name!r}; wrap it as an nn.Sequential")


def sequential_from(spec):
    """Import 'module:function' and call it; it must return an nn.Sequential."""
    mod, _, fn = spec.partition(":")
    seq = getattr(importlib.import_module(mod), fn)()
    torch = _torch()
    if not isinstance(seq, torch.nn.Sequential):
        raise SystemExit(f"profile_torch: {spec} did not return an nn.Sequential")
    return [(f"{i}:{type(c).__name__}", c) for i, c in enumerate(seq)]


def nbytes(t):
    return t.element_size() * t.nelement()


def saved_bytes(stage, x):
    """Bytes of the activations saved for backward by stage(x), each storage once: the input
    (a^{l-1}, stored separately) and the parameters (allocated beforehand, 004 §3) excepted."""
    torch = _torch()
    seen = {}
    skip = {x.untyped_storage().data_ptr()}
    skip.update(p.untyped_storage().data_ptr() for p in stage.parameters())

    def pack(t):
        st = t.untyped_storage()
        key = st.data_ptr()
        if key not in skip and key not in seen:
            seen[key] = st.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = stage(x)
    out_ptr = y.untyped_storage().data_ptr()
    total = sum(seen.values())
    if out_ptr not in seen:
        total += nbytes(y)
    return y, total


def measure(stage, x, runs, device):
    """Measure one stage on input x (which requires grad); returns the stage dict and output."""
    torch = _torch()
    cuda = device.type == "cuda"

    def sync():
        if cuda:
            torch.cuda.synchronize()

    fwd, bwd = [], []
    of = ob = 0
    for _ in range(runs):
        with torch.no_grad():
            sync()
            if cuda:
                torch.cuda.reset_peak_memory_stats()
                base = torch.cuda.memory_allocated()
            t0 = time.perf_counter()
            y = stage(x)
            sync()
            fwd.append(time.perf_counter() - t0)
            if cuda:
                of = max(of, torch.cuda.max_memory_allocated() - base - nbytes(y))
            del y
        xi = x.detach().requires_grad_(x.is_floating_point())
        y = stage(xi)
        g = torch.ones_like(y)
        sync()
        if cuda:
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
        t0 = time.perf_counter()
        if y.requires_grad:
            y.backward(g)
        sync()
        bwd.append(time.perf_counter() - t0)
        if cuda:
            gx = nbytes(xi) if xi.requires_grad else 0
            ob = max(ob, torch.cuda.max_memory_allocated() - base - gx)
        del y, g, xi
    xi = x.detach().requires_grad_(x.is_floating_point())
    y, abar = saved_bytes(stage, xi)
    a = nbytes(y)
    w = sum(nbytes(p) for p in stage.parameters())
    st = {
        "uf": statistics.median(fwd),
        "ub": statistics.median(bwd),
        "a": a,
        "abar": max(abar, a),
        "delta": a,
        "of": max(of, 0),
        "ob": max(ob, 0),
        "w": w,
    }
    return st, y.detach()


def profile(stages, x, runs, device, classes_target=None):
    torch = _torch()
    out = []
    cur = x
    for name, stage in stages:
        stage.to(device).train()
        st, cur = measure(stage, cur.detach().requires_grad_(cur.is_floating_point()), runs, device)
        st["name"] = name
        out.append(st)
    # Loss stage: cross-entropy over the logits (or the mean for non-2-D outputs).
    if cur.dim() == 2:
        target = torch.zeros(cur.shape[0], dtype=torch.long, device=device)
        loss_fn = lambda z: torch.nn.functional.cross_entropy(z, target)  # noqa: E731
    else:
        loss_fn = lambda z: z.float().mean()  # noqa: E731

    class Loss(torch.nn.Module):
        def forward(self, z):
            return loss_fn(z)

    st, _ = measure(Loss(), cur.detach().requires_grad_(True), runs, device)
    st.update(name="loss", a=0, delta=0)
    out.append(st)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--model", help="torchvision model name, e.g. resnet18, resnet101, vgg16")
    src.add_argument("--sequential", help="module:function returning an nn.Sequential")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--image", type=int, default=224, help="image size for torchvision models")
    ap.add_argument("--input-shape", help="per-sample input shape for --sequential, e.g. 3,32,32")
    ap.add_argument("--device", default="cpu", help="cpu or cuda")
    ap.add_argument("--runs", type=int, default=3, help="runs per measurement (median)")
    ap.add_argument("-o", "--output", default="-", help="output file (default stdout)")
    args = ap.parse_args(argv)

    torch = _torch()
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit("profile_torch: --device cuda but CUDA is not available")
    torch.manual_seed(0)
    if args.model:
        stages = split_model(args.model)
        shape = (3, args.image, args.image)
        label = args.model
    else:
        stages = sequential_from(args.sequential)
        if not args.input_shape:
            raise SystemExit("profile_torch: --sequential needs --input-shape")
        shape = tuple(int(v) for v in args.input_shape.split(","))
        label = args.sequential
    x = torch.randn(args.batch, *shape, device=device)
    chain_stages = profile(stages, x, args.runs, device)
    machine = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    note = "" if device.type == "cuda" else ", overheads not measured on CPU"
    chain = {
        "format": "memsched.chain/v1",
        "name": f"{label} batch={args.batch} input={'x'.join(map(str, shape))} measured on {machine}, "
        f"torch {torch.__version__}, python {sys.version.split()[0]}{note}",
        "units": {"memory": "B", "time": "s"},
        "input": {"a": nbytes(x), "delta": nbytes(x)},
        "stages": chain_stages,
    }
    text = json.dumps(chain, indent=2) + "\n"
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
