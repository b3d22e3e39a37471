"""`python -m memsched_torch pipeline`: profile a model per micro-batch, ask memsched for a
pipelined plan (`memsched pipeline`, SPEC §7), run it over P processes with
torch.distributed.pipelining, and put the prediction next to the measurement: each rank's peak,
the makespan, and the gradients against one-process training of the same micro-batches.

  python -m memsched_torch pipeline --model transformer --gpus 2 --micro-batches 4 --mem-fraction 0.6
  python -m memsched_torch pipeline --model resnet18 --image 64 --batch 8 --gpus 4 --micro-batches 8 \\
      --mem 60MiB --schedule gpipe --remat stage --json

--batch is the micro-batch size (the chain is profiled per micro-batch, SPEC §7); one iteration
trains batch × m samples. docs/torch.md ("Pipelined execution") says what is measured and how.
"""

import json
import math
import os
import re
import sys
import tempfile

from .schedule import ScheduleError, fmt_bytes, parse_size

DESCRIPTION = ("Profile the model per micro-batch, ask `memsched pipeline` for the plan (the stages of each GPU "
               "and, with --remat stage, each GPU's recomputation sequence), run it with "
               "torch.distributed.pipelining over one process per used GPU (gloo on CPU, NCCL on CUDA), and "
               "print each rank's predicted and measured peak, the predicted and measured makespan, and whether "
               "the gradients equal one-process training of the same micro-batches.")
EPILOG = ("--batch is the micro-batch size: one iteration trains batch × m samples; every rank runs --threads torch "
          "threads (default 1, also for the one-process referee). --mem-fraction F: every GPU's budget is F × the "
          "store-all floor, the least memory per GPU with which memsched stores everything on at most P GPUs "
          "(bisection with --remat none, 0.1 %): F ≥ 1 admits a store-all plan, F < 1 makes some part recompute. "
          "Exit status: 0 done and the gradients equal, 1 the run failed or the gradients differ, 2 bad input "
          "(one line on stderr, before anything runs).")
RUNTIMES = ("auto", "torch", "p2p")
# Relative gradient difference accepted when not bitwise (reported with its size either way).
GRAD_TOL = 1e-6


def add_arguments(p):
    """The pipeline command's own flags (the model's come from __main__._model_args)."""
    p.add_argument("--gpus", type=int, required=True, help="P: GPUs (processes) available; the plan may use fewer")
    p.add_argument("--micro-batches", type=int, required=True, help="m: micro-batches per iteration")
    p.add_argument("--mem", help="every GPU's memory M (e.g. 60MiB)")
    p.add_argument("--mem-fraction", type=float,
                   help="M as a fraction of the least memory per GPU with which memsched stores everything on ≤ P "
                   "GPUs (found by bisection): below 1 some part must recompute")
    p.add_argument("--schedule", default="1f1b", help="1f1b (Schedule1F1B) or gpipe (ScheduleGPipe); default 1f1b")
    p.add_argument("--remat", default="stage", help="stage (memsched may plan recomputation inside each GPU's part, "
                   "as memsched pipeline's default) or none (every part stores everything); default stage")
    p.add_argument("--bandwidth", default="inf", help="link between consecutive GPUs, each direction (e.g. 25GB/s; "
                   "default inf: free links)")
    p.add_argument("--algo", help="the planner result to run (default: the fastest verified feasible one)")
    p.add_argument("--free", default="model", help="model: every part keeps ā^ℓ to the end of B^ℓ, as memsched's model "
                   "(SPEC §1) counts; eager: autograd frees saved tensors as it goes, PyTorch's way (lower); default "
                   "model")
    p.add_argument("--runtime", default="auto", help="torch (torch.distributed.pipelining), p2p (the fallback: "
                   "blocking recv and isend in the same order), auto (torch, p2p if it fails or hangs); default auto")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds the ranks may take before the run is "
                   "declared hung (default 600)")
    p.add_argument("--time-limit", type=float, help="memsched's time limit in seconds")
    p.add_argument("--chain-out", help="also write the profiled chain (per micro-batch) here")
    p.add_argument("--plan-out", help="also write memsched's plan (its JSON) here")
    p.add_argument("--json", action="store_true", help="JSON: grads_match, ranks (stages, predicted_peak, "
                   "measured_peak), predicted_makespan, measured_makespan, …")


