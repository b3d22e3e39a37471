"""`python -m memsched_torch train`: N training iterations through `Scheduled`, and beside them
plain training of a copy of the model from the same seed, compared bit for bit.

Every iteration draws one batch (inputs and labels from a seeded generator), runs plain training
on the copy, then the scheduled module from the same RNG state (dropout draws the same masks),
each followed by the optimizer's step. After each: the losses, every parameter and buffer, and the
RNG state are compared with torch.equal. Both sides are measured the same way: the storage
tracker on CPU (every tensor storage alive from the forward to the end of the backward, the
loss included, parameter gradients out, as memsched counts), the CUDA allocator on a GPU; so
iterations/s are for both under the same instrument (on CPU the tracker's Python dispatch costs
the same per operation on both sides; the peers' table, scripts/torch-peers.py, times without
it).
"""

import argparse
import json
import sys
import time

from .schedule import ScheduleError

MODELS = ("resnet*, vgg*, densenet* (torchvision), mlp, transformer (a TransformerEncoderLayer stack), "
          "gpt2-hf, bert-hf, llama-hf (transformers, from a config: random weights, nothing downloaded)")


def add_parser(sub):
    p = sub.add_parser("train", help="train N iterations through Scheduled beside plain training",
                       description="Train N iterations through memsched_torch.Scheduled (the fastest verified "
                       "schedule under the budget) and, beside it, plain training of a copy from the same seed; "
                       "compare losses and parameters bitwise after every iteration, and the measured peak with "
                       "the budget and the prediction.", epilog=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help=MODELS)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--image", type=int, default=32, help="image size for torchvision models (default 32)")
    p.add_argument("--classes", type=int, default=10, help="classes of the torchvision and mlp heads (default 10)")
    p.add_argument("--layers", type=int, default=4, help="transformer, *-hf: blocks (default 4)")
    p.add_argument("--hidden", type=int, default=64, help="transformer, *-hf: hidden size (default 64)")
    p.add_argument("--heads", type=int, default=4, help="transformer, *-hf: attention heads (default 4)")
    p.add_argument("--seq", type=int, default=32, help="transformer, *-hf: sequence length (default 32)")
    p.add_argument("--vocab", type=int, default=1000, help="*-hf: vocabulary size (default 1000)")
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--optimizer", choices=("sgd", "adam"), default="sgd")
    p.add_argument("--lr", type=float, default=None, help="learning rate (default 0.01 for sgd, 1e-3 for adam)")
    p.add_argument("--mem", help="budget (e.g. 40MiB): activations, gradients δ and temporaries")
    p.add_argument("--mem-fraction", type=float, help="budget as a fraction of the profiled store-all peak")
    p.add_argument("--bandwidth", help="GPU–CPU link rate (e.g. 12GB/s): also consider the offloading levers")
    p.add_argument("--lever", choices=("auto", "remat", "act-offload", "remat-offload"), default="auto")
    p.add_argument("--amp", action="store_true", help="autocast: bf16 on CPU, fp16 on CUDA (with a GradScaler)")
    p.add_argument("--time-limit", type=float, default=None, help="memsched certify's time limit (seconds)")
    p.add_argument("--device", default="cpu", help="cpu or cuda")
    p.add_argument("--threads", type=int, default=0, help="torch threads (default: torch's choice)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-cache", action="store_true", help="plan afresh (no plan cache on disk)")
    p.add_argument("--json", action="store_true", help="JSON: lever, budget, predicted_peak, measured_peaks, "
                   "params_match, losses_match, iterations_per_s, …")
    p.set_defaults(fn=cmd_train)
    return p


def check_args(args):
    """Bad input, before anything is built or profiled (exit 2, one line)."""
    from .schedule import check_budget_flags, parse_rate

    check_budget_flags(args, lambda text: text is None or parse_rate(text))
    for flag in ("batch", "iterations", "image", "classes", "layers", "hidden", "heads", "seq", "vocab"):
        v = getattr(args, flag)
        if v < 1:
            raise ScheduleError(f"--{flag} {v}: want at least 1")
    if args.hidden % args.heads:
        raise ScheduleError(f"--hidden {args.hidden} is not a multiple of --heads {args.heads}")
    if args.device not in ("cpu", "cuda") and not args.device.startswith("cuda:"):
        raise ScheduleError(f"--device {args.device!r}: want cpu or cuda")
    if args.lr is not None and not args.lr > 0:
        raise ScheduleError(f"--lr {args.lr}: want a positive learning rate")
    _model_kind(args.model)


