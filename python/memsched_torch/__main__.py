"""memsched_torch: run memsched's schedules in PyTorch and measure predicted against measured.

Commands:
  profile  profile a model as a memsched chain (memsched.chain/v1)
  run      execute a given remat sequence, activation-offloading schedule or combined
           remat + offloading schedule (memsched remat-offload) for one iteration
  plan     profile, ask memsched certify for the best schedule under a budget, execute, compare
  train    train N iterations through memsched_torch.Scheduled beside plain training (bitwise)
  pipeline profile per micro-batch, ask memsched pipeline for a plan over P GPUs, run it with
           torch.distributed.pipelining (one process per GPU), compare with one-process training

Examples:
  python -m memsched_torch profile --model resnet18 --batch 8 --image 224 -o r18.json
  python -m memsched_torch plan --model resnet18 --batch 8 --image 128 --mem-fraction 0.8
  python -m memsched_torch plan --model resnet18 --batch 8 --image 128 --mem 48MiB --bandwidth 12GB/s --json
  memsched remat --chain r18.json --mem 60MiB --algo floating --json > s.json
  python -m memsched_torch run --model resnet18 --batch 8 --image 224 --chain r18.json --sequence s.json
  memsched remat-offload --chain r18.json --mem 50MiB --bandwidth 2GB/s --algo all --json > c.json
  python -m memsched_torch run --model resnet18 --batch 8 --image 224 --chain r18.json --remat-offload c.json --algo pofo

Models: torchvision resnet*/vgg* (--image), mlp (--input-shape N), transformer (--layers, --hidden,
--heads, --seq: a stack of nn.TransformerEncoderLayer), or --sequential module:function (an
nn.Sequential, with --input-shape). Exit status: 0 done, 1 the execution failed or the gradients
differ from plain training, 2 bad input (one line on stderr, before anything runs).
"""

import argparse
import json
import sys

from .schedule import ScheduleError