def parse_rate(text):
    """'25GB/s', '1e9' (B/s), 'inf' (free links) -> bytes per second."""
    if str(text).strip().lower() in ("inf", "infinity"):
        return math.inf
    m = re.match(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?\d+)?)\s*([KMGTP]i?B|B)?(/s)?\s*$", str(text))
    if not m or (m.group(2) and not m.group(3)):
        raise ScheduleError(f"--bandwidth {text!r}: want a rate such as 25GB/s")
    unit = m.group(2) or "B"
    if unit.startswith("P"):
        scale = 10 ** 15 if unit == "PB" else 2 ** 50
        r = float(m.group(1)) * scale
    else:
        r = float(parse_size(m.group(1) + unit))
    if not (1 <= r <= 1e15):
        raise ScheduleError(f"--bandwidth {text!r}: outside 1 B/s to 1 PB/s")
    return r


def check_args(args):
    """Every input checked before anything runs: ScheduleError (exit 2, one line) on the first bad one."""
    if args.gpus < 1:
        raise ScheduleError(f"--gpus {args.gpus}: want at least 1")
    if args.micro_batches < 1:
        raise ScheduleError(f"--micro-batches {args.micro_batches}: want at least 1")
    if args.batch < 1:
        raise ScheduleError(f"--batch {args.batch}: want at least 1 sample per micro-batch")
    if (args.mem is None) == (args.mem_fraction is None):
        raise ScheduleError("give exactly one of --mem SIZE and --mem-fraction F")
    if args.mem is not None:
        args.budget = parse_size(args.mem)
        if args.budget <= 0:
            raise ScheduleError(f"--mem {args.mem}: want a positive size")
    elif not 0 < args.mem_fraction <= 10:
        raise ScheduleError(f"--mem-fraction {args.mem_fraction}: want a fraction of the store-all floor in (0, 10]")
    if args.schedule not in ("1f1b", "gpipe"):
        raise ScheduleError(f"--schedule {args.schedule!r}: want 1f1b or gpipe")
    if args.remat not in ("none", "stage"):
        raise ScheduleError(f"--remat {args.remat!r}: want none or stage")
    if args.free not in ("model", "eager"):
        raise ScheduleError(f"--free {args.free!r}: want model or eager")
    if args.runtime not in RUNTIMES:
        raise ScheduleError(f"--runtime {args.runtime!r}: want {', '.join(RUNTIMES)}")
    args.rate = parse_rate(args.bandwidth)
    if not args.timeout > 0:
        raise ScheduleError(f"--timeout {args.timeout}: want a positive number of seconds")
    if args.time_limit is not None and not args.time_limit > 0:
        raise ScheduleError(f"--time-limit {args.time_limit}: want a positive number of seconds")
    if args.threads < 0:
        raise ScheduleError(f"--threads {args.threads}: want 0 (one per rank) or more")
    from .__main__ import _writable

    _writable(args.chain_out, "--chain-out")
    _writable(args.plan_out, "--plan-out")
    import torch

    try:
        dev = torch.device(args.device)
    except RuntimeError:
        raise ScheduleError(f"--device {args.device!r}: want cpu or cuda") from None
    if dev.type == "cuda":
        n = torch.cuda.device_count()
        if n < args.gpus:
            raise ScheduleError(f"--device cuda --gpus {args.gpus}: this machine has {n} CUDA device(s); one rank "
                                "per GPU needs as many (scripts/gpu-pipeline.sh measures one rank at a time)")
    elif dev.type != "cpu":
        raise ScheduleError(f"--device {args.device}: want cpu or cuda")
    from . import binary

    args.exe = binary.find()


