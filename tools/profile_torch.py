#!/usr/bin/env python3
"""Profile a PyTorch model as a memsched chain — moved to the memsched_torch package.

This shim keeps the old command working; it is `python -m memsched_torch profile` (same options
and output, docs/torch.md). Run it with the project environment: .venv/bin/python
tools/profile_torch.py --model resnet18 --batch 8 --image 224 -o r18.json
"""

import os
import sys

if __name__ == "__main__":
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    from memsched_torch.__main__ import main

    sys.exit(main(["profile", *sys.argv[1:]]))
