"""Execute an activation-offloading schedule (001, `memsched offload-act`) on a Net.

The schedule is memsched's schedule.Timed (docs/verify.md): operations F_0..F_L, B_L..B_0 with
start times (operation i is chain stage ℓ = i+1, every forward an F_all: 001 keeps everything)
and transfers `offload`/`prefetch` of x_j with start times, on one link of bandwidth β
(x_0 = a^0, x_j = ā^j: the storages of stage j's tape and output). The executor runs the
operations in order and places every transfer where the schedule's clock puts it: a transfer
starting in [start of operation k, start of operation k+1) is issued right after operation k is
launched. 001's rules are followed and checked as it goes:

  - an offload of x_j copies ā^j's storages to the host once F_{j-1} has produced them;
    the device memory is released at max(end of the offload, end of F_j), F_j being the
    operation that reads x_j (001 (E)) — by `UntypedStorage.resize_(0)`, which keeps every
    tensor and autograd's saved tensors pointing at the storage;
  - a prefetch of x_j re-allocates the storages when it starts (001: it reserves |x_j|) and
    copies the bytes back; it must end before B_j starts, and B_j finds x_j and x_{j+1} resident.

Modes:
  - "functional" (any device, CPU included): the copies are synchronous into a host store
    (plain CPU tensors, not counted as device memory); order, residency and gradients are
    exactly those of the schedule, the link's timing is not (there is no link).
  - "cuda": the copies run on a side CUDA stream into pinned host buffers, ordered by events:
    the offload waits for its producer, B_j waits for its prefetch, a released storage is
    marked used by the side stream (record_stream) so the allocator does not reuse it before
    the copy has read it.
"""

import json
import statistics
import time
from dataclasses import dataclass, field

import torch

from .remat import Executor, ExecutionError, RunResult, timed_iteration
from .schedule import Op, ScheduleError

EPS = 1e-9


@dataclass
class TimedOp:
    backward: bool
    index: int
    start: float

    def __str__(self):
        return f"{'B' if self.backward else 'F'}_{self.index}"


@dataclass
class Transfer:
    kind: str  # offload | prefetch
    index: int
    start: float


@dataclass
class Timed:
    ops: list
    transfers: list
    bandwidth: float = None  # bytes/s, when the file gives it (memsched offload-act --json)
    peak: int = None  # memsched's peak_memory, when given
    makespan: float = None


def parse_timed(text, source="schedule"):
    """Read memsched offload-act --json output, a bare schedule.Timed JSON, or the plain format
    (`op F|B INDEX START`, `transfer offload|prefetch INDEX START`)."""
    s = text.lstrip()
    if s.startswith("{"):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            raise ScheduleError(f"{source}: invalid JSON: {e}") from None
        meta = obj
        if "schedule" in obj:
            if obj.get("feasible") is False:
                raise ScheduleError(f"{source}: memsched found no feasible schedule (feasible: false)")
            obj = obj["schedule"]
        if "ops" not in obj:
            raise ScheduleError(f"{source}: no 'ops' key: want memsched offload-act --json output or a schedule.Timed")
        try:
            ops = [TimedOp(bool(o["backward"]), int(o["index"]), float(o["start"])) for o in obj["ops"]]
            trs = [Transfer(str(t["kind"]), int(t["index"]), float(t["start"])) for t in obj.get("transfers") or []]
        except (KeyError, TypeError, ValueError) as e:
            raise ScheduleError(f"{source}: malformed operation or transfer ({e})") from None
        return Timed(ops, trs, bandwidth=meta.get("bandwidth"), peak=meta.get("peak_memory"),
                     makespan=meta.get("makespan"))
    ops, trs = [], []
    for n, line in enumerate(text.splitlines(), 1):
        f = line.split("#", 1)[0].split()
        if not f:
            continue
        try:
            if f[0] == "op" and len(f) == 4 and f[1] in ("F", "B"):
                ops.append(TimedOp(f[1] == "B", int(f[2]), float(f[3])))
            elif f[0] == "transfer" and len(f) == 4:
                trs.append(Transfer(f[1], int(f[2]), float(f[3])))
            else:
                raise ValueError
        except ValueError:
            raise ScheduleError(f"{source}: line {n}: {line.strip()!r} is not `op F|B INDEX START` "
                                "or `transfer offload|prefetch INDEX START`") from None
    return Timed(ops, trs)