def plan_parts(result):
    """The parts of a planner result: [(first, last, sequence or None)] in GPU order."""
    from .schedule import parse_sequence

    parts = result.get("parts") or (result.get("plan") or {}).get("parts")
    if parts:
        out = []
        for k, p in enumerate(parts):
            if p.get("gpu", k) != k:
                raise ScheduleError(f"memsched pipeline: part {k} is on GPU {p.get('gpu')}: the executor runs "
                                    "contiguous plans (part k on GPU k)")
            seq = p.get("sequence")
            out.append((p["first"], p["last"], parse_sequence(json.dumps(seq), source=f"part {k}") if seq else None))
        return out
    seqs = result.get("sequences") or [None] * len(result["stages"])
    return [(f, l, parse_sequence(json.dumps(s), source=f"part {k}") if s else None)
            for k, ((f, l), s) in enumerate(zip(result["stages"], seqs))]


def contiguous(r, schedule=None, m=None):
    """Whether a planner result is a contiguous plan run in its schedule's named order (part k
    on GPU k; no action list, or the named one): what PipelineStage with Schedule1F1B or
    ScheduleGPipe runs. memsched's non-contiguous plans (packing, milp-alloc: several parts per
    GPU, their own action lists) need a multi-stage runtime this executor does not have."""
    from .pipemodel import actions

    S = len(r.get("stages") or [])
    if r.get("gpus") is not None and list(r["gpus"]) != list(range(S)):
        return False
    acts = r.get("actions")
    if acts is None:
        return True
    if schedule is None or m is None or len(acts) < S:
        return False
    return all(list(acts[k]) == [f"{k}{kind}{mu}" for kind, mu in actions(schedule, k, S, m)] for k in range(S))


def choose(out, algo=None):
    """The result to run: --algo's, else the verified feasible contiguous one with the smallest
    makespan (a faster non-contiguous plan is named in `skipped`). Returns (result or None,
    skipped: [(algo, makespan)] of faster non-contiguous plans)."""
    results = out.get("results") or []
    sch, m = out.get("schedule"), out.get("micro_batches")
    if algo:
        named = [r for r in results if r.get("algo") == algo]
        if not named:
            have = ", ".join(r.get("algo", "?") for r in results) or "none"
            raise ScheduleError(f"--algo {algo}: memsched pipeline gave no such result (it gave: {have})")
        r = named[0]
        if not r.get("feasible"):
            raise ScheduleError(f"--algo {algo}: its plan does not fit ({r.get('reason') or r.get('note') or 'infeasible'})")
        if not contiguous(r, sch, m):
            raise ScheduleError(f"--algo {algo}: its plan places several parts on one GPU; the executor runs "
                                "contiguous plans (part k on GPU k) under Schedule1F1B or ScheduleGPipe")
        return r, []
    ok = [r for r in results if r.get("feasible") and r.get("verified")]
    runnable = [r for r in ok if contiguous(r, sch, m)]
    best = min(runnable, key=lambda r: r["makespan"]) if runnable else None
    skipped = [(r["algo"], r["makespan"]) for r in ok if not contiguous(r, sch, m)
               and (best is None or r["makespan"] < best["makespan"])]
    return best, skipped


def micro_batches(net, batch, m, device, seed):
    """The iteration's batch (batch × m samples, net.make_input) cut into m micro-batches."""
    x = net.make_input(batch * m, device, seed=seed)
    return [x[i * batch:(i + 1) * batch].clone() for i in range(m)]


def shapes(net, x):
    """Shape and dtype of a^0..a^L for one micro-batch (a no-grad forward; buffers restored)."""
    import torch

    state = net.state()
    out_s, out_d = [tuple(x.shape)], [x.dtype]
    try:
        with torch.no_grad():
            h = x
            for mod in net.modules[:-1]:
                h = mod(h)
                out_s.append(tuple(h.shape))
                out_d.append(h.dtype)
    finally:
        net.load_state(state)
    return out_s, out_d


