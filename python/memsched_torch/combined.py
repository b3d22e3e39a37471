"""Execute a combined rematerialization + activation-offloading schedule (003's POFO class,
SPEC §6, `memsched remat-offload`) on a Net: one training iteration.

The schedule is memsched's schedule.Combined (docs/verify.md): a compute stream of 004
operations (F_ck, F_∅, F_all, B) and one link stream of whole-tensor transfers (`offload` or
`prefetch` of a^ℓ or ā^ℓ), synchronized only by dependencies — an operation waits for the
transfers in its `wait`, a transfer for operation `after`. Start times follow from them.

`replay` is the strict timing of memsched's verify/combined.Check, in Python and exactly
(fractions): the times of every start and end, then the replay in time order — ends and
releases first at one instant, then starts in causal order — with 004's memory per operation,
an offloaded tensor leaving the GPU once its offload and its readers (the operations using it
before its prefetch is waited for) have ended, a prefetch reserving the tensor at its start and
making it usable at its end. It refuses, before anything runs, what verify refuses (a stage out
of range, an operation 004 does not allow, a tensor used while away, a transfer of a tensor not
stored or not there, a prefetch before the tensor has left, a dependency cycle) and gives the
event order and the peak.

`execute_combined` runs that event order on the model: an operation's start runs it (remat.py's
Executor: F_ck/F_∅ without autograd, F_all keeping the stage's tape, B^ℓ from δ^ℓ), an offload's
start copies the tensor's storages to the host store, its release frees the device storages
(`UntypedStorage.resize_(0)`: every tensor and autograd's saved tensors keep pointing at them),
a prefetch's start re-allocates and copies back (offload.py's link: synchronous in the
functional mode, a side CUDA stream with pinned buffers and events on a GPU, where an operation
waits for the events of the prefetches it waits for). The stored tensors are a^0 (the input),
a plain a^ℓ (an F_ck/F_∅ output) and ā^ℓ (the storages of stage ℓ's tape and output).
"""

import heapq
import json
import time
from dataclasses import dataclass, field
from fractions import Fraction

import torch

from .offload import _Link, run_linked_iteration
from .remat import Executor, ExecutionError, RunResult
from .schedule import FULL, NONE, PLAIN, Op, RematState, ScheduleError, _op


@dataclass
class COp:
    op: Op
    wait: list


@dataclass
class CTransfer:
    kind: str  # offload | prefetch
    stage: int
    full: bool  # ā^ℓ (True) or a^ℓ
    after: int  # index of the operation it waits for, -1 none

    @property
    def tensor(self):
        return (self.stage, self.full)

    def __str__(self):
        return f"{self.kind} of {tname(self.tensor)}"


def tname(t):
    return f"{'ā' if t[1] else 'a'}^{t[0]}"


@dataclass
class Combined:
    ops: list
    transfers: list
    algo: str = None
    bandwidth: float = None  # bytes/s, when the file says it
    budget: int = None
    peak: int = None  # memsched's peak_memory, when given
    makespan: float = None
    stages: int = None  # the chain's stage count the file says it was made for

    def to_json(self):
        return {"ops": [dict({"op": o.op.kind, "stage": o.op.stage}, **({"wait": o.wait} if o.wait else {}))
                        for o in self.ops],
                "transfers": [{"kind": t.kind, "tensor": "abar" if t.full else "a", "stage": t.stage,
                               "after": t.after} for t in self.transfers]}


def _algorithm(result):
    """A result's algorithm name: "algorithm" (memsched ≥ 0.2's key), or "algo" (before)."""
    return result.get("algorithm", result.get("algo"))


