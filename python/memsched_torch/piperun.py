"""The ranks of a pipeline: one process per part, each running its StageModule under a runtime,
measured (docs/torch.md, "Pipelined execution").

Runtimes (RankSpec.runtime):

  torch  torch.distributed.pipelining as a user would run it: PipelineStage(StageModule, k, S,
         device, input_args/output_args as meta tensors, so no shape inference runs a forward)
         and Schedule1F1B or ScheduleGPipe (loss_fn returns the last part's output, which is
         already the loss; scale_grads: the gradients are divided by m at the end of the step).
  p2p    the fallback of research/pipeline.md §4.4: the same actions in the same order (pipemodel.
         actions), each forward receiving its activation by a blocking recv into a fresh buffer
         and sending its output by isend, each backward receiving δ the same way and sending
         δ^{first−1} by isend; the gradients divided by m at the end, as PyTorch's schedules do.
  solo   p2p without peers, for one rank alone on one device (scripts/gpu-pipeline.sh): a
         receive allocates a buffer of the right size and fills it with deterministic values, a
         send is dropped once "done". The rank's memory is what it would be in the pipeline;
         its gradients are not the model's.

Processes are started by multiprocessing (fork on CPU, as DataLoader's workers are; spawn on
CUDA); on CPU they join a gloo group on localhost, on CUDA an NCCL group with rank k on cuda:k.
Each builds the model again and loads the parent's state, so that spawn and fork run the same. Every rank sends back, through a file, its parameter gradients and buffers after
the first step (the one compared with one-process training), the losses, its measured peak
(CPU: tracker.StorageTracker; CUDA: tracker.AllocatorTracker), and the times of every step.
"""

import datetime
import os
import socket
import statistics
import sys
import time
import traceback
from dataclasses import dataclass, field

import torch

from . import models
from .pipemodel import actions
from .pipestage import MicroBatchSeeds, StageModule
from .schedule import Op


class RankFailure(RuntimeError):
    """A rank raised, or the ranks did not finish in time (hung: `hung` is True)."""

    def __init__(self, msg, hung=False):
        super().__init__(msg)
        self.hung = hung


@dataclass
class RankSpec:
    """Everything a rank needs (picklable: it crosses the spawn)."""
    rank: int
    world: int
    first: int
    last: int
    sequence: list  # [(kind, stage)] in chain numbers, or None (store-all)
    m: int
    schedule: str  # 1f1b or gpipe
    runtime: str  # torch, p2p or solo
    model_args: dict
    state_path: str  # the parent's parameters and buffers (torch.save of Net.state())
    inputs_path: str  # the micro-batches (rank 0)
    shapes: list  # shapes[ℓ] = a^ℓ's shape (ℓ = 0..L), one micro-batch
    dtypes: list
    out_dir: str
    device: str = "cpu"
    port: int = 0
    seed: int = 0
    threads: int = 1
    runs: int = 1
    timeout: float = 300.0
    free: str = "model"


@dataclass
class RankResult:
    rank: int
    first: int
    last: int
    measured_peak: int
    peak_step: str
    steps: list  # (label, peak bytes)
    params_bytes: int
    grads: dict  # global parameter index -> tensor (CPU)
    buffers: dict  # global buffer index -> tensor (CPU)
    losses: list
    times: list  # [(start, end)] per step, perf_counter (CLOCK_MONOTONIC: one clock for all ranks)
    allocator_peak_lower: int = None
    runtime: str = ""
    device: str = ""
    extra: dict = field(default_factory=dict)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _global_indices(net, first, end):
    """Indices (in net.parameters() and in the net's buffers' order) of stages first..end."""
    p_idx, b_idx = [], []
    pi = bi = 0
    for l, mod in enumerate(net.modules, 1):
        ps = list(mod.parameters())
        bs = list(mod.buffers())
        if first <= l <= end:
            p_idx += range(pi, pi + len(ps))
            b_idx += range(bi, bi + len(bs))
        pi += len(ps)
        bi += len(bs)
    return p_idx, b_idx


class _SoloLink:
    """No peers: a receive allocates and fills a buffer, a send is done at once."""

    def __init__(self, device, seed):
        self.device = device
        self.gen = torch.Generator(device="cpu").manual_seed(seed)

    def recv(self, shape, dtype, src):
        buf = torch.empty(shape, dtype=dtype, device=self.device)
        with torch.no_grad():
            if buf.is_floating_point():
                buf.copy_(torch.randn(shape, generator=self.gen, dtype=dtype) * 1e-3)
            else:
                buf.zero_()
        return buf

    def isend(self, t, dst):
        return None

    def done(self, work):
        return True

    def wait(self, work):
        pass


