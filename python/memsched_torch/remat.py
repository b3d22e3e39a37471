"""Execute a rematerialization sequence (004 Table 1) on a Net: one training iteration.

Operations, with what they keep and free exactly as 004's model (SPEC §1, memsched's
verify.RematState.Apply):

  F_ck^ℓ   stage ℓ's forward without autograd on a^{ℓ-1} (or the output of ā^{ℓ-1}); a^{ℓ-1}
           stays, a^ℓ is added.
  F_∅^ℓ    the same, then the plain a^{ℓ-1} is dropped.
  F_all^ℓ  stage ℓ's forward with autograd on a detached copy of its input (a leaf requiring
           grad): ā^ℓ = the stage's tape (its graph and saved tensors) and output. A plain a^ℓ
           stored before is replaced.
  B^ℓ      stage ℓ's backward from δ^ℓ: torch.autograd.backward(output, δ^ℓ); the leaf's
           gradient is δ^{ℓ-1}; parameter gradients accumulate into .grad as in plain training.
           At the end δ^ℓ, ā^ℓ and a plain a^{ℓ-1} are dropped; a stored ā^{ℓ-1} stays.

`free="model"` (the default) keeps the whole tape of ā^ℓ until B^ℓ ends, as 004's model does
(retain_graph=True, then the graph is dropped); `free="eager"` lets autograd free each saved
tensor as soon as its node has run (PyTorch's default: a lower peak than the model predicts).

Recomputation must not change what plain training computes:
  - RNG: before the first forward of each stage the RNG state is saved; every later forward of
    that stage runs from it, and the RNG then continues where it was (dropout masks repeat, as
    torch.utils.checkpoint's preserve_rng_state does);
  - buffers: every later forward of a stage runs between a copy and a restore of the stage's
    buffers, so BatchNorm's running statistics and num_batches_tracked are updated once, by the
    first forward, exactly as plain training updates them (the copies are made before the
    iteration, like the parameters, and are not activations).
A stage that writes into its input is refused (its input may be needed again).
"""

import time
from dataclasses import dataclass, field

import weakref

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from .schedule import ScheduleError, simulate


class ExecutionError(RuntimeError):
    pass


def _needs_grad(x):
    return x.is_floating_point() or x.is_complex()


def get_rng(device):
    """The RNG states an iteration on `device` draws from: the CPU generator's, and on a GPU the
    device's too (dropout on CUDA draws from the CUDA generator, not the CPU one)."""
    device = torch.device(device)
    s = [torch.get_rng_state()]
    if device.type == "cuda":
        s.append(torch.cuda.get_rng_state(device))
    return s


def set_rng(state, device):
    device = torch.device(device)
    torch.set_rng_state(state[0])
    if device.type == "cuda":
        torch.cuda.set_rng_state(state[1], device)


def amp_state(device):
    """The autocast state a forward runs under on `device` (None when autocast is off there):
    what a recomputation must run under to compute what the first forward computed."""
    kind = torch.device(device).type
    if not torch.is_autocast_enabled(kind):
        return None
    return {"device_type": kind, "dtype": torch.get_autocast_dtype(kind)}


def amp_context(amp):
    """torch.autocast for an amp_state (a null context for None), with its weight-cast cache off:
    a cast cached by one stage's forward would live until the caller's autocast region ends,
    memory no chain stage accounts for; a cast made again has the same bits."""
    import contextlib

    if amp is None:
        return contextlib.nullcontext()
    return torch.autocast(amp["device_type"], dtype=amp["dtype"], cache_enabled=False)


