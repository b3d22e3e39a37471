"""memsched's Scheduled side by side with what users would pick instead, on the same model at the
same measured peak: `python -m memsched_torch.peers` prints the table (docs/torch.md).

Peers, each run on the model memsched_torch.train builds (`--model`, as the train command):
- `torch.utils.checkpoint.checkpoint_sequential` over the model's chain stages (use_reentrant=False)
  with √L segments, and with the segment count of lowest measured peak (every count 1..L tried);
- `torch.compile` (inductor; on CPU its C++ backend) of the model and its loss, with
  `torch._functorch.config.activation_memory_budget` at each `--compile-budgets` value;
- rotor's dynamic program through rockmate 2.0.0 (`rockmate.PureRotor`), where it imports and runs
  (`--rockmate-path DIR` adds a folder holding it to sys.path); the row says why not otherwise;
- plain training (store-all), for scale.

For each peer row: its measured peak P and iterations/s; then Scheduled under a budget found so
that its measured peak is at most P (the budget starts at P and loses the measured excess, at most
four tries), and its iterations/s. Both are timed alternately, `--repeat` times `--iterations`
iterations (forward, loss, backward, SGD step), and the table gives memsched's speed over the
peer's as the median ratio with its range: on a shared CPU the absolute times are noise, the
ratios from one run are not.

The instrument, the same for every row: on CPU the profiler's memory timeline of one iteration
(torch.profiler with profile_memory, record_shapes and with_stack; every tensor allocation and
free, compiled code's included, the largest sum over the iteration); on CUDA the allocator's
max_memory_allocated above what was allocated before the iteration. Parameter gradients are
allocated before the measured iteration (zero_grad(set_to_none=False)), so they are out of it.
On CUDA every row runs under fp16 autocast; Scheduled considers every lever (with the measured
link bandwidth); on CPU the offloading executors have no link (functional copies), so Scheduled
is asked for rematerialization only.
"""

import argparse
import contextlib
import json
import math
import statistics
import sys
import time


def _args(argv):
    from .train import MODELS

    ap = argparse.ArgumentParser(prog="python -m memsched_torch.peers", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="gpt2-hf", help=MODELS)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--image", type=int, default=64)
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--vocab", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default=None, help="cpu or cuda (default: cuda when available)")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--iterations", type=int, default=3, help="iterations per timing (default 3)")
    ap.add_argument("--repeat", type=int, default=3, help="alternating timings per pair (default 3)")
    ap.add_argument("--compile-budgets", default="0.5",
                    help="activation_memory_budget values for torch.compile rows ('' for none)")
    ap.add_argument("--no-segments-sweep", action="store_true", help="checkpoint_sequential with √L segments only")
    ap.add_argument("--rockmate-path", help="a folder holding rockmate 2.0.0 (pip install --target DIR "
                    "--no-deps rockmate==2.0.0 rkgb==2.0.0 pulp==2.7.0)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--out", help="also write the JSON report here, rewritten as each row completes")
    return ap.parse_args(argv)