def reference(net, mbs, seed):
    """One-process training of the same micro-batches: for each μ in order, the whole chain
    forward (stage ℓ seeded by pipestage.MicroBatchSeeds) and backward, gradients accumulated,
    then divided by m as PyTorch's schedules do (scale_grads). Returns (grads, buffers, losses)."""
    import torch

    from .pipestage import MicroBatchSeeds

    net.zero_grad()
    seeds = MicroBatchSeeds(seed).attach(net.modules)
    losses = []
    try:
        for mu, x in enumerate(mbs):
            seeds.mb = mu
            h = x
            for mod in net.modules:
                h = mod(h)
            h.backward()
            losses.append(float(h.detach()))
    finally:
        seeds.detach()
    grads = []
    for p in net.parameters():
        if p.grad is not None:
            p.grad.div_(len(mbs))
        grads.append(None if p.grad is None else p.grad.detach().clone())
    bufs = [b.detach().clone() for m in net.modules for b in m.buffers()]
    net.zero_grad()
    return grads, bufs, losses


def compare(ref_grads, ref_bufs, ref_losses, results):
    """Every rank's gradients and buffers against the reference's: (bitwise, max relative
    difference, detail)."""
    import torch

    equal, worst, detail = True, 0.0, "bitwise equal (parameter gradients, buffers, losses)"
    pairs = []
    for r in results:
        pairs += [(f"rank {r.rank} gradient of parameter {i}", ref_grads[i], g) for i, g in r.grads.items()]
        pairs += [(f"rank {r.rank} buffer {i}", ref_bufs[i], b) for i, b in r.buffers.items()]
    last = results[-1]
    pairs += [(f"loss of micro-batch {mu}", torch.tensor(a), torch.tensor(b))
              for mu, (a, b) in enumerate(zip(ref_losses, last.losses))]
    if len(last.losses) != len(ref_losses):
        return False, math.inf, f"the last rank reports {len(last.losses)} losses, want {len(ref_losses)}"
    for what, a, b in pairs:
        if (a is None) != (b is None):
            return False, math.inf, f"{what}: one side missing"
        if a is None or torch.equal(a, b):
            continue
        equal = False
        if not a.is_floating_point():
            return False, math.inf, f"{what}: integer values differ"
        d = (a.double() - b.double()).abs().max().item()
        rel = d / (a.double().abs().max().item() or 1.0)
        if rel >= worst:
            worst, detail = rel, f"{what}: max |Δ| {d:.3g} (relative {rel:.3g})"
    return equal, worst, detail


class Setup:
    """The model built, its micro-batches made and its chain profiled (per micro-batch)."""

    def __init__(self, args, accumulate=None):
        import torch

        from . import models
        from .measure import deterministic
        from .plan import _shape
        from .profile import describe, profile_net

        self.device = torch.device(args.device)
        deterministic(self.device)
        self.threads = args.threads or 1
        torch.set_num_threads(self.threads)
        self.model_args = dict(model=args.model, sequential=args.sequential, image=args.image,
                               input_shape=_shape(args.input_shape), layers=args.layers, hidden=args.hidden,
                               heads=args.heads, seq=args.seq, seed=args.seed)
        self.net = models.build(device=self.device, **self.model_args)
        self.m = args.micro_batches
        self.seed = args.seed
        self.batch = args.batch
        self.mbs = micro_batches(self.net, args.batch, self.m, self.device, args.seed)
        # o_b with gradients accumulating over the micro-batches (every backward after the first
        # adds into .grad: each weight gradient is first a temporary).
        acc = self.m > 1 if accumulate is None else accumulate
        # The pipeline's input is data: PyTorch computes no gradient for it (δ^0 = 0, and the
        # first stage's backward profiled without it).
        self.chain = profile_net(self.net, self.mbs[0], runs=args.runs, accumulate=acc, input_grad=False)
        self.chain.name = describe(self.net, args.batch, self.device) + "; one micro-batch"
        self.shapes, self.dtypes = shapes(self.net, self.mbs[0])