def check_timed(timed, n):
    """Refuse a schedule that cannot be an activation-offloading schedule of a chain with n
    stages (the loss included): operations F_0..F_{n-1}, B_{n-1}..B_0 in order, transfers of
    x_0..x_{n-1}, each offloaded once at most and prefetched after its offload."""
    want = [(False, i) for i in range(n)] + [(True, i) for i in range(n - 1, -1, -1)]
    got = [(o.backward, o.index) for o in timed.ops]
    if len(got) != len(want):
        raise ScheduleError(f"the schedule has {len(got)} operations; a chain of {n} stages needs {len(want)} "
                            f"(F_0..F_{n - 1}, B_{n - 1}..B_0)")
    for k, (g, w) in enumerate(zip(got, want)):
        if g != w:
            raise ScheduleError(f"operation {k + 1} is {timed.ops[k]}, want {'B' if w[0] else 'F'}_{w[1]}")
    for k in range(1, len(timed.ops)):
        if timed.ops[k].start < timed.ops[k - 1].start - EPS:
            raise ScheduleError(f"operation {k + 1} ({timed.ops[k]}) starts before operation {k}")
    off = {}
    for t in timed.transfers:
        if t.kind not in ("offload", "prefetch"):
            raise ScheduleError(f"transfer of x_{t.index}: unknown kind {t.kind!r} (want offload or prefetch)")
        if not 0 <= t.index < n:
            raise ScheduleError(f"transfer {t.kind} of x_{t.index}: index out of range 0..{n - 1}")
    for t in sorted(timed.transfers, key=lambda t: t.start):
        if t.kind == "offload":
            if t.index in off:
                raise ScheduleError(f"x_{t.index} is offloaded twice")
            off[t.index] = "out"
        else:
            if off.get(t.index) != "out":
                raise ScheduleError(f"x_{t.index} is prefetched without an offload before")
            off[t.index] = "back"
    for j, s in off.items():
        if s != "back":
            raise ScheduleError(f"x_{j} is offloaded and never prefetched")


@dataclass
class OffloadResult(RunResult):
    transfers: list = field(default_factory=list)  # (kind, index, bytes, operation it follows, 1-based)
    host_peak: int = 0  # bytes in the host store at most


def _bytes_view(st):
    return torch.empty(0, dtype=torch.uint8, device=st.device).set_(st)


class _Link:
    """The host store and the copies; synchronous (functional) or on a side CUDA stream."""

    def __init__(self, mode, device, tracker):
        self.mode = mode
        self.device = device
        self.tracker = tracker
        self.host = {}  # j -> [(storage, host bytes, nbytes)]
        self.host_bytes = 0
        self.host_peak = 0
        self.done = {}  # j -> CUDA event of the last copy
        if mode == "cuda":
            self.side = torch.cuda.Stream(device)

    def _untracked(self):
        import contextlib

        return self.tracker.untracked() if self.tracker is not None else contextlib.nullcontext()

    def offload(self, j, storages):
        entries = []
        with self._untracked():
            if self.mode == "cuda":
                ready = torch.cuda.Event()
                ready.record(torch.cuda.current_stream(self.device))
                with torch.cuda.stream(self.side):
                    self.side.wait_event(ready)
                    for st in storages:
                        host = torch.empty(st.nbytes(), dtype=torch.uint8, pin_memory=True)
                        host.copy_(_bytes_view(st), non_blocking=True)
                        entries.append((st, host, st.nbytes()))
                    ev = torch.cuda.Event()
                    ev.record(self.side)
                    self.done[j] = ev
            else:
                for st in storages:
                    entries.append((st, _bytes_view(st).to("cpu", copy=True), st.nbytes()))
        self.host[j] = entries
        self.host_bytes += sum(e[2] for e in entries)
        self.host_peak = max(self.host_peak, self.host_bytes)

    def release(self, j):
        """Free x_j's device memory (its offload has ended and its reader has run)."""
        for st, _, _ in self.host[j]:
            if self.mode == "cuda":
                _bytes_view(st).record_stream(self.side)
            st.resize_(0)
            if self.tracker is not None:
                self.tracker.refresh(st)

    def prefetch(self, j):
        entries = self.host.pop(j)
        with self._untracked():
            for st, _, n in entries:
                st.resize_(n)
        if self.tracker is not None:
            for st, _, _ in entries:
                self.tracker.refresh(st)
        if self.mode == "cuda":
            ready = torch.cuda.Event()
            ready.record(torch.cuda.current_stream(self.device))
            with torch.cuda.stream(self.side):
                self.side.wait_event(ready)
                for st, host, _ in entries:
                    _bytes_view(st).copy_(host, non_blocking=True)
                ev = torch.cuda.Event()
                ev.record(self.side)
                self.done[j] = ev
        else:
            with self._untracked():
                for st, host, _ in entries:
                    _bytes_view(st).copy_(host)
        self.host_bytes -= sum(e[2] for e in entries)

    def restore(self):
        """Bring back every storage still released (after a failed run: the input a^0 may be one
        of them, and later runs would find it empty)."""
        if self.mode == "cuda":
            torch.cuda.synchronize(self.device)
        for entries in self.host.values():
            for st, host, n in entries:
                if st.nbytes() == 0 and n > 0:
                    st.resize_(n)
                    _bytes_view(st).copy_(host)
        self.host.clear()

    def wait(self, j):
        """The compute stream waits for the last copy of x_j."""
        ev = self.done.pop(j, None)
        if ev is not None:
            torch.cuda.current_stream(self.device).wait_event(ev)