class _GroupLink:
    """Point-to-point over the process group: blocking recv into a fresh buffer, isend."""

    def __init__(self, device):
        self.device = device

    def recv(self, shape, dtype, src):
        import torch.distributed as dist

        buf = torch.empty(shape, dtype=dtype, device=self.device)
        dist.recv(buf, src=src)
        return buf

    def isend(self, t, dst):
        import torch.distributed as dist

        return dist.isend(t, dst=dst)

    def done(self, work):
        return work is None or work.is_completed()

    def wait(self, work):
        if work is not None:
            work.wait()


def _p2p_step(spec, stage, mbs, link, tracker, losses):
    """One iteration in the rank's order of actions (pipemodel.actions): see the module comment.
    What it holds is what PyTorch's stage holds: the input of every micro-batch in flight, the
    autograd edge of its output (the output itself only until its send has completed), each
    send's tensor until the send has completed."""
    from torch.autograd.graph import get_gradient_edge

    k, S = spec.rank, spec.world
    in_shape, in_dtype = spec.shapes[spec.first - 1], spec.dtypes[spec.first - 1]
    out_shape, out_dtype = spec.shapes[spec.last], spec.dtypes[spec.last]
    last = k == S - 1
    pending = {}  # μ -> (backward root: the loss, or the output's autograd edge; the input)
    sends = []  # [work, tensor] of the sends not known to be complete

    def reap(block=False):
        keep = []
        for work, t in sends:
            if work is None or block or link.done(work):
                link.wait(work)
            else:
                keep.append((work, t))
        sends[:] = keep

    for kind, mu in actions(spec.schedule, k, S, spec.m):
        reap()
        if tracker is not None:
            tracker.step(f"{kind}{mu}")
        if kind == "F":
            x = mbs[mu] if k == 0 else link.recv(in_shape, in_dtype, k - 1).requires_grad_(True)
            out = stage(x)
            if last:
                losses.append(out)
                pending[mu] = (out, x)
            else:
                sends.append((link.isend(out.detach(), k + 1), out))
                pending[mu] = (get_gradient_edge(out), x)
            del out, x
        else:
            root, x = pending.pop(mu)
            if last:
                torch.autograd.backward(root)
                # As PyTorch's last stage: the loss kept for the caller drops its graph (which
                # would hold the part's input through the autograd nodes).
                root.detach_()
            else:
                g = link.recv(out_shape, out_dtype, k + 1)
                torch.autograd.backward(root, g)
                del g
            if k > 0:
                d = x.grad
                x.grad = None
                sends.append((link.isend(d, k - 1), d))
                del d
            del root, x
    reap(block=True)
    for p in stage.own_parameters():
        if p.grad is not None:
            p.grad.div_(spec.m)


def _torch_schedule(spec, stage, device):
    from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe

    k, S = spec.rank, spec.world
    in_shape, in_dtype = spec.shapes[spec.first - 1], spec.dtypes[spec.first - 1]
    meta_in = torch.empty(in_shape, dtype=in_dtype, device="meta", requires_grad=k > 0)
    if k == S - 1:
        meta_out = torch.empty((), dtype=torch.float32, device="meta", requires_grad=True)
    else:
        meta_out = torch.empty(spec.shapes[spec.last], dtype=spec.dtypes[spec.last], device="meta",
                               requires_grad=True)
    pstage = PipelineStage(stage, k, S, device, input_args=(meta_in,), output_args=(meta_out,))
    cls = Schedule1F1B if spec.schedule == "1f1b" else ScheduleGPipe
    return cls(pstage, spec.m, loss_fn=_the_output, scale_grads=True)


def _the_output(output, target):
    """loss_fn of the schedule: the last part's output is the micro-batch's loss already (the
    chain's loss stage L+1 runs inside the part)."""
    return output


def _torch_step(spec, sched, mbs, losses):
    k, S = spec.rank, spec.world
    kw = {"return_outputs": False}
    if k == 0:
        kw["arg_mbs"] = [(x,) for x in mbs]
    if k == S - 1:
        kw["target_mbs"] = [None] * spec.m
        kw["losses"] = losses
    sched.step(**kw)


class _BackwardMarks:
    """Marks the start of each micro-batch's backward in the tracker (a pre-hook on the autograd
    node of the part's output), as _p2p_step marks its actions."""

    def __init__(self, stage, tracker):
        self.tracker = tracker
        self.orig = stage.forward
        stage.forward = self

    def __call__(self, x):
        self.tracker.step(f"F{self.orig.__self__.calls}")
        out = self.orig(x)
        mu = self.orig.__self__.calls - 1
        if out.grad_fn is not None:
            out.grad_fn.register_prehook(lambda _g, mu=mu: self.tracker.step(f"B{mu}"))
        return out


