"""Live tensor storages during a training iteration: the measured side of memsched's memory model.

memsched's budget (004 §3, SPEC §1) counts the activations a^ℓ and ā^ℓ, the gradients δ^ℓ and
the operations' temporaries; parameters, their gradients and optimizer state are allocated
beforehand. StorageTracker measures exactly that on any device: it sees every tensor an ATen
operation returns (a TorchDispatchMode, so the autograd engine's backward kernels too), counts
each storage once at its current size while it is alive (a weak reference tells when it dies),
and keeps the peak. Storages that existed before the tracker started (parameters, buffers) are not
counted unless registered with `count`; parameter gradients leave the count as soon as autograd
has accumulated them (`parameter_gradients_excluded`).

What it cannot see: memory a kernel allocates for itself and frees before returning (oneDNN or
cuDNN workspaces) — the allocator's view, which `torch.cuda.max_memory_allocated` gives on CUDA.
"""

import contextlib
import weakref

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten


class StorageTracker(TorchDispatchMode):
    """Bytes of live tensor storages allocated while it is active, and their peak.

    Use as a context manager around the iteration. The tracker keeps a timeline: the live bytes
    after every operation. `step(label)` opens a new step; `steps` gives each step's own peak and
    `peak_step` the label of the step where the overall peak happened. `untracked()` excludes
    what is allocated inside it (framework bookkeeping such as saved RNG states). `exclude(t)`
    takes a storage out of the count from its allocation on (a parameter's gradient: 004 §3
    counts gradients as allocated beforehand, so the kernel that writes one does not allocate
    in that model). `refresh(storage)` re-reads a storage's size after an out-of-band
    `UntypedStorage.resize_` (offloading frees device memory that way).
    """

    def __init__(self, device=None):
        super().__init__()
        self.device = None if device is None else torch.device(device)
        self.current = 0
        self._timeline = [0]  # live bytes after each event
        self._marks = []  # (label, first timeline index of the step)
        self._live = {}  # storage key -> [bytes, weakref, timeline index of its allocation]
        self._ignored = set()
        self._ignoring = 0

    # --- what is counted ---

    @staticmethod
    def _key(st):
        return st._cdata

    def _on_device(self, t):
        return self.device is None or t.device.type == self.device.type

    def count(self, *tensors):
        """Count these tensors' storages from now on (e.g. the input batch a^0, which memsched's
        budget includes although it was allocated before the iteration)."""
        for t in tensors:
            if isinstance(t, torch.Tensor) and t.device.type != "meta":
                self._track(t.untyped_storage())
        self._update()

    def _track(self, st):
        key = self._key(st)
        if key in self._ignored:
            return
        if self._ignoring:
            self._ignore(st, key)
            return
        n = st.nbytes()
        entry = self._live.get(key)
        if entry is None:
            ref = weakref.ref(st, lambda _r, k=key: self._free(k))
            self._live[key] = [n, ref, len(self._timeline)]
            self.current += n
        elif entry[0] != n:
            self.current += n - entry[0]
            entry[0] = n

    def _ignore(self, st, key):
        if key not in self._ignored:
            self._ignored.add(key)
            weakref.finalize(st, self._ignored.discard, key)

    def _free(self, key):
        entry = self._live.pop(key, None)
        if entry is not None:
            self.current -= entry[0]
            self._update()

    def exclude(self, t):
        """Take this tensor's storage out of the count from its allocation on (the timeline is
        corrected backwards), and never count it again."""
        st = t.untyped_storage()
        key = self._key(st)
        entry = self._live.pop(key, None)
        if entry is not None:
            n, _, since = entry
            self.current -= n
            for i in range(since, len(self._timeline)):
                self._timeline[i] -= n
        self._ignore(st, key)

    @contextlib.contextmanager
    def parameter_gradients_excluded(self, params, incoming=True):
        """While active, each parameter's .grad is excluded as soon as autograd has accumulated
        it (register_post_accumulate_grad_hook), and so is the gradient autograd computes for it
        before accumulating (a tensor hook on the parameter): when .grad already exists (the
        second micro-batch of a gradient accumulation), that is a temporary of the parameter's
        size which autograd adds into .grad — parameter-gradient memory, which memsched's budget
        counts as allocated beforehand (without this, ResNet-18's layer4 convolution counted
        9.4 MB in a stage's backward). incoming=False counts that temporary as the backward's
        (the pipeline: its profile's o_b holds it, and a GPU's M is everything it holds)."""
        def incoming_grad(g):
            self.exclude(g)

        handles = [p.register_post_accumulate_grad_hook(lambda p: self.exclude(p.grad))
                   for p in params if p.requires_grad]
        if incoming:
            handles += [p.register_hook(incoming_grad) for p in params if p.requires_grad]
        try:
            yield
        finally:
            for h in handles:
                h.remove()

    def refresh(self, st):
        """Re-read the size of a tracked storage (after UntypedStorage.resize_)."""
        entry = self._live.get(self._key(st))
        if entry is not None:
            n = st.nbytes()
            self.current += n - entry[0]
            entry[0] = n
        self._update()

    def live_bytes(self, tensors):
        """Bytes of the distinct tracked storages behind these tensors (each storage once)."""
        seen = set()
        total = 0
        for t in tensors:
            if isinstance(t, torch.Tensor):
                k = self._key(t.untyped_storage())
                if k not in seen and k in self._live:
                    seen.add(k)
                    total += self._live[k][0]
        return total

    # --- steps and peaks ---

    def _update(self):
        self._timeline.append(self.current)

    def step(self, label):
        """Start a new step; its peak starts at the bytes live now."""
        self._update()
        self._marks.append((label, len(self._timeline) - 1))

    def reset_peak(self):
        """Forget the timeline so far (the peak restarts from the bytes live now)."""
        self._timeline = [self.current]
        self._marks = []
        for entry in self._live.values():
            entry[2] = 0

    @property
    def peak(self):
        return max(self._timeline)

    @property
    def steps(self):
        """[(label, peak bytes during the step)] in order."""
        out = []
        for i, (label, start) in enumerate(self._marks):
            end = self._marks[i + 1][1] + 1 if i + 1 < len(self._marks) else len(self._timeline)
            out.append((label, max(self._timeline[start:end])))
        return out

    @property
    def peak_step(self):
        p = self.peak
        for label, v in self.steps:
            if v == p:
                return label
        return None

    @contextlib.contextmanager
    def untracked(self):
        self._ignoring += 1
        try:
            yield
        finally:
            self._ignoring -= 1

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        # An output that shares a storage with an argument (a view, an in-place or out= result)
        # is no new allocation: only its size may have changed. Every other output storage is.
        fa, _ = tree_flatten((args, kwargs or {}))
        arg_keys = {self._key(t.untyped_storage()) for t in fa
                    if isinstance(t, torch.Tensor) and t.device.type != "meta"}
        flat, _ = tree_flatten(out)
        for t in flat:
            if not isinstance(t, torch.Tensor) or t.device.type == "meta" or not self._on_device(t):
                continue
            st = t.untyped_storage()
            key = self._key(st)
            if key not in arg_keys:
                self._track(st)
            elif key in self._live and self._live[key][0] != st.nbytes():
                self._track(st)
        self._update()
        return out


