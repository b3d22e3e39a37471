"""SPEC §7's model of a contiguous pipeline, replayed in Python: each GPU's peak memory and the
makespan of one iteration, for a plan that memsched made (docs/pipeline.md).

It is the executor's own check of a plan, as combined.replay is for the combined lever: the
same rules as memsched's verify/pipeline.Replay, written again from SPEC §7, so that

  - a plan made for another chain (another model, batch or device) is caught before any rank
    starts (its replayed peaks differ from memsched's `peak_memory`);
  - the one-GPU measurement (scripts/gpu-pipeline.sh) can predict each rank's peak on the
    device's own profile where no memsched binary exists.

The model (SPEC §7). Part k holds chain stages first..last on GPU k; the part that ends at L
also runs the loss stage L+1 (its `end`). Every micro-batch runs the part's 004 sequence (SPEC
§1; store-all F_all^first … F_all^end, B^end … B^first when the plan gives none): its forward
phase (the operations before the first B) is F_k(μ), the rest B_k(μ). Memory of one
micro-batch: a^{first−1} from the start of its forward, each operation as 004 counts it
(everything stored + its outputs + its overhead), δ^{end} from the start of the backward
phase, nothing after it; `held` is what it stores between the phases. GPU k at an action of
micro-batch μ holds Σ w over its part, `held` for every other micro-batch between its forward
and its backward, and μ's own memory. Times: the actions in the GPU's order, each as soon as
its input has arrived and the GPU is free; a^{last} and δ^{last} cross one link per direction,
one transfer at a time, size/β each.
"""

import math
from dataclasses import dataclass, field

from .schedule import Op, ScheduleError, Stage

NONE, PLAIN, FULL = 0, 1, 2


def actions(schedule, k, S, m):
    """GPU k's order of actions in a contiguous pipeline of S GPUs: [("F"|"B", μ)]. GPipe:
    F(0..m−1), B(0..m−1). 1F1B (PyTorch's Schedule1F1B, Megatron's order): w = min(m, S−k)
    forwards, then B(j), F(w+j) for j = 0..m−w−1, then the remaining backwards."""
    if schedule == "gpipe":
        return [("F", mu) for mu in range(m)] + [("B", mu) for mu in range(m)]
    if schedule != "1f1b":
        raise ScheduleError(f"schedule {schedule!r}: want 1f1b or gpipe")
    w = min(m, S - k)
    out = [("F", mu) for mu in range(w)]
    for j in range(m - w):
        out += [("B", j), ("F", w + j)]
    return out + [("B", j) for j in range(m - w, m)]


def store_all(first, end):
    return [Op("Fall", l) for l in range(first, end + 1)] + [Op("B", l) for l in range(end, first - 1, -1)]


def part_end(last, L):
    """The part's top stage: the loss L+1 on the last part, else last+1, the next GPU's
    stand-in (memsched's convention)."""
    return L + 1 if last == L else last + 1


@dataclass
class Part:
    """One part's figures for one micro-batch (the same for every micro-batch)."""
    first: int
    last: int
    end: int  # the part's top stage: L+1 on the last part, else last+1 (the next GPU)
    seq: list  # schedule.Op in chain numbers
    forward: list  # the forward phase (operations before the first B)
    backward: list
    f: float = 0.0  # durations of the phases
    b: float = 0.0
    w: int = 0
    held: int = 0  # stored between the phases, its input included
    peak_f: int = 0  # largest memory of the micro-batch's own operations in each phase
    peak_b: int = 0
    memory: list = field(default_factory=list)  # memory of each operation of seq


