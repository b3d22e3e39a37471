#!/usr/bin/env python3
"""certify_scan.py — issue 29's scan: `memsched certify` on random integer chains, checked for
what a certificate may not claim. Run by scripts/certify-scan.sh (see there for the points);
standard library only.

    certify_scan.py BINARY [--chains 53] [--first-seed 100] [--time-limit 10] [--jobs 1] [--keep DIR]

Each point is `certify --json` on `gen random --seed S --stages K --integer --max-size 200
--max-time 10` at one budget and one bandwidth. Counted (each must be 0):

  optimal above a schedule   a lever "optimal" (its JSON `optimal`) while another verified
                             schedule of its model is faster — the remat lever's rows are
                             schedules of the remat-offload lever's model too (a remat sequence
                             is a strict combined schedule without transfers, SPEC §6)
  remat-offload above remat  remat-offload's best slower than remat's, or none while remat fits
  bound above a schedule     a global bound (scope "global"; a bound without a scope counts as
                             global) above a verified schedule of its model, or one saying
                             infeasible while one fits
  none fits where one fits   a lever's summary "none fits" (outcome "infeasible"; before
                             outcomes: `infeasible`, or no best row) while a schedule of its
                             model fits

Also printed, not counted: class-only bounds above a verified row of their lever (allowed: a
class bound bounds its class's plans only), levers "not run (time)", the points' wall time.
Exit status 1 when a count is not 0.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time

TOL = 1e-9


def points(chains, first_seed):
    """The scan's points: per chain six budgets (one byte below the smallest feasible, the
    smallest, then 20, 40, 60 and 80 % of the way to store-all's peak) at two bandwidths in
    1..16 B/s — 12 points a chain, 636 for 53 chains."""
    for k in range(chains):
        seed = first_seed + k
        stages = 4 + k % 4
        betas = (1 + (7 * seed) % 16, 1 + (11 * seed + 5) % 16)
        if betas[0] == betas[1]:
            betas = (betas[0], 1 + betas[0] % 16)
        yield seed, stages, betas


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()}")
    return r.stdout


# The issue's two reproductions (seed, stages, budget, bandwidth), scanned after the points.
ISSUE_POINTS = [(123, 5, 920, 1), (120, 7, 913, 8)]


def scan_chain(binary, seed, stages, betas, limit, workdir, budgets=None):
    chain = os.path.join(workdir, f"c{seed}-{stages}.json")
    run([binary, "gen", "random", "--seed", str(seed), "--stages", str(stages), "--integer",
         "--max-size", "200", "--max-time", "10", "-o", chain])
    if budgets is None:
        info = json.loads(run([binary, "info", "--chain", chain, "--json"]))
        lo, hi = info["min_budget"], info["store_all_peak"]
        budgets = [lo - 1, lo] + [lo + (hi - lo) * f // 10 for f in (2, 4, 6, 8)]
    out = []
    for beta in betas:
        for b in budgets:
            if b < 1:
                continue
            t0 = time.time()
            rep = json.loads(run([binary, "certify", "--chain", chain, "--mem", f"{b}B",
                                  "--bandwidth", f"{beta}B/s", "--time-limit", str(limit), "--json"]))
            out.append((f"seed {seed} ({stages} stages) --mem {b}B --bandwidth {beta}B/s", rep, time.time() - t0))
    return out


def fitting(lr):
    return [r for r in lr.get("strategies") or [] if r.get("feasible")]


def check(what, rep, counts, examples):
    levers = rep["levers"]

    def count(key, msg):
        counts[key] += 1
        if len(examples[key]) < 5:
            examples[key].append(f"{what}: {msg}")

    model = {}
    for name, lr in levers.items():
        if lr.get("skipped"):
            continue
        model[name] = [(name + "/" + r["strategy"], r["makespan"]) for r in fitting(lr)]
    if "remat-offload" in model and "remat" in model:
        model["remat-offload"] = model["remat-offload"] + model["remat"]
    for name, lr in levers.items():
        if lr.get("skipped"):
            continue
        rows = model[name]
        fastest = min(rows, key=lambda r: r[1]) if rows else None
        if lr.get("optimal") and fastest and lr["best_makespan"] > fastest[1] * (1 + TOL):
            count("optimal", f"{name} optimal at {lr['best_makespan']:g} s, {fastest[0]} takes {fastest[1]:g} s")
        for b in lr.get("bounds") or []:
            scope = b.get("scope", "global")
            if scope != "global":
                for r in fitting(lr):
                    if not b.get("infeasible") and b.get("value", 0) > r["makespan"] * (1 + TOL):
                        counts["class"] += 1
                        break
                continue
            if fastest and (b.get("infeasible") or b.get("value", 0) > fastest[1] * (1 + TOL)):
                v = "infeasible" if b.get("infeasible") else f"{b.get('value', 0):g} s"
                count("bound", f"{name}: {b['name']} = {v} above {fastest[0]} ({fastest[1]:g} s)")
        outcome = lr.get("outcome")
        if outcome is None:  # a binary from before outcomes: its summary's "none fits"
            outcome = "infeasible" if lr.get("infeasible") or not lr.get("best") else "?"
        if outcome == "infeasible" and fastest:
            count("nonefits", f"{name}: none fits, {fastest[0]} fits ({fastest[1]:g} s)")
        if outcome == "not run (time)":
            counts["time"] += 1
    rm, ro = levers.get("remat"), levers.get("remat-offload")
    if rm and ro and not rm.get("skipped") and not ro.get("skipped") and fitting(rm):
        best_rm = min(r["makespan"] for r in fitting(rm))
        if not fitting(ro):
            count("above", f"remat-offload has no schedule, remat takes {best_rm:g} s")
        else:
            best_ro = min(r["makespan"] for r in fitting(ro))
            if best_ro > best_rm * (1 + TOL):
                count("above", f"remat-offload {best_ro:g} s, remat {best_rm:g} s")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("binary")
    ap.add_argument("--chains", type=int, default=53)
    ap.add_argument("--first-seed", type=int, default=100)
    ap.add_argument("--time-limit", type=float, default=10)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--keep", help="keep the chains in this directory")
    a = ap.parse_args()
    workdir = a.keep or tempfile.mkdtemp(prefix="certify-scan-")
    os.makedirs(workdir, exist_ok=True)
    keys = {"optimal": "optimal above a schedule", "above": "remat-offload above remat",
            "bound": "bound above a schedule", "nonefits": "none fits where one fits"}
    counts = dict.fromkeys(list(keys) + ["class", "time"], 0)
    examples = {k: [] for k in keys}
    n, secs, slowest = 0, 0.0, (0.0, "")
    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        futs = [pool.submit(scan_chain, a.binary, s, k, b, a.time_limit, workdir)
                for s, k, b in points(a.chains, a.first_seed)]
        issue = [pool.submit(scan_chain, a.binary, s, k, (beta,), a.time_limit, workdir, [m])
                 for s, k, m, beta in ISSUE_POINTS]
        for f in futs:
            for what, rep, dt in f.result():
                n += 1
                secs += dt
                slowest = max(slowest, (dt, what))
                check(what, rep, counts, examples)
        for f in issue:  # counted with the others, listed apart
            for what, rep, dt in f.result():
                before = dict(counts)
                check(what, rep, counts, examples)
                bad = [keys[k] for k in keys if counts[k] > before[k]]
                print(f"issue 29's point {what}: {', '.join(bad) if bad else 'none of the four'}")
    print(f"certify scan: {n} points ({a.chains} chains from seed {a.first_seed}, 4-7 stages, "
          f"--integer --max-size 200 --max-time 10, 1-16 B/s, --time-limit {a.time_limit:g}) "
          f"in {time.time() - t0:.0f} s (certify {secs:.0f} s, slowest {slowest[0]:.1f} s: {slowest[1]})")
    for k, label in keys.items():
        print(f"  {label:<28} {counts[k]}")
        for e in examples[k]:
            print(f"      e.g. {e}")
    print(f"  (class-only bound above a row of its lever: {counts['class']}, allowed; "
          f"levers not run (time): {counts['time']})")
    return 1 if any(counts[k] for k in keys) else 0


if __name__ == "__main__":
    sys.exit(main())
