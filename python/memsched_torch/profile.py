"""Profile a Net as a memsched chain (memsched.chain/v1), as 004 §5.1 describes.

For every stage ℓ (the loss stage included), on its real input:

  uf, ub   median over `runs` of the forward without autograd and of the backward (wall clock;
           on CUDA after a synchronize), after one warm-up run
  a        bytes of the output's storage
  abar     bytes F_all keeps: every storage allocated during the forward with autograd that is
           still alive after it (what the stage's graph saved, the output included), measured
           by the StorageTracker; the input a^{ℓ-1} and the parameters were allocated before
  delta    = a
  of       the forward's temporaries: its peak above what was live before, minus what it leaves
           (a for a forward without autograd, abar for F_all), the larger of the two
  ob       the backward's temporaries: its peak above what was live before (ā^ℓ, δ^ℓ, the input),
           minus δ^{ℓ-1}; the graph is kept to the end of the backward (retain_graph) and
           parameter gradients are not counted, as in 004's model and in the executor
  w        bytes of the stage's parameters

These are exactly the quantities of memsched's memory accounting (SPEC §1: memory during an
operation = everything stored + its outputs + its overhead), measured the same way as the
executor measures a whole iteration, so a prediction and a measurement differ only where the
model's assumptions do (docs/torch.md). On CUDA, o_f and o_b are the larger of that and the
allocator's view (torch.cuda.max_memory_allocated, which includes cuDNN workspaces; for o_b
with parameter gradients out, tracker.AllocatorTracker's lower bound); `of_storages` and
`ob_storages` keep what the tracker alone saw.
"""

import contextlib
import statistics
import sys
import time

import torch

from .remat import amp_context
from .schedule import Chain, Stage
from .tracker import AllocatorTracker, StorageTracker


def storage_bytes(t):
    return t.untyped_storage().nbytes()


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _needs_grad(x):
    return x.is_floating_point() or x.is_complex()


def _leaf(x, grad=True):
    xi = x.detach()
    if grad and _needs_grad(x):
        xi.requires_grad_(True)
    return xi


def time_stage(mod, x, runs, device, grad=True, amp=None):
    """Median times of the forward without autograd and of the backward (after F_all)."""
    fwd, bwd = [], []
    for r in range(runs + 1):  # run 0 warms up (lazy initialisation, the autograd engine)
        with torch.no_grad(), amp_context(amp):
            _sync(device)
            t0 = time.perf_counter()
            y = mod(x)
            _sync(device)
            if r:
                fwd.append(time.perf_counter() - t0)
            del y
        xi = _leaf(x, grad)
        with amp_context(amp):
            y = mod(xi)
        g = torch.ones_like(y)
        _sync(device)
        t0 = time.perf_counter()
        if y.requires_grad:
            torch.autograd.backward(y, g, retain_graph=True)
        _sync(device)
        if r:
            bwd.append(time.perf_counter() - t0)
        del y, g, xi
    return statistics.median(fwd), statistics.median(bwd)