def replay_part(chain, first, last, seq=None, where="part"):
    """Replay one part's sequence for one micro-batch under SPEC §7's rules (store-all when seq
    is None); raises ScheduleError naming the operation that breaks them, as memsched verify
    would. The part's chain is stages first..last and a top stage `end`: the loss L+1 on the
    last part, else last+1, a zero-cost stand-in for the next GPU (no time, ā and δ of 0 B)
    whose F_all sends a^last (which must then be stored) and whose B receives δ^last and, as
    any B, consumes a plain a^last."""
    L = len(chain) - 1
    end = part_end(last, L)
    virtual = last < L
    seq = list(seq) if seq else store_all(first, end)
    part = Part(first=first, last=last, end=end, seq=seq, forward=[], backward=[])
    part.w = sum(chain.stage(l).w for l in range(first, last + 1)) + (0 if virtual else chain.stage(L + 1).w)
    lo = first - 1
    zero = Stage(name="next GPU", uf=0.0, ub=0.0, a=0, abar=0, delta=0)

    def stage(l):
        return zero if virtual and l == end else chain.stage(l)

    def size_a(l):
        return chain.size_a(l) if l == lo else stage(l).a

    def size_d(l):
        return chain.size_delta(l) if l == lo else stage(l).delta

    def size(l, a):
        if a == PLAIN:
            return size_a(l)
        if a == FULL:
            return size_a(l) if l == lo else stage(l).abar
        return 0

    acts = {lo: PLAIN}
    stored = size_a(lo)
    part.peak_f = stored
    T = None  # the current gradient δ^T; None in the forward phase

    def setact(l, a):
        nonlocal stored
        stored += size(l, a) - size(l, acts.get(l, NONE))
        acts[l] = a

    for i, op in enumerate(seq):
        bad = f"{where}: sequence operation {i} ({op})"
        l = op.stage
        if op.kind not in ("Fall", "Fck", "Fn", "B"):
            raise ScheduleError(f"{bad}: {op.kind} is not an operation of the pipeline model")
        if not first <= l <= end:
            raise ScheduleError(f"{bad}: stage {l} is not on the part (stages {first}..{end})")
        if virtual and l == end and op.kind not in ("Fall", "B"):
            raise ScheduleError(f"{bad}: stage {l} stands for the next GPU here: only F_all^{l} (send a^{last}) and "
                                f"B^{l} (receive δ^{last})")
        if T == lo:
            raise ScheduleError(f"{bad}: the sequence is already complete (δ^{lo} exists)")
        if op.kind == "B" and T is None:
            part.held = stored  # the backward phase starts: δ^end arrives (or is the loss gradient)
            T = end
            stored += size_d(T)
            part.peak_b = stored
        st = stage(l)
        prev = acts.get(l - 1, NONE)
        if op.kind != "B":
            if T is not None and l > T:
                raise ScheduleError(f"{bad}: F^{l} after δ^{T}: stage {l} is already back-propagated")
            if prev == NONE:
                raise ScheduleError(f"{bad}: input a^{l - 1} is not stored")
            if op.kind == "Fn" and prev != PLAIN:
                raise ScheduleError(f"{bad}: F_∅^{l} needs a plain a^{l - 1}, but ā^{l - 1} is stored")
            cur = acts.get(l, NONE)
            if cur == FULL or (cur == PLAIN and op.kind != "Fall"):
                raise ScheduleError(f"{bad}: stage {l}'s output is already stored")
            mem = stored + (st.abar if op.kind == "Fall" else st.a) + st.of
            if op.kind == "Fn":
                setact(l - 1, NONE)
            setact(l, FULL if op.kind == "Fall" else PLAIN)
            if T is None:
                part.f += st.uf
            else:
                part.b += st.uf
        else:
            if T != l:
                raise ScheduleError(f"{bad}: δ^{l} is not stored (the current gradient is δ^{T})")
            if acts.get(l, NONE) != FULL:
                raise ScheduleError(f"{bad}: ā^{l} is not stored")
            if prev == NONE:
                raise ScheduleError(f"{bad}: input a^{l - 1} is not stored")
            mem = stored + size_d(l - 1) + st.ob
            stored -= size_d(l)
            setact(l, NONE)
            if prev == PLAIN:
                setact(l - 1, NONE)
            T = l - 1
            stored += size_d(T)
            part.b += st.ub
        part.memory.append(mem)
        if T is None:
            part.peak_f = max(part.peak_f, mem)
        else:
            part.peak_b = max(part.peak_b, mem)
    if T != lo:
        if T is None:
            raise ScheduleError(f"{where}: the sequence has no backward phase (no B)")
        raise ScheduleError(f"{where}: the sequence ends before δ^{lo} is computed (current gradient δ^{T})")
    nb = next(i for i, op in enumerate(seq) if op.kind == "B")
    part.forward, part.backward = seq[:nb], seq[nb:]
    return part


