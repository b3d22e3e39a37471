"""Predicted against measured: run a schedule several times from one state and report.

Every run starts from the same parameters, buffers and RNG states (CPU and CUDA): first plain
training (the reference gradients), then one run under the StorageTracker (the measured peak,
step by step), on CUDA one run for the allocator's (tracker.AllocatorTracker), then `runs` timed runs
without either (the measured time: their median). The gradients of every run are compared with
the reference.
"""

import os
import statistics
from dataclasses import dataclass, field

import torch

from . import combined, offload, remat
from .schedule import ScheduleError, simulate
from .tracker import AllocatorTracker, StorageTracker


def deterministic(device, warn_only=True):
    """On CUDA, the settings under which an iteration gives the same gradients every time, so
    that the executors' gradients can be compared bitwise with plain training's: cuDNN
    deterministic and without benchmarking, torch.use_deterministic_algorithms, cuBLAS's
    workspace config. warn_only (the default): some operations have no CUDA kernel PyTorch calls
    deterministic and would refuse to run otherwise (on the H100 run, VGG's AdaptiveAvgPool2d
    to 7×7 in the backward; to 1×1, ResNet's, it is a mean and runs); the comparison says
    whether they were. But then SDPA's memory-efficient backward keeps its non-deterministic
    reduction, which only the strict mode (warn_only=False) replaces. Returns a description for
    reports; nothing to do on CPU."""
    if device.type != "cuda":
        return {}
    # cuBLAS reads it when it creates its handle: before the first matrix product.
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    torch.use_deterministic_algorithms(True, warn_only=warn_only)
    # Deterministic mode also fills every torch.empty with NaN; nothing here reads memory it has
    # not written, and the fills would add kernels (and host work for the pinned buffers) that
    # the profile did not time.
    torch.utils.deterministic.fill_uninitialized_memory = False
    return {"cudnn_deterministic": True, "cudnn_benchmark": False,
            "deterministic_algorithms": "warn_only" if warn_only else "strict",
            "CUBLAS_WORKSPACE_CONFIG": os.environ["CUBLAS_WORKSPACE_CONFIG"],
            "fill_uninitialized_memory": False, "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32,
            "matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32}


@dataclass
class Measurement:
    predicted_peak: int
    measured_peak: int
    predicted_time: float
    measured_time: float
    grads_match: bool
    grads_detail: str
    max_rel_diff: float
    forwards: list  # measured forward calls per stage 1..L+1
    forwards_expected: list
    peak_step: str
    steps: list = field(default_factory=list)  # (label, predicted or None, measured)
    host_peak: int = 0
    transfers: list = field(default_factory=list)
    # CUDA: the allocator's view of the same quantity (tracker.AllocatorTracker): its peak (upper
    # bound), the lower bound, and each step's (label, upper, lower)
    allocator_peak: int = None
    allocator_peak_lower: int = None
    allocator_steps: list = field(default_factory=list)
    allocator_peak_step: str = None
    # CUDA: a second plain training against the first (the floor of any gradient comparison:
    # kernels PyTorch runs non-deterministically differ from themselves)
    reference_equal: bool = None
    reference_max_rel: float = None


def check_input(chain, x, source="chain"):
    """Refuse an input that is not the one the chain was profiled with: its a^0 is the input's
    bytes (batch × shape × element size); another batch or shape would run silently against
    the wrong prediction (a chain profiled at batch 4, run at batch 8, measured 2× its peak)."""
    n = x.untyped_storage().nbytes()
    if n != chain.a0:
        shape = "×".join(map(str, x.shape))
        raise ScheduleError(f"{source} was profiled with an input of {chain.a0} B (a^0); this input is {n} B "
                            f"({shape} {str(x.dtype).replace('torch.', '')}): profile with the same --batch and "
                            "input shape")


def _run(net, x, state, rng, fn):
    net.load_state(state)
    net.zero_grad()
    # The CUDA generator too: on a GPU dropout draws from it, and the reference run has moved it.
    remat.set_rng(rng, x.device)
    return fn()


def measure_remat(net, x, chain, ops, runs=3, free="model", predicted_peak=None, predicted_time=None):
    """Execute a remat sequence; predicted values default to 004's model on chain."""
    sim = simulate(chain, ops)
    remat.check_sequence(net, ops, chain)
    return _measure(net, x, runs,
                    lambda tr: remat.execute(net, x, ops, chain=chain, free=free, tracker=tr),
                    predicted_peak if predicted_peak is not None else sim.peak,
                    predicted_time if predicted_time is not None else sim.makespan,
                    sim.forwards[1:], sim.memory)


def measure_offload(net, x, chain, timed, bandwidth=None, runs=3, mode=None):
    n = len(chain)
    offload.check_timed(timed, n)
    return _measure(net, x, runs,
                    lambda tr: offload.execute_offload(net, x, timed, chain, bandwidth=bandwidth, mode=mode,
                                                       tracker=tr),
                    timed.peak, timed.makespan, [1] * n, None)


def measure_combined(net, x, chain, sched, bandwidth=None, budget=None, runs=3, mode=None):
    """Execute a combined schedule; the predicted peak and time are the exact replay's on chain
    (verify/combined's strict timing)."""
    rep = combined.check_combined(sched, chain, n=len(net.modules), bandwidth=bandwidth, budget=budget)
    # One source of prediction: the replay on this chain (the file's peak_memory and makespan were
    # memsched's on the chain it was made for; check_combined refuses one that peaks higher here).
    return _measure(net, x, runs,
                    lambda tr: combined.execute_combined(net, x, sched, chain, bandwidth=bandwidth, budget=budget,
                                                         mode=mode, tracker=tr),
                    rep.peak, float(rep.makespan), rep.forwards[1:], combined.step_peaks(rep))


def _measure(net, x, runs, run, predicted_peak, predicted_time, expected_forwards, predicted_steps):
    state = net.state()
    rng = remat.get_rng(x.device)
    cuda = x.device.type == "cuda"
    try:
        ref = _run(net, x, state, rng, lambda: remat.plain_training(net, x))
        noise = None
        if cuda:
            again = _run(net, x, state, rng, lambda: remat.plain_training(net, x))
            noise = remat.compare(ref, net, again.delta0)
            del again
        tr = StorageTracker(x.device)

        def tracked():
            with tr:
                return run(tr)

        res = _run(net, x, state, rng, tracked)
        cmp = remat.compare(ref, net, res.delta0)
        match, detail, rel = cmp.equal, cmp.detail, cmp.max_rel
        forwards = res.forwards[1:]

        def check(r):
            # Right after the run: the next one overwrites the gradients.
            nonlocal match, detail, rel
            c = remat.compare(ref, net, r.delta0)
            if not c.equal:
                match = False
                detail, rel = c.detail, max(rel, c.max_rel)
            if r.forwards[1:] != forwards:
                raise remat.ExecutionError("forward counts differ between runs")

        at = None
        if cuda:
            # A run of its own: its hooks and peak resets stay out of the timed runs.
            at = AllocatorTracker(x.device)

            def allocated():
                with at:
                    return run(at)

            check(_run(net, x, state, rng, allocated))
        times = []
        for _ in range(max(runs, 1)):
            r = _run(net, x, state, rng, lambda: run(None))
            times.append(r.time)
            check(r)
    finally:
        net.load_state(state)
        net.zero_grad()
        remat.set_rng(rng, x.device)
    steps = []
    for i, (label, m) in enumerate(res.steps):
        steps.append((label, predicted_steps[i] if predicted_steps else None, m))
    peak = tr.peak
    alloc = {}
    if at is not None:
        alloc = dict(allocator_peak=at.peak, allocator_peak_lower=at.peak_lower, allocator_peak_step=at.peak_step,
                     allocator_steps=[(l, u, lo) for (l, u), (_, lo) in zip(at.steps, at.steps_lower)])
    return Measurement(**alloc, predicted_peak=predicted_peak, measured_peak=peak, predicted_time=predicted_time,
                       measured_time=statistics.median(times), grads_match=match, grads_detail=detail,
                       max_rel_diff=rel, forwards=forwards, forwards_expected=list(expected_forwards),
                       peak_step=res.peak_step, steps=steps, host_peak=getattr(res, "host_peak", 0),
                       transfers=getattr(res, "transfers", []),
                       reference_equal=noise.equal if noise else None,
                       reference_max_rel=noise.max_rel if noise else None)