def execute(setup, parts, schedule, runtime="auto", runs=1, timeout=600.0, solo=False, free="model"):
    """Run a contiguous plan (parts: [(first, last, sequence or None)] in GPU order) over one
    process per part — or, solo, each rank alone in this process, one after the other (no
    peers: scripts/gpu-pipeline.sh) — and compare with one-process training (not solo).
    Returns (results, runtime that ran, note, comparison or None)."""
    import shutil

    import torch

    from . import piperun

    m, S = setup.m, len(parts)
    tmp = tempfile.mkdtemp(prefix="memsched-pipeline-")
    try:
        state_path = os.path.join(tmp, "state.pt")
        torch.save(setup.net.state(), state_path)
        inputs_path = os.path.join(tmp, "inputs.pt")
        torch.save([x.cpu() for x in setup.mbs], inputs_path)
        note = ""
        auto = runtime == "auto"
        if solo:
            runtime = "solo"
        elif runtime == "auto":
            runtime = "torch"
            if schedule == "1f1b" and m < S:
                runtime, note = "p2p", f"Schedule1F1B needs m ≥ S (m = {m}, S = {S}): ran the same order by p2p"
        elif runtime == "torch" and schedule == "1f1b" and m < S:
            raise ScheduleError(f"--runtime torch: Schedule1F1B needs --micro-batches ≥ the plan's {S} stages "
                                f"(m = {m}); --runtime p2p runs the same order")

        def specs(rt):
            port = piperun.free_port()
            d = tempfile.mkdtemp(prefix=f"ranks-{rt}-", dir=tmp)
            dev = setup.device
            return [piperun.RankSpec(rank=k, world=S, first=f, last=l,
                                     sequence=[(o.kind, o.stage) for o in s] if s else None, m=m,
                                     schedule=schedule, runtime=rt, model_args=setup.model_args,
                                     state_path=state_path, inputs_path=inputs_path, shapes=setup.shapes,
                                     dtypes=setup.dtypes, out_dir=d,
                                     device=str(dev) if dev.type == "cpu" or rt == "solo" else f"cuda:{k}",
                                     port=port, seed=setup.seed, threads=setup.threads, runs=runs, timeout=timeout,
                                     free=free)
                    for k, (f, l, s) in enumerate(parts)]

        if solo:
            return [piperun.run_rank(s) for s in specs("solo")], runtime, note, None
        try:
            results = piperun.launch(specs(runtime), timeout)
        except piperun.RankFailure as e:
            if not auto or runtime != "torch":
                raise
            note = f"torch's runtime {'hung' if e.hung else 'failed'} ({e}); ran the p2p fallback"
            runtime = "p2p"
            results = piperun.launch(specs(runtime), timeout)
        ref = reference(setup.net, setup.mbs, setup.seed)
        return results, runtime, note, compare(*ref, results)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def rank_rows(results, predicted, rep, m, schedule, seqs=None, recompute=None):
    """The report's ranks: stages, predicted and measured peaks, and what explains them."""
    S = len(results)
    rows = []
    for k, r in enumerate(results):
        pred = predicted[k] if predicted else rep.peaks[k]
        part = rep.parts[k]
        rows.append({
            "rank": k, "stages": [r.first, r.last], "predicted_peak": pred, "replayed_peak": rep.peaks[k],
            "measured_peak": r.measured_peak, "error": (r.measured_peak / pred - 1) if pred else None,
            # without the persistent bytes (parameters) on both sides: the activations' own error
            "predicted_activations": pred - part.w, "measured_activations": r.measured_peak - r.params_bytes,
            "peak_step": r.peak_step, "params_bytes": r.params_bytes,
            "held": part.held, "in_flight": min(m, S - k) if schedule == "1f1b" else m,
            "sequence": " ".join(map(str, seqs[k])) if seqs and seqs[k] else "store-all",
            "recompute": bool(recompute[k]) if recompute else None,
            "allocator_peak_lower": r.allocator_peak_lower,
        })
    return rows