class _Forwarder:
    """Calls a stage's forward, counting calls, with RNG and buffers made replayable (and the
    autocast state of the iteration, `amp`, around every call)."""

    def __init__(self, modules, device, tracker=None, amp=None):
        self.modules = modules
        self.device = device
        self.tracker = tracker
        self.amp = amp
        self.counts = [0] * (len(modules) + 1)
        self.rng = {}
        self.snaps = {}
        with self._untracked():
            for l, m in enumerate(modules, 1):
                bufs = [b for b in m.buffers()]
                if bufs:
                    self.snaps[l] = (bufs, [b.detach().clone() for b in bufs])

    def _untracked(self):
        import contextlib

        return self.tracker.untracked() if self.tracker is not None else contextlib.nullcontext()

    def _get_rng(self):
        with self._untracked():
            return get_rng(self.device)

    def _set_rng(self, s):
        with self._untracked():
            set_rng(s, self.device)

    def __call__(self, l, x, grad):
        mod = self.modules[l - 1]
        first = self.counts[l] == 0
        self.counts[l] += 1
        v0 = x._version
        if first:
            self.rng[l] = self._get_rng()
        else:
            resume = self._get_rng()
            self._set_rng(self.rng[l])
            if l in self.snaps:
                with torch.no_grad():
                    for b, s in zip(*self.snaps[l]):
                        s.copy_(b)
        try:
            with torch.set_grad_enabled(grad), amp_context(self.amp):
                y = mod(x)
        finally:
            if not first:
                if l in self.snaps:
                    # Through .data: the restore must not bump the buffer's version counter,
                    # which an F_all recomputation has just saved (BatchNorm saves its running
                    # statistics; its training-mode backward does not read them).
                    with torch.no_grad():
                        for b, s in zip(*self.snaps[l]):
                            b.data.copy_(s)
                self._set_rng(resume)
        if not isinstance(y, torch.Tensor):
            raise ExecutionError(f"stage {l} returned {type(y).__name__}, not a tensor")
        if x._version != v0:
            raise ExecutionError(f"stage {l} modified its input in place; merge it into the stage "
                                 "before (memsched_torch.models.merge_aliasing)")
        return y


class _NewStorages(TorchDispatchMode):
    """The storages that operations allocate while it is active (weakly held): after F_all, the
    ones still alive are ā^ℓ — what the graph saved and the output. (saved_tensors_hooks would
    see the saved tensors too, but a pack hook that returns an output tensor makes a reference
    cycle through its grad_fn, and the tape would outlive B^ℓ.)"""

    def __init__(self):
        super().__init__()
        self._refs = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        fa, _ = tree_flatten((args, kwargs or {}))
        arg_keys = {t.untyped_storage()._cdata for t in fa if isinstance(t, torch.Tensor)}
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor):
                st = t.untyped_storage()
                key = st._cdata
                # A key whose storage died may come back for a new one at the same address.
                if key not in arg_keys and (key not in self._refs or self._refs[key]() is None):
                    self._refs[key] = weakref.ref(st)
        return out

    def alive(self):
        return [st for st in (r() for r in self._refs.values()) if st is not None and st.nbytes() > 0]


@dataclass
class RunResult:
    delta0: object  # δ^0 (None for an input without gradient)
    loss: float
    forwards: list  # forward calls per stage (index 0 unused)
    op_times: list  # seconds per operation (CPU only; empty on CUDA)
    time: float  # seconds for the whole iteration
    steps: list = field(default_factory=list)  # (label, measured peak bytes) with a tracker
    peak: int = 0  # measured peak (tracker), bytes
    peak_step: str = None


class IterationTimer:
    """Wall time of the whole iteration: CUDA events on the compute stream on a GPU (the side
    stream's copies overlap it), perf_counter on CPU."""

    def __init__(self, device):
        self.cuda = device.type == "cuda"
        self.device = device

    def __enter__(self):
        if self.cuda:
            torch.cuda.synchronize(self.device)
            self.ev = [torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)]
            self.ev[0].record()
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        if self.cuda:
            self.ev[1].record()
            torch.cuda.synchronize(self.device)
            self.seconds = self.ev[0].elapsed_time(self.ev[1]) / 1e3
        else:
            self.seconds = time.perf_counter() - self.t0
        return False


def timed_iteration(net, x, tracker, run):
    """Run one training iteration (run()) under IterationTimer and return its seconds. With a
    tracker, the input is counted first and each parameter gradient is left out as soon as
    autograd has accumulated it (004 counts them as allocated beforehand). The three executors
    (remat, offloading, combined) share it."""
    with IterationTimer(x.device) as timer:
        if tracker is not None:
            tracker.count(x)
            with tracker.parameter_gradients_excluded(list(net.parameters())):
                run()
        else:
            run()
    return timer.seconds


