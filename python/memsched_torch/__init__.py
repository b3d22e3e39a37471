"""memsched_torch: train PyTorch models under a memory budget with memsched's verified schedules
(Scheduled), and run, profile and measure those schedules (python -m memsched_torch)."""


def __getattr__(name):
    # Lazy: `python -m memsched_torch --help` and the bad-input checks need no torch import.
    if name in ("Scheduled", "MemschedWarning"):
        from . import scheduled

        return getattr(scheduled, name)
    if name in ("ChainError",):
        from . import chains

        return chains.ChainError
    raise AttributeError(f"module 'memsched_torch' has no attribute {name!r}")


__all__ = ["Scheduled", "MemschedWarning", "ChainError"]