def _model_kind(name):
    if name in ("mlp", "transformer", "gpt2-hf", "bert-hf", "llama-hf"):
        return name
    if name.startswith(("resnet", "wide_resnet", "resnext", "vgg", "densenet")):
        return "torchvision"
    raise ScheduleError(f"--model {name!r}: unknown (want {MODELS})")


class Task:
    """A model, its batches and its loss."""

    def __init__(self, label, model, batch, loss_fn):
        self.label, self.model, self.batch, self.loss_fn = label, model, batch, loss_fn


def build_task(args, device):
    """The model (random weights from args.seed) with a batch function i -> (inputs, targets)."""
    import torch
    from torch import nn
    from torch.nn import functional as F

    torch.manual_seed(args.seed)
    kind = _model_kind(args.model)
    b = args.batch

    def gen(i):
        return torch.Generator().manual_seed(args.seed * 1_000_003 + i + 1)

    if kind in ("gpt2-hf", "bert-hf", "llama-hf"):
        model = hf_model(kind, args.layers, args.hidden, args.heads, args.seq, args.vocab)

        def batch(i):
            g = gen(i)
            ids = torch.randint(0, args.vocab, (b, args.seq), generator=g)
            labels = torch.randint(0, args.vocab, (b, args.seq), generator=g) if kind == "bert-hf" else ids
            return ids.to(device), labels.to(device)

        loss = lm_loss if kind != "bert-hf" else mlm_loss
        label = f"{kind} layers={args.layers} hidden={args.hidden} heads={args.heads} seq={args.seq} vocab={args.vocab}"
    elif kind == "torchvision":
        import torchvision

        ctor = getattr(torchvision.models, args.model, None)
        if ctor is None or not callable(ctor):
            raise ScheduleError(f"--model {args.model!r}: not a torchvision model")
        model = ctor(weights=None, num_classes=args.classes)

        def batch(i):
            g = gen(i)
            return (torch.randn(b, 3, args.image, args.image, generator=g).to(device),
                    torch.randint(0, args.classes, (b,), generator=g).to(device))

        loss = F.cross_entropy
        label = f"{args.model} image={args.image}"
    elif kind == "mlp":
        from .models import mlp

        model = mlp(width=args.hidden, depth=args.layers, inputs=32, classes=args.classes)

        def batch(i):
            g = gen(i)
            return torch.randn(b, 32, generator=g).to(device), torch.randint(0, args.classes, (b,), generator=g).to(device)

        loss = F.cross_entropy
        label = f"mlp width={args.hidden} depth={args.layers}"
    else:
        from .models import transformer

        model = transformer(args.layers, args.hidden, args.heads)

        def batch(i):
            g = gen(i)
            return (torch.randn(b, args.seq, args.hidden, generator=g).to(device),
                    torch.randn(b, args.seq, args.hidden, generator=g).to(device))

        loss = F.mse_loss
        label = f"transformer layers={args.layers} hidden={args.hidden} heads={args.heads} seq={args.seq}"
    if not isinstance(model, nn.Module):
        raise ScheduleError(f"--model {args.model}: not an nn.Module")
    return Task(label, model.to(device).train(), batch, loss)


def hf_model(kind, layers, hidden, heads, seq, vocab):
    """A small transformers model from a config (random weights; nothing is downloaded)."""
    try:
        import transformers
    except ImportError:
        raise ScheduleError(f"--model {kind} needs the transformers package (pip install transformers; pinned in "
                            "python/requirements.txt)") from None
    if kind == "gpt2-hf":
        cfg = transformers.GPT2Config(n_layer=layers, n_embd=hidden, n_head=heads, n_positions=seq, vocab_size=vocab,
                                      bos_token_id=0, eos_token_id=0)
        return transformers.GPT2LMHeadModel(cfg)
    if kind == "bert-hf":
        cfg = transformers.BertConfig(num_hidden_layers=layers, hidden_size=hidden, num_attention_heads=heads,
                                      intermediate_size=4 * hidden, vocab_size=vocab, max_position_embeddings=seq)
        return transformers.BertForMaskedLM(cfg)
    cfg = transformers.LlamaConfig(num_hidden_layers=layers, hidden_size=hidden, num_attention_heads=heads,
                                   num_key_value_heads=max(1, heads // 2), intermediate_size=4 * hidden,
                                   vocab_size=vocab, max_position_embeddings=seq, bos_token_id=0, eos_token_id=0,
                                   pad_token_id=0)
    return transformers.LlamaForCausalLM(cfg)


def lm_loss(logits, ids):
    """Causal LM: predict token t+1 from positions ≤ t (the loss transformers computes, in fp32)."""
    from torch.nn import functional as F

    v = logits.shape[-1]
    return F.cross_entropy(logits[:, :-1, :].float().reshape(-1, v), ids[:, 1:].reshape(-1))


def mlm_loss(logits, labels):
    from torch.nn import functional as F

    return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), labels.reshape(-1))


