"""The training-equals-training matrix of docs/torch.md: `python -m memsched_torch train` through
Scheduled on ResNet-18 (32×32), a Hugging Face GPT-2 (from a config) and a TransformerEncoderLayer
stack, for each lever (remat, act-offload, remat-offload) with SGD and Adam, 20 iterations each
on CPU (profiled times replaced by 4 ms / 8 ms per stage, as the tests do, so that the lever's
schedule does not depend on the machine's load). Prints one Markdown row per case; --json
writes the full reports. Run: PYTHONPATH=python .venv/bin/python scripts/torch-train-matrix.py"""

import argparse
import json
import sys

import torch

sys.path.insert(0, __import__("os").path.join(__import__("os").path.dirname(__file__), "..", "python", "tests"))
from test_scheduled import CASES, fixed_times, task  # noqa: E402

from memsched_torch import train  # noqa: E402
from memsched_torch.schedule import fmt_bytes  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--iterations", type=int, default=20)
ap.add_argument("--json")
args = ap.parse_args()
torch.set_num_threads(1)
out = []
print("| model | lever | optimizer | budget | schedule | predicted peak | measured peaks | Δ | plain training's peak "
      "| losses, parameters | it/s scheduled / plain |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for model, lever, fraction, bw in CASES:
    for opt in ("sgd", "adam"):
        r = train.compare(task(model), args.iterations, optimizer=opt, budget=fraction, bandwidth=bw, lever=lever,
                          profile_hook=fixed_times)
        out.append(r)
        mp = r["measured_peaks"]
        d = max(abs(m / r["predicted_peak"] - 1) for m in mp)
        ok = "bitwise, every iteration" if r["params_match"] and r["losses_match"] else "DIFFER"
        s = r["schedule"]
        what = f"{r['strategy']}" + (f", offloads {s['offloaded']}" if "offloaded" in s else "") + \
            (f", forwards {' '.join(map(str, s['forwards']))}" if "forwards" in s else "")
        ips = r["iterations_per_s"]
        print(f"| {model} | {lever} | {opt} | {fmt_bytes(r['budget'])} ({fraction} × store-all{', ' + bw if bw else ''}) "
              f"| {what} | {r['predicted_peak']} B | {min(mp)}–{max(mp)} B | ≤ {100 * d:.2f} % "
              f"| {max(r['plain_measured_peaks'])} B | {ok} | {ips['scheduled'] / ips['plain']:.2f} |", flush=True)
if args.json:
    with open(args.json, "w") as f:
        json.dump(out, f, indent=1)