def parse_combined(text, source="schedule", algo=None):
    """Read `memsched remat-offload --json` output (the result of strategy `algo`, else the
    first feasible one), one of its results, or a bare schedule.Combined."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise ScheduleError(f"{source}: invalid JSON: {e}") from None
    if not isinstance(obj, dict):
        raise ScheduleError(f"{source}: not a JSON object: want memsched remat-offload --json output")
    top = obj
    if "results" in obj:
        res = obj["results"] or []
        if algo is not None:
            pick = [r for r in res if _algorithm(r) == algo]
            if not pick:
                have = ", ".join(str(_algorithm(r)) for r in res) or "none"
                raise ScheduleError(f"{source}: no result of strategy {algo!r} (results: {have})")
            r = pick[0]
            if not r.get("feasible"):
                raise ScheduleError(f"{source}: strategy {algo} found no feasible schedule (feasible: false)")
        else:
            feas = [r for r in res if r.get("feasible")]
            if not feas:
                raise ScheduleError(f"{source}: memsched found no feasible schedule (feasible: false)")
            r = feas[0]
        obj = r
    elif obj.get("feasible") is False:
        raise ScheduleError(f"{source}: memsched found no feasible schedule (feasible: false)")
    meta = obj
    if "schedule" in obj:
        obj = obj["schedule"]
    if not isinstance(obj, dict) or "ops" not in obj:
        raise ScheduleError(f"{source}: no 'ops' key: want memsched remat-offload --json output or a "
                            "schedule.Combined ({\"ops\": …, \"transfers\": …})")
    ops, trs = [], []
    for i, o in enumerate(obj["ops"] or []):
        where = f"{source}: ops[{i}]"
        if not isinstance(o, dict) or "op" not in o or "stage" not in o:
            if isinstance(o, dict) and "backward" in o:
                raise ScheduleError(f"{where}: an act-offload operation (backward/index): "
                                    "run it with --offload, not --remat-offload")
            raise ScheduleError(f"{where}: {o!r} is not {{\"op\": KIND, \"stage\": N, \"wait\": [...]}}")
        wait = o.get("wait") or []
        if not isinstance(wait, list) or not all(isinstance(w, int) and not isinstance(w, bool) for w in wait):
            raise ScheduleError(f"{where}: wait {wait!r} is not a list of transfer indices")
        ops.append(COp(_op(o["op"], o["stage"], where), list(wait)))
    for j, t in enumerate(obj.get("transfers") or []):
        where = f"{source}: transfers[{j}]"
        if not isinstance(t, dict):
            raise ScheduleError(f"{where}: {t!r} is not a transfer")
        kind, tensor, stage, after = t.get("kind"), t.get("tensor"), t.get("stage"), t.get("after")
        if kind not in ("offload", "prefetch"):
            raise ScheduleError(f"{where}: kind {kind!r} (want offload or prefetch)")
        if tensor not in ("a", "abar"):
            raise ScheduleError(f"{where}: tensor {tensor!r} (want a or abar)")
        for name, v in (("stage", stage), ("after", after)):
            if not isinstance(v, int) or isinstance(v, bool):
                raise ScheduleError(f"{where}: {name} {v!r} is not an integer"
                                    + (" (after is required; -1: no compute dependency)" if name == "after" else ""))
        trs.append(CTransfer(kind, stage, tensor == "abar", after))
    return Combined(ops, trs, algo=_algorithm(meta), bandwidth=top.get("bandwidth"), budget=top.get("budget"),
                    peak=meta.get("peak_memory"), makespan=meta.get("makespan"), stages=top.get("stages"))


# --- strict timing (verify/combined.Check) ---

@dataclass
class Event:
    kind: str  # op-start, op-end, transfer-start, transfer-end, release
    id: int
    time: Fraction
    memory: int = 0  # GPU memory after the event (the model's)


@dataclass
class Replay:
    events: list
    peak: int
    makespan: Fraction
    op_memory: list  # memory right after each operation's start (the model's, bytes)
    forwards: list  # forwards per stage, index 0 unused
    offloaded_bytes: int
    op_start: list = field(default_factory=list)


def _rat(x):
    return Fraction(x)


def replay(chain, sched, bandwidth, budget=None):
    """The strict timing of sched on chain (see the module comment): raises ScheduleError with
    the first broken rule, as `memsched verify --problem remat-offload` names it."""
    n = len(chain)
    nop, ntr = len(sched.ops), len(sched.transfers)
    if not bandwidth or bandwidth <= 0:
        raise ScheduleError("no bandwidth: give --bandwidth (the schedule file does not say it)")
    beta = _rat(bandwidth)

    def bad(rule, msg, op=None, tr=None, t=None):
        where = f" at operation {op + 1} ({sched.ops[op].op})" if op is not None else \
            f" at transfer {tr + 1} ({sched.transfers[tr]})" if tr is not None else ""
        at = f", t = {float(t):.6g} s" if t is not None else ""
        return ScheduleError(f"{rule} violated{where}{at}: {msg}")

    for i, o in enumerate(sched.ops):
        if not 1 <= o.op.stage <= n:
            raise bad("operation", f"stage {o.op.stage} out of range 1..{n} (the chain has {n} stages, "
                      "the loss included)", op=i)
        for w in o.wait:
            if not 0 <= w < ntr:
                raise bad("index", f"waits for transfer {w + 1}, not in 1..{ntr}", op=i)
    for j, t in enumerate(sched.transfers):
        if not -1 <= t.after < nop:
            raise bad("index", f"after operation {t.after + 1}, not in 1..{nop}", tr=j)
        if not 0 <= t.stage <= n or (t.full and t.stage == 0):
            raise bad("transfer", f"tensor {tname(t.tensor)} does not exist (a^0..a^{n}, ā^1..ā^{n})", tr=j)

    def size(tensor):
        l, full = tensor
        if l == 0:
            return chain.a0
        return chain.stage(l).abar if full else chain.stage(l).a

    # Times: the two streams advance together, an item once what it depends on is computed.
    op_dur = [_rat(chain.stage(o.op.stage).ub if o.op.kind == "B" else chain.stage(o.op.stage).uf)
              for o in sched.ops]
    sizes = [size(t.tensor) for t in sched.transfers]
    tr_dur = [Fraction(s) / beta for s in sizes]
    op_start, op_end = [None] * nop, [None] * nop
    tr_start, tr_end = [None] * ntr, [None] * ntr
    order = []  # (is_op, id) in causal order
    i = j = 0
    while i < nop or j < ntr:
        if i < nop and all(w < j for w in sched.ops[i].wait):
            t = op_end[i - 1] if i > 0 else Fraction(0)
            for w in sched.ops[i].wait:
                t = max(t, tr_end[w])
            op_start[i], op_end[i] = t, t + op_dur[i]
            order.append((True, i))
            i += 1
        elif j < ntr and sched.transfers[j].after < i:
            t = tr_end[j - 1] if j > 0 else Fraction(0)
            a = sched.transfers[j].after
            if a >= 0:
                t = max(t, op_end[a])
            tr_start[j], tr_end[j] = t, t + tr_dur[j]
            order.append((False, j))
            j += 1
        elif i < nop:
            raise bad("deadlock", "waits for a transfer that waits for this or a later operation", op=i)
        else:
            raise bad("deadlock", f"waits for operation {sched.transfers[j].after + 1}, which does not exist", tr=j)
    rank = {k: r for r, k in enumerate(order)}
    order.sort(key=lambda k: (op_start[k[1]] if k[0] else tr_start[k[1]], rank[k]))

    # What each operation uses (004 Table 1), on the plain replay of the compute stream.
    plain = RematState(chain)
    uses = []
    forwards = [0] * (n + 1)
    for i, o in enumerate(sched.ops):
        uses.append(_uses(plain, o.op))
        try:
            plain.apply(o.op)
        except ScheduleError as e:
            raise bad("operation", str(e), op=i, t=op_start[i]) from None
        if o.op.kind != "B":
            forwards[o.op.stage] += 1
    if plain.t != 0:
        raise bad("operation", f"the sequence ends before δ^0 is computed (current gradient δ^{plain.t})")
    first_wait = [nop] * ntr
    for i in range(nop - 1, -1, -1):
        for w in sched.ops[i].wait:
            first_wait[w] = i
    readers = [[] for _ in range(ntr)]
    for j, t in enumerate(sched.transfers):
        if t.kind != "offload":
            continue
        lo = next((first_wait[k] for k in range(j - 1, -1, -1)
                   if sched.transfers[k].tensor == t.tensor and sched.transfers[k].kind == "prefetch"), -1)
        hi = next((first_wait[k] for k in range(j + 1, ntr)
                   if sched.transfers[k].tensor == t.tensor and sched.transfers[k].kind == "prefetch"), nop)
        readers[j] = [i for i in range(max(lo, 0), hi) if t.tensor in uses[i]]

    # Replay in time.
    state = RematState(chain)
    loc = {(0, False): "gpu"}
    cur = state.memory()
    peak = cur
    if budget is not None and cur > budget:
        raise bad("memory", f"{cur} bytes in the initial state (a^0, δ^{n}), budget {budget}")
    events = []
    op_done, tr_done, released = [False] * nop, [False] * ntr, [False] * ntr
    pending, during = [None] * nop, [0] * nop
    op_mem = [0] * nop
    ends = []  # (time, 0 op / 1 transfer, id)
    nxt = 0
    off_bytes = 0

    def stored(tensor):
        l, full = tensor
        a = state.acts[l]
        if l == 0:
            return a != NONE and not full
        return (a == PLAIN and not full) or (a == FULL and full)

    def start_of(k):
        return op_start[k[1]] if k[0] else tr_start[k[1]]

    while nxt < len(order) or ends:
        now = ends[0][0] if ends else None
        if nxt < len(order) and (now is None or start_of(order[nxt]) < now):
            now = start_of(order[nxt])
        while True:
            progressed = False
            while ends and ends[0][0] == now:
                _, kind, k = heapq.heappop(ends)
                progressed = True
                if kind == 0:
                    post = pending[k]
                    cur -= during[k] - post.memory()
                    for l in range(n + 1):
                        if post.acts[l] == state.acts[l]:
                            continue
                        if state.acts[l] != NONE:
                            loc.pop((l, state.acts[l] == FULL and l > 0), None)
                        if post.acts[l] != NONE:
                            loc[(l, post.acts[l] == FULL and l > 0)] = "gpu"
                    state = post
                    op_done[k] = True
                    events.append(Event("op-end", k, now, cur))
                else:
                    tr_done[k] = True
                    if sched.transfers[k].kind == "prefetch":
                        loc[sched.transfers[k].tensor] = "gpu"
                    events.append(Event("transfer-end", k, now, cur))
            for k in range(ntr):
                if released[k] or not tr_done[k] or sched.transfers[k].kind != "offload":
                    continue
                if all(op_done[r] for r in readers[k]):
                    released[k] = True
                    t = sched.transfers[k].tensor
                    if stored(t) and loc.get(t) == "gpu":
                        loc[t] = "cpu"
                        cur -= sizes[k]
                    events.append(Event("release", k, now, cur))
            if nxt < len(order) and start_of(order[nxt]) == now:
                is_op, k = order[nxt]
                nxt += 1
                progressed = True
                if is_op:
                    o = sched.ops[k].op
                    for u in _uses(state, o):
                        if loc.get(u) == "cpu":
                            raise bad("away", f"{o} uses {tname(u)}, which is on the CPU (offloaded; a prefetch "
                                      "must bring it back first)", op=k, t=now)
                        if loc.get(u) == "prefetching":
                            raise bad("away", f"{o} uses {tname(u)}, whose prefetch has not ended", op=k, t=now)
                    ps = state.copy()
                    m = ps.apply(o)
                    pending[k], during[k] = ps, m
                    cur += m - state.memory()
                    op_mem[k] = cur
                    heapq.heappush(ends, (op_end[k], 0, k))
                    events.append(Event("op-start", k, now, cur))
                else:
                    tr = sched.transfers[k]
                    t = tr.tensor
                    if tr.kind == "offload":
                        if not stored(t):
                            raise bad("transfer", f"offload of {tname(t)}, which is not stored (not computed yet, "
                                      "or consumed)", tr=k, t=now)
                        if loc.get(t) != "gpu":
                            raise bad("transfer", f"offload of {tname(t)}, which is not on the GPU", tr=k, t=now)
                        prev = next((sched.transfers[q].kind for q in range(k - 1, -1, -1)
                                     if sched.transfers[q].tensor == t), None)
                        if prev == "offload":
                            raise bad("transfer", f"{tname(t)} offloaded again before its prefetch", tr=k, t=now)
                        off_bytes += sizes[k]
                    else:
                        if not stored(t):
                            raise bad("transfer", f"prefetch of {tname(t)}, which is not stored", tr=k, t=now)
                        where = loc.get(t)
                        if where == "gpu":
                            prev = next((q for q in range(k - 1, -1, -1) if sched.transfers[q].tensor == t
                                         and sched.transfers[q].kind == "offload"), -1)
                            if prev >= 0 and not released[prev]:
                                raise bad("released", f"prefetch of {tname(t)} starts before it has left the GPU "
                                          "(its offload or a reader has not ended)", tr=k, t=now)
                            raise bad("transfer", f"prefetch of {tname(t)}, which is on the GPU (not offloaded)",
                                      tr=k, t=now)
                        if where == "prefetching":
                            raise bad("transfer", f"{tname(t)} prefetched twice", tr=k, t=now)
                        loc[t] = "prefetching"
                        cur += sizes[k]
                    heapq.heappush(ends, (tr_end[k], 1, k))
                    events.append(Event("transfer-start", k, now, cur))
                peak = max(peak, cur)
                if budget is not None and cur > budget:
                    what = f"operation {k + 1} ({sched.ops[k].op})" if is_op else \
                        f"transfer {k + 1} ({sched.transfers[k]})"
                    raise bad("memory", f"{cur} bytes on the GPU when {what} starts, budget {budget}", t=now)
            if not progressed:
                break
    end = max([e for e in op_end + tr_end if e is not None], default=Fraction(0))
    return Replay(events=events, peak=peak, makespan=end, op_memory=op_mem, forwards=forwards,
                  offloaded_bytes=off_bytes, op_start=op_start)


def _uses(state, op):
    """The stored tensors op reads, replaces or removes in state (verify/combined's uses)."""
    l = op.stage
    acts = state.acts
    out = []

    def inp(k):
        if 0 <= k < len(acts) and acts[k] != NONE:
            out.append((k, acts[k] == FULL and k > 0))

    if op.kind in ("Fck", "Fn"):
        inp(l - 1)
    elif op.kind == "Fall":
        inp(l - 1)
        if l < len(acts) and acts[l] == PLAIN:
            inp(l)
    else:
        inp(l - 1)
        inp(l)
    return out


def check_combined(sched, chain, n=None, bandwidth=None, budget=None):
    """Refuse, before anything runs, a combined schedule that does not fit the chain (or a model
    of n stages), the bandwidth or the budget; the budget defaults to the file's own, and the
    replayed peak must not exceed the schedule's own peak_memory (a schedule made for another
    chain). Returns the Replay."""
    if n is not None and len(chain) != n:
        raise ScheduleError(f"the chain has {len(chain)} stages (loss included) but the model has {n}")
    if sched.stages is not None and sched.stages != len(chain):
        raise ScheduleError(f"the schedule was made for a chain of {sched.stages} stages; this chain has {len(chain)} "
                            "(loss included)")
    bw = bandwidth or sched.bandwidth
    if budget is None:
        budget = sched.budget
    rep = replay(chain, sched, bw, budget=budget)
    if sched.peak is not None and rep.peak > sched.peak:
        raise ScheduleError(f"on this chain the schedule peaks at {rep.peak} B, above its own peak_memory "
                            f"{sched.peak} B: it was made for another chain")
    return rep


@dataclass
class CombinedResult(RunResult):
    transfers: list = field(default_factory=list)  # (kind, tensor name, bytes, operations started before it)
    host_peak: int = 0
    forwards_expected: list = field(default_factory=list)
    predicted_steps: list = field(default_factory=list)  # the model's memory at each operation's start


def execute_combined(net, x, sched, chain, bandwidth=None, budget=None, mode=None, tracker=None, free="model"):
    """Run a combined schedule as one training iteration (see the module comment). Refused with
    ScheduleError before anything runs when it does not fit (check_combined)."""
    it = CombinedIteration(net, x, sched, chain, bandwidth=bandwidth, budget=budget, mode=mode, tracker=tracker,
                           free=free)
    return run_linked_iteration(it, net, x, tracker)


class CombinedIteration:
    """One iteration of a combined schedule: the replay's events run on the executor and the
    link, driven by `drive`."""

    def __init__(self, net, x, sched, chain, bandwidth=None, budget=None, mode=None, tracker=None, free="model",
                 input_grad=None, amp=None, rep=None, keep_input=False):
        self.rep = rep or check_combined(sched, chain, n=len(net.modules), bandwidth=bandwidth, budget=budget)
        self.device = x.device
        if mode is None:
            mode = "cuda" if self.device.type == "cuda" else "functional"
        if mode == "cuda" and self.device.type != "cuda":
            raise ScheduleError("mode cuda needs the model and input on a CUDA device")
        self.mode, self.sched, self.x, self.tracker = mode, sched, x, tracker
        self.ex = Executor(net, x, free=free, tracker=tracker, capture=True, input_grad=input_grad, amp=amp)
        self.link = _Link(mode, self.device, tracker)
        self.times, self.log = [], []
        self.keep_input = keep_input  # a^0 is the caller's: its transfers are skipped

    def result(self, total):
        ex, rep = self.ex, self.rep
        if ex.t != 0:
            raise ExecutionError(f"the schedule ended before δ^0 (current gradient δ^{ex.t})")
        res = CombinedResult(delta0=ex.delta, loss=ex.loss, forwards=ex.fw.counts, op_times=self.times, time=total,
                             transfers=self.log, host_peak=self.link.host_peak, forwards_expected=rep.forwards[1:],
                             predicted_steps=step_peaks(rep))
        if self.tracker is not None:
            res.steps, res.peak, res.peak_step = self.tracker.steps, self.tracker.peak, self.tracker.peak_step
        return res

    def drive(self, user_loss=False):
        """Run the replay's events (a generator). With user_loss, F^{L+1} and B^{L+1} are the
        caller's: the generator yields a^L at F^{L+1}'s start and expects δ^L back. The events
        that fall between F^{L+1}'s start and the next operation's are run around the caller's
        loss: offloads and releases of tensors the loss does not read (a^ℓ, ā^ℓ, ℓ < L) before it,
        the rest (prefetches, which reserve memory, and what concerns a^L/ā^L) after it."""
        ex, link, sched, tracker, x = self.ex, self.link, self.sched, self.tracker, self.x
        mode, device, times, log = self.mode, self.device, self.times, self.log
        n = len(ex.modules)
        started = [0]

        def storages(t, where):
            l, full = t
            if l == 0 and not full:
                return [x.untyped_storage()]
            if full:
                if l not in ex.tapes:
                    raise ExecutionError(f"{where}: ā^{l} is not on the device")
                return list(ex.tapes[l])
            if l not in ex.plain:
                raise ExecutionError(f"{where}: a^{l} is not on the device")
            return [ex.plain[l].untyped_storage()]

        def run_event(ev):
            if ev.kind in ("transfer-start", "release") and self.keep_input and \
                    sched.transfers[ev.id].tensor == (0, False):
                return
            if ev.kind == "transfer-start":
                tr = sched.transfers[ev.id]
                where = f"transfer {ev.id + 1} ({tr})"
                if tr.kind == "offload":
                    sts = storages(tr.tensor, where)
                    link.offload(tr.tensor, sts)
                    log.append(("offload", tname(tr.tensor), sum(st.nbytes() for st in sts), started[0]))
                    del sts
                else:
                    if tr.tensor not in link.host:
                        raise ExecutionError(f"{where}: {tname(tr.tensor)} is not in the host store")
                    log.append(("prefetch", tname(tr.tensor), sum(e[2] for e in link.host[tr.tensor]), started[0]))
                    link.prefetch(tr.tensor)
            elif ev.kind == "release":
                # (No local may keep a storage: it would outlive the operation that frees it.)
                t = sched.transfers[ev.id].tensor
                if t not in link.host:
                    return
                if _still_stored(ex, t):
                    link.release(t)
                else:  # consumed on the device before leaving: nothing to bring back
                    link.host_bytes -= sum(e[2] for e in link.host.pop(t))

        events = self.rep.events
        i = 0
        while i < len(events):
            ev = events[i]
            i += 1
            if ev.kind != "op-start":
                run_event(ev)
                continue
            o = sched.ops[ev.id]
            label = f"{ev.id + 1} {o.op}"
            loss = user_loss and o.op.stage == n
            if loss and o.op.kind == "B":
                started[0] += 1
                continue  # the caller's backward of the loss ran it
            if tracker is not None:
                tracker.step(label + (" (loss)" if loss else ""))
            if mode == "cuda":
                for w in o.wait:
                    link.wait(sched.transfers[w].tensor)
            if loss:
                if o.op.kind != "Fall":
                    raise ScheduleError(f"operation {ev.id + 1} ({o.op}): the caller's loss runs as F_all^{n}")
                during = []
                while i < len(events) and not (events[i].kind == "op-start" and
                                               sched.ops[events[i].id].op.stage != n):
                    during.append(events[i])
                    i += 1
                later = []
                for e in during:
                    if e.kind not in ("transfer-start", "release"):
                        continue
                    t = sched.transfers[e.id]
                    early = e.kind == "release" or t.kind == "offload"
                    if early and t.stage < n - 1:
                        run_event(e)
                    else:
                        later.append(e)
                started[0] += 1
                delta = yield ex.loss_input()
                ex.loss_done(delta)
                del delta
                for e in later:
                    run_event(e)
                continue
            t0 = time.perf_counter()
            ex.apply(ev.id, o.op)
            if device.type != "cuda":
                times.append(time.perf_counter() - t0)
            started[0] += 1


def step_peaks(rep):
    """The model's largest memory from each operation's start to the next one's: what the
    tracker's step of that operation is compared with (the transfers the executor issues between
    two operations belong to the step of the first)."""
    out = []
    for ev in rep.events:
        if ev.kind == "op-start":
            out.append(ev.memory)
        elif out:
            out[-1] = max(out[-1], ev.memory)
    return out


def _still_stored(ex, t):
    l, full = t
    if full:
        return l in ex.tapes
    return l in ex.plain