def execute_offload(net, x, timed, chain, bandwidth=None, mode=None, tracker=None, free="model"):
    """Run an activation-offloading schedule as one training iteration (see the module comment).
    chain gives the durations (u_f, u_b, and |x_j|/β for transfers) that place each transfer
    between operations; bandwidth in bytes/s (default: the schedule's own)."""
    it = OffloadIteration(net, x, timed, chain, bandwidth=bandwidth, mode=mode, tracker=tracker, free=free)
    return run_linked_iteration(it, net, x, tracker)


def run_linked_iteration(it, net, x, tracker):
    """Drive an iteration with a link (OffloadIteration, combined.CombinedIteration) to its end
    under timed_iteration and return its result; on any failure the link first brings back
    what is on the host (a^0 may be there) before the exception propagates."""

    def run():
        for _ in it.drive():
            pass

    try:
        total = timed_iteration(net, x, tracker, run)
    except BaseException:
        it.link.restore()
        raise
    return it.result(total)


class OffloadIteration:
    """One iteration of an activation-offloading schedule: the executor, the link and 001's
    bookkeeping (what is away, released, prefetched), driven by `drive`."""

    def __init__(self, net, x, timed, chain, bandwidth=None, mode=None, tracker=None, free="model",
                 input_grad=None, amp=None, keep_input=False):
        n = len(net.modules)
        if len(chain) != n:
            raise ScheduleError(f"the chain has {len(chain)} stages (loss included) but the model has {n}")
        check_timed(timed, n)
        self.beta = bandwidth or timed.bandwidth
        if not self.beta or self.beta <= 0:
            raise ScheduleError("no bandwidth: give --bandwidth (the schedule file does not say it)")
        self.device = x.device
        if mode is None:
            mode = "cuda" if self.device.type == "cuda" else "functional"
        if mode == "cuda" and self.device.type != "cuda":
            raise ScheduleError("mode cuda needs the model and input on a CUDA device")
        self.mode, self.n, self.x, self.timed, self.chain, self.tracker = mode, n, x, timed, chain, tracker
        self.ex = Executor(net, x, free=free, tracker=tracker, capture=True, input_grad=input_grad, amp=amp)
        self.link = _Link(mode, self.device, tracker)
        self.times, self.log = [], []
        self.keep_input = keep_input  # x_0 = a^0 is the caller's: its transfers are skipped

    def result(self, total):
        ex = self.ex
        if ex.t != 0:
            raise ExecutionError(f"the schedule ended before δ^0 (current gradient δ^{ex.t})")
        res = OffloadResult(delta0=ex.delta, loss=ex.loss, forwards=ex.fw.counts, op_times=self.times, time=total,
                            transfers=self.log, host_peak=self.link.host_peak)
        if self.tracker is not None:
            res.steps, res.peak, res.peak_step = self.tracker.steps, self.tracker.peak, self.tracker.peak_step
        return res

    def drive(self, user_loss=False):
        """Run the schedule (a generator). With user_loss, F_{L+1} and B_{L+1} (001's F_L, B_L:
        the loss stage) are the caller's: the generator yields a^L at F_{L+1} and expects δ^L back.
        The transfers that start while the loss runs are issued around it: offloads before it
        (they only copy; the device memory is released no later than the schedule says), the
        others after it (a prefetch reserves memory: later holds less)."""
        ex, link, timed, chain, beta, tracker, x = self.ex, self.link, self.timed, self.chain, self.beta, \
            self.tracker, self.x
        mode, device, n = self.mode, self.device, self.n
        times, log = self.times, self.log

        def size(j):
            return chain.a0 if j == 0 else chain.stage(j).abar

        def dur(o):
            st = chain.stage(o.index + 1)
            return st.ub if o.backward else st.uf

        pending = sorted(timed.transfers, key=lambda t: t.start)
        off_end, pre_end = {}, {}
        released, out = set(), set()  # x_j released from the device; x_j away (offloaded, not back)
        reader_end = {}  # j -> end time of F_j (the operation reading x_j), once it has run

        def storages(j):
            if j == 0:
                return [x.untyped_storage()]
            if j not in ex.tapes:
                raise ExecutionError(f"x_{j} (ā^{j}) is not on the device to offload")
            return ex.tapes[j]

        def release_due(now):
            """Release every x_j whose offload and reader F_j have both ended by `now` (001 (E))."""
            for j in sorted(out - released):
                if j in off_end and off_end[j] <= now + EPS and j in reader_end and reader_end[j] <= now + EPS:
                    link.release(j)
                    released.add(j)

        def issue(t, k):
            j = t.index
            release_due(t.start)
            if j == 0 and self.keep_input:
                return
            if t.kind == "offload":
                if j > 0 and j not in ex.tapes:
                    raise ExecutionError(f"offload of x_{j} at {t.start:.6g} s: F_{j - 1} has not produced it")
                sts = storages(j)
                link.offload(j, sts)
                off_end[j] = t.start + size(j) / beta
                out.add(j)
                log.append((t.kind, j, sum(st.nbytes() for st in sts), k + 1))
                del sts  # the executor's tape is the only owner: B_j must free it
            else:
                if j not in released:
                    raise ExecutionError(f"prefetch of x_{j} at {t.start:.6g} s: x_{j} has not left the device")
                log.append((t.kind, j, sum(e[2] for e in link.host[j]), k + 1))
                link.prefetch(j)
                pre_end[j] = t.start + size(j) / beta
                out.discard(j)
                released.discard(j)

        def until(end):
            while pending and pending[0].start < end - EPS:
                yield pending.pop(0)

        for k, o in enumerate(timed.ops):
            now = o.start
            release_due(now)
            l = o.index + 1
            label = f"{k + 1} {o}"
            loss = user_loss and l == n
            if loss and o.backward:
                continue  # the caller's backward of the loss ran it
            if tracker is not None:
                tracker.step(label + (" (loss)" if loss else ""))
            need = [o.index, o.index + 1] if o.backward else [o.index]
            for j in need:
                if j in out:
                    raise ExecutionError(f"{label}: x_{j} is on the host (offloaded, not prefetched)")
                if j in pre_end and pre_end[j] > now + EPS:
                    raise ExecutionError(f"{label}: the prefetch of x_{j} ends at {pre_end[j]:.6g} s, "
                                         f"after the operation starts ({now:.6g} s)")
                if mode == "cuda" and o.backward:
                    # B_j waits for its prefetches. A forward only reads x_j, which an offload
                    # in flight only reads too: waiting for it would put the compute behind the
                    # link, where 001 overlaps the offload of x_j with F_j.
                    link.wait(j)
            if loss:
                # F_{L+1}: what starts before B_L goes around the caller's loss (see above).
                nxt = timed.ops[k + 2].start if k + 2 < len(timed.ops) else float("inf")
                during = list(until(nxt))
                for t in during:
                    if t.kind == "offload":
                        issue(t, k)
                delta = yield ex.loss_input()
                ex.loss_done(delta)
                del delta
                reader_end[o.index] = o.start + dur(o)
                for t in during:
                    if t.kind != "offload":
                        issue(t, k)
                continue
            t0 = time.perf_counter()
            if o.backward:
                ex.backward(l, label)
            else:
                ex.forward(l, "Fall", label)
                reader_end[o.index] = o.start + dur(o)
            if device.type != "cuda":  # a synchronize would also wait for the side stream's copies
                times.append(time.perf_counter() - t0)
            nxt = timed.ops[k + 1].start if k + 1 < len(timed.ops) else float("inf")
            for t in until(nxt):
                issue(t, k)


