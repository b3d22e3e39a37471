#!/usr/bin/env python3
"""command_scan.py — every command on random chains at four scales, checked for what a user must
never see. Run by scripts/command-scan.sh; standard library only.

    command_scan.py BINARY [--chains 30] [--seed 1] [--jobs 1] [--wall 80]

Per chain (`gen random --weights`, 3 to 40 stages, largest size 2 KiB / 64 MiB / 8 GiB / 2 TiB
with durations to 1 ms / 10 ms / 0.5 s / 100 s and 1 MB/s or 12 GB/s; a third with integer
sizes and times), at 0, 30, 80 and 120 % of the way from the smallest budget to the store-all
peak: remat (floating, and persistent in bytes), offload-act --algo all and --algo exact,
offload-weights, pipeline (3 GPUs, 4 micro-batches; and --algo exact on 2 GPUs),
remat-offload --algo all, bound --problem act-offload, certify (8 s); once per chain, a sweep of
three budgets (CSV and JSON), and export of each MILP (.lp or .mps) solved by HiGHS and
lp_solve (10 s). Counted (each must be 0):

  exit        an exit status other than 0 (export: 0 or 1 with a message)
  panic       a Go panic or goroutine dump
  non-number  NaN, +Inf or -0.00 printed (pipeline's "+∞ (infeasible)" is words, not +Inf),
              NaN or Infinity in a sweep's files
  ratio < 1   a JSON field named ratio below 1 − 1e-9 (a schedule faster than a global bound)
  over time   a run past --wall seconds (the commands' own limits are at most 60 s)

Exit status 1 when a count is not 0; each flagged run is printed with its command line.
"""
import argparse
import concurrent.futures
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time

SCALES = [("2KiB", 1e-3, "1MB/s"), ("64MiB", 0.01, "12GB/s"), ("8GiB", 0.5, "12GB/s"), ("2TiB", 100, "12GB/s")]


def walk(o, path=""):
    if isinstance(o, dict):
        for k, v in o.items():
            yield from walk(v, path + "." + k)
    elif isinstance(o, list):
        for i, v in enumerate(o):
            yield from walk(v, f"{path}[{i}]")
    else:
        yield path, o


def run(binary, args, wall):
    start = time.time()
    try:
        p = subprocess.run([binary] + args, capture_output=True, text=True, timeout=wall)
    except subprocess.TimeoutExpired:
        return None, "", "", wall
    return p.returncode, p.stdout, p.stderr, time.time() - start


def check(args, rc, out, err, secs, wall, ok_codes=(0,)):
    """The counts a run breaks, as (count, detail) pairs."""
    if rc is None:
        return [("over time", f"> {wall} s")]
    bad = []
    if rc not in ok_codes:
        bad.append(("exit", f"status {rc}: {err.strip()[-200:]}"))
    if rc == 1 and 1 in ok_codes and not err.strip():
        bad.append(("exit", "status 1 without a message"))
    if "panic:" in out + err or "goroutine " in err:
        bad.append(("panic", err.strip()[-200:]))
    for word in ("NaN", "+Inf", "-0.00 "):
        if word in out:
            bad.append(("non-number", word))
    if "--json" in args and rc == 0:
        try:
            for path, v in walk(json.loads(out)):
                if path.endswith("ratio") and isinstance(v, (int, float)) and v < 1 - 1e-9:
                    bad.append(("ratio < 1", f"{path} = {v}"))
        except ValueError as e:
            bad.append(("exit", f"JSON not readable: {e}"))
    if secs > wall:
        bad.append(("over time", f"{secs:.0f} s"))
    return bad