def _optimizer(name, params, lr):
    import torch

    if name == "sgd":
        return torch.optim.SGD(params, lr=lr or 0.01, momentum=0.9)
    return torch.optim.Adam(params, lr=lr or 1e-3)


def compare(task, iterations, optimizer="sgd", budget=None, bandwidth=None, lever="auto", amp=False, lr=None,
            time_limit=None, cache=False, profile_hook=None, device="cpu"):
    """Train `iterations` iterations of task through Scheduled and, beside it, plain training of a
    copy; returns the report (see the module comment). Both sides measured every iteration."""
    import copy

    import torch

    from . import remat
    from .scheduled import Scheduled
    from .tracker import AllocatorTracker, StorageTracker

    dev = torch.device(device)
    ref = copy.deepcopy(task.model)
    x0, y0 = task.batch(0)
    sched = Scheduled(task.model, budget=budget, bandwidth=bandwidth, lever=lever, loss_fn=task.loss_fn,
                      sample_target=y0, measure=True, cache=cache, time_limit=time_limit, profile_hook=profile_hook)
    cuda = dev.type == "cuda"
    amp_dtype = (torch.float16 if cuda else torch.bfloat16) if amp else None

    def autocast():
        import contextlib

        return torch.autocast(dev.type, dtype=amp_dtype) if amp else contextlib.nullcontext()

    t_plan = time.perf_counter()
    with autocast():
        plan = sched.plan_for(x0)  # outside the timed iterations (under the iterations' autocast)
    t_plan = time.perf_counter() - t_plan
    opt_ref = _optimizer(optimizer, ref.parameters(), lr)
    opt = _optimizer(optimizer, sched.parameters(), lr)
    scalers = [torch.amp.GradScaler("cuda"), torch.amp.GradScaler("cuda")] if amp and cuda else [None, None]

    def step(model, o, scaler, x, y, measure_plain):
        tr = None
        if measure_plain:
            tr = AllocatorTracker(dev) if cuda else StorageTracker(dev)
        t0 = time.perf_counter()
        if tr is not None:
            tr.__enter__()
            tr.count(x)
            hooks = tr.parameter_gradients_excluded(list(model.parameters()))
            hooks.__enter__()
        try:
            with autocast():
                out = model(x)
                out = getattr(out, "logits", out)  # a transformers model's own forward: its ModelOutput
                loss = task.loss_fn(out, y)
            o.zero_grad()
            (scaler.scale(loss) if scaler else loss).backward()
        finally:
            if tr is not None:
                hooks.__exit__(None, None, None)
                tr.__exit__(None, None, None)
        if scaler:
            scaler.step(o)
            scaler.update()
        else:
            o.step()
        if cuda:
            torch.cuda.synchronize(dev)
        return loss.detach(), time.perf_counter() - t0, (tr.peak if tr is not None else None)

    losses, peaks, plain_peaks, params_ok, losses_ok, rng_ok = [], [], [], [], [], []
    t_ref = t_s = 0.0
    for i in range(iterations):
        x, y = (x0, y0) if i == 0 else task.batch(i)
        rng = remat.get_rng(dev)
        l_ref, dt, pp = step(ref, opt_ref, scalers[0], x, y, True)
        t_ref += dt
        after = remat.get_rng(dev)
        remat.set_rng(rng, dev)
        l_s, dt, _ = step(sched, opt, scalers[1], x, y, False)
        t_s += dt
        it = sched.stats["iterations"][-1]
        peaks.append(it["measured_peak"])
        plain_peaks.append(pp)
        losses.append([float(l_ref), float(l_s)])
        losses_ok.append(bool(torch.equal(l_ref, l_s)))
        sa, sb = ref.state_dict(), sched.state_dict()
        params_ok.append(sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa))
        rng_ok.append(all(torch.equal(a, b) for a, b in zip(after, remat.get_rng(dev))))
    st = sched.stats
    p = sched.plan
    return {
        "model": task.label, "device": str(dev), "threads": torch.get_num_threads(), "amp": str(amp_dtype) if amp else None,
        "optimizer": optimizer, "iterations": iterations,
        "lever": p.lever, "strategy": p.strategy, "budget": p.user_budget, "planned_budget": p.budget,
        "store_all_peak": p.store_all_peak, "predicted_peak": p.predicted_peak, "predicted_time": p.predicted_time,
        "measured_peaks": peaks, "plain_measured_peaks": plain_peaks,
        "measured_by": "CUDA allocator" if cuda else "storage tracker",
        "params_match": all(params_ok), "losses_match": all(losses_ok), "rng_match": all(rng_ok),
        "params_match_per_iteration": params_ok, "losses": losses,
        "iterations_per_s": {"plain": iterations / t_ref, "scheduled": iterations / t_s},
        "planning_s": t_plan, "from_cache": plan.from_cache, "replans": p.replans,
        "history": [h for q in st["plans"] for h in q["history"]],
        "schedule": _schedule_summary(p),
    }