def memsched_plan(exe, chain_path, P, budget, rate, m, schedule, remat, time_limit=None, algo=None):
    """`memsched pipeline … --json` (its output, parsed)."""
    from . import binary

    r = "inf" if math.isinf(rate) else f"{rate:.17g}B/s"
    cmd = ["pipeline", "--chain", chain_path, "--gpus", str(P), "--mem", f"{budget}B", "--bandwidth", r,
           "--micro-batches", str(m), "--schedule", schedule, "--remat", remat]
    if time_limit:
        cmd += ["--time-limit", str(time_limit)]
    if algo:
        cmd += ["--algo", algo]
    return binary.run_json(*cmd, binary=exe)


def store_all_floor(exe, chain_path, P, m, schedule, rate, hi, time_limit=None, rel=1e-3):
    """The least per-GPU memory at which memsched's exact planner finds a plan on ≤ P GPUs that
    stores everything (bisection on --mem with --remat none, to `rel`; hi must admit one, e.g.
    the whole model on one GPU). Below it every plan must recompute inside its stages."""

    def fits(M):
        out = memsched_plan(exe, chain_path, P, M, rate, m, schedule, "none", time_limit, algo="exact")
        return any(r.get("feasible") and r.get("verified") for r in out.get("results") or [])

    if not fits(hi):
        raise ScheduleError(f"memsched pipeline finds no store-all plan at {hi} B, the whole model's one-GPU peak")
    lo = 0
    while hi - lo > max(1, int(rel * hi)):
        mid = (lo + hi) // 2
        if fits(mid):
            hi = mid
        else:
            lo = mid
    return hi


def run(args):
    """Profile, plan, run, compare; returns the report (a dict)."""
    from . import pipemodel, piperun

    st = Setup(args)
    chain, m, P = st.chain, st.m, args.gpus
    L = len(chain) - 1
    one = pipemodel.replay(chain, [(1, L)], m, args.schedule, args.rate)
    with tempfile.TemporaryDirectory(prefix="memsched-plan-") as tmp:
        chain_path = args.chain_out or os.path.join(tmp, "chain.json")
        with open(chain_path, "w") as f:
            json.dump(chain.to_json(), f, indent=2)
        floor = None
        if args.mem is not None:
            budget = args.budget
        else:
            floor = store_all_floor(args.exe, chain_path, P, m, args.schedule, args.rate, one.peaks[0],
                                    args.time_limit)
            budget = int(args.mem_fraction * floor)
        out = memsched_plan(args.exe, chain_path, P, budget, args.rate, m, args.schedule, args.remat,
                            args.time_limit)
    if args.plan_out:
        with open(args.plan_out, "w") as f:
            json.dump(out, f, indent=2)
    res, skipped = choose(out, args.algo)
    if res is None:
        raise ScheduleError(f"memsched pipeline: no verified plan fits {fmt_bytes(budget)} ({budget} B) per GPU "
                            f"on {P} GPU(s) with m = {m}, --remat {args.remat} (the whole model on one GPU needs "
                            f"{fmt_bytes(one.peaks[0])} storing everything)")
    parts = plan_parts(res)
    rep = pipemodel.replay(chain, [(f, l) for f, l, _ in parts], m, args.schedule, args.rate,
                           [s for _, _, s in parts])
    results, runtime, note, (bitwise, rel, detail) = execute(st, parts, args.schedule, args.runtime, args.runs,
                                                              args.timeout, free=args.free)
    S = len(parts)
    return {
        "model": st.net.label, "batch": args.batch, "micro_batches": m, "gpus": P, "stages_used": S,
        "input": list(st.net.input_shape), "chain_stages": len(chain), "device": str(st.device),
        "backend": "nccl" if st.device.type == "cuda" else "gloo", "threads_per_rank": st.threads,
        "schedule": args.schedule, "remat": args.remat, "free": args.free, "runtime": runtime, "runtime_note": note,
        "budget": budget, "store_all_floor": floor, "bandwidth": None if math.isinf(args.rate) else args.rate,
        "one_gpu_peak": one.peaks[0],
        "algo": res.get("algo"), "verified": res.get("verified"), "period": res.get("period"),
        "skipped_non_contiguous": [{"algo": a, "makespan": t} for a, t in skipped],
        "lower_bounds": out.get("lower_bounds") or [],
        "predicted_makespan": res.get("makespan"), "replayed_makespan": rep.makespan,
        "measured_makespan": piperun.measured_makespan(results), "measured_makespans": piperun.makespans(results),
        "grads_match": bitwise or rel <= GRAD_TOL, "grads_bitwise": bitwise, "max_rel_diff": rel,
        "grads_detail": detail,
        "ranks": rank_rows(results, res.get("peak_memory"), rep, m, args.schedule, [s for _, _, s in parts],
                           res.get("recompute")),
    }


