"""`Scheduled`: a model wrapped once, trained under a memory budget with memsched's schedule.

    model = torchvision.models.resnet18()
    net = memsched_torch.Scheduled(model, budget="40MiB")
    opt = torch.optim.Adam(net.parameters())
    for x, y in loader:
        loss = F.cross_entropy(net(x), y)      # the schedule's forward phase
        opt.zero_grad(); loss.backward()       # its backward phase (recomputations, prefetches)
        opt.step()

The first training forward on an input of a new shape (dtype, autocast state, device) profiles
the model as a chain (profile.py: its stages, the loss stage, on that input), asks memsched for
the fastest verified schedule under the budget among the levers the executors run (certify:
rematerialization; activation offloading and both combined when a bandwidth is given), and
caches the plan on disk (cache.py). Every training forward then runs the schedule's operations
up to the loss on the executors (remat.py, offload.py, combined.py): an autograd Function
returns a^L; the caller's loss and `loss.backward()` run F_all^{L+1} and B^{L+1}, and autograd
calls the Function's backward with δ^L, which runs the rest of the schedule (B^L, the
recomputations, the prefetches) and returns δ^0. Parameter gradients accumulate into `.grad` as
in plain training, so any optimizer, gradient accumulation and `zero_grad` work as usual.

What plain training computes, the module computes, bit for bit: the stages are the model's own
modules, recomputations replay the RNG and BatchNorm statistics (remat.py), autocast is
captured at the forward and replayed for recomputations (its weight-cast cache off: a cast made
again has the same bits). `eval()` or `torch.no_grad()` run a plain forward through the stages.
`state_dict()` and `load_state_dict()` are the model's own (the module shares its parameters,
buffers and submodules; no prefix is added).

Honest memory: the first `measure` iterations of every plan are measured (the storage tracker
on CPU — every tensor storage alive from the forward to the end of the backward, the caller's
loss included, parameter gradients excluded, as memsched counts —, the CUDA allocator on a GPU)
and put next to the prediction (the replay of the schedule on its profile). A measured peak
above the budget re-plans with the excess taken off the budget (at most `max_replans` times,
said with a warning); `stats` gives predicted against measured at any time.
"""

import contextlib
import json
import os
import tempfile
import time
import warnings
from dataclasses import dataclass, field

import torch
from torch import nn

from . import binary, cache, chains, combined, models, offload, remat
from .plan import best_schedule
from .profile import profile_net
from .schedule import ScheduleError, fmt_bytes, parse_sequence, parse_size, simulate
from .schedule import parse_rate as parse_rate_text
from .tracker import AllocatorTracker, StorageTracker

LEVERS = ("auto", "remat", "act-offload", "remat-offload")


class MemschedWarning(UserWarning):
    """A measured peak above the budget, a re-plan, a plan that could not be corrected."""


def parse_budget(budget):
    """(kind, value): ("bytes", int) for an int or a size string ("40MiB"), ("fraction", f) for a
    float in (0, 10] (a fraction of the profiled store-all peak)."""
    if isinstance(budget, bool) or budget is None:
        raise ScheduleError(f"budget {budget!r}: want a size (bytes, or a string such as '40MiB') or a fraction "
                            "of the store-all peak (a float, e.g. 0.6)")
    if isinstance(budget, int):
        if budget <= 0:
            raise ScheduleError(f"budget {budget}: want more than 0 bytes")
        return "bytes", budget
    if isinstance(budget, float):
        if not 0 < budget <= 10:
            raise ScheduleError(f"budget {budget}: a float is a fraction of the store-all peak, in (0, 10]")
        return "fraction", budget
    n = parse_size(budget)
    if n <= 0:
        raise ScheduleError(f"budget {budget!r}: want more than 0 bytes")
    return "bytes", n


def parse_rate(rate):
    """Bytes/s from a number or a string such as '12GB/s'; None stays None."""
    if rate is None:
        return None
    if isinstance(rate, (int, float)) and not isinstance(rate, bool):
        return parse_rate_text(repr(float(rate)), flag="bandwidth")
    return parse_rate_text(str(rate), flag="bandwidth")