class Executor:
    """The state of one iteration and 004's four operations on it (see the module comment).
    `execute` drives it through a sequence; the offloading executor drives it through F_all and B
    and moves ā^ℓ's storages between operations. With capture=True, F_all records the distinct
    storages of ā^ℓ (the tensors its graph saved and its output, the input's and parameters'
    storages excepted) in `tapes[ℓ]`."""

    def __init__(self, net, x, free="model", tracker=None, capture=False, input_grad=None, amp=None, loss=True):
        if free not in ("model", "eager"):
            raise ValueError(f"free={free!r}: want model or eager")
        self.net = net
        self.modules = net.modules
        self.n = len(self.modules)
        self.x = x
        self.device = x.device
        self.free = free
        # δ^0 is computed for a floating input unless input_grad says otherwise (Scheduled: only
        # when the caller's input requires grad, as in plain training)
        self.input_grad = _needs_grad(x) if input_grad is None else bool(input_grad) and _needs_grad(x)
        self.fw = _Forwarder(self.modules, self.device, tracker, amp)
        self.release_loss_grad = False  # Scheduled: free δ^L after B^L (see _release_sole)
        self.plain = {0: x}  # ℓ -> a^ℓ
        self.full = {}  # ℓ -> (leaf input, output)
        self.tapes = {}  # ℓ -> [UntypedStorage] of ā^ℓ (capture=True)
        self.capture = capture
        self.delta, self.t = None, self.n
        self.loss = None
        # A pipeline part (pipestage.PartExecutor): its last module is the loss only on the last
        # rank, and its backward starts from the δ it is given.
        self.has_loss = loss
        self._skip = {p.untyped_storage()._cdata for p in net.parameters()}

    def input_of(self, l, where):
        if l - 1 in self.plain:
            return self.plain[l - 1]
        if l - 1 in self.full:
            return self.full[l - 1][1]
        raise ExecutionError(f"{where}: a^{l - 1} is not stored")

    def forward(self, l, kind, where=""):
        xin = self.input_of(l, where)
        if kind == "Fall":
            xi = xin.detach()
            if _needs_grad(xin) and (l > 1 or self.input_grad):
                xi.requires_grad_(True)
            if self.capture:
                with _NewStorages() as new:
                    y = self.fw(l, xi, True)
                skip = self._skip | {xi.untyped_storage()._cdata}
                # Device memory only: on CUDA the attention kernels save their RNG seed and
                # offset as CPU tensors, which are no activation and cannot be moved to the host.
                self.tapes[l] = [st for st in new.alive()
                                 if st._cdata not in skip and st.device.type == self.device.type]
            else:
                y = self.fw(l, xi, True)
            if l == self.n and self.has_loss:
                self.loss = float(y.detach())
            self.full[l] = (xi, y)
            old = self.plain.pop(l, None)
            nxt = self.full.get(l + 1)
            if old is not None and nxt is not None and \
                    nxt[0].untyped_storage()._cdata == old.untyped_storage()._cdata:
                # F_all^ℓ over a stored a^ℓ replaces it by ā^ℓ (004). The tape of stage ℓ+1
                # still holds the old a^ℓ as its input leaf, which would keep a second copy
                # alive until B^{ℓ+1}; point that leaf at the recomputed output instead (the
                # same values: recomputation is deterministic and replays RNG and buffers).
                nxt[0].data = y.detach()
            del old, nxt
        else:
            y = self.fw(l, xin, False)
            self.plain[l] = y
            if kind == "Fn":
                del self.plain[l - 1]

    def backward(self, l, where=""):
        if self.t != l or l not in self.full:
            raise ExecutionError(f"{where}: δ^{l} or ā^{l} is not stored")
        xi, y = self.full.pop(l)
        self.tapes.pop(l, None)
        if l == self.n and self.delta is None:
            self.delta = torch.ones_like(y)  # the loss gradient δ^{L+1}, unless given
        if y.requires_grad:
            torch.autograd.backward(y, self.delta, retain_graph=(self.free == "model"))
        d = xi.grad if xi.requires_grad else None
        xi.grad = None
        self.plain.pop(l - 1, None)
        del xi, y
        old, self.delta, self.t = self.delta, d, l - 1
        if self.release_loss_grad and l == self.n - 1 and old is not None:
            self._release_sole(old)

    def _release_sole(self, t):
        """Free the storage of δ^L after B^L when nothing else uses it. δ^L is the gradient autograd
        passed to Scheduled's Function, which autograd holds until the Function's backward returns,
        that is to the end of the iteration; 004 frees it at B^L. Freed only when this tensor is the
        storage's one user (not a view: a loss's expanded scalar gradient is shared, and tiny)."""
        st = t.untyped_storage()
        if not t._is_view() and torch._C._storage_Use_Count(st._cdata) == 2 and st.nbytes() > 0:
            st.resize_(0)
            if self.fw.tracker is not None:
                self.fw.tracker.refresh(st)

    def apply(self, i, op):
        where = f"step {i + 1} ({op})"
        if op.kind == "B":
            self.backward(op.stage, where)
        else:
            self.forward(op.stage, op.kind, where)

    def loss_input(self):
        """a^L, the input of the loss stage L+1, as the caller's loss receives it (Scheduled: the
        loss is the caller's, computed between the two phases of the iteration)."""
        return self.input_of(self.n, f"F_all^{self.n} (the caller's loss)")

    def loss_done(self, delta):
        """The caller's loss ran F_all^{L+1} and B^{L+1}: δ^L is `delta` (autograd's gradient of
        a^L); what B^{L+1} frees is freed (a plain a^L). δ^L's storage is freed after B^L
        (_release_sole)."""
        self.plain.pop(self.n - 1, None)
        self.delta, self.t = delta, self.n - 1
        self.release_loss_grad = True