class Bench:
    def __init__(self, args):
        import torch

        from . import chains, train

        self.torch = torch
        dev = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.dev = torch.device(dev)
        self.cuda = self.dev.type == "cuda"
        if args.threads:
            torch.set_num_threads(args.threads)
        self.task = train.build_task(args, self.dev)
        self.model = self.task.model
        self.x, self.y = self.task.batch(0)
        _, self.stages = chains.cut(self.model)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=1e-4)
        self.args = args

    def amp(self):
        if self.cuda:
            return self.torch.autocast("cuda", dtype=self.torch.float16)
        return contextlib.nullcontext()

    def logits(self, out):
        return getattr(out, "logits", out)

    def step(self, forward):
        """One iteration: forward (returns the loss), backward, SGD step."""
        with self.amp():
            loss = forward()
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=False)

    def peak(self, forward):
        """The measured peak of one iteration (see the module comment), after one warm-up."""
        torch = self.torch
        self.step(forward)
        if self.cuda:
            torch.cuda.synchronize(self.dev)
            base = torch.cuda.memory_allocated(self.dev)
            torch.cuda.reset_peak_memory_stats(self.dev)
            self.step(forward)
            torch.cuda.synchronize(self.dev)
            return torch.cuda.max_memory_allocated(self.dev) - base
        from torch.profiler import ProfilerActivity, profile
        from torch.profiler._memory_profiler import Action, MemoryProfileTimeline

        with profile(activities=[ProfilerActivity.CPU], profile_memory=True, record_shapes=True,
                     with_stack=True) as prof:
            self.step(forward)
        cur = peak = 0
        for _, action, key, size in MemoryProfileTimeline(prof._memory_profile()).timeline:
            if key is not None and getattr(key, "device", None) is not None and key.device.type != "cpu":
                continue
            if action == Action.CREATE:
                cur += size
            elif action == Action.DESTROY:
                cur -= size
            peak = max(peak, cur)
        return peak

    def seconds(self, forward, n):
        torch = self.torch
        if self.cuda:
            torch.cuda.synchronize(self.dev)
        t0 = time.perf_counter()
        for _ in range(n):
            self.step(forward)
        if self.cuda:
            torch.cuda.synchronize(self.dev)
        return time.perf_counter() - t0

    # --- the contenders ---

    def plain(self):
        return lambda: self.task.loss_fn(self.logits(self.model(self.x)), self.y)

    def checkpointed(self, segments):
        from torch.utils.checkpoint import checkpoint_sequential

        mods = [m for _, m in self.stages]
        return lambda: self.task.loss_fn(checkpoint_sequential(mods, segments, self.x, use_reentrant=False), self.y)

    def compiled(self, budget):
        torch = self.torch
        torch._dynamo.reset()
        torch._functorch.config.activation_memory_budget = budget
        task, model = self.task, self.model

        def f(x, y):
            return task.loss_fn(self.logits(model(x)), y)

        c = torch.compile(f)
        return lambda: c(self.x, self.y)

    def rotor(self, budget):
        if self.args.rockmate_path:
            sys.path.insert(0, self.args.rockmate_path)
        import rockmate  # noqa: F401 (the reason it does not run is the row's note)

        rm = rockmate.PureRotor(self.model, [self.x], budget=budget)
        return lambda: self.task.loss_fn(self.logits(rm(self.x)), self.y)

    def memsched(self, peak):
        """Scheduled whose measured peak is at most `peak`: (forward, budget asked, measured, plan)."""
        from .schedule import ScheduleError
        from .scheduled import Scheduled

        budget = peak
        lever = "auto" if self.cuda else "remat"
        bw = self.bandwidth() if self.cuda else None
        last = None
        for _ in range(4):
            try:
                net = Scheduled(self.model, budget=int(budget), lever=lever, bandwidth=bw, loss_fn=self.task.loss_fn,
                                sample_target=self.y, measure=0, cache=False)
                with self.amp():
                    plan = net.plan_for(self.x)
            except ScheduleError as e:
                return None, int(budget), None, str(e)
            fwd = (lambda net=net: self.task.loss_fn(net(self.x), self.y))
            m = self.peak(fwd)
            last = (fwd, int(budget), m, plan)
            if m <= peak:
                return last
            budget -= (m - peak) + 512
        return last

    def bandwidth(self):
        from .offload import measure_bandwidth

        if not hasattr(self, "_bw"):
            r = measure_bandwidth(self.dev)
            self._bw = min(r["h2d"], r["d2h"])
        return self._bw


def ratios(bench, a, b, n, repeat):
    """Alternating timings of a and b (n iterations each), repeat times: (it/s of a, it/s of b,
    [b/a speed ratio per repeat])."""
    ta, tb, rs = [], [], []
    for _ in range(repeat):
        x = bench.seconds(a, n)
        y = bench.seconds(b, n)
        ta.append(x)
        tb.append(y)
        rs.append(x / y)
    return n / statistics.median(ta), n / statistics.median(tb), rs