def run_rank(spec):
    """Run one rank (in its own process): returns a RankResult."""
    device = torch.device(spec.device)
    torch.set_num_threads(max(1, spec.threads))
    group = spec.runtime != "solo"
    if group:
        import torch.distributed as dist

        os.environ["MASTER_ADDR"] = "127.0.0.1"
        os.environ["MASTER_PORT"] = str(spec.port)
        if device.type == "cuda":
            torch.cuda.set_device(device)
        backend = "nccl" if device.type == "cuda" else "gloo"
        kw = {"device_id": device} if device.type == "cuda" else {}
        dist.init_process_group(backend, rank=spec.rank, world_size=spec.world,
                                timeout=datetime.timedelta(seconds=spec.timeout), **kw)
    try:
        return _run_rank(spec, device)
    finally:
        if group:
            import torch.distributed as dist

            dist.destroy_process_group()


def _run_rank(spec, device):
    from .measure import deterministic
    from .tracker import AllocatorTracker, StorageTracker

    deterministic(device)
    net = models.build(device=device, **spec.model_args)
    net.load_state(torch.load(spec.state_path, map_location=device))
    seeds = MicroBatchSeeds(spec.seed).attach(net.modules)
    seq = [Op(kind, l) for kind, l in spec.sequence] if spec.sequence else None
    stage = StageModule(net, spec.first, spec.last, seeds, sequence=seq, free=spec.free, device=device).to(device)
    mbs = []
    if spec.rank == 0:
        # On the host: the stage copies each micro-batch to the device at its forward.
        mbs = torch.load(spec.inputs_path)
    own = list(stage.own_parameters())
    p_idx, b_idx = _global_indices(net, spec.first, spec.first + len(stage.stages) - 1)
    state = [{k: v.detach().clone() for k, v in m.state_dict().items()} for m in stage.stages]
    params_bytes = sum(p.untyped_storage().nbytes() for p in own)
    cuda = device.type == "cuda"

    if spec.runtime == "torch":
        sched = _torch_schedule(spec, stage, device)
        link = None
    else:
        sched = None
        link = _GroupLink(device) if spec.runtime == "p2p" else _SoloLink(device, spec.seed + spec.rank)

    def barrier():
        if spec.runtime != "solo":
            import torch.distributed as dist

            dist.barrier()

    def one_step(tracker):
        for m, s in zip(stage.stages, state):
            m.load_state_dict(s)
        for p in own:
            p.grad.zero_()
        stage.reset()
        stage.tracker = tracker if isinstance(tracker, StorageTracker) else None
        losses = []
        barrier()
        if cuda:
            torch.cuda.synchronize(device)
        t0 = time.perf_counter()
        if sched is not None:
            marks = _BackwardMarks(stage, tracker) if tracker is not None else None
            try:
                _torch_step(spec, sched, mbs, losses)
            finally:
                if marks is not None:
                    del stage.forward
        else:
            _p2p_step(spec, stage, mbs, link, tracker, losses)
        if cuda:
            torch.cuda.synchronize(device)
        t1 = time.perf_counter()
        return (t0, t1), [float(x.detach()) for x in losses]

    # The gradients exist before the step and are zeroed in place (zero_grad(set_to_none=False)):
    # every micro-batch's backward then adds into them, the first one too, so each new weight
    # gradient is a temporary for every micro-batch, as the profile's o_b (accumulate) counts.
    # With fresh gradients the first micro-batch's would not be, and GPipe's peak (at B(0), every
    # micro-batch held) was the largest weight gradient below the prediction (ResNet-18: −8.9 %).
    for p in own:
        p.grad = torch.zeros_like(p)
    times = []
    tr = AllocatorTracker(device) if cuda else StorageTracker(device)
    with tr:
        tr.count(*own)
        # The weight-gradient temporaries of the accumulation stay counted (incoming=False): the
        # profile's o_b holds them (accumulate), and a GPU's M is everything it holds.
        excl = tr.parameter_gradients_excluded(own) if cuda else tr.parameter_gradients_excluded(own, incoming=False)
        with excl:
            t, losses = one_step(tr)
    times.append(t)
    bufs = [b for m in stage.stages for b in m.buffers()]
    assert len(p_idx) == len(own) and len(b_idx) == len(bufs), "piperun: parameters or buffers miscounted"
    grads = {i: (p.grad.detach().to("cpu", copy=True) if p.grad is not None else None) for i, p in zip(p_idx, own)}
    buffers = {i: b.detach().to("cpu", copy=True) for i, b in zip(b_idx, bufs)}
    for _ in range(spec.runs):
        t, _ = one_step(None)
        times.append(t)
    res = RankResult(rank=spec.rank, first=spec.first, last=spec.last, measured_peak=tr.peak,
                     peak_step=tr.peak_step, steps=list(tr.steps), params_bytes=params_bytes, grads=grads, buffers=buffers, losses=losses, times=times,
                     runtime=spec.runtime, device=str(device))
    if cuda:
        res.allocator_peak_lower = tr.peak_lower
    return res


