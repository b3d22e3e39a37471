"""Each rank of memsched's pipeline plans alone on one device: its peak against the prediction
(scripts/gpu-pipeline.sh; docs/torch.md, "Pipelined execution").

With one GPU the pipeline cannot run, but every rank can: its part of the model, its actions
in its schedule's order, receives replaced by fresh buffers of the right size (piperun's solo
runtime). Its memory is the rank's memory in the pipeline; its gradients are not the model's
(the received values are made up). The prediction is SPEC §7's replay (pipemodel: the rules of
memsched's verify/pipeline, equal to memsched's `peak_memory` on memsched's own plans, tested)
on the chain profiled here, on this device: on CUDA the allocator's view (o_f, o_b with cuDNN's
and cuBLAS's workspaces) against the allocator's peak.

  python -m memsched_torch.pipesolo --plans docs/pipeline-plans.json            # on the GPU
  python -m memsched_torch.pipesolo --plans docs/pipeline-plans.json --device cpu --small
  python -m memsched_torch.pipesolo --make-plans docs/pipeline-plans.json        # needs memsched

The plans file holds memsched's plans (parts and sequences) for the cases below, made from CPU
profiles with `--make-plans`: a plan's parts and sequences depend only on the stage count, which
is the same on every device and at every size, so --small (and the GPU) run the same plans on
other sizes. The machine needs torch (and torchvision for ResNet-18; without it those cases are
skipped, saying so); no memsched binary, no Go.
"""

import argparse
import json
import math
import os
import sys
import tempfile
import time

# (name, model flags at full size, at --small size, micro-batch size full/small)
MODELS = {
    "transformer": (dict(model="transformer", layers=12, hidden=256, heads=4, seq=64),
                    dict(model="transformer", layers=12, hidden=32, heads=2, seq=8), 8, 2),
    "resnet18": (dict(model="resnet18", image=224), dict(model="resnet18", image=32), 32, 2),
}
# Budgets as a fraction of the store-all floor (pipeline.store_all_floor): 1.0 admits a plan that
# stores everything (1.5 here: at the floor itself ResNet-18's only store-all plan under 1F1B is the
# whole model on one GPU, which holds one micro-batch); below 1.0 every plan recomputes, down to the
# least budget any plan fits (on CPU profiles: 0.35 of the floor for the transformer, 0.80 for
# ResNet-18, whose weights, not its activations, decide the floor on 2 GPUs).
REMAT_FRACTION = {"transformer": 0.5, "resnet18": 0.9}
# (model, P, m, schedule, remat, budget as a fraction of the store-all floor)
CASES = [(name, P, 2 * P, sch, remat, 1.5 if remat == "none" else REMAT_FRACTION[name])
         for name in MODELS for P in (2, 4) for sch in ("1f1b", "gpipe") for remat in ("none", "stage")]


def _args(model_kw, batch, m, device, threads=0, runs=1):
    a = dict(model=None, sequential=None, image=224, input_shape=None, layers=12, hidden=256, heads=4, seq=64,
             batch=batch, micro_batches=m, device=device, threads=threads, seed=0, runs=runs)
    a.update(model_kw)
    return argparse.Namespace(**a)


def case_key(name, P, m, schedule, remat):
    return f"{name} P={P} m={m} {schedule} remat={remat}"


def make_plans(path, runs=1):
    """Profile every case on this machine's CPU, ask memsched pipeline for its plan, write them."""
    from . import binary, pipemodel
    from .pipeline import Setup, choose, memsched_plan, plan_parts, store_all_floor

    exe = binary.find()
    out = {"note": "memsched pipeline plans for scripts/gpu-pipeline.sh, made from CPU profiles "
                   "(python -m memsched_torch.pipesolo --make-plans)", "cases": {}}
    setups = {}
    for name, P, m, sch, remat, frac in CASES:
        full, _, batch, _ = MODELS[name]
        key = (name, m)
        if key not in setups:
            setups[key] = Setup(_args(full, batch, m, "cpu", runs=runs))
        st = setups[key]
        L = len(st.chain) - 1
        one = pipemodel.replay(st.chain, [(1, L)], m, sch)
        fd, chain_path = tempfile.mkstemp(suffix=".json", prefix="pipesolo-chain-")
        with os.fdopen(fd, "w") as f:
            json.dump(st.chain.to_json(), f)
        try:
            floor = store_all_floor(exe, chain_path, P, m, sch, 25e9, one.peaks[0], time_limit=30)
            budget = int(frac * floor)
            res = memsched_plan(exe, chain_path, P, budget, 25e9, m, sch, remat, time_limit=30)
        finally:
            os.unlink(chain_path)
        r, _ = choose(res)
        if r is None:
            print(f"{case_key(name, P, m, sch, remat)}: no plan fits {budget} B", file=sys.stderr)
            continue
        parts = plan_parts(r)
        out["cases"][case_key(name, P, m, sch, remat)] = {
            "model": name, "gpus": P, "micro_batches": m, "schedule": sch, "remat": remat, "budget": budget,
            "store_all_floor": floor, "recompute": r.get("recompute"),
            "algo": r.get("algo"), "makespan": r.get("makespan"), "peak_memory": r.get("peak_memory"),
            "parts": [{"first": f, "last": l, "sequence": [{"op": o.kind, "stage": o.stage} for o in s] if s else None}
                      for f, l, s in parts]}
        print(f"{case_key(name, P, m, sch, remat)}: {[(f, l) for f, l, _ in parts]}", file=sys.stderr)
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