class _LossStage(nn.Module):
    """The loss stage L+1 as profiled: the caller's loss function on the sample target, or the
    stand-in (models.ChainLoss) when none is given."""

    def __init__(self, loss_fn=None, target=None):
        super().__init__()
        object.__setattr__(self, "fn", loss_fn)  # not a submodule: its parameters are not the model's
        self.target = target

    def forward(self, z):
        if self.fn is None:
            return models.ChainLoss()(z)
        return self.fn(z, self.target)


class _IterationTracker(StorageTracker):
    """The storage tracker of one measured iteration. It stays on the dispatch-mode stack from
    the forward to the end of the backward (the caller's loss in between is counted); autograd
    restores the thread's modes after a backward, so at the end it stops counting and is taken
    off the stack later, at the optimizer's next step or the module's next forward."""

    def __init__(self, device):
        super().__init__(device)
        self.stopped = False

    def stop(self):
        self.stopped = True
        self._ignoring += 1

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if self.stopped:
            return func(*args, **(kwargs or {}))
        return super().__torch_dispatch__(func, types, args, kwargs)


@dataclass
class Plan:
    """One schedule for one input signature: the lever, memsched's strategy, its prediction."""
    lever: str
    strategy: str
    budget: int  # the budget the schedule was asked for (the user's, less the measured excess after re-plans)
    user_budget: int
    predicted_peak: int  # the replay of the schedule on its profile (Python, exact)
    predicted_time: float
    chain: object
    net: object
    schedule: object  # memsched's JSON output
    bandwidth: float = None
    amp: dict = None
    input_grad: bool = False
    ops: list = None  # remat: the sequence split at the loss
    loss_at: int = None
    timed: object = None  # act-offload
    combined: object = None  # remat-offload (schedule.Combined) and its replay
    replay: object = None
    measured: list = field(default_factory=list)  # measured peaks of this plan's iterations
    replans: int = 0
    history: list = field(default_factory=list)  # what happened: plans, measurements, re-plans
    key: str = None
    from_cache: bool = False
    store_all_peak: int = None

    def describe(self):
        return (f"{self.lever} {self.strategy}: predicted peak {fmt_bytes(self.predicted_peak)} "
                f"({self.predicted_peak} B) under a budget of {fmt_bytes(self.budget)} ({self.budget} B)")


class _Run:
    """One training iteration of a plan, split at the caller's loss (the generator of its
    lever's executor)."""

    def __init__(self, owner, plan, x, measure):
        self.owner, self.plan, self.x = owner, plan, x
        dev = x.device
        self.tracker = None
        if measure:
            self.tracker = AllocatorTracker(dev) if dev.type == "cuda" else _IterationTracker(dev)
        grad = x.requires_grad
        kw = dict(tracker=self.tracker, input_grad=grad, amp=plan.amp)
        if plan.lever == "remat":
            self.ex = remat.Executor(plan.net, x, **kw)
            self.gen = remat.drive(self.ex, plan.ops, self.tracker, None, loss_at=plan.loss_at)
            self.link = None
        elif plan.lever == "act-offload":
            it = offload.OffloadIteration(plan.net, x, plan.timed, plan.chain, bandwidth=plan.bandwidth, keep_input=True,
                                          **kw)
            self.ex, self.link, self.gen = it.ex, it.link, it.drive(user_loss=True)
        else:
            it = combined.CombinedIteration(plan.net, x, plan.combined, plan.chain, bandwidth=plan.bandwidth,
                                            rep=plan.replay, keep_input=True, **kw)
            self.ex, self.link, self.gen = it.ex, it.link, it.drive(user_loss=True)
        self.hooks = contextlib.ExitStack()  # the parameter-gradient hooks
        self.entered = False
        self.t0 = None

    def forward(self):
        self.t0 = time.perf_counter()
        tr = self.tracker
        try:
            if tr is not None:
                tr.__enter__()
                self.entered = True
                tr.count(self.x)
                self.hooks.enter_context(tr.parameter_gradients_excluded(list(self.plan.net.parameters())))
            return next(self.gen)
        except BaseException:
            self._abort()
            raise

    def backward(self, delta):
        try:
            try:
                self.gen.send(delta)
            except StopIteration:
                pass
            else:
                raise remat.ExecutionError("the schedule stopped twice for the loss")
            if self.ex.t != 0:
                raise remat.ExecutionError(f"the schedule ended before δ^0 (current gradient δ^{self.ex.t})")
        except BaseException:
            self._abort()
            raise
        d0 = self.ex.delta
        self._finish()
        return d0

    def _abort(self):
        if self.link is not None:
            self.link.restore()  # a^0 may be on the host
        self._finish(failed=True)

    def _finish(self, failed=False):
        tr = self.tracker
        self.hooks.close()
        if tr is None or not self.entered:
            return
        self.entered = False
        if isinstance(tr, _IterationTracker):
            # The mode stays on the stack, stopped (see _IterationTracker).
            peak, step = tr.peak, tr.peak_step
            self.steps = tr.steps
            tr.stop()
            self.owner._pending_pop.append(tr)
        else:
            tr.__exit__(None, None, None)
            peak, step = tr.peak, tr.peak_step
            self.steps = tr.steps
        if not failed:
            self.owner._measured(self.plan, peak, step, time.perf_counter() - self.t0, self.steps)


