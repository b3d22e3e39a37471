"""Predicted against measured: run a schedule several times from one state and report.

Every run starts from the same parameters, buffers and RNG state: first plain training (the
reference gradients), then one run under the StorageTracker (the measured peak, step by step),
then `runs` timed runs without it (the measured time: their median). The gradients of every
run are compared with the reference.
"""

import statistics
from dataclasses import dataclass, field

import torch

from . import combined, offload, remat
from .schedule import simulate
from .tracker import StorageTracker


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
    allocator_peak: int = None  # CUDA: max_memory_allocated above the start, parameter gradients
    # and the input's size taken out again (the allocator's view of the same quantity)


def _run(net, x, state, rng, fn):
    net.load_state(state)
    net.zero_grad()
    torch.set_rng_state(rng)
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
    """Execute a combined schedule; the predicted peak is memsched's peak_memory (the schedule's
    own), else the exact replay's; the predicted time the strict makespan."""
    rep = combined.check_combined(sched, chain, n=len(net.modules), bandwidth=bandwidth, budget=budget)
    return _measure(net, x, runs,
                    lambda tr: combined.execute_combined(net, x, sched, chain, bandwidth=bandwidth, budget=budget,
                                                         mode=mode, tracker=tr),
                    sched.peak if sched.peak is not None else rep.peak,
                    sched.makespan if sched.makespan is not None else float(rep.makespan),
                    rep.forwards[1:], combined.step_peaks(rep))


def _measure(net, x, runs, run, predicted_peak, predicted_time, expected_forwards, predicted_steps):
    state = net.state()
    rng = torch.get_rng_state()
    try:
        ref = _run(net, x, state, rng, lambda: remat.plain_training(net, x))
        tr = StorageTracker(x.device)

        def tracked():
            with tr:
                return run(tr)

        res = _run(net, x, state, rng, tracked)
        cmp = remat.compare(ref, net, res.delta0)
        match, detail, rel = cmp.equal, cmp.detail, cmp.max_rel
        forwards = res.forwards[1:]
        times = []
        alloc = None
        for i in range(max(runs, 1)):
            cuda = x.device.type == "cuda"
            if cuda and i == 0:
                torch.cuda.synchronize(x.device)
                torch.cuda.reset_peak_memory_stats(x.device)
                base = torch.cuda.memory_allocated(x.device)
            r = _run(net, x, state, rng, lambda: run(None))
            if cuda and i == 0:
                grads = sum(p.grad.untyped_storage().nbytes() for p in net.parameters() if p.grad is not None)
                alloc = (torch.cuda.max_memory_allocated(x.device) - base - grads
                         + x.untyped_storage().nbytes())
            times.append(r.time)
            c = remat.compare(ref, net, r.delta0)
            if not c.equal:
                match = False
                detail, rel = c.detail, max(rel, c.max_rel)
            if r.forwards[1:] != forwards:
                raise remat.ExecutionError("forward counts differ between runs")
    finally:
        net.load_state(state)
        net.zero_grad()
        torch.set_rng_state(rng)
    steps = []
    for i, (label, m) in enumerate(res.steps):
        steps.append((label, predicted_steps[i] if predicted_steps else None, m))
    peak = tr.peak
    return Measurement(allocator_peak=alloc, predicted_peak=predicted_peak, measured_peak=peak, predicted_time=predicted_time,
                       measured_time=statistics.median(times), grads_match=match, grads_detail=detail,
                       max_rel_diff=rel, forwards=forwards, forwards_expected=list(expected_forwards),
                       peak_step=res.peak_step, steps=steps, host_peak=getattr(res, "host_peak", 0),
                       transfers=getattr(res, "transfers", []))