def cuda_block(n):
    """Bytes the CUDA caching allocator takes for an n-byte tensor (it rounds to 512 B)."""
    return (n + 511) // 512 * 512


class AllocatorTracker:
    """The CUDA caching allocator's view of what StorageTracker counts, step by step:
    torch.cuda.max_memory_allocated above what was allocated when it was entered, the tensors
    given to `count` added (a^0, allocated before), parameter gradients taken out. It sees what
    StorageTracker cannot (kernel workspaces: cuDNN, cuBLAS) and the allocator's 512-B rounding.

    It stands in for a StorageTracker in the executors (step, count, untracked, refresh,
    parameter_gradients_excluded, steps, peak, peak_step), so one run gives each step's peak.
    The allocator's statistics follow the host's order of allocations and frees, which is the
    schedule's: no synchronisation is needed to read them (a free marked with record_stream
    counts as freed at once, its block is only kept from reuse).

    Parameter gradients: 004 counts them as allocated beforehand, autograd allocates each in the
    middle of a backward node. The peak is read in segments, one per gradient accumulation (a
    post-accumulate-grad hook ends the segment and resets the allocator's peak). A segment's
    `upper` takes out the gradients accumulated before it; its `lower` also those accumulated at
    its end, which the node had already allocated but may not have at the segment's peak. The
    exact value (every gradient out from its allocation on, as StorageTracker counts) lies
    between; they differ by at most one node's parameter gradients (VGG's first classifier
    layer: 392 MiB at batch 32)."""

    def __init__(self, device):
        self.device = torch.device(device)
        self._extra = 0
        self._grads = 0
        self._pre = ["", 0, 0]  # before the first step: label, upper, lower
        self._marks = []  # [label, upper, lower] per step

    def __enter__(self):
        torch.cuda.synchronize(self.device)
        self.base = torch.cuda.memory_allocated(self.device)
        torch.cuda.reset_peak_memory_stats(self.device)
        return self

    def __exit__(self, *exc):
        self._close(0)
        return False

    def _now(self):
        return torch.cuda.memory_allocated(self.device) - self.base + self._extra - self._grads

    def _close(self, new_grads):
        m = torch.cuda.max_memory_allocated(self.device) - self.base + self._extra - self._grads
        cur = self._marks[-1] if self._marks else self._pre
        cur[1] = max(cur[1], m)
        cur[2] = max(cur[2], m - new_grads)
        self._grads += new_grads
        torch.cuda.reset_peak_memory_stats(self.device)  # the next segment starts at what is live now

    # --- what the executors call on a tracker ---

    def count(self, *tensors):
        self._close(0)
        self._extra += sum(cuda_block(t.untyped_storage().nbytes()) for t in tensors
                           if isinstance(t, torch.Tensor) and t.device.type == "cuda")

    def step(self, label):
        self._close(0)
        now = self._now()
        self._marks.append([label, now, now])

    def untracked(self):
        return contextlib.nullcontext()

    def refresh(self, st):
        pass

    @contextlib.contextmanager
    def parameter_gradients_excluded(self, params):
        """Each gradient out once, at the accumulation that allocated it: a parameter's first
        accumulation when it had no .grad on entry (later ones add into it: micro-batches)."""
        fresh = {id(p) for p in params if p.requires_grad and p.grad is None}

        def hook(p):
            if id(p) in fresh:
                fresh.discard(id(p))
                self._close(cuda_block(p.grad.untyped_storage().nbytes()))
            else:
                self._close(0)

        handles = [p.register_post_accumulate_grad_hook(hook) for p in params if p.requires_grad]
        try:
            yield
        finally:
            for h in handles:
                h.remove()

    @property
    def steps(self):
        """[(label, upper)] per step."""
        return [(m[0], m[1]) for m in self._marks]

    @property
    def steps_lower(self):
        return [(m[0], m[2]) for m in self._marks]

    @property
    def peak(self):
        return max([self._pre[1]] + [m[1] for m in self._marks])

    @property
    def peak_lower(self):
        return max([self._pre[2]] + [m[2] for m in self._marks])

    @property
    def peak_step(self):
        p = self.peak
        return next((m[0] for m in self._marks if m[1] == p), None)