def _say(msg):
    print(f"[peers {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def run(argv=None):
    args = _args(argv)
    b = Bench(args)
    _say(f"{b.task.label} on {b.dev}: {len(b.stages)} stages")
    torch = b.torch
    L = len(b.stages)
    rows = []
    plain = b.plain()
    p_plain = b.peak(plain)
    rows.append({"peer": "plain training (store-all)", "peak": p_plain,
                 "it_s": args.iterations / b.seconds(plain, args.iterations)})
    contenders = []
    sq = max(1, min(L, round(math.sqrt(L))))
    contenders.append((f"checkpoint_sequential, √L = {sq} segments", lambda: b.checkpointed(sq)))
    if not args.no_segments_sweep:
        best = None
        for s in range(1, L + 1):
            p = b.peak(b.checkpointed(s))
            _say(f"checkpoint_sequential {s} segments: peak {p} B")
            if best is None or p < best[1]:
                best = (s, p)
        contenders.append((f"checkpoint_sequential, {best[0]} segments (lowest peak of 1..{L})",
                           lambda s=best[0]: b.checkpointed(s)))
    contenders.append(("rotor DP (rockmate 2.0.0 PureRotor)", None))
    for v in [float(t) for t in args.compile_budgets.split(",") if t.strip()]:  # last: compiling takes longest
        contenders.append((f"torch.compile, activation_memory_budget {v}", lambda v=v: b.compiled(v)))
    out = {"model": b.task.label, "batch": args.batch, "device": str(b.dev),
           "device_name": torch.cuda.get_device_name(b.dev) if b.cuda else "cpu", "threads": torch.get_num_threads(),
           "torch": torch.__version__, "stages": L, "iterations": args.iterations, "repeat": args.repeat,
           "instrument": "CUDA allocator" if b.cuda else "profiler memory timeline", "rows": rows}

    def save():
        if args.out:
            with open(args.out, "w") as f:
                json.dump(out, f, indent=2)

    save()
    for name, make in contenders:
        _say(name)
        row = {"peer": name}
        try:
            if make is None:
                fwd = b.rotor(int(p_plain * 0.5))
            else:
                fwd = make()
            t0 = time.perf_counter()
            row["peak"] = b.peak(fwd)
            row["setup_s"] = time.perf_counter() - t0
        except Exception as e:  # a peer that does not run here: the row says why
            row["note"] = f"does not run: {type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
            rows.append(row)
            save()
            continue
        ms, budget, mpeak, plan = b.memsched(row["peak"])
        row["memsched_budget"] = budget
        if ms is None:
            row["note"] = f"memsched: {plan}"
            rows.append(row)
            save()
            continue
        row["memsched_peak"] = mpeak
        row["memsched_schedule"] = f"{plan.lever} {plan.strategy}"
        a, c, rs = ratios(b, fwd, ms, args.iterations, args.repeat)
        row.update(it_s=a, memsched_it_s=c, ratio=statistics.median(rs), ratio_min=min(rs), ratio_max=max(rs))
        rows.append(row)
        save()
        _say(json.dumps(row))
    torch._functorch.config.activation_memory_budget = 1.0
    return out


def print_table(r, w=sys.stdout.write):
    from .schedule import fmt_bytes

    w(f"{r['model']}, batch {r['batch']}, {r['stages']} stages, {r['device_name']}, {r['threads']} threads, torch "
      f"{r['torch']}; peaks: {r['instrument']}; {r['repeat']}× {r['iterations']} iterations per side\n\n")
    w("| peer | peer peak | peer it/s | memsched (same peak) | memsched peak | memsched it/s | memsched / peer |\n")
    w("| --- | --- | --- | --- | --- | --- | --- |\n")
    for row in r["rows"]:
        if "note" in row and "memsched_peak" not in row:
            peak = fmt_bytes(row["peak"]) if "peak" in row else "—"
            w(f"| {row['peer']} | {peak} | — | {row['note']} | — | — | — |\n")
            continue
        if "memsched_peak" not in row:
            w(f"| {row['peer']} | {fmt_bytes(row['peak'])} | {row['it_s']:.2f} | — | — | — | — |\n")
            continue
        w(f"| {row['peer']} | {fmt_bytes(row['peak'])} | {row['it_s']:.2f} | {row['memsched_schedule']} "
          f"(budget {fmt_bytes(row['memsched_budget'])}) | {fmt_bytes(row['memsched_peak'])} | "
          f"{row['memsched_it_s']:.2f} | {row['ratio']:.2f} ({row['ratio_min']:.2f}–{row['ratio_max']:.2f}) |\n")


def main(argv=None):
    r = run(argv)
    if "--json" in (argv if argv is not None else sys.argv[1:]):
        json.dump(r, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print_table(r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