def _schedule_summary(p):
    if p.lever == "remat":
        fw = [0] * (len(p.chain) + 1)
        for o in p.ops:
            if o.kind != "B":
                fw[o.stage] += 1
        return {"forwards": fw[1:]}
    if p.lever == "act-offload":
        return {"offloaded": p.schedule.get("offloaded", [])}
    res = (p.schedule.get("results") or [{}])[0]
    return {"offloaded": res.get("offloaded", 0), "offloaded_bytes": res.get("offloaded_bytes", 0),
            "forwards": p.replay.forwards[1:]}


def cmd_train(args):
    check_args(args)
    import torch

    from . import binary
    from .measure import deterministic

    dev = torch.device(args.device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ScheduleError("--device cuda but CUDA is not available")
    binary.find()  # before any work: a missing binary is the first thing to say
    # Strict determinism on CUDA: with warn_only, SDPA's cuDNN and memory-efficient backwards keep
    # their non-deterministic reductions (the first H100 run of this command: every iteration
    # differed from plain training in the 12-layer transformer's attention). A model with an
    # operation that has no deterministic CUDA kernel is run again in warn_only mode, and the
    # report says so (as fidelity does).
    mode = "strict" if dev.type == "cuda" else None
    deterministic(dev, warn_only=mode != "strict")
    if args.threads:
        torch.set_num_threads(args.threads)
    budget = args.mem if args.mem is not None else float(args.mem_fraction)

    def run():
        task = build_task(args, dev)
        return compare(task, args.iterations, optimizer=args.optimizer, budget=budget, bandwidth=args.bandwidth,
                       lever=args.lever, amp=args.amp, lr=args.lr, time_limit=args.time_limit,
                       cache=not args.no_cache, device=dev)

    try:
        r = run()
    except RuntimeError as e:
        if mode != "strict" or "deterministic" not in str(e):
            raise
        print(f"memsched_torch train: strict determinism refused ({str(e).splitlines()[0]}); "
              "running again in warn_only mode", file=sys.stderr)
        mode = "warn_only"
        deterministic(dev, warn_only=True)
        r = run()
    if mode:
        r["determinism"] = mode
    ok = r["params_match"] and r["losses_match"] and all(m <= r["budget"] for m in r["measured_peaks"])
    if args.json:
        json.dump(r, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print_report(r, sys.stdout)
    return 0 if ok else 1


def print_report(r, out):
    from .schedule import fmt_bytes

    w = out.write
    w(f"model       {r['model']}, {r['device']}, {r['threads']} threads, {r['optimizer']}, "
      f"{r['iterations']} iterations{', autocast ' + r['amp'] if r['amp'] else ''}\n")
    w(f"budget      {fmt_bytes(r['budget'])} ({r['budget']} B); store-all peak {fmt_bytes(r['store_all_peak'])}\n")
    w(f"schedule    {r['lever']} {r['strategy']}{' (from the plan cache)' if r['from_cache'] else ''}"
      f"{', %d re-plans' % r['replans'] if r['replans'] else ''}\n")
    mp = r["measured_peaks"]
    w(f"peak        predicted {fmt_bytes(r['predicted_peak'])}, measured {fmt_bytes(min(mp))}–{fmt_bytes(max(mp))} "
      f"({r['measured_by']}; plain training {fmt_bytes(max(r['plain_measured_peaks']))})\n")
    ips = r["iterations_per_s"]
    w(f"speed       {ips['scheduled']:.2f} it/s scheduled, {ips['plain']:.2f} it/s plain "
      f"({ips['scheduled'] / ips['plain']:.2f}×; both measured)\n")
    w(f"training    {'losses and parameters bitwise equal to plain training after every iteration' if r['params_match'] and r['losses_match'] else 'DIFFERS from plain training'}\n")
    for h in r["history"]:
        w(f"  {h}\n")