def chain_runs(binary, k, seed, wall, scratch):
    """Every run of chain k; returns [(count, command line, detail)]."""
    rnd = random.Random(seed * 1000003 + k)
    size, dur, rate = rnd.choice(SCALES)
    path = os.path.join(scratch, f"c{k}.json")
    gen = ["gen", "random", "--seed", str(rnd.randint(1, 10**6)), "--stages", str(rnd.choice([3, 5, 8, 12, 20, 40])),
           "--max-size", size, "--max-time", str(dur), "--weights", "-o", path]
    if rnd.random() < 0.3:
        gen.append("--integer")
    found = []

    def note(args, bad):
        found.extend((c, " ".join(["memsched"] + args), d) for c, d in bad)

    rc, out, err, secs = run(binary, gen, wall)
    if rc != 0:
        note(gen, check(gen, rc, out, err, secs, wall) or [("exit", "gen failed")])
        return found
    rc, out, err, secs = run(binary, ["info", "--chain", path, "--json"], wall)
    info = json.loads(out)
    lo, hi = info["min_budget"], info["store_all_peak"]
    for frac in (0.0, 0.3, 0.8, 1.2):
        mem = str(int(lo + (hi - lo) * frac))
        for cmd in (["remat", "--algo", "floating"], ["remat", "--algo", "persistent", "--slots", "exact"],
                    ["offload-act", "--algo", "all", "--bandwidth", rate], ["offload-act", "--algo", "exact", "--bandwidth", rate, "--time-limit", "8"],
                    ["offload-weights", "--bandwidth", rate],
                    ["pipeline", "--gpus", "3", "--micro-batches", "4", "--bandwidth", rate, "--time-limit", "5"],
                    ["pipeline", "--gpus", "2", "--micro-batches", "3", "--bandwidth", rate, "--algo", "exact", "--time-limit", "5"],
                    ["remat-offload", "--algo", "all", "--bandwidth", rate, "--time-limit", "8"],
                    ["bound", "--problem", "act-offload", "--bandwidth", rate, "--time-limit", "5"],
                    ["certify", "--bandwidth", rate, "--time-limit", "8"]):
            args = cmd + ["--chain", path, "--mem", mem]
            if cmd[0] != "bound":
                args.append("--json")
            rc, out, err, secs = run(binary, args, wall)
            if cmd[0] == "pipeline" and rc == 0:
                out = out.replace("+∞ (infeasible)", "")
            note(args, check(args, rc, out, err, secs, wall))
    sweep_dir = os.path.join(scratch, f"sweep{k}")
    args = ["sweep", "--chain", path, "--from", str(lo), "--to", str(hi), "--steps", "3", "--bandwidth", rate, "--no-plots", "-o", sweep_dir]
    rc, out, err, secs = run(binary, args, 4 * wall)
    bad = check(args, rc, out, err, secs, 4 * wall)
    if rc == 0:
        for name in ("sweep.json", "sweep.csv"):
            text = open(os.path.join(sweep_dir, name)).read()
            if re.search(r"NaN|Inf", text):
                bad.append(("non-number", name))
    note(args, bad)
    mem = str(int(lo + (hi - lo) * rnd.choice([0.1, 0.5, 0.9])))
    for problem in ("remat-ilp", "act-offload", "remat-offload", "weight-offload-lb"):
        model = os.path.join(scratch, f"m{k}-{problem}." + rnd.choice(["lp", "mps"]))
        args = ["export", "--problem", problem, "--chain", path, "--mem", mem, "--bandwidth", rate,
                "--format", model.rsplit(".", 1)[1], "-o", model]
        rc, out, err, secs = run(binary, args, wall)
        note(args, check(args, rc, out, err, secs, wall, ok_codes=(0, 1)))
        if rc != 0:
            continue
        for solver in ("highs", "lpsolve"):
            args = ["solve", model, "--solver", solver, "--time-limit", "10", "--json"]
            rc, out, err, secs = run(binary, args, wall)
            note(args, check(args, rc, out, err, secs, wall))
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary")
    ap.add_argument("--chains", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--wall", type=float, default=80, help="seconds a run may take (the commands' limits are ≤ 60 s)")
    a = ap.parse_args()
    counts = {c: 0 for c in ("exit", "panic", "non-number", "ratio < 1", "over time")}
    start = time.time()
    with tempfile.TemporaryDirectory() as scratch:
        with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
            futures = [pool.submit(chain_runs, a.binary, k, a.seed, a.wall, scratch) for k in range(a.chains)]
            for f in concurrent.futures.as_completed(futures):
                for count, cmd, detail in f.result():
                    counts[count] += 1
                    print(f"{count}: {cmd}\n    {detail}", flush=True)
    print(f"{a.chains} chains (seed {a.seed}) in {time.time() - start:.0f} s")
    for c, n in counts.items():
        print(f"  {c:<11} {n}")
    sys.exit(1 if any(counts.values()) else 0)


if __name__ == "__main__":
    main()
