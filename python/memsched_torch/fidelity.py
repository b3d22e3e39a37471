"""The fidelity tables of docs/torch.md: memsched's prediction against the measurement.

    .venv/bin/python -m memsched_torch.fidelity [--threads 1] [--runs 3] [-o out/fidelity.json]
    python3 -m memsched_torch.fidelity --device cuda --offload --combined -o out/fidelity-gpu.json

For each model of the preset (`cpu`, the default on CPU: ResNet-18, ResNet-50, VGG-11 at 64×64
and a 12-layer transformer stack; `gpu`, the default on CUDA: ResNet-50 and VGG-11 at 224×224
and a 12-layer transformer with hidden 1024; `tiny`, for dry runs) it profiles the chain once on the
device, takes three budgets between the smallest feasible budget and the store-all peak (10 %,
50 %, 90 % of the way), asks `memsched certify` for the fastest verified remat schedule at each,
executes it (measure.measure_remat: reference plain training, one tracked run, on CUDA one run
for the allocator's peak, `runs` timed runs) and prints one Markdown row per budget.

With --offload, activation-offloading rows too: budgets 20 % and 60 % of the way from 001's
smallest memory (offload-act's min_memory) to the store-all peak, schedules from `memsched offload-act --algo greedy|dynprog|vdnn`, executed by offload.py (mode
"cuda" on a GPU: real copies on a side stream into pinned host memory; "functional" on CPU).
The bandwidth given to memsched is --bandwidth, else on CUDA the slower direction of a pinned
host↔device copy measured first (offload.measure_bandwidth). With --combined, one
`memsched remat-offload --algo pofo` row per model at the 10 % budget (combined.py).

On CUDA the run is made deterministic (measure.deterministic) so that gradients can be
compared bitwise with plain training; the warnings of operations that PyTorch does not call
deterministic are kept in the JSON. A row whose gradients differ says by how much (the largest
difference relative to the reference's largest magnitude). The JSON, with every step's predicted and measured memory, is
rewritten after each row, so a run cut short keeps what it measured; a row that fails records
its error and the run goes on.
"""

import argparse
import json
import os
import sys
import tempfile
import time
import traceback
import warnings

import torch

from . import binary, combined, models, offload
from .measure import deterministic, measure_combined, measure_offload, measure_remat
from .plan import REMAT_ALGOS
from .profile import describe, profile_net
from .schedule import ScheduleError, parse_sequence

PRESETS = {
    "cpu": [
        ("ResNet-18", dict(model="resnet18", image=64), 8),
        ("ResNet-50", dict(model="resnet50", image=64), 4),
        ("VGG-11", dict(model="vgg11", image=64), 4),
        ("Transformer ×12", dict(model="transformer", layers=12, hidden=256, heads=4, seq=64), 8),
    ],
    # Large enough that an iteration takes tens of milliseconds on an H100 (times below a
    # millisecond per stage are mostly launch latency), small enough that a row takes seconds.
    "gpu": [
        ("ResNet-50", dict(model="resnet50", image=224), 64),
        ("Transformer ×12", dict(model="transformer", layers=12, hidden=1024, heads=16, seq=512), 8),
        ("VGG-11", dict(model="vgg11", image=224), 32),
    ],
    "tiny": [
        ("ResNet-18", dict(model="resnet18", image=32), 2),
        ("Transformer ×4", dict(model="transformer", layers=4, hidden=32, heads=2, seq=8), 2),
    ],
}
FRACTIONS = (0.1, 0.5, 0.9)
OFFLOAD_ALGOS = ("greedy", "dynprog", "vdnn")


class Infeasible(Exception):
    pass


def mib(b):
    return b / 2**20


def device_info(device):
    info = {"torch": torch.__version__, "python": sys.version.split()[0]}
    if device.type == "cuda":
        p = torch.cuda.get_device_properties(device)
        info.update(gpu=p.name, memory=p.total_memory, multiprocessors=p.multi_processor_count,
                    cuda=torch.version.cuda, cudnn=torch.backends.cudnn.version())
    else:
        info["threads"] = torch.get_num_threads()
    return info