class _Phase(torch.autograd.Function):
    """Forward: the schedule up to the loss, returning a^L. Backward: the rest, from δ^L to δ^0
    (parameter gradients accumulate through the stages' own backward, as in
    torch.utils.checkpoint's reentrant variant)."""

    @staticmethod
    def forward(ctx, run, x, anchor):
        ctx.run = run
        with torch.enable_grad():
            a = run.forward()
        return a.detach()

    @staticmethod
    def backward(ctx, delta):
        run, ctx.run = ctx.run, None
        if run is None:
            raise RuntimeError("memsched_torch.Scheduled: backward through the same forward twice (each training "
                               "forward runs one schedule, whose backward runs once)")
        d0 = run.backward(delta)
        return None, d0 if run.x.requires_grad else None, None


class Scheduled(nn.Module):
    """Train `model` under `budget` with memsched's fastest verified schedule (module comment).

    model: an nn.Sequential, a torchvision ResNet/VGG/DenseNet or a Hugging Face GPT-2/BERT/
        Llama-style model (chains.cut; anything else is refused with one line saying why).
    sample_input: optional; plans for its signature at once (otherwise at the first forward).
    budget: bytes (int or '40MiB') of activations, gradients δ and temporaries (memsched's budget:
        parameters, their gradients and optimizer state are allocated beforehand), or a float, a
        fraction of the profiled store-all peak.
    bandwidth: the GPU–CPU link rate (bytes/s or '12GB/s'); with it the offloading levers are
        considered too. On CPU the offloading executors are functional (copies into a host store,
        no overlap).
    lever: "auto" (the fastest verified schedule), "remat", "act-offload" or "remat-offload".
    loss_fn, sample_target: the loss the caller computes on the output (loss_fn(output, target)),
        profiled as the chain's loss stage; without them the stand-in (cross-entropy against class
        0 for 2-D outputs, the mean otherwise) is profiled, and a larger real loss is what the
        measurement and re-plan then correct.
    measure: how many iterations of each plan are measured (True: all).
    max_replans: re-plans after a measured peak above the budget, at most.
    cache: True (the default folder, cache.default_dir), a folder, or False.
    time_limit: memsched certify's time limit (seconds).
    profile_hook: a function called with the profiled chain (schedule.Chain) before it is planned,
        which may change it in place: experiments and tests (fixed times, so that schedules do not
        depend on the machine's load; a prediction made wrong on purpose).
    """

    def __init__(self, model, sample_input=None, budget=None, *, bandwidth=None, lever="auto", loss_fn=None,
                 sample_target=None, measure=2, max_replans=3, cache=True, time_limit=None, runs=3, memsched=None,
                 profile_hook=None):
        super().__init__()
        if lever not in LEVERS:
            raise ScheduleError(f"lever {lever!r}: want one of {', '.join(LEVERS)}")
        self._budget = parse_budget(budget)
        rate = parse_rate(bandwidth)
        if lever in ("act-offload", "remat-offload") and rate is None:
            raise ScheduleError(f"lever {lever} needs a bandwidth (the GPU–CPU link rate, e.g. '12GB/s')")
        label, stages = chains.cut(model)
        # The model's own parameters, buffers and submodules, shared: state_dict, parameters(),
        # to() and train() are the model's (no prefix).
        self._parameters = model._parameters
        self._buffers = model._buffers
        self._modules = model._modules
        opts = dict(label=label, stages=stages, model=model, bandwidth=rate, lever=lever, loss_fn=loss_fn,
                    sample_target=sample_target, measure=measure, max_replans=max_replans, time_limit=time_limit,
                    runs=runs, memsched=memsched, profile_hook=profile_hook,
                    cache=None if cache is False else _cache.PlanCache(None if cache is True else cache))
        object.__setattr__(self, "_o", opts)
        object.__setattr__(self, "_plans", {})
        object.__setattr__(self, "_pending_pop", [])
        object.__setattr__(self, "_last", None)
        object.__setattr__(self, "_iterations", [])
        object.__setattr__(self, "_anchor", torch.empty(0, requires_grad=True))
        if sample_input is not None:
            self.plan_for(sample_input)

    # --- the module ---

    def train(self, mode=True):
        super().train(mode)
        self._o["model"].training = mode
        return self

    def state_dict(self, *args, **kwargs):
        return self._o["model"].state_dict(*args, **kwargs)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        return self._o["model"].load_state_dict(state_dict, strict=strict, assign=assign)

    def extra_repr(self):
        b = self._budget
        budget = fmt_bytes(b[1]) if b[0] == "bytes" else f"{b[1]} × store-all"
        return f"{self._o['label']}, budget={budget}, lever={self._o['lever']}"

    def forward(self, x):
        self._settle()
        if not (self.training and torch.is_grad_enabled()):
            return self.plain(x)
        plan = self.plan_for(x)
        m = self._o["measure"]
        measure = m is True or len(plan.measured) < int(m)
        if measure:
            self._arm_pop()
        run = _Run(self, plan, x, measure)
        object.__setattr__(self, "_last", plan)
        return _Phase.apply(run, x, self._anchor)

    def plain(self, x):
        """The model's forward through its stages, without a schedule (eval, no_grad)."""
        h = x
        for _, m in self._o["stages"]:
            h = m(h)
        return h

    # --- plans ---

    def _signature(self, x):
        amp = remat.amp_state(x.device)
        return (tuple(x.shape), x.dtype, str(x.device), x.requires_grad,
                None if amp is None else str(amp["dtype"]), self.training)

    def plan_for(self, x):
        """The plan for x's signature: made (profiled, asked from memsched, cached) at first."""
        sig = self._signature(x)
        plan = self._plans.get(sig)
        if plan is None:
            rng = remat.get_rng(x.device)
            try:
                plan = self._make_plan(x)
            finally:
                remat.set_rng(rng, x.device)  # profiling ran dropout: the caller's RNG goes on as it was
            self._plans[sig] = plan
        return plan

    def _key(self, x, net, amp):
        o = self._o
        dev = x.device
        device = torch.cuda.get_device_name(dev) if dev.type == "cuda" else dev.type
        loss = "stand-in" if o["loss_fn"] is None else \
            f"{o['loss_fn']!r} target {tuple(o['sample_target'].shape) if o['sample_target'] is not None else None}"
        fields = {"structure": cache.structure(net.stages, loss), "input": [list(x.shape), str(x.dtype), x.requires_grad],
                  "amp": None if amp is None else str(amp["dtype"]), "training": self.training,
                  "budget": list(self._budget), "bandwidth": o["bandwidth"], "lever": o["lever"], "device": device,
                  "torch": torch.__version__, "memsched": binary.version(self._exe()).get("version"),
                  "profile_hook": None if o["profile_hook"] is None else repr(o["profile_hook"])}
        return cache.key(fields)

    def _exe(self):
        if self._o["memsched"] is None:
            self._o["memsched"] = binary.find()
        return self._o["memsched"]

    def _net(self, x):
        o = self._o
        net = models.Net(o["label"], o["stages"], tuple(x.shape[1:]), x.dtype)
        net.loss = _LossStage(o["loss_fn"], o["sample_target"])
        state = net.state()
        try:
            models.merge_aliasing(net, x.device, x=x.detach())
        except ValueError as e:
            raise chains.ChainError(f"{o['label']}: {e}") from None
        finally:
            net.load_state(state)
        return net

    def _make_plan(self, x):
        o = self._o
        exe = self._exe()
        amp = remat.amp_state(x.device)
        net = self._net(x)
        k = self._key(x, net, amp)
        entry = o["cache"].load(k) if o["cache"] is not None else None
        if entry is not None:
            try:
                plan = self._from_entry(entry, net, amp, x)
                plan.key, plan.from_cache = k, True
                plan.history.append(f"plan from the cache ({o['cache'].path(k)}): {plan.describe()}")
                return plan
            except (ScheduleError, KeyError, TypeError, ValueError):
                pass  # a stale or foreign entry: profile again
        chain = profile_net(net, x, runs=o["runs"], input_grad=x.requires_grad, amp=amp)
        chain.name = f"memsched_torch.Scheduled {o['label']} input {tuple(x.shape)} {x.dtype}"
        if o["profile_hook"] is not None:
            o["profile_hook"](chain)
        sa = held_peak(chain, offload.as_sequence(len(chain)))
        kind, val = self._budget
        budget = val if kind == "bytes" else int(val * sa)
        plan = self._ask(chain, net, budget, budget, amp, x, sa)
        plan.key = k
        plan.history.append(f"planned: {plan.describe()}")
        self._store(plan)
        return plan

    def _ask(self, chain, net, budget, user_budget, amp, x, sa):
        """memsched's fastest schedule for the planning chain under budget less a^0, checked by
        the exact prediction (with what the caller holds): a schedule whose recomputations after
        B^L would exceed the budget (planning_chain does not pad them) is asked again under the
        budget less the overshoot, at most five times."""
        o = self._o
        fd, path = tempfile.mkstemp(suffix=".json", prefix="memsched-chain-")
        ask = budget - input_kept(chain)
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(planning_chain(chain).to_json(), f)
            for _ in range(5):
                lever, row, _, out = best_schedule(path, ask, _rate_text(o["bandwidth"]), o["lever"], o["time_limit"],
                                                   self._exe(), store_all_peak=sa)
                plan = self._build(lever, row["strategy"], out, chain, net, budget, user_budget, amp, x, sa)
                if plan.predicted_peak <= budget:
                    return plan
                ask -= plan.predicted_peak - budget
        finally:
            os.unlink(path)
        raise ScheduleError(f"no schedule of memsched fits {fmt_bytes(budget)} ({budget} B) once what the caller "
                            f"holds after B^L is counted (the last peaked at {plan.predicted_peak} B)")

    def _build(self, lever, strategy, out, chain, net, budget, user_budget, amp, x, sa):
        n = len(net.modules)
        if len(chain) != n:
            raise ScheduleError(f"the plan's chain has {len(chain)} stages, the model {n}")
        plan = Plan(lever=lever, strategy=strategy, budget=budget, user_budget=user_budget, predicted_peak=0,
                    predicted_time=0.0, chain=chain, net=net, schedule=out, bandwidth=self._o["bandwidth"], amp=amp,
                    input_grad=x.requires_grad, store_all_peak=sa)
        if lever == "remat":
            ops = parse_sequence(json.dumps(out), source="memsched remat")
            plan.ops, plan.loss_at = remat.user_loss_sequence(ops, n)
            plan.predicted_peak = held_peak(chain, plan.ops)
            plan.predicted_time = simulate(chain, plan.ops).makespan
        elif lever == "act-offload":
            plan.timed = offload.parse_timed(json.dumps(out), source="memsched offload-act")
            offload.check_timed(plan.timed, n)
            plan.bandwidth = plan.bandwidth or plan.timed.bandwidth
            # 001's peak on the planning chain, a^0 added (exact: every forward of 001 comes
            # before the loss, every backward after B^L; no Python replay of 001's timing)
            plan.predicted_peak, plan.predicted_time = plan.timed.peak + input_kept(chain), plan.timed.makespan
        elif lever == "remat-offload":
            plan.combined = combined.parse_combined(json.dumps(out), source="memsched remat-offload", algo=strategy)
            plan.bandwidth = plan.bandwidth or out.get("bandwidth")
            combined.check_combined(plan.combined, planning_chain(chain), n=n, bandwidth=plan.bandwidth,
                                    budget=budget - input_kept(chain))
            plan.replay = combined.check_combined(plan.combined, _zero_input(chain), n=n, bandwidth=plan.bandwidth)
            plan.predicted_peak = held_replay_peak(chain, plan.combined, plan.replay)
            plan.predicted_time = float(plan.replay.makespan)
        else:
            raise ScheduleError(f"unknown lever {lever!r}")
        return plan

    def _entry(self, plan):
        return {"lever": plan.lever, "strategy": plan.strategy, "budget": plan.budget, "user_budget": plan.user_budget,
                "chain": plan.chain.to_json(), "schedule": plan.schedule, "replans": plan.replans,
                "store_all_peak": plan.store_all_peak, "predicted_peak": plan.predicted_peak}

    def _store(self, plan):
        if self._o["cache"] is not None and plan.key:
            self._o["cache"].store(plan.key, self._entry(plan))

    def _from_entry(self, e, net, amp, x):
        from .schedule import Chain

        chain = Chain.from_json(e["chain"], source="cached plan")
        plan = self._build(e["lever"], e["strategy"], e["schedule"], chain, net, int(e["budget"]),
                           int(e["user_budget"]), amp, x, e.get("store_all_peak"))
        plan.replans = int(e.get("replans", 0))
        return plan

    # --- measurement and re-plans ---

    def _arm_pop(self):
        """Take a stopped tracker off the dispatch-mode stack at the optimizer's next step."""
        def pop(*_):
            self._settle()
        if getattr(self, "_hook", None) is None:
            from torch.optim.optimizer import register_optimizer_step_pre_hook

            object.__setattr__(self, "_hook", register_optimizer_step_pre_hook(pop))

    def _settle(self):
        from torch.utils._python_dispatch import _get_current_dispatch_mode

        while self._pending_pop and _get_current_dispatch_mode() is self._pending_pop[-1]:
            self._pending_pop.pop().__exit__(None, None, None)
        if not self._pending_pop and getattr(self, "_hook", None) is not None:
            self._hook.remove()
            object.__setattr__(self, "_hook", None)
        for plan in list(self._plans.values()):
            if getattr(plan, "_replan", False):
                plan._replan = False
                self._replan(plan)

    def _measured(self, plan, peak, step, seconds, steps):
        plan.measured.append(peak)
        rec = {"lever": plan.lever, "strategy": plan.strategy, "budget": plan.user_budget,
               "predicted_peak": plan.predicted_peak, "measured_peak": peak, "peak_step": step, "seconds": seconds,
               "steps": steps}
        self._iterations.append(rec)
        plan.history.append(f"measured {fmt_bytes(peak)} ({peak} B) at step {step}, predicted "
                            f"{fmt_bytes(plan.predicted_peak)}")
        if peak > plan.user_budget:
            plan._replan = True

    def _replan(self, plan):
        """The measured peak exceeded the budget: ask again with the excess taken off."""
        peak = plan.measured[-1]
        excess = peak - plan.user_budget
        if plan.replans >= self._o["max_replans"]:
            msg = (f"memsched_torch: measured peak {fmt_bytes(peak)} is {fmt_bytes(excess)} above the budget "
                   f"{fmt_bytes(plan.user_budget)} after {plan.replans} re-plans; keeping {plan.lever} {plan.strategy}")
            plan.history.append(msg)
            warnings.warn(msg, MemschedWarning, stacklevel=3)
            return
        new_budget = plan.budget - excess
        msg = (f"memsched_torch: measured peak {fmt_bytes(peak)} ({peak} B) exceeds the budget "
               f"{fmt_bytes(plan.user_budget)} by {excess} B (predicted {fmt_bytes(plan.predicted_peak)}); "
               f"re-planning under {fmt_bytes(new_budget)} ({new_budget} B)")
        try:
            if new_budget <= 0:
                raise ScheduleError(f"no budget left ({new_budget} B)")
            new = self._ask(plan.chain, plan.net, new_budget, plan.user_budget, plan.amp, _Sig(plan),
                            plan.store_all_peak)
        except (ScheduleError, binary.BinaryError) as e:
            msg += f"; no schedule: {e}; keeping {plan.lever} {plan.strategy}"
            plan.history.append(msg)
            plan.replans = self._o["max_replans"]
            warnings.warn(msg, MemschedWarning, stacklevel=3)
            return
        warnings.warn(msg, MemschedWarning, stacklevel=3)
        plan.history.append(msg)
        plan.history.append(f"re-planned: {new.describe()}")
        for f in ("lever", "strategy", "budget", "predicted_peak", "predicted_time", "schedule", "ops", "loss_at",
                  "timed", "combined", "replay", "bandwidth"):
            setattr(plan, f, getattr(new, f))
        plan.replans += 1
        plan.measured = []
        self._store(plan)

    # --- what a user reads ---

    @property
    def plan(self):
        """The plan of the last training forward (before the first: the only plan made, if one)."""
        if self._last is None and len(self._plans) == 1:
            return next(iter(self._plans.values()))
        return self._last

    @property
    def stats(self):
        """Predicted against measured, per measured iteration, and every plan's history."""
        return {"iterations": list(self._iterations),
                "plans": [{"lever": p.lever, "strategy": p.strategy, "budget": p.user_budget,
                           "planned_budget": p.budget, "predicted_peak": p.predicted_peak,
                           "predicted_time": p.predicted_time, "measured_peaks": list(p.measured),
                           "replans": p.replans, "from_cache": p.from_cache, "history": list(p.history)}
                          for p in self._plans.values()]}