def as_sequence(n):
    """The store-all sequence 001's operations run (every forward an F_all)."""
    return [Op("Fall", l) for l in range(1, n + 1)] + [Op("B", l) for l in range(n, 0, -1)]


def measure_bandwidth(device, nbytes=256 * 2**20, small=4 * 2**20, reps=5):
    """Copy rates of the link the "cuda" mode uses: pinned host memory to the device and back,
    non_blocking on a side stream, timed by CUDA events; bytes/s, the median of `reps` copies
    each way after one warm-up, for nbytes and for smaller copies (many ā^j storages are small,
    and a copy has a fixed cost)."""
    device = torch.device(device)
    side = torch.cuda.Stream(device)

    def rates(n):
        host = torch.empty(n, dtype=torch.uint8, pin_memory=True)
        dev = torch.empty(n, dtype=torch.uint8, device=device)
        out = {}
        for name, dst, src in (("h2d", dev, host), ("d2h", host, dev)):
            ts = []
            with torch.cuda.stream(side):
                for r in range(reps + 1):
                    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    e0.record(side)
                    dst.copy_(src, non_blocking=True)
                    e1.record(side)
                    e1.synchronize()
                    if r:
                        ts.append(e0.elapsed_time(e1) / 1e3)
            out[name] = n / statistics.median(ts)
        return out

    big = rates(nbytes)
    return {"bytes": nbytes, "h2d": big["h2d"], "d2h": big["d2h"], "small": {"bytes": small, **rates(small)}}