def best_remat(path, budget, exe, time_limit):
    cert = binary.certify(path, budget, time_limit=time_limit, binary=exe)
    rep = cert["levers"]["remat"]
    rows = [s for s in rep["strategies"] if s.get("feasible") and s.get("verified") and s["strategy"] in REMAT_ALGOS]
    row = min(rows, key=lambda s: s["makespan"])
    out = binary.remat(path, budget, algo=row["strategy"], exact="exact" in (row.get("note") or ""), binary=exe)
    return row, rep, out


def _pct(measured, predicted):
    return f"{100 * (measured / predicted - 1):+.2f} %" if predicted and measured is not None else "—"


def _grads(m):
    if m.grads_match:
        return "bitwise equal"
    floor = ""
    if m.reference_equal is not None:
        floor = "; plain vs plain: " + ("bitwise" if m.reference_equal else f"{m.reference_max_rel:.1e}")
    return f"differ: max rel {m.max_rel_diff:.1e}{floor} ({m.grads_detail})"


HEADER = ("| model | lever | schedule | budget | forwards | predicted peak | measured peak | Δ | allocator peak | Δ "
          "| peak at | predicted time | measured time | Δ time | gradients |")


def _row_text(label, batch, lever, sched, budget, hi, extra, m):
    alloc = "—"
    if m.allocator_peak is not None:
        alloc = f"{mib(m.allocator_peak):.3f} MiB"
        if m.allocator_peak_lower != m.allocator_peak:  # parameter gradients in flight: a range
            alloc = f"{mib(m.allocator_peak_lower):.3f}–{alloc} ({m.allocator_peak_step})"
    return (f"| {label} b{batch} | {lever} | {sched} | {mib(budget):.2f} MiB ({budget / hi:.2f}) | +{extra} | "
            f"{mib(m.predicted_peak):.3f} MiB | {mib(m.measured_peak):.3f} MiB | {_pct(m.measured_peak, m.predicted_peak)} "
            f"| {alloc} | {_pct(m.allocator_peak, m.predicted_peak)} | {m.peak_step} | "
            f"{m.predicted_time * 1e3:.1f} ms | {m.measured_time * 1e3:.1f} ms | "
            f"{100 * (m.measured_time / m.predicted_time - 1):+.0f} % | {_grads(m)} |")


