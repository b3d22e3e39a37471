"""The CPU fidelity table of docs/torch.md: memsched's prediction against the measurement.

    .venv/bin/python -m memsched_torch.fidelity [--threads 1] [--runs 3] [-o out/fidelity.json]

For each model (ResNet-18, ResNet-50, VGG-11, a 12-layer transformer stack) it profiles the chain
once, takes three budgets between the smallest feasible budget and the store-all peak (10 %, 50 %,
90 % of the way), asks `memsched certify` for the fastest verified remat schedule at each, executes
it (measure.measure_remat: reference plain training, one tracked run, `runs` timed runs) and
prints one Markdown row per budget. The JSON has every step's predicted and measured memory.
"""

import argparse
import json
import os
import sys
import tempfile
import time

import torch

from . import binary, models
from .measure import measure_remat
from .plan import REMAT_ALGOS
from .profile import describe, profile_net
from .schedule import parse_sequence

MODELS = [
    ("ResNet-18", dict(model="resnet18", image=64), 8),
    ("ResNet-50", dict(model="resnet50", image=64), 4),
    ("VGG-11", dict(model="vgg11", image=64), 4),
    ("Transformer ×12", dict(model="transformer", layers=12, hidden=256, heads=4, seq=64), 8),
]
FRACTIONS = (0.1, 0.5, 0.9)


def mib(b):
    return b / 2**20


def best_remat(path, budget, exe, time_limit):
    cert = binary.certify(path, budget, time_limit=time_limit, binary=exe)
    rep = cert["levers"]["remat"]
    rows = [s for s in rep["strategies"] if s.get("feasible") and s.get("verified") and s["strategy"] in REMAT_ALGOS]
    row = min(rows, key=lambda s: s["makespan"])
    out = binary.remat(path, budget, algo=row["strategy"], exact="exact" in (row.get("note") or ""), binary=exe)
    return row, rep, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--time-limit", type=float, default=10)
    ap.add_argument("--only", help="comma-separated model labels (default all)")
    ap.add_argument("-o", "--output", default="out/fidelity.json")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    exe = binary.find()
    rows = []
    print("| model | budget | schedule | forwards | predicted peak | measured peak | Δ peak | peak at "
          "| predicted time | measured time | Δ time | gradients |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for label, kw, batch in MODELS:
        if args.only and label not in args.only.split(","):
            continue
        net = models.build(**kw)
        x = net.make_input(batch)
        chain = profile_net(net, x, runs=args.runs)
        chain.name = describe(net, batch, x.device)
        n = len(chain)
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(chain.to_json(), f)
            path = f.name
        try:
            info = binary.run_json("info", "--chain", path, binary=exe)
            lo, hi = info["min_budget"], info["store_all_peak"]
            for frac in FRACTIONS:
                budget = int(lo + frac * (hi - lo))
                t0 = time.perf_counter()
                row, rep, out = best_remat(path, budget, exe, args.time_limit)
                ops = parse_sequence(json.dumps(out))
                m = measure_remat(net, x, chain, ops, runs=args.runs, predicted_peak=out["peak_memory"],
                                  predicted_time=out["makespan"])
                extra = sum(m.forwards) - n
                dp = 100 * (m.measured_peak / m.predicted_peak - 1)
                dt = 100 * (m.measured_time / m.predicted_time - 1)
                g = "bitwise equal" if m.grads_match else f"differ ({m.grads_detail})"
                print(f"| {label} b{batch} | {mib(budget):.2f} MiB ({budget / hi:.2f}) | {row['strategy']} "
                      f"(ratio {row.get('ratio', 1):.3f}) | +{extra} | {mib(m.predicted_peak):.3f} MiB | "
                      f"{mib(m.measured_peak):.3f} MiB | {dp:+.2f} % | {m.peak_step} | "
                      f"{m.predicted_time * 1e3:.0f} ms | {m.measured_time * 1e3:.0f} ms | {dt:+.0f} % | {g} |",
                      flush=True)
                rows.append({
                    "model": label, "batch": batch, "chain": chain.name, "stages": n, "budget": budget,
                    "min_budget": lo, "store_all_peak": hi, "strategy": row["strategy"], "ratio": row.get("ratio"),
                    "best_bound_by": rep.get("best_bound_by"), "sequence": [str(o) for o in ops],
                    "predicted_peak": m.predicted_peak, "measured_peak": m.measured_peak,
                    "predicted_time": m.predicted_time, "measured_time": m.measured_time,
                    "grads_match": m.grads_match, "max_rel_diff": m.max_rel_diff, "forwards": m.forwards,
                    "peak_step": m.peak_step, "seconds": time.perf_counter() - t0,
                    "steps": [{"step": s, "predicted": p, "measured": q} for s, p, q in m.steps],
                    "chain_stages": [vars(s) for s in chain.stages],
                })
        finally:
            os.unlink(path)
        del net, x
    os.makedirs(os.path.dirname(args.output) or ".", exist_ok=True)
    with open(args.output, "w") as f:
        json.dump({"torch": torch.__version__, "threads": args.threads, "rows": rows}, f, indent=1)
    print(f"\nwritten {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