def print_report(r, out):
    w = out.write
    w(f"model       {r['model']} micro-batch={r['batch']} input={'x'.join(map(str, r['input']))}, "
      f"{r['chain_stages']} stages (loss included), m={r['micro_batches']}, {r['device']}\n")
    w(f"plan        memsched pipeline --algo {r['algo']}: {r['stages_used']} of {r['gpus']} GPU(s), {r['schedule']}, "
      f"remat {r['remat']}, M = {fmt_bytes(r['budget'])} ({r['budget']} B) per GPU\n")
    bounds = [b for b in r["lower_bounds"] if b.get("value") is not None]
    if bounds:
        # The best (largest) certified bound; the others are in --json.
        b = max(bounds, key=lambda b: b["value"])
        ratio = f", plan/bound {r['predicted_makespan'] / b['value']:.3f}" if b["value"] > 0 else ""
        w(f"bound       {b['value'] * 1e3:.1f} ms{ratio}: {b.get('name', '')} ({b.get('certified_by')}; scope: "
          f"{b.get('scope')})\n")
    for sk in r.get("skipped_non_contiguous") or []:
        w(f"not run     memsched's {sk['algo']} plan, {sk['makespan'] * 1e3:.1f} ms, puts several parts on a GPU "
          "(the executor runs contiguous plans)\n")
    note = f" ({r['runtime_note']})" if r["runtime_note"] else ""
    w(f"runtime     {r['runtime']} over {r['backend']}, one process per stage, {r['threads_per_rank']} thread(s) "
      f"each{note}\n")
    w(f"{'rank':<6}{'stages':<9}{'part':<11}{'predicted':>12}{'measured':>12}{'':>10}  peak at\n")
    for k in r["ranks"]:
        st = f"{k['stages'][0]}–{k['stages'][1]}"
        part = "recomputes" if k["recompute"] else "store-all"
        pred = fmt_bytes(k["predicted_peak"]) if k["predicted_peak"] is not None else "n/a"
        err = f"{100 * k['error']:+.1f} %" if k["error"] is not None else ""
        w(f"{k['rank']:<6}{st:<9}{part:<11}{pred:>12}{fmt_bytes(k['measured_peak']):>12}{err:>10}  {k['peak_step']}\n")
    pm, mm = r["predicted_makespan"], r["measured_makespan"]
    w(f"makespan    predicted {pm * 1e3:.1f} ms, measured {mm * 1e3:.1f} ms (median of the timed steps)\n")
    g = "equal to one-process training (bitwise)" if r["grads_bitwise"] else (
        f"within {GRAD_TOL:g} relative of one-process training: {r['grads_detail']}" if r["grads_match"]
        else f"DIFFER from one-process training: {r['grads_detail']}")
    w(f"gradients   {g}\n")


def command(args):
    """The `pipeline` subcommand: exit status 0, 1 or 2 (see EPILOG)."""
    from .piperun import RankFailure
    from .remat import ExecutionError

    check_args(args)
    try:
        r = run(args)
    except RankFailure as e:
        raise ExecutionError(str(e)) from None
    if args.json:
        json.dump(r, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print_report(r, sys.stdout)
    return 0 if r["grads_match"] else 1
