"""Plans on disk: a Scheduled module's profile and schedule, keyed by what they depend on.

The key is a SHA-256 of the model's structure (every stage's type and repr, every parameter's and
buffer's name, shape, dtype and whether it requires grad, the loss), the input's shape, dtype and
whether it requires grad, the autocast dtype, the training mode, the budget, the bandwidth and
lever asked for, the device (the GPU's name on CUDA), the torch version and the memsched binary's
version. A plan found under its key is used without profiling; it is checked against its own
profile again before it runs (never trusted as a file). A re-plan after a measurement rewrites
the entry, so the next run starts from the corrected budget.

The folder is $MEMSCHED_TORCH_CACHE, else $XDG_CACHE_HOME/memsched_torch, else
~/.cache/memsched_torch; one JSON file per key. An unreadable or foreign entry is ignored (and
overwritten by the next plan).
"""

import hashlib
import json
import os
import tempfile

FORMAT = "memsched_torch.plan/v1"


def default_dir():
    env = os.environ.get("MEMSCHED_TORCH_CACHE")
    if env:
        return env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "memsched_torch")


def structure(stages, loss):
    """The model's structure as a list of strings (what a plan's validity depends on)."""
    out = []
    for name, mod in stages:
        out.append(f"stage {name} {type(mod).__module__}.{type(mod).__qualname__} {mod!r}")
        for pn, p in mod.named_parameters():
            out.append(f"  param {pn} {tuple(p.shape)} {p.dtype} {p.requires_grad}")
        for bn, b in mod.named_buffers():
            out.append(f"  buffer {bn} {tuple(b.shape)} {b.dtype}")
    out.append(f"loss {loss}")
    return out


def key(fields):
    """The hex SHA-256 of fields (a JSON-serializable dict)."""
    text = json.dumps(fields, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class PlanCache:
    def __init__(self, folder=None):
        self.folder = folder or default_dir()

    def path(self, k):
        return os.path.join(self.folder, f"{k}.json")

    def load(self, k):
        try:
            with open(self.path(k)) as f:
                obj = json.load(f)
        except (OSError, ValueError):
            return None
        if not isinstance(obj, dict) or obj.get("format") != FORMAT or obj.get("key") != k:
            return None
        return obj

    def store(self, k, entry):
        """Write atomically (a rename); a cache that cannot be written is no error: the plan still
        runs, it is only made again next time."""
        obj = dict(entry, format=FORMAT, key=k)
        try:
            os.makedirs(self.folder, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.folder, suffix=".tmp")
            with os.fdopen(fd, "w") as f:
                json.dump(obj, f)
            os.replace(tmp, self.path(k))
            return True
        except OSError:
            return False