def user_loss_sequence(ops, n):
    """The sequence split at the caller's loss (stage n = L+1): the operations before the first
    B, then F_all^{L+1} (the loss point), then the rest without B^{L+1}. memsched's sequences put
    F_all^{L+1} right before B^{L+1}; another forward between them is moved before the loss (it
    does not depend on it, and memory then holds less, never more, while the loss runs).
    Returns (ops with F_all^{L+1} at the loss point and B^{L+1} right after it, index of the
    loss point). Raises ScheduleError for a sequence that forwards the loss other than once with
    F_all, or whose first B is not B^{L+1}."""
    first_b = next((i for i, o in enumerate(ops) if o.kind == "B"), None)
    if first_b is None or ops[first_b].stage != n:
        raise ScheduleError(f"the sequence's first backward is not B^{n} (the loss)")
    fl = [i for i, o in enumerate(ops) if o.stage == n and o.kind != "B"]
    if len(fl) != 1 or ops[fl[0]].kind != "Fall" or fl[0] > first_b:
        raise ScheduleError(f"the sequence forwards the loss stage {n} {len(fl)} times (want one F_all^{n} "
                            f"before B^{n})")
    before = [o for i, o in enumerate(ops[:first_b]) if i != fl[0]]
    after = [o for o in ops[first_b + 1:]]
    if any(o.stage == n for o in after):
        raise ScheduleError(f"the sequence uses the loss stage {n} after B^{n}")
    return before + [ops[fl[0]], ops[first_b]] + after, len(before)


def drive(ex, ops, tracker=None, times=None, loss_at=None):
    """Run ops on ex, one at a time (a generator). With loss_at (user_loss_sequence's index), the
    operation there, F_all^{L+1}, is the caller's: the generator yields a^L and expects δ^L to be
    sent back, and skips B^{L+1} (the next operation); otherwise it runs every operation and
    never yields."""
    cuda = ex.device.type == "cuda"
    for i, op in enumerate(ops):
        if loss_at is not None and i == loss_at + 1:
            continue  # B^{L+1}: the caller's backward ran it
        if tracker is not None:
            tracker.step(f"{i + 1} {op}" + (" (loss)" if i == loss_at else ""))
        if i == loss_at:
            delta = yield ex.loss_input()
            ex.loss_done(delta)
            del delta
            continue
        t0 = time.perf_counter()
        ex.apply(i, op)
        if times is not None and not cuda:  # on a GPU a per-operation synchronize would distort the total
            times.append(time.perf_counter() - t0)