def held(chain):
    """Bytes the caller's side keeps from the end of B^L to the end of the backward, which 004's
    model frees at B^L: a^L, the module's output, which the caller's `out = net(x)` holds (plain
    training holds it too). (δ^L, which autograd holds until the Function's backward returns, is
    freed after B^L by the executor when nothing else uses it: remat.Executor._release_sole.)"""
    return chain.stage(len(chain) - 1).a


def planning_chain(chain):
    """The chain memsched plans on, for a budget less a^0 (input_kept): the input batch is the
    caller's (the caller holds it, and may read it in its loss: the labels of a language model are
    its input ids), so it stays on the device, never moved nor freed — a^0 is 0 here; and what the
    caller holds after B^L (held) is added to o_b of the stages before L, whose backwards all come
    after B^L. The recomputations after B^L are not padded (o_f serves the forward phase too,
    where a^L does not exist yet): Scheduled checks each schedule with the exact prediction and
    asks again under a lower budget when they overshoot (_ask). Activation offloading has no
    recomputation: for it this chain is exact."""
    import copy

    h = held(chain)
    out = copy.deepcopy(chain)
    out.a0 = 0
    for st in out.stages[:-2]:
        st.ob += h
    return out


def input_kept(chain):
    """Bytes of the input batch, on the device for the whole iteration (planning_chain)."""
    return chain.a0


