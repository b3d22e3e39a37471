"""`python -m memsched_torch plan`: profile a model, ask memsched for the best certified schedule
under a budget, execute one iteration, and put the prediction next to the measurement."""

import json
import os
import tempfile

import torch

from . import binary, models, offload
from .measure import deterministic, measure_combined, measure_offload, measure_remat
from .profile import describe, profile_net
from .schedule import ScheduleError, fmt_bytes, format_sequence, parse_sequence, simulate

# certify's strategy names -> how to get the schedule itself
REMAT_ALGOS = {"persistent", "floating", "revolve", "sequential", "store-all", "ilp", "exhaustive"}
ACT_ALGOS = {"greedy", "dynprog", "vdnn", "exact"}
COMBO_ALGOS = {"pofo", "remat-then-offload", "offload-then-remat"}
LEVERS = ("remat", "act-offload", "remat-offload")


def store_all(n):
    return offload.as_sequence(n)


def choose(cert, bandwidth, lever_only=None):
    """The lever and strategy with the smallest verified makespan among those the executors run
    (remat; act-offload and remat-offload when a bandwidth is given), or within lever_only.
    Returns (lever, strategy row, lever report)."""
    best = None
    for lever in LEVERS:
        if lever_only not in (None, "auto", lever):
            continue
        rep = cert["levers"].get(lever)
        if rep is None or rep.get("skipped"):
            continue
        for s in rep.get("strategies", []):
            if not (s.get("feasible") and s.get("verified")):
                continue
            if lever == "remat" and s["strategy"] not in REMAT_ALGOS:
                continue
            if lever == "act-offload" and s["strategy"] not in ACT_ALGOS:
                continue
            if lever == "remat-offload" and s["strategy"] not in COMBO_ALGOS:
                continue
            if best is None or s["makespan"] < best[1]["makespan"] - 1e-12:
                best = (lever, s, rep)
    return best


def best_schedule(path, budget, bandwidth, lever_only=None, time_limit=None, exe=None, store_all_peak=None):
    """Ask `memsched certify` for every verified strategy under budget on the chain file at path,
    take the fastest (choose), and fetch its schedule from the command of its lever: `memsched
    remat --algo NAME` (`--slots exact` when certify's row was exact), `memsched offload-act
    --algo NAME`, or `memsched remat-offload --algo NAME` (its own run at default slots, which the
    executor's replay of verify/combined checks before anything runs). Returns (lever, certify's
    row, certify's lever report, the command's JSON). Raises ScheduleError when nothing fits."""
    lever_only = None if lever_only in (None, "auto") else lever_only
    if lever_only in ("act-offload", "remat-offload") and not bandwidth:
        raise ScheduleError(f"--lever {lever_only} needs --bandwidth (the GPU–CPU link rate, e.g. 12GB/s)")
    cert = binary.certify(path, budget, bandwidth=bandwidth, time_limit=time_limit, binary=exe)
    pick = choose(cert, bandwidth, lever_only)
    if pick is None and lever_only is not None:
        raise ScheduleError(f"--lever {lever_only}: no verified schedule of this lever fits {fmt_bytes(budget)} "
                            f"({budget} B)")
    if pick is None:
        lo = binary.run_json("info", "--chain", path, binary=exe).get("min_budget")
        least = f"the smallest feasible budget is {fmt_bytes(lo)} ({lo} B), " if lo else ""
        sa = f"the store-all peak {fmt_bytes(store_all_peak)} ({store_all_peak} B)" if store_all_peak else ""
        raise ScheduleError(f"no schedule fits {fmt_bytes(budget)} ({budget} B): {least}{sa}".rstrip(", "))
    lever, row, rep = pick
    if lever == "remat":
        out = binary.remat(path, budget, algo=row["strategy"], exact="exact" in (row.get("note") or ""), binary=exe)
    elif lever == "remat-offload":
        out = binary.remat_offload(path, budget, bandwidth, algo=row["strategy"], binary=exe)
    else:
        out = binary.offload_act(path, budget, bandwidth, algo=row["strategy"], binary=exe)
    return lever, row, rep, out


