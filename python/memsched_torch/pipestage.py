"""What one rank of a pipeline runs: its part of the chain as one nn.Module (the submodule of
torch.distributed.pipelining's PipelineStage), with recomputation inside it as the plan says.

StageModule(net, first, last, ...) holds chain stages first..last (and the loss stage L+1 on
the part that ends at L: its output is then the micro-batch's loss). Called once per
micro-batch, in micro-batch order (GPipe and 1F1B both run the forwards of a stage in order):

  - without a sequence it runs its stages one after the other under autograd, as plain
    training does (PyTorch frees every saved tensor as the backward goes);
  - with a 004 sequence (SPEC §1, in chain numbers, as memsched's plan gives it) it is one
    autograd Function: its forward runs the sequence's forward phase (the operations before
    its first B) on remat.py's executor and returns a^{last} (the loss on the last part); its
    backward takes δ^{last} (the next rank's gradient, or the loss's 1) and runs the rest —
    recomputations and B's — and returns δ^{first−1}. Parameter gradients accumulate into
    .grad inside it, as torch.utils.checkpoint's reentrant variant does. Between the two a
    micro-batch holds exactly what the forward phase stored (SPEC §7).

Randomness: every rank draws its own random numbers, so dropout masks would differ from
one-process training. MicroBatchSeeds makes them a function of (seed, stage, micro-batch):
before stage ℓ runs for micro-batch μ (first run or recomputation alike) the RNG is seeded with
seed_of(ℓ, μ). The one-process reference (pipeline.reference) seeds the same way, so both draw
the same masks.
"""

import torch
from torch import nn

from . import remat
from .schedule import ScheduleError


class MicroBatchSeeds:
    """The RNG seed of stage ℓ for micro-batch μ: torch.manual_seed(seed_of(ℓ, μ)) before the
    stage's forward (a forward pre-hook on each chain stage). `mb` is the micro-batch being run;
    whoever drives the stages sets it."""

    def __init__(self, seed):
        self.seed = int(seed)
        self.mb = 0
        self._handles = []

    def seed_of(self, l, mu):
        return (self.seed * 1_000_003 + l * 65_537 + mu) % (2 ** 63)

    def attach(self, modules, first=1):
        """Seed before each module's forward; modules[i] is chain stage first+i."""
        for i, mod in enumerate(modules):
            l = first + i
            self._handles.append(mod.register_forward_pre_hook(self._hook(l)))
        return self

    def _hook(self, l):
        def seed(_module, _args):
            torch.manual_seed(self.seed_of(l, self.mb))
        return seed

    def detach(self):
        for h in self._handles:
            h.remove()
        self._handles = []


class _Part:
    """The chain stages of one part as remat.Executor sees a Net: modules 1..n (local numbers)
    and their parameters."""

    def __init__(self, modules):
        self.modules = list(modules)

    def parameters(self):
        for m in self.modules:
            yield from m.parameters()


class PartExecutor(remat.Executor):
    """remat.Executor on one part, one micro-batch: local stage i is chain stage first+i−1. Its
    input a^{first−1} is the received activation (or the data on the first part, which gets no
    gradient); its top stage n is the loss on the last part, else the next GPU's stand-in
    (virtual): F_all^n sends a^{n−1} (it becomes the forward phase's output), B^n receives
    δ^{n−1} and consumes a plain a^{n−1}, as memsched's plans write it. The backward phase
    starts from the δ^n it is given (the loss's 1 on the last part)."""

    def __init__(self, part, x, input_grad, virtual, tracker=None, free="model"):
        super().__init__(part, x, free=free, tracker=tracker, input_grad=input_grad, loss=not virtual)
        self.virtual = virtual
        if virtual:
            self.n += 1  # the stand-in has no module
            self.t = self.n
        self.sent = None  # a^{n−1} as F_all^n (virtual) sent it
        self.sending = False  # ā^n (virtual, 0 B) stored

    def forward(self, l, kind, where=""):
        if self.virtual and l == self.n:
            if kind != "Fall":
                raise remat.ExecutionError(f"{where}: stage {l} stands for the next GPU: only F_all and B")
            self.sent = self.input_of(l, where)
            self.sending = True
            return
        super().forward(l, kind, where)

    def backward(self, l, where=""):
        if self.virtual and l == self.n:
            if self.t != l or not self.sending:
                raise remat.ExecutionError(f"{where}: δ^{l} or ā^{l} is not stored")
            # δ^{n−1} is the received gradient (start_backward); a plain a^{n−1} is consumed.
            self.sending = False
            self.plain.pop(l - 1, None)
            self.t = l - 1
            return
        super().backward(l, where)

    def start_backward(self, delta):
        self.delta, self.t = delta, self.n

    def output(self):
        """What the forward phase hands on: a^{n−1} as sent (the loss a^n on the last part)."""
        if self.virtual:
            if self.sent is None:
                raise remat.ExecutionError(f"the forward phase ends without sending a^{self.n - 1}")
            out, self.sent = self.sent, None
            return out
        if self.n in self.full:
            return self.full[self.n][1]
        raise remat.ExecutionError(f"the forward phase ends without the loss ā^{self.n}")


