#!/usr/bin/env python3
"""combined_zoo_table.py TABLE.tsv [GAPS.tsv] — issue 31's zoo table (scripts/combined-zoo.sh's
out/combined-zoo.tsv) as markdown: for each bandwidth a network × budget table of the bracket
(the lever's best verified strict makespan over the best global bound; "= (bound)" where it
closes), then the counts the issue asks for — points proven optimal, points ≤ 1.01, the
largest bracket, and whether the lever's best is ever behind rematerialization's best verified
schedule, or behind activation offloading's where that schedule is one of the combined model
(act_maps). With GAPS.tsv (TestCombinedZooGaps), each open point's measured reason: the bound's
own sequence and the bytes it needs away at its peak, and that sequence scheduled under strict
timing."""
import csv
import sys

ORDER = ["resnet50", "resnet101", "resnet152", "inception3", "vgg19", "gpt2-12", "bert-24",
         "densenet121", "densenet201"]
NAMES = {"resnet50": "ResNet-50", "resnet101": "ResNet-101", "resnet152": "ResNet-152",
         "inception3": "Inception v3", "vgg19": "VGG-19", "gpt2-12": "GPT-2 (12 blocks)",
         "bert-24": "BERT (24 blocks)", "densenet121": "DenseNet-121", "densenet201": "DenseNet-201"}


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: combined_zoo_table.py TABLE.tsv [GAPS.tsv]")
    rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
    if not rows:
        sys.exit(f"{sys.argv[1]}: no rows")
    pts = {}
    for r in rows:
        pts[(r["chain"], r["beta_GBps"], int(r["pct"]))] = r
    betas = sorted({r["beta_GBps"] for r in rows}, key=lambda b: -float(b))
    pcts = sorted({int(r["pct"]) for r in rows})
    chains = [c for c in ORDER if any(r["chain"] == c for r in rows)]
    chains += sorted({r["chain"] for r in rows} - set(chains))
    for b in betas:
        print(f"\n{b} GB/s (bracket = best verified / best global bound; = where proven optimal):\n")
        print("| network | " + " | ".join(f"{p} %" for p in pcts) + " |")
        print("| --- |" + " --- |" * len(pcts))
        for c in chains:
            cells = []
            for p in pcts:
                r = pts.get((c, b, p))
                if r is None:
                    cells.append("—")
                elif r["proven"] == "true":
                    cells.append(f"= ({r['bound_by']})")
                else:
                    cells.append(f"{float(r['ratio']):.3f}")
            print(f"| {NAMES.get(c, c)} | " + " | ".join(cells) + " |")
    n = len(rows)
    proven = sum(r["proven"] == "true" for r in rows)
    ratios = [float(r["ratio"]) for r in rows if r["ratio"] not in ("", "-")]
    within = sum(x <= 1.01 for x in ratios)
    behind_remat = [r for r in rows if r["remat_ms"] != "-" and float(r["combined_ms"]) > float(r["remat_ms"]) * (1 + 1e-9)]
    mapped = [r for r in rows if r["act_ms"] != "-" and r["act_maps"] == "yes"]
    behind_act = [r for r in mapped if float(r["combined_ms"]) > float(r["act_ms"]) * (1 + 1e-9)]
    secs = [float(r["seconds"]) for r in rows]
    print(f"\n{n} points: {proven} proven optimal ({100 * proven / n:.0f} %), {within} within 1.01, "
          f"the largest bracket {max(ratios):.4f}; the lever's best behind remat's on {len(behind_remat)}, "
          f"behind act-offload's on {len(behind_act)} of the {len(mapped)} where act-offload's schedule is "
          f"a combined one; {min(secs):.1f}–{max(secs):.1f} s per point.")
    by = {}
    for r in rows:
        by[r["bound_by"]] = by.get(r["bound_by"], 0) + 1
    print("best global bound by: " + ", ".join(f"{k} {v}" for k, v in sorted(by.items(), key=lambda kv: -kv[1])))
    if len(sys.argv) == 3:
        gaps = list(csv.DictReader(open(sys.argv[2]), delimiter="\t"))
        print("\nWhy each open point is open (the bound's own sequence, scheduled):\n")
        print("| network | GB/s | budget | best (ms) | bound (ms) | bound by | its sequence computes (ms) | needs away at its peak (MiB) | scheduled strictly (ms) |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for g in gaps:
            print(f"| {NAMES.get(g['chain'], g['chain'])} | {g['beta_GBps']} | {g['pct']} % | {g['combined_ms']} | {g['bound_ms']} | "
                  f"{g['bound_by']} | {g['credit_seq_compute_ms']} | {g['credit_seq_excess_MiB']} | {g['credit_seq_strict_ms']} |")


if __name__ == "__main__":
    main()
