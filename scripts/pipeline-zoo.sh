#!/usr/bin/env bash
# pipeline-zoo.sh: the zoo table of docs/pipeline.md (issue 30), end to end through the binary.
#
# For ResNet-50/101/152 (micro-batch 32, 224×224), GPT-2 with 48 blocks (hidden 1600, 25
# heads, sequence 1024, micro-batch 1) and BERT-large (24 blocks, hidden 1024, 16 heads,
# sequence 512, micro-batch 8), all fp32 with V100 times from memsched's zoo, on P = 2, 4, 8
# GPUs, m = 2P and 4P micro-batches, 1F1B, 25 GB/s links, and two budgets per point:
#   fits   1.25 × the least memory at which storing everything fits some allocation
#          (store_all_min_memory, an exact min–max DP),
#   remat  0.6 × that least memory (raised by 0.1 until some plan with recomputation fits):
#          only recomputation inside the stages fits there,
# it runs `memsched pipeline --algo exact --time-limit 10` (and --algo uniform, --algo pipedream)
# and writes one row per point: the best makespan, the largest certified bound and what
# certifies it, the ratio, the time to plan (the exact strategy's own seconds and its command's
# wall time), and the uniform split's and PipeDream's makespans (or "no fit").
#
#   scripts/pipeline-zoo.sh [OUT.tsv]      (default docs/pipeline-zoo.tsv; about 5–15 minutes)
#
# It also prints the markdown table of docs/pipeline.md. Timings depend on the machine and its
# load: the script records `uptime` in the TSV's header.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${MEMSCHED_BIN:-bin/memsched}
OUT=${1:-docs/pipeline-zoo.tsv}
LIMIT=${PIPELINE_ZOO_LIMIT:-10}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$BIN" gen zoo resnet --depth 50 --batch 32 -o "$tmp/resnet50.json" 2>/dev/null
"$BIN" gen zoo resnet --depth 101 --batch 32 -o "$tmp/resnet101.json" 2>/dev/null
"$BIN" gen zoo resnet --depth 152 --batch 32 -o "$tmp/resnet152.json" 2>/dev/null
"$BIN" gen zoo gpt2 --layers 48 --hidden 1600 --heads 25 --seq 1024 --batch 1 -o "$tmp/gpt2-48.json" 2>/dev/null
"$BIN" gen zoo bert --layers 24 --hidden 1024 --heads 16 --seq 512 --batch 8 -o "$tmp/bert-large.json" 2>/dev/null

printf '# %s; %s; uptime: %s\n' "memsched pipeline zoo (scripts/pipeline-zoo.sh)" "$(date -u +%Y-%m-%dT%H:%MZ)" "$(uptime | sed 's/.*load/load/')" > "$OUT"
printf 'net\tP\tm\tbudget\tmem_bytes\tbest_algo\tbest_s\tbound_s\tbound_by\tratio\toptimal\tplan_s\twall_s\tuniform_s\tpipedream_s\tparts\trecompute\n' >> "$OUT"

for net in resnet50 resnet101 resnet152 gpt2-48 bert-large; do
  for P in 2 4 8; do
    for mf in 2 4; do
      m=$((mf * P))
      # The least memory at which storing everything fits (any budget works for this field).
      base=$("$BIN" pipeline --chain "$tmp/$net.json" --gpus "$P" --mem 1GiB --bandwidth 25GB/s --micro-batches "$m" \
        --algo uniform --remat none --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["store_all_min_memory"])')
      for kind in fits remat; do
        if [ "$kind" = fits ]; then
          fracs="1.25"
        else
          fracs="0.6 0.7 0.8 0.9"
        fi
        for f in $fracs; do
          mem=$(python3 -c "print(int($base * $f))")
          t0=$(date +%s.%N)
          "$BIN" pipeline --chain "$tmp/$net.json" --gpus "$P" --mem "$mem" --bandwidth 25GB/s --micro-batches "$m" \
            --time-limit "$LIMIT" --algo exact --json > "$tmp/out.json"
          t1=$(date +%s.%N)
          for algo in uniform pipedream; do
            "$BIN" pipeline --chain "$tmp/$net.json" --gpus "$P" --mem "$mem" --bandwidth 25GB/s --micro-batches "$m" \
              --algo "$algo" --json > "$tmp/$algo.json"
          done
          ok=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("yes" if r["best"] else "no")' "$tmp/out.json")
          if [ "$ok" = yes ] || [ "$f" = 0.9 ] || [ "$kind" = fits ]; then
            break
          fi
        done
        python3 - "$tmp/out.json" "$net" "$P" "$m" "$kind" "$mem" "$(python3 -c "print($t1 - $t0)")" "$tmp" >> "$OUT" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
net, P, m, kind, mem, wall, tmp = sys.argv[2:]
res = {x["algo"]: x for x in r["results"]}
for algo in ("uniform", "pipedream"):
    res[algo] = json.load(open("%s/%s.json" % (tmp, algo)))["results"][0]
ex = res["exact"]
bb = [b for b in r["lower_bounds"] if b["name"] == "branch and bound"]
bound = max((b["value"] for b in r["lower_bounds"] if b["value"] is not None), default=None)
by = ""
for b in r["lower_bounds"]:
    if b["value"] is not None and b["value"] == bound:
        by = b["name"]
def ms(x):
    return "%.6f" % x["makespan"] if x["feasible"] else "no fit"
best = res.get(r["best"]) if r["best"] else None
row = [net, P, m, kind, mem,
       r["best"] or "-",
       "%.6f" % best["makespan"] if best else "-",
       "%.6f" % bound if bound is not None else "inf",
       by,
       "%.4f" % (best["makespan"] / bound) if best and bound else "-",
       "yes" if ex.get("optimal") else "no",
       "%.3f" % ex["seconds"], "%.3f" % float(wall),
       ms(res["uniform"]), ms(res["pipedream"]),
       " ".join("%d-%d" % tuple(s) for s in (best or ex).get("stages") or []),
       str(sum(1 for x in (best or {}).get("recompute") or [] if x))]
print("\t".join(str(x) for x in row))
EOF
      done
    done
  done
done

python3 - "$OUT" <<'EOF'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if not l.startswith("#")]
head, rows = rows[0], rows[1:]
ix = {h: i for i, h in enumerate(head)}
def f(v, unit=1e3):
    try:
        return "%.1f" % (float(v) * unit)
    except ValueError:
        return v
print("| network | P | m | budget | M per GPU | best (ms) | bound (ms) | best/bound | plan (s) | uniform (ms) | PipeDream (ms) | parts recomputing |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for r in rows:
    g = lambda k: r[ix[k]]
    mem = "%.2f GiB" % (int(g("mem_bytes")) / 2**30)
    print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        g("net"), g("P"), g("m"), g("budget"), mem, f(g("best_s")), f(g("bound_s")), g("ratio"),
        g("plan_s"), f(g("uniform_s")), f(g("pipedream_s")), g("recompute")))
EOF