def check_sequence(net, ops, chain=None, budget=None):
    """Refuse, before anything runs, a sequence that does not fit the chain or the budget."""
    n = len(net.modules)
    if chain is not None:
        if len(chain) != n:
            raise ScheduleError(f"the chain has {len(chain)} stages (loss included) but the model has {n}")
        sim = simulate(chain, ops)
        if budget is not None and sim.peak > budget:
            raise ScheduleError(f"the sequence's predicted peak {sim.peak} B exceeds the budget {budget} B")
        return sim
    for i, op in enumerate(ops):
        if not 1 <= op.stage <= n:
            raise ScheduleError(f"step {i + 1} ({op}): stage {op.stage} out of range 1..{n}")
    return None


def execute(net, x, ops, chain=None, budget=None, free="model", tracker=None):
    """Run ops (schedule.Op) as one training iteration of net on input x.

    With a chain, the sequence is first replayed under 004's rules (schedule.simulate): a
    sequence that does not fit the chain, or whose predicted peak exceeds budget, is refused
    with ScheduleError before anything runs. Parameter gradients accumulate into .grad. With a
    tracker (StorageTracker, already entered), each operation is a step and the peak is
    measured with parameter gradients excluded and a^0 counted.
    """
    check_sequence(net, ops, chain, budget)
    ex = Executor(net, x, free=free, tracker=tracker)
    times = []

    def run_ops():
        for _ in drive(ex, ops, tracker, times):
            pass

    total = timed_iteration(net, x, tracker, run_ops)
    if ex.t != 0:
        raise ExecutionError(f"the sequence ended before δ^0 (current gradient δ^{ex.t})")
    res = RunResult(delta0=ex.delta, loss=ex.loss, forwards=ex.fw.counts, op_times=times, time=total)
    if tracker is not None:
        res.steps, res.peak, res.peak_step = tracker.steps, tracker.peak, tracker.peak_step
    return res


@dataclass
class Reference:
    grads: list
    delta0: object
    buffers: list
    loss: float


def plain_training(net, x):
    """One iteration of plain training (the store-all schedule without a chain split): the
    reference the executor's gradients and buffers are compared with."""
    net.zero_grad()
    xi = x.detach()
    if _needs_grad(x):
        xi.requires_grad_(True)
    h = xi
    for m in net.modules:
        h = m(h)
    h.backward()
    grads = [None if p.grad is None else p.grad.detach().clone() for p in net.parameters()]
    bufs = [b.detach().clone() for m in net.modules for b in m.buffers()]
    return Reference(grads=grads, delta0=None if xi.grad is None else xi.grad.detach().clone(),
                     buffers=bufs, loss=float(h.detach()))


@dataclass
class Comparison:
    equal: bool  # bitwise (torch.equal) on every gradient, δ^0 and buffer
    max_abs: float  # largest absolute difference (0 when equal)
    max_rel: float  # largest difference relative to the reference's largest magnitude
    detail: str


def compare(ref, net, delta0):
    """Compare the gradients, δ^0 and buffers now in net with a Reference."""
    pairs = [("grad", a, p.grad) for a, p in zip(ref.grads, net.parameters())]
    pairs.append(("delta0", ref.delta0, delta0))
    bufs = [b for m in net.modules for b in m.buffers()]
    pairs += [("buffer", a, b) for a, b in zip(ref.buffers, bufs)]
    equal, max_abs, max_rel, worst = True, 0.0, 0.0, ""
    for i, (kind, a, b) in enumerate(pairs):
        if a is None or b is None:
            if (a is None) != (b is None):
                return Comparison(False, float("inf"), float("inf"), f"{kind} {i}: one side missing")
            continue
        if torch.equal(a, b):
            continue
        equal = False
        if not a.is_floating_point():
            return Comparison(False, float("inf"), float("inf"), f"{kind} {i}: integer values differ")
        d = (a.double() - b.double()).abs().max().item()
        scale = a.double().abs().max().item() or 1.0
        if d / scale > max_rel:
            worst = f"{kind} {i}: max |Δ| {d:.3g} (relative {d / scale:.3g})"
        max_abs = max(max_abs, d)
        max_rel = max(max_rel, d / scale)
    return Comparison(equal, max_abs, max_rel, worst or "bitwise equal")