class _Parser(argparse.ArgumentParser):
    """argparse with the Go side's rule for bad input: one line on stderr, exit 2 (argparse's own
    prints the usage first)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message}\n")


def _writable(path, flag):
    """Refuse, before any work, an output file that cannot be written (exit 2 naming the flag)."""
    import os

    if path in (None, "-"):
        return
    if os.path.isdir(path):
        raise ScheduleError(f"{flag} {path}: is a directory")
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise ScheduleError(f"{flag} {path}: no such directory {d}")
    if not os.access(d, os.W_OK | os.X_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise ScheduleError(f"{flag} {path}: permission denied")


def _model_args(ap, batch=8):
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--model", help="resnet18, resnet50, vgg11, … (torchvision), mlp, transformer")
    src.add_argument("--sequential", help="module:function returning an nn.Sequential")
    ap.add_argument("--batch", type=int, default=batch)
    ap.add_argument("--image", type=int, default=224, help="image size for torchvision models (default 224)")
    ap.add_argument("--input-shape", help="per-sample input shape for --sequential or mlp, e.g. 3,32,32")
    ap.add_argument("--layers", type=int, default=12, help="transformer: encoder layers (default 12)")
    ap.add_argument("--hidden", type=int, default=256, help="transformer: hidden size (default 256)")
    ap.add_argument("--heads", type=int, default=4, help="transformer: attention heads (default 4)")
    ap.add_argument("--seq", type=int, default=64, help="transformer: sequence length (default 64)")
    ap.add_argument("--device", default="cpu", help="cpu or cuda")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (default: torch's choice)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--runs", type=int, default=3, help="runs per time measurement (median; default 3)")


def _build(args):
    import torch

    from . import models
    from .measure import deterministic
    from .plan import _shape

    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ScheduleError("--device cuda but CUDA is not available")
    deterministic(device)  # the gradients are compared bitwise with plain training
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.batch < 1:
        raise ScheduleError(f"--batch {args.batch}: want at least 1")
    net = models.build(model=args.model, sequential=args.sequential, image=args.image,
                       input_shape=_shape(args.input_shape), layers=args.layers, hidden=args.hidden,
                       heads=args.heads, seq=args.seq, device=device, seed=args.seed)
    return net, net.make_input(args.batch, device, seed=args.seed), device


def cmd_profile(args):
    from .profile import describe, profile_net

    _writable(args.output, "-o")
    net, x, device = _build(args)
    chain = profile_net(net, x, runs=args.runs)
    chain.name = describe(net, args.batch, device)
    text = json.dumps(chain.to_json(), indent=2) + "\n"
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)
    return 0


def _read(path):
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path) as f:
            return f.read()
    except OSError as e:
        raise ScheduleError(f"{path}: {e.strerror}") from None


def cmd_run(args):
    from . import offload
    from .schedule import Chain, parse_size, simulate

    if sum(1 for f in (args.sequence, args.offload, args.remat_offload) if f) != 1:
        raise ScheduleError("give exactly one of --sequence FILE (remat), --offload FILE (act-offload) and "
                            "--remat-offload FILE (combined)")
    if args.algo and not args.remat_offload:
        raise ScheduleError("--algo picks a result of a --remat-offload file")
    _rate(args.bandwidth)
    try:
        chain = Chain.load(args.chain)
    except OSError as e:
        raise ScheduleError(f"{args.chain}: {e.strerror}") from None
    except (KeyError, TypeError, ValueError) as e:
        raise ScheduleError(f"{args.chain}: not a memsched chain ({e})") from None
    budget = parse_size(args.mem) if args.mem else None
    # Everything about the schedule is checked before the model is built.
    if args.sequence:
        from .schedule import parse_sequence

        ops = parse_sequence(_read(args.sequence), source=args.sequence)
        sim = simulate(chain, ops, source=args.sequence)
        if budget is not None and sim.peak > budget:
            raise ScheduleError(f"{args.sequence}: the sequence needs {sim.peak} B (step {sim.peak_op + 1}, "
                                f"{ops[sim.peak_op]}) on this chain, over the budget --mem {budget} B")
    elif args.remat_offload:
        from . import combined

        sched = combined.parse_combined(_read(args.remat_offload), source=args.remat_offload, algo=args.algo)
        try:
            combined.check_combined(sched, chain, bandwidth=_rate(args.bandwidth), budget=budget)
        except ScheduleError as e:
            raise ScheduleError(f"{args.remat_offload}: {e}") from None
    else:
        timed = offload.parse_timed(_read(args.offload), source=args.offload)
        offload.check_timed(timed, len(chain))
        if budget is not None and timed.peak is not None and timed.peak > budget:
            raise ScheduleError(f"{args.offload}: the schedule's peak {timed.peak} B exceeds --mem {budget} B")
        if budget is not None:
            _verify_offload(args, budget, timed)
    net, x, device = _build(args)
    if len(net.modules) != len(chain):
        raise ScheduleError(f"{args.chain} has {len(chain)} stages (loss included) but the model splits into "
                            f"{len(net.modules)}: profile this model with the same options")
    from .measure import check_input

    check_input(chain, x, args.chain)
    from .measure import measure_combined, measure_offload, measure_remat

    if args.sequence:
        m = measure_remat(net, x, chain, ops, runs=args.runs, free=args.free)
    elif args.remat_offload:
        m = measure_combined(net, x, chain, sched, bandwidth=_rate(args.bandwidth), budget=budget, runs=args.runs)
    else:
        m = measure_offload(net, x, chain, timed, bandwidth=_rate(args.bandwidth), runs=args.runs)
    report = {"predicted_peak": m.predicted_peak, "measured_peak": m.measured_peak,
              "predicted_time": m.predicted_time, "measured_time": m.measured_time,
              "grads_match": m.grads_match, "grads_detail": m.grads_detail, "forwards": m.forwards,
              "forwards_expected": m.forwards_expected, "peak_step": m.peak_step,
              "steps": [{"step": s, "predicted": p, "measured": q} for s, p, q in m.steps]}
    if args.offload:
        report["host_peak"] = m.host_peak
        report["transfers"] = [{"kind": k, "index": j, "bytes": b, "after_step": s} for k, j, b, s in m.transfers]
    if args.remat_offload:
        report["host_peak"] = m.host_peak
        report["transfers"] = [{"kind": k, "tensor": t, "bytes": b, "after_step": s} for k, t, b, s in m.transfers]
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        from .schedule import fmt_bytes

        for s, p, q in m.steps:
            pred = fmt_bytes(p) if p is not None else ""
            sys.stdout.write(f"{s:<16}{pred:>14}{fmt_bytes(q):>14}\n")
        pp = fmt_bytes(m.predicted_peak) if m.predicted_peak is not None else "n/a"
        sys.stdout.write(f"peak      predicted {pp}, measured {fmt_bytes(m.measured_peak)} (step {m.peak_step})\n")
        pt = f"{m.predicted_time * 1e3:.1f} ms" if m.predicted_time is not None else "n/a"
        sys.stdout.write(f"time      predicted {pt}, measured {m.measured_time * 1e3:.1f} ms\n")
        sys.stdout.write(f"forwards  {' '.join(map(str, m.forwards))}"
                         f"{'' if m.forwards == m.forwards_expected else '  MISMATCH'}\n")
        for k, t, b, s in (m.transfers if args.remat_offload else []):
            sys.stdout.write(f"transfer  {k} {t} ({b} B) after step {s}\n")
        sys.stdout.write(f"gradients {'equal to plain training (bitwise)' if m.grads_match else m.grads_detail}\n")
    return 0 if m.grads_match and m.forwards == m.forwards_expected else 1


def _rate(text):
    if not text:
        return None
    from .schedule import parse_rate

    return parse_rate(text)


def _verify_offload(args, budget, timed):
    """memsched verify is the oracle for an offloading schedule's memory."""
    import os
    import subprocess
    import tempfile

    from . import binary

    exe = binary.find()
    bw = args.bandwidth or (f"{timed.bandwidth}B/s" if timed.bandwidth else None)
    if not bw:
        raise ScheduleError("--bandwidth is needed to check an offloading schedule against --mem")
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"ops": [{"backward": o.backward, "index": o.index, "start": o.start} for o in timed.ops],
                   "transfers": [{"kind": t.kind, "index": t.index, "start": t.start} for t in timed.transfers]}, f)
    try:
        p = subprocess.run([exe, "verify", "--problem", "act-offload", "--chain", args.chain, "--mem", str(budget),
                            "--bandwidth", bw, "--schedule", f.name], capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    if p.returncode != 0:
        line = (p.stdout.strip() or p.stderr.strip()).splitlines()[-1]
        raise ScheduleError(f"{args.offload}: memsched verify refuses it: {line}")


def cmd_plan(args):
    from .plan import print_report, run_plan

    from .schedule import check_budget_flags

    check_budget_flags(args, _rate)  # bad input before anything is built or profiled
    _writable(args.chain_out, "--chain-out")
    r = run_plan(args)
    if args.json:
        json.dump(r, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print_report(r, sys.stdout)
    return 0 if r["grads_match"] and r["forwards"] == r["forwards_expected"] else 1


def main(argv=None):
    ap = _Parser(prog="python -m memsched_torch", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("profile", help="profile a model as a memsched chain",
                       description="Profile a PyTorch model as a memsched chain (memsched.chain/v1): u_f, u_b, "
                       "a, ā, δ, o_f, o_b, w per stage (docs/torch.md).")
    _model_args(p)
    p.add_argument("-o", "--output", default="-", help="output file (default stdout)")
    p.set_defaults(fn=cmd_profile)

    p = sub.add_parser("run", help="execute a remat sequence, an offloading schedule or a combined one",
                       description="Execute a schedule for one training iteration and compare with the chain's "
                       "prediction and with plain training: a remat sequence (--sequence), an activation-offloading "
                       "schedule (--offload) or a combined remat + offloading schedule (--remat-offload, memsched "
                       "remat-offload --json; checked against the chain by verify/combined's strict timing, "
                       "replayed here exactly, before anything runs).",
                       epilog="example: memsched remat-offload --chain r18.json --mem 50MiB --bandwidth 2GB/s "
                       "--algo all --json > c.json; python -m memsched_torch run --model resnet18 --batch 8 "
                       "--image 224 --chain r18.json --remat-offload c.json --algo pofo")
    _model_args(p)
    p.add_argument("--chain", required=True, help="the model's chain (profile), which the schedule was made for")
    p.add_argument("--sequence", help="remat sequence: memsched remat --json output, a JSON list, or Fall^1 … B^1")
    p.add_argument("--offload", help="act-offload schedule: memsched offload-act --json output or the plain format")
    p.add_argument("--remat-offload", help="combined schedule: memsched remat-offload --json output (or one "
                   "result, or a bare schedule.Combined)")
    p.add_argument("--algo", help="--remat-offload: the result of this strategy (default: the first feasible)")
    p.add_argument("--mem", help="budget: refuse a schedule whose peak exceeds it (--remat-offload: default the "
                   "file's budget)")
    p.add_argument("--bandwidth", help="link rate for --offload/--remat-offload when the file does not say it "
                   "(e.g. 12GB/s)")
    p.add_argument("--free", choices=("model", "eager"), default="model",
                   help="model: ā^ℓ lives until B^ℓ ends (004); eager: autograd frees as it goes")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_run)

    p = sub.add_parser("plan", help="profile, certify, execute, compare",
                       description="Profile the model, ask `memsched certify` for the fastest verified schedule "
                       "under the budget (remat; act-offload and remat-offload too with --bandwidth; --lever picks one), "
                       "execute one iteration, "
                       "print predicted vs measured peak and time and whether the gradients equal plain "
                       "training's.")
    _model_args(p)
    p.add_argument("--mem", help="budget (e.g. 40MiB)")
    p.add_argument("--mem-fraction", type=float, help="budget as a fraction of the profiled store-all peak")
    p.add_argument("--bandwidth", help="GPU–CPU link rate (e.g. 12GB/s): also consider activation offloading")
    p.add_argument("--time-limit", type=float, default=None, help="certify's MILP time limit in seconds")
    p.add_argument("--lever", choices=("auto", "remat", "act-offload", "remat-offload"), default="auto",
                   help="the lever to execute (auto: the fastest verified schedule among them; the offloading "
                   "levers need --bandwidth)")
    p.add_argument("--chain-out", help="also write the profiled chain here")
    p.add_argument("--free", choices=("model", "eager"), default="model", help=argparse.SUPPRESS)
    p.add_argument("--json", action="store_true",
                   help="JSON: predicted_peak, measured_peak, predicted_time, measured_time, grads_match, schedule, …")
    p.set_defaults(fn=cmd_plan)

    from . import train

    train.add_parser(sub)
    from . import pipeline

    p = sub.add_parser("pipeline", help="plan pipelined model parallelism with memsched, run it, compare",
                       description=pipeline.DESCRIPTION, epilog=pipeline.EPILOG)
    _model_args(p)
    pipeline.add_arguments(p)
    p.set_defaults(fn=pipeline.command)

    args = ap.parse_args(argv)
    from .binary import BinaryError
    from .remat import ExecutionError

    try:
        return args.fn(args)
    except (ScheduleError, BinaryError, ValueError) as e:
        print(f"memsched_torch {args.cmd}: {e}", file=sys.stderr)
        return 2
    except ExecutionError as e:
        print(f"memsched_torch {args.cmd}: execution failed: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