def _zero_input(chain):
    import copy

    out = copy.deepcopy(chain)
    out.a0 = 0
    return out


def held_peak(chain, ops):
    """The peak of a remat sequence (the caller's loss in it) on the profile, exactly: 004's
    replay with a^0 kept (input_kept) and held(chain) added after B^L."""
    sim = simulate(_zero_input(chain), ops)
    L = len(chain) - 1
    h = held(chain)
    done, peak = False, 0
    for op, m in zip(ops, sim.memory):
        peak = max(peak, m + (h if done else 0))
        done = done or (op.kind == "B" and op.stage == L)
    return max(peak, sim.peak) + input_kept(chain)


def held_replay_peak(chain, sched, rep):
    """The same for a combined schedule: its replay's memory after every event (rep: the replay
    on _zero_input(chain)), a^0 kept, held(chain) added from the end of B^L on."""
    L = len(chain) - 1
    h = held(chain)
    done, peak = False, rep.peak
    for ev in rep.events:
        if ev.kind == "op-end" and sched.ops[ev.id].op.kind == "B" and sched.ops[ev.id].op.stage == L:
            done = True
            continue
        if done:
            peak = max(peak, ev.memory + h)
    return peak + input_kept(chain)


class _Sig:
    """What _build reads of an input: whether it requires grad."""

    def __init__(self, plan):
        self.requires_grad = plan.input_grad


def _rate_text(rate):
    return None if rate is None else f"{rate:.17g}B/s"


_cache = cache