def memory_stage(mod, x, device, grad=True, amp=None, accumulate=False):
    """Sizes and overheads of one stage on input x (see the module comment). Returns the stage
    fields and the output (detached), from the F_all run. grad=False: the input gets no
    gradient (the first stage of a batch that does not require one); amp: the autocast state
    (remat.amp_state) the stage runs under. accumulate: the backward adds into parameter
    gradients that already exist (every micro-batch of a pipeline, whose ranks keep their
    gradients allocated), and each new weight gradient, a temporary as large as the weight until
    autograd has added it, is counted in o_b (the pipeline's ranks count it too)."""
    cuda = device.type == "cuda"
    params = [p for p in mod.parameters()]
    for p in params:
        # Without accumulate none exists: autograd then takes the new gradient as .grad.
        p.grad = torch.zeros_like(p) if accumulate and p.requires_grad else None
    tr = StorageTracker(device)
    alloc = {}
    with tr, tr.parameter_gradients_excluded(params, incoming=not accumulate):
        tr.count(x)
        # F without autograd.
        base = tr.current
        tr.reset_peak()
        if cuda:
            torch.cuda.synchronize(device)
            torch.cuda.reset_peak_memory_stats(device)
            m0 = torch.cuda.memory_allocated(device)
        with torch.no_grad(), amp_context(amp):
            y = mod(x)
        a = storage_bytes(y)
        of_plain = tr.peak - base - a
        if cuda:
            torch.cuda.synchronize(device)
            alloc["of"] = torch.cuda.max_memory_allocated(device) - m0 - a
        del y
        # F_all.
        xi = _leaf(x, grad)
        base = tr.current
        tr.reset_peak()
        if cuda:
            torch.cuda.reset_peak_memory_stats(device)
            m0 = torch.cuda.memory_allocated(device)
        with amp_context(amp):
            y = mod(xi)
        abar = tr.current - base
        of_all = tr.peak - base - abar
        if cuda:
            torch.cuda.synchronize(device)
            alloc["of"] = max(alloc["of"], torch.cuda.max_memory_allocated(device) - m0 - abar)
        # B, from δ^ℓ = ones.
        g = torch.ones_like(y)
        base = tr.current
        tr.reset_peak()
        # On CUDA the allocator's view too, parameter gradients out as they accumulate: its lower
        # bound, as 004 counts a gradient (allocated beforehand, so out from its allocation on).
        at = AllocatorTracker(device) if cuda else None
        with at or contextlib.nullcontext(), \
                at.parameter_gradients_excluded(params) if at and not accumulate else contextlib.nullcontext():
            if y.requires_grad:
                torch.autograd.backward(y, g, retain_graph=True)
        dprev = storage_bytes(xi.grad) if xi.grad is not None else 0
        ob = tr.peak - base - dprev
        if cuda:
            alloc["ob"] = at.peak_lower - dprev
        out = y.detach()
        del y, g, xi
    w = sum(storage_bytes(p) for p in params)
    st = {"a": a, "abar": max(abar, a), "delta": a, "of": max(of_plain, of_all, alloc.get("of", 0), 0),
          "ob": max(ob, alloc.get("ob", 0), 0), "w": w,
          # what the storage tracker alone saw (on CUDA o_f/o_b may be the allocator's, larger:
          # kernel workspaces, which the tracker cannot see); not part of the chain format
          "of_storages": max(of_plain, of_all, 0), "ob_storages": max(ob, 0)}
    return st, out


def profile_net(net, x, runs=3, input_grad=None, amp=None, accumulate=False):
    """Profile every stage of net on input x; returns a schedule.Chain (bytes, seconds). The
    net's buffers (BatchNorm running statistics) and gradients are as before afterwards.
    input_grad: whether the first stage computes δ^0 (default: for a floating input); amp: the
    autocast state (remat.amp_state) every stage runs under; accumulate: o_b as when gradients
    accumulate over micro-batches (memory_stage)."""
    device = x.device
    grad0 = _needs_grad(x) if input_grad is None else bool(input_grad) and _needs_grad(x)
    state = net.state()
    stages = []
    cur = x
    try:
        for l, (name, mod) in enumerate(zip(net.names, net.modules), 1):
            grad = grad0 or l > 1
            uf, ub = time_stage(mod, cur, runs, device, grad, amp)
            st, out = memory_stage(mod, cur, device, grad, amp, accumulate=accumulate)
            stages.append(Stage(name=name, uf=uf, ub=ub, **st))
            cur = out
    finally:
        net.load_state(state)
        net.zero_grad()
    loss = stages[-1]
    loss.a = loss.delta = 0  # the loss stage's output is a scalar; δ^{L+1} counts as 0
    loss.abar = max(loss.abar, 0)
    a0 = storage_bytes(x)
    return Chain(name="", a0=a0, delta0=a0 if grad0 else 0, stages=stages)


def describe(net, batch, device):
    machine = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    shape = "x".join(map(str, net.input_shape))
    return (f"{net.label} batch={batch} input={shape} measured on {machine} ({torch.get_num_threads()} "
            f"threads), torch {torch.__version__}, python {sys.version.split()[0]}, memsched_torch "
            "profile (live tensor storages)")