def _rank_main(spec):
    """Entry point of a rank's process: its result (or its error) goes to a file."""
    log = os.path.join(spec.out_dir, f"rank{spec.rank}.log")
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 2)  # gloo's and torch's own messages go to the rank's log, not the user's terminal
    sys.stderr = os.fdopen(2, "w", buffering=1)
    try:
        res = run_rank(spec)
        torch.save(res.__dict__, os.path.join(spec.out_dir, f"rank{spec.rank}.pt"))
    except BaseException as e:  # noqa: BLE001 — every failure becomes one line for the parent
        traceback.print_exc()
        with open(os.path.join(spec.out_dir, f"rank{spec.rank}.err"), "w") as f:
            f.write(_one_line(e))
        sys.stderr.flush()
        os._exit(1)


def _one_line(e):
    text = f"{type(e).__name__}: {e}".strip()
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    return " ".join(lines)[:500]


def launch(specs, timeout):
    """Start one process per spec, wait for all of them (at most timeout seconds), and return
    their RankResults in rank order. Raises RankFailure: a rank that raised (its error line, the
    others stopped), or a timeout (hung=True; every rank stopped)."""
    import multiprocessing as mp

    # CPU: fork, as DataLoader's workers do (the parent has imported torch and built the model
    # already: no second import per rank); CUDA: spawn (a forked child cannot use CUDA).
    ctx = mp.get_context("spawn" if any(s.device.startswith("cuda") for s in specs) else "fork")
    procs = [ctx.Process(target=_rank_main, args=(s,), name=f"memsched-rank{s.rank}") for s in specs]
    for p in procs:
        p.start()
    t0 = time.monotonic()
    failed = None
    try:
        while True:
            alive = [p for p in procs if p.exitcode is None]
            bad = [(i, p) for i, p in enumerate(procs) if p.exitcode not in (None, 0)]
            if bad and failed is None:
                failed = time.monotonic()
            if not alive:
                break
            if failed is not None and time.monotonic() - failed > 5:
                break  # the others are waiting for the failed rank: stop them
            if time.monotonic() - t0 > timeout:
                break
            time.sleep(0.05)
    finally:
        for p in procs:
            if p.exitcode is None:
                p.terminate()
        for p in procs:
            p.join(5)
            if p.exitcode is None:
                p.kill()
                p.join()
    out_dir = specs[0].out_dir
    errs = []
    for s, p in zip(specs, procs):
        path = os.path.join(out_dir, f"rank{s.rank}.err")
        if os.path.exists(path):
            with open(path) as f:
                errs.append(f"rank {s.rank}: {f.read().strip()}")
        elif p.exitcode not in (0, None) and p.exitcode > 0:
            errs.append(f"rank {s.rank}: exit status {p.exitcode} (log: {os.path.join(out_dir, f'rank{s.rank}.log')})")
    if errs:
        # The first rank that failed on its own is the cause; the others lost their peer.
        own = [e for e in errs if "Connection closed by peer" not in e and "peer" not in e.lower()]
        raise RankFailure((own or errs)[0])
    missing = [s.rank for s in specs if not os.path.exists(os.path.join(out_dir, f"rank{s.rank}.pt"))]
    if missing:
        raise RankFailure(f"ranks {missing} did not finish in {timeout:g} s (the runtime hung; "
                          f"logs in {out_dir})", hung=True)
    results = []
    for s in specs:
        d = torch.load(os.path.join(out_dir, f"rank{s.rank}.pt"), weights_only=False)
        results.append(RankResult(**d))
    return results


def makespans(results):
    """Per step: the last end minus the first start over the ranks (one clock: CLOCK_MONOTONIC)."""
    n = min(len(r.times) for r in results)
    return [max(r.times[i][1] for r in results) - min(r.times[i][0] for r in results) for i in range(n)]


def measured_makespan(results):
    """The median of the timed steps' makespans (the first, measured step left out when there
    are others: it also connects the ranks and warms the caches)."""
    ms = makespans(results)
    return statistics.median(ms[1:] if len(ms) > 1 else ms)