def measure(plans_path, device, small=False, only=None, out=sys.stdout, threads=0):
    """Run every case of the plans file, each rank alone; print one row per rank; return the rows."""
    import torch

    from . import pipemodel
    from .pipeline import Setup, execute
    from .schedule import Op, fmt_bytes

    with open(plans_path) as f:
        plans = json.load(f)["cases"]
    dev = torch.device(device)
    machine = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"
    out.write(f"# each rank alone on {machine}, torch {torch.__version__}; prediction: SPEC §7 replay on this "
              f"device's profile; measured: {'the CUDA allocator' if dev.type == 'cuda' else 'live storages'}\n")
    out.write(f"{'case':<38}{'rank':>5}{'stages':>8}{'predicted':>13}{'measured':>13}{'error':>9}"
              f"{'act. error':>11}  peak at\n")
    rows = []
    setups = {}
    t_start = time.monotonic()
    for key, c in plans.items():
        if only and not any(o in key for o in only):
            continue
        full, sm, batch, sbatch = MODELS[c["model"]]
        if c["model"] == "resnet18":
            try:
                import torchvision  # noqa: F401
            except ImportError:
                out.write(f"{key:<38}  skipped: torchvision is not installed\n")
                continue
        m = c["micro_batches"]
        skey = (c["model"], m)
        if skey not in setups:
            setups.clear()  # one model's profile at a time on the device
            if dev.type == "cuda":
                torch.cuda.empty_cache()
            setups[skey] = Setup(_args(sm if small else full, sbatch if small else batch, m, device, threads))
        st = setups[skey]
        parts = [(p["first"], p["last"], [Op(o["op"], o["stage"]) for o in p["sequence"]] if p.get("sequence") else None)
                 for p in c["parts"]]
        rep = pipemodel.replay(st.chain, [(f, l) for f, l, _ in parts], m, c["schedule"], math.inf,
                               [s for _, _, s in parts])
        results, _, _, _ = execute(st, parts, c["schedule"], solo=True)
        for k, r in enumerate(results):
            pred = rep.peaks[k]
            act_p = pred - rep.parts[k].w
            act_m = r.measured_peak - r.params_bytes
            row = {"case": key, "rank": k, "stages": [r.first, r.last], "predicted": pred,
                   "measured": r.measured_peak, "measured_lower": r.allocator_peak_lower,
                   "error": r.measured_peak / pred - 1, "activation_error": act_m / act_p - 1 if act_p else None,
                   "peak_step": r.peak_step, "memsched_peak_cpu_profile": (c.get("peak_memory") or [None] * 99)[k]}
            rows.append(row)
            ae = f"{100 * row['activation_error']:+.1f} %" if row["activation_error"] is not None else ""
            out.write(f"{key:<38}{k:>5}{f'{r.first}–{r.last}':>8}{fmt_bytes(pred):>13}{fmt_bytes(r.measured_peak):>13}"
                      f"{100 * row['error']:>+8.1f}%{ae:>11}  {r.peak_step}\n")
            out.flush()
    worst = max((abs(r["error"]) for r in rows), default=0.0)
    out.write(f"# {len(rows)} ranks, worst |error| {100 * worst:.1f} %, {time.monotonic() - t_start:.0f} s\n")
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m memsched_torch.pipesolo", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--plans", default="docs/pipeline-plans.json", help="the plans file (default %(default)s)")
    ap.add_argument("--make-plans", metavar="FILE", help="write the plans file (CPU profiles, memsched pipeline)")
    ap.add_argument("--device", default=None, help="cuda (default when available) or cpu")
    ap.add_argument("--small", action="store_true", help="small sizes (the same plans): a quick check on CPU")
    ap.add_argument("--only", action="append", help="only cases whose name contains this (repeatable)")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--json", help="also write the rows here")
    args = ap.parse_args(argv)
    if args.make_plans:
        make_plans(args.make_plans)
        return 0
    import torch

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cpu" and args.threads == 0:
        torch.set_num_threads(1)
    rows = measure(args.plans, device, small=args.small, only=args.only, threads=args.threads)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