class _SequenceFn(torch.autograd.Function):
    """One micro-batch through a part by its 004 sequence (see the module comment)."""

    @staticmethod
    def forward(ctx, stage, mu, x, anchor):
        ex = PartExecutor(stage.part, x, input_grad=stage.input_grad, virtual=not stage.is_last,
                          tracker=stage.tracker, free=stage.free)
        with torch.enable_grad():
            for i, op in enumerate(stage.forward_ops):
                ex.apply(i, op)
        ctx.ex, ctx.stage, ctx.mu = ex, stage, mu
        # The output shares its storage with what the executor stores (no copy).
        return ex.output().detach()

    @staticmethod
    def backward(ctx, grad):
        ex, stage = ctx.ex, ctx.stage
        ctx.ex = None
        stage.seeds.mb = ctx.mu  # recomputations draw this micro-batch's masks
        ex.start_backward(grad)
        with torch.enable_grad():
            for i, op in enumerate(stage.backward_ops, len(stage.forward_ops)):
                ex.apply(i, op)
        if ex.t != 0:
            raise remat.ExecutionError(f"the sequence ended before δ^{stage.first - 1}")
        d = ex.delta
        ex.delta = None
        return None, None, d, None


class StageModule(nn.Module):
    """Chain stages first..end of a Net as one module (see the module comment). `sequence` is
    a list of schedule.Op in chain numbers (None: store-all). free="model" (the default) runs
    every part on the executor, keeping ā^ℓ to the end of B^ℓ as 004's model does (a store-all
    part runs the store-all sequence); free="eager" lets autograd free saved tensors as it goes
    (PyTorch's own way; a store-all part is then plain autograd), lower than the model. With a
    device, the first part copies each micro-batch there when its forward starts. The stages'
    parameters are the net's own (nothing is copied)."""

    def __init__(self, net, first, last, seeds, sequence=None, free="model", device=None):
        super().__init__()
        n_chain = len(net.modules)  # L + 1
        L = n_chain - 1
        if not 1 <= first <= last <= L:
            raise ScheduleError(f"part [{first}, {last}] is not within stages 1..{L}")
        from .pipemodel import part_end, store_all

        self.first, self.last = first, last
        # The top stage of the part's sequences: the loss L+1 on the last part, else last+1,
        # the next GPU's stand-in (no module).
        self.end = part_end(last, L)
        self._last_part = last == L
        self.stages = nn.ModuleList(net.modules[first - 1:last] + ([net.modules[L]] if last == L else []))
        self.seeds = seeds
        self.input_grad = first > 1
        self.calls = 0
        self.tracker = None  # the rank's StorageTracker: the executor's RNG and buffer copies stay out
        self.device = torch.device(device) if device is not None else None
        if free not in ("model", "eager"):
            raise ScheduleError(f"free={free!r}: want model or eager")
        self.free = free
        if not sequence and free == "model":
            sequence = store_all(first, self.end)
        self.sequence = None
        if sequence:
            local = []
            for op in sequence:
                if not first <= op.stage <= self.end:
                    raise ScheduleError(f"part [{first}, {last}]: operation {op} is not on the part")
                local.append(type(op)(op.kind, op.stage - first + 1))
            nb = next((i for i, op in enumerate(local) if op.kind == "B"), None)
            if nb is None:
                raise ScheduleError(f"part [{first}, {last}]: the sequence has no B")
            self.sequence = list(sequence)
            self.forward_ops, self.backward_ops = local[:nb], local[nb:]
            self.part = _Part(self.stages)
            # An input of the Function that wants a gradient, so that the first part's output
            # (whose input is data) is part of the graph: zero bytes.
            self.anchor = nn.Parameter(torch.empty(0), requires_grad=True)

    @property
    def is_last(self):
        return self._last_part

    def reset(self):
        """Before each iteration: the next call is micro-batch 0."""
        self.calls = 0

    def forward(self, x):
        mu = self.calls
        self.calls += 1
        self.seeds.mb = mu
        if self.first == 1 and self.device is not None:
            # The batch stays on the host; each micro-batch is copied to the device when its
            # forward starts (on CPU too: host and device are one memory there, and the copy is
            # what the device would hold), so the device holds a^0 of the micro-batches in
            # flight only, as SPEC §7 counts it.
            x = x.to(self.device, copy=True)
        if self.sequence is None:
            h = x
            for mod in self.stages:
                h = mod(h)
            return h
        return _SequenceFn.apply(self, mu, x, self.anchor)

    def own_parameters(self):
        """The chain stages' parameters (the anchor left out)."""
        for m in self.stages:
            yield from m.parameters()