def _record(m):
    return {"predicted_peak": m.predicted_peak, "measured_peak": m.measured_peak,
            "allocator_peak": m.allocator_peak, "allocator_peak_lower": m.allocator_peak_lower,
            "allocator_peak_step": m.allocator_peak_step,
            "allocator_steps": [{"step": l, "upper": u, "lower": lo} for l, u, lo in m.allocator_steps],
            "predicted_time": m.predicted_time,
            "measured_time": m.measured_time, "grads_match": m.grads_match, "grads_detail": m.grads_detail,
            "max_rel_diff": m.max_rel_diff, "reference_equal": m.reference_equal,
            "reference_max_rel": m.reference_max_rel, "forwards": m.forwards, "forwards_expected": m.forwards_expected,
            "forwards_ok": m.forwards == m.forwards_expected, "peak_step": m.peak_step,
            "host_peak": m.host_peak,
            "transfers": [list(t) for t in m.transfers],
            "steps": [{"step": s, "predicted": p, "measured": q} for s, p, q in m.steps]}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--preset", choices=sorted(PRESETS), help="models (default: cpu on CPU, gpu on CUDA)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=3, help="timed runs per row (median)")
    ap.add_argument("--time-limit", type=float, default=10)
    ap.add_argument("--only", help="comma-separated model labels (default all)")
    ap.add_argument("--no-remat", action="store_true", help="skip the remat rows")
    ap.add_argument("--offload", action="store_true", help="activation-offloading rows too")
    ap.add_argument("--offload-fractions", default="0.2,0.6",
                    help="act-offload budgets: fractions of the way from 001's smallest memory (memsched "
                    "offload-act's min_memory) to the store-all peak (default 0.2,0.6)")
    ap.add_argument("--offload-algos", default=",".join(OFFLOAD_ALGOS))
    ap.add_argument("--combined", action="store_true", help="one remat-offload (pofo) row per model")
    ap.add_argument("--bandwidth", help="link rate for memsched (e.g. 25GB/s); default on CUDA: measured")
    ap.add_argument("-o", "--output", default="out/fidelity.json")
    args = ap.parse_args(argv)
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        print("fidelity: --device cuda but CUDA is not available", file=sys.stderr)
        return 2
    det = deterministic(device)  # per model, strict where possible (below)
    torch.set_num_threads(args.threads)
    exe = binary.find()
    doc = {"device": device_info(device), "deterministic": det, "threads": args.threads, "runs": args.runs,
           "memsched": exe, "rows": [], "warnings": []}
    if args.offload or args.combined:
        if args.bandwidth:
            bw = args.bandwidth
        elif device.type == "cuda":
            link = offload.measure_bandwidth(device)
            doc["link"] = link
            print(f"link: pinned host->device {link['h2d'] / 1e9:.2f} GB/s, device->host {link['d2h'] / 1e9:.2f} GB/s "
                  f"({link['bytes'] / 2**20:.0f} MiB copies; {link['small']['bytes'] / 2**20:.0f} MiB copies: "
                  f"{link['small']['h2d'] / 1e9:.2f} and {link['small']['d2h'] / 1e9:.2f} GB/s)", flush=True)
            bw = f"{min(link['h2d'], link['d2h']) / 1e9:.3f}GB/s"
        else:
            print("fidelity: --offload on CPU needs --bandwidth (there is no link to measure)", file=sys.stderr)
            return 2
        doc["bandwidth"] = bw
    os.makedirs(os.path.dirname(args.output) or ".", exist_ok=True)

    def save():
        with open(args.output, "w") as f:
            json.dump(doc, f, indent=1)

    seen_warnings = set()

    def keep_warnings(ws):
        for w in ws:
            text = f"{w.category.__name__}: {w.message}"
            if text not in seen_warnings:
                seen_warnings.add(text)
                doc["warnings"].append(text)

    preset = args.preset or ("gpu" if device.type == "cuda" else "cpu")
    print(HEADER)
    print("| --- " * 15 + "|", flush=True)
    for label, kw, batch in PRESETS[preset]:
        if args.only and label not in args.only.split(","):
            continue
        t0 = time.perf_counter()
        mode = None
        if device.type == "cuda":
            # Strict where the model allows it (its attention backward is then deterministic
            # too); warn_only where an operation has no deterministic CUDA kernel at all.
            mode = "strict"
            deterministic(device, warn_only=False)
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            net = models.build(device=device, **kw)
            x = net.make_input(batch, device)
            try:
                chain = profile_net(net, x, runs=args.runs)
            except RuntimeError as e:
                if mode != "strict" or "deterministic" not in str(e):
                    raise
                print(f"{label}: strict determinism refused ({str(e).splitlines()[0]}); warn_only", flush=True)
                mode = "warn_only"
                deterministic(device, warn_only=True)
                chain = profile_net(net, x, runs=args.runs)
        keep_warnings(ws)
        chain.name = describe(net, batch, device)
        n = len(chain)
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(chain.to_json(), f)
            path = f.name
        info = binary.run_json("info", "--chain", path, binary=exe)
        lo, hi = info["min_budget"], info["store_all_peak"]
        doc.setdefault("chains", []).append({"model": label, "batch": batch, "determinism": mode,
                                             "chain": chain.to_json(),
                                             "info": info, "profile_seconds": time.perf_counter() - t0,
                                             "stages_measured": [vars(s) for s in chain.stages]})
        save()
        jobs = []
        if not args.no_remat:
            jobs += [("remat", frac, None) for frac in FRACTIONS]
        if args.offload:
            jobs += [("act-offload", float(f), a) for f in args.offload_fractions.split(",")
                     for a in args.offload_algos.split(",")]
        if args.combined:
            jobs.append(("remat-offload", FRACTIONS[0], "pofo"))
        least = None  # 001's smallest memory for this chain (offload-act's min_memory)
        try:
            for lever, frac, algo in jobs:
                t1 = time.perf_counter()
                row = {"model": label, "batch": batch, "stages": n, "lever": lever, "min_budget": lo,
                       "store_all_peak": hi, "determinism": mode}
                try:
                    with warnings.catch_warnings(record=True) as ws:
                        warnings.simplefilter("always")
                        if lever == "remat":
                            budget = int(lo + frac * (hi - lo))
                            crow, rep, out = best_remat(path, budget, exe, args.time_limit)
                            ops = parse_sequence(json.dumps(out))
                            m = measure_remat(net, x, chain, ops, runs=args.runs, predicted_peak=out["peak_memory"],
                                              predicted_time=out["makespan"])
                            sched = f"{crow['strategy']} (ratio {crow.get('ratio', 1):.3f})"
                            row.update(strategy=crow["strategy"], ratio=crow.get("ratio"),
                                       best_bound_by=rep.get("best_bound_by"), sequence=[str(o) for o in ops])
                        elif lever == "act-offload":
                            if least is None:
                                least = binary.run_json("offload-act", "--chain", path, "--mem", str(hi),
                                                        "--bandwidth", bw, "--algo", "none",
                                                        binary=exe)["min_memory"]
                            budget = int(least + frac * (hi - least))
                            row.update(strategy=algo, min_memory=least, budget=budget)
                            out = binary.run_json("offload-act", "--chain", path, "--mem", str(budget),
                                                  "--bandwidth", bw, "--algo", algo, binary=exe)
                            if not out.get("feasible"):
                                raise Infeasible(f"memsched offload-act --algo {algo}: no schedule at {budget} B")
                            timed = offload.parse_timed(json.dumps(out), source="memsched offload-act")
                            m = measure_offload(net, x, chain, timed, runs=args.runs)
                            moved = out.get("offloaded_bytes") or 0
                            sched = (f"{algo}: x_{','.join(map(str, out['offloaded']))} "
                                     f"({mib(moved):.1f} MiB)" if out["offloaded"] else f"{algo}: nothing offloaded")
                            row.update(offloaded=out["offloaded"], offloaded_bytes=moved,
                                       ratio=out.get("ratio_to_best_bound"), bandwidth=out.get("bandwidth"),
                                       link_utilisation=out.get("link_utilisation"))
                        else:
                            budget = int(lo + frac * (hi - lo))
                            row.update(strategy=algo)
                            try:
                                out = binary.remat_offload(path, budget, bw, algo=algo, binary=exe)
                            except ScheduleError as e:
                                raise Infeasible(str(e)) from None
                            sc = combined.parse_combined(json.dumps(out), source="memsched remat-offload", algo=algo)
                            m = measure_combined(net, x, chain, sc, bandwidth=out["bandwidth"], budget=budget,
                                                 runs=args.runs)
                            res = out["results"][0]
                            sched = f"{algo}: {res.get('offloaded', 0)} offloaded ({mib(res.get('offloaded_bytes', 0)):.1f} MiB)"
                            row.update(offloaded=res.get("offloaded"), offloaded_bytes=res.get("offloaded_bytes"),
                                       bandwidth=out.get("bandwidth"))
                    keep_warnings(ws)
                    extra = sum(m.forwards) - n
                    row.update(budget=budget, mode="cuda" if device.type == "cuda" else "functional", **_record(m))
                    print(_row_text(label, batch, lever, sched, budget, hi, extra, m), flush=True)
                except Infeasible as e:  # memsched's answer, not a failure of the executor
                    row.update(infeasible=str(e))
                    print(f"| {label} b{batch} | {lever} | {algo} | {mib(budget):.2f} MiB | no schedule |", flush=True)
                except Exception as e:  # a row that fails is a finding: keep it and go on
                    row.update(error=f"{type(e).__name__}: {e}", traceback=traceback.format_exc())
                    print(f"| {label} b{batch} | {lever} | {algo or ''} {frac} | FAILED: {type(e).__name__}: {e} |",
                          flush=True)
                    traceback.print_exc()
                row["seconds"] = time.perf_counter() - t1
                doc["rows"].append(row)
                save()
        finally:
            os.unlink(path)
        del net, x
        if device.type == "cuda":
            torch.cuda.empty_cache()
    save()
    print(f"\nwritten {args.output}", file=sys.stderr)
    failed = [r for r in doc["rows"] if "error" in r or not r.get("forwards_ok", True)]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