def run_plan(args):
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ScheduleError("--device cuda but CUDA is not available")
    exe = binary.find()  # before any work: a missing binary is the first thing to say
    deterministic(device)  # the gradients are compared bitwise with plain training
    if args.threads:
        torch.set_num_threads(args.threads)
    net = models.build(model=args.model, sequential=args.sequential, image=args.image,
                       input_shape=_shape(args.input_shape), layers=args.layers, hidden=args.hidden,
                       heads=args.heads, seq=args.seq, device=device, seed=args.seed)
    x = net.make_input(args.batch, device, seed=args.seed)
    chain = profile_net(net, x, runs=args.runs)
    chain.name = describe(net, args.batch, device)
    n = len(chain)
    sa = simulate(chain, store_all(n))
    if args.mem_fraction is not None:
        if not 0 < args.mem_fraction <= 10:
            raise ScheduleError(f"--mem-fraction {args.mem_fraction}: want a fraction of the store-all peak, e.g. 0.6")
        budget = int(args.mem_fraction * sa.peak)
    else:
        from .schedule import parse_size

        budget = parse_size(args.mem)
    path = args.chain_out
    tmp = None
    if not path:
        tmp = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
        path = tmp.name
        tmp.close()
    try:
        with open(path, "w") as f:
            json.dump(chain.to_json(), f, indent=2)
        lever, row, rep, out = best_schedule(path, budget, args.bandwidth, getattr(args, "lever", None),
                                             args.time_limit, exe, store_all_peak=sa.peak)
        if lever == "remat":
            ops = parse_sequence(json.dumps(out), source="memsched remat")
            m = measure_remat(net, x, chain, ops, runs=args.runs, free=args.free,
                              predicted_peak=out["peak_memory"], predicted_time=out["makespan"])
            schedule = {"lever": "remat", "strategy": row["strategy"], "sequence": format_sequence(ops)}
        elif lever == "remat-offload":
            from . import combined

            sched = combined.parse_combined(json.dumps(out), source="memsched remat-offload", algo=row["strategy"])
            m = measure_combined(net, x, chain, sched, bandwidth=out["bandwidth"], budget=budget, runs=args.runs)
            res = out["results"][0]
            schedule = {"lever": "remat-offload", "strategy": row["strategy"], "offloaded": res.get("offloaded", 0),
                        "offloaded_bytes": res.get("offloaded_bytes", 0),
                        "mode": "cuda" if device.type == "cuda" else "functional"}
        else:
            timed = offload.parse_timed(json.dumps(out), source="memsched offload-act")
            m = measure_offload(net, x, chain, timed, runs=args.runs)
            schedule = {"lever": "act-offload", "strategy": row["strategy"], "offloaded": out.get("offloaded", []),
                        "mode": "cuda" if device.type == "cuda" else "functional"}
    finally:
        if tmp is not None:
            os.unlink(path)
    report = {
        "model": net.label, "batch": args.batch, "input": list(net.input_shape), "stages": n,
        "merged_stages": net.merged, "device": str(device), "threads": torch.get_num_threads(),
        "budget": budget, "store_all_peak": sa.peak, "store_all_time": sa.makespan,
        "predicted_peak": m.predicted_peak, "measured_peak": m.measured_peak,
        "predicted_time": m.predicted_time, "measured_time": m.measured_time,
        "grads_match": m.grads_match, "grads_detail": m.grads_detail,
        "forwards": m.forwards, "forwards_expected": m.forwards_expected,
        "peak_step": m.peak_step, "schedule": schedule,
        "certified": {"ratio": row.get("ratio"), "best_bound": rep.get("best_bound"),
                      "best_bound_by": rep.get("best_bound_by"), "optimal": rep.get("optimal")},
    }
    if m.allocator_peak is not None:
        # the allocator's view (workspaces included), parameter gradients out: an upper and a
        # lower bound (tracker.AllocatorTracker)
        report["allocator_peak"] = m.allocator_peak
        report["allocator_peak_lower"] = m.allocator_peak_lower
    if lever in ("act-offload", "remat-offload"):
        report["host_peak"] = m.host_peak
    return report


def _shape(s):
    if not s:
        return None
    try:
        return tuple(int(v) for v in s.split(","))
    except ValueError:
        raise ScheduleError(f"--input-shape {s!r}: want integers separated by commas, e.g. 3,32,32") from None


def _pct(measured, predicted):
    return f"{100 * (measured / predicted - 1):+.1f} %" if predicted else "n/a"


def print_report(r, out):
    s = r["schedule"]
    w = out.write
    w(f"model       {r['model']} batch={r['batch']} input={'x'.join(map(str, r['input']))}, {r['stages']} stages "
      f"(loss included), {r['device']}, {r['threads']} threads\n")
    frac = r["budget"] / r["store_all_peak"]
    w(f"budget      {fmt_bytes(r['budget'])} ({r['budget']} B) = {frac:.2f} × store-all peak "
      f"{fmt_bytes(r['store_all_peak'])}\n")
    c = r["certified"]
    ratio = f"{c['ratio']:.3f}" if c.get("ratio") is not None else "n/a"
    w(f"schedule    {s['lever']} {s['strategy']}: ratio {ratio} to the best bound ({c.get('best_bound_by')})\n")
    if s["lever"] == "remat":
        w(f"sequence    {s['sequence']}\n")
    elif s["lever"] == "remat-offload":
        w(f"offloaded   {s['offloaded']} tensors, {fmt_bytes(s['offloaded_bytes'])} ({s['mode']} transfers)\n")
    else:
        w(f"offloaded   x_{', x_'.join(map(str, s['offloaded']))} ({s['mode']} transfers)\n")
    fw = " ".join(map(str, r["forwards"]))
    ok = "as the schedule says" if r["forwards"] == r["forwards_expected"] else \
        f"MISMATCH (expected {' '.join(map(str, r['forwards_expected']))})"
    w(f"forwards    {fw}  ({ok})\n")
    w(f"{'':12}{'predicted':>14}{'measured':>14}\n")
    w(f"{'peak':12}{fmt_bytes(r['predicted_peak']):>14}{fmt_bytes(r['measured_peak']):>14}  "
      f"{_pct(r['measured_peak'], r['predicted_peak'])} (at step {r['peak_step']})\n")
    if r.get("allocator_peak") is not None:
        lo, up = r["allocator_peak_lower"], r["allocator_peak"]
        rng = fmt_bytes(up) if lo == up else f"{fmt_bytes(lo)}–{fmt_bytes(up)}"
        w(f"{'allocator':12}{'':>14}{rng:>14}  {_pct(lo, r['predicted_peak'])} (CUDA allocator, workspaces included)\n")
    w(f"{'time':12}{r['predicted_time'] * 1e3:>11.1f} ms{r['measured_time'] * 1e3:>11.1f} ms  "
      f"{_pct(r['measured_time'], r['predicted_time'])}\n")
    g = "equal to plain training (bitwise: parameter gradients, δ^0, buffers)" if r["grads_match"] \
        else f"DIFFER from plain training: {r['grads_detail']}"
    w(f"gradients   {g}\n")
