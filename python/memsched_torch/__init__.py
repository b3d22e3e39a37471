"""memsched_torch: run memsched schedules in PyTorch."""