@dataclass
class Replay:
    makespan: float
    peaks: list  # per GPU, bytes (Σ w included)
    parts: list  # Part per GPU
    timeline: list  # per GPU: [(kind, μ, start, end)]
    peak_action: list  # per GPU: the action (kind, μ) where the peak is first reached


def replay(chain, intervals, m, schedule="1f1b", bandwidth=math.inf, sequences=None):
    """Replay a contiguous plan: intervals[k] = (first, last) on GPU k (chain numbers, 1-based,
    covering 1..L in order), sequences[k] a list of schedule.Op or None (store-all)."""
    L = len(chain) - 1
    S = len(intervals)
    nxt = 1
    for k, (first, last) in enumerate(intervals):
        if first != nxt or not first <= last <= L:
            raise ScheduleError(f"stages: part {k} is [{first}, {last}]; the parts must cover stages 1..{L} in order")
        nxt = last + 1
    if nxt != L + 1:
        raise ScheduleError(f"stages: the parts end at stage {nxt - 1}, want {L}")
    seqs = sequences or [None] * S
    parts = [replay_part(chain, f, e, seqs[k], where=f"part {k}") for k, (f, e) in enumerate(intervals)]
    orders = [actions(schedule, k, S, m) for k in range(S)]

    def transfer(size):
        return 0.0 if math.isinf(bandwidth) or size == 0 else size / bandwidth

    # Times: as soon as the input is there and the GPU is free; links in their sender's order.
    arr_f = {(0, mu): 0.0 for mu in range(m)}
    arr_b = {}
    link_free = {}
    gpu_free = [0.0] * S
    pos = [0] * S
    timeline = [[] for _ in range(S)]
    makespan = 0.0
    total = sum(len(o) for o in orders)
    done = 0
    while done < total:
        progress = False
        for k in range(S):
            while pos[k] < len(orders[k]):
                kind, mu = orders[k][pos[k]]
                arr = (arr_b if kind == "B" else arr_f).get((k, mu))
                if arr is None:
                    break
                start = max(gpu_free[k], arr)
                p = parts[k]
                if kind == "B":
                    end = start + p.b
                    if k > 0:
                        lk = (k, k - 1)
                        t0 = max(end, link_free.get(lk, 0.0))
                        link_free[lk] = t0 + transfer(chain.size_delta(intervals[k - 1][1]))
                        arr_b[(k - 1, mu)] = link_free[lk]
                else:
                    end = start + p.f
                    if k + 1 < S:
                        lk = (k, k + 1)
                        t0 = max(end, link_free.get(lk, 0.0))
                        link_free[lk] = t0 + transfer(chain.size_a(p.last))
                        arr_f[(k + 1, mu)] = link_free[lk]
                    else:
                        arr_b[(k, mu)] = end
                gpu_free[k] = end
                timeline[k].append((kind, mu, start, end))
                makespan = max(makespan, end)
                pos[k] += 1
                done += 1
                progress = True
        if not progress:
            raise ScheduleError("the actions deadlock (an order that no schedule gives)")
    # Memory: the order alone decides it.
    peaks, where = [], []
    for k in range(S):
        p = parts[k]
        held, peak, at = 0, 0, None
        for kind, mu in orders[k]:
            if kind == "B":
                held -= 1
            use = p.w + held * p.held + (p.peak_b if kind == "B" else p.peak_f)
            if use > peak:
                peak, at = use, (kind, mu)
            if kind == "F":
                held += 1
        peaks.append(peak)
        where.append(at)
    return Replay(makespan=makespan, peaks=peaks, parts=parts, timeline=timeline, peak_action=where)
