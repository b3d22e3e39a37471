#!/usr/bin/env bash
# certify-long.sh (not in CI; minutes): issue 23's table of docs/certify.md — `memsched certify`
# on the long zoo chains at 25/50/75 % of the way from the smallest feasible budget to the
# store-all peak, one process per point under /usr/bin/time -v, and per point the remat lever's
# best schedule, best certified bound and what certifies it, the ratio, wall time, CPU time and
# maximum resident memory. Points must be proven (ratio ≤ 1.001) within 60 s and 4 GB.
# Environment: CERTIFY_LONG_CHAINS (names below, default all), CERTIFY_LONG_PCTS ("25 50 75"),
# MEMSCHED (binary, default bin/memsched). Report in out/certify-long.tsv.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${MEMSCHED:-bin/memsched}
OUT=out/certify-long
mkdir -p "$OUT"
declare -A GEN=(
  [densenet201]="densenet --depth 201"
  [resnet200]="resnet --depth 200"
  [resnet1001-32]="resnet --depth 1001 --image 32"
  [gpt2-48]="gpt2 --hidden 1600 --heads 25 --layers 48"
  [gpt2-96]="gpt2 --hidden 1600 --heads 25 --layers 96"
)
CHAINS=${CERTIFY_LONG_CHAINS:-densenet201 resnet200 resnet1001-32 gpt2-48 gpt2-96}
TSV=out/certify-long.tsv
printf 'chain\tstages\tpct\tbudget_B\tbest\tbest_ms\tbound_ms\tbound_by\tratio\twall_s\tcpu_s\tmax_rss_MiB\n' >"$TSV"
fail=0
for name in $CHAINS; do
  f=$OUT/$name.json
  [ -f "$f" ] || "$BIN" gen zoo ${GEN[$name]} -o "$f" 2>/dev/null
  read -r lo hi n < <("$BIN" info --chain "$f" --json | python3 -c \
    'import json,sys; d=json.load(sys.stdin); print(d["min_budget"], d["store_all_peak"], d["stages"])')
  for pct in ${CERTIFY_LONG_PCTS:-25 50 75}; do
    budget=$(( lo + (hi - lo) * pct / 100 ))
    /usr/bin/time -v -o "$OUT/time.txt" "$BIN" certify --chain "$f" --mem "$budget" --json -q >"$OUT/cert.json"
    python3 - "$name" "$n" "$pct" "$budget" "$OUT/cert.json" "$OUT/time.txt" >>"$TSV" <<'EOF' || fail=1
import json, re, sys
name, n, pct, budget, cert, tim = sys.argv[1:]
r = json.load(open(cert))["levers"]["remat"]
t = open(tim).read()
def field(key):
    return re.search(re.escape(key) + r": (.*)", t).group(1).strip()
m, s = field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":")[-2:]
wall = 60 * float(m) + float(s)
cpu = float(field("User time (seconds)")) + float(field("System time (seconds)"))
rss = int(field("Maximum resident set size (kbytes)")) / 1024
ratio = r["best_makespan"] / r["best_bound"]
print(f'{name}\t{n}\t{pct}\t{budget}\t{r["best"]}\t{1e3 * r["best_makespan"]:.3f}\t{1e3 * r["best_bound"]:.3f}\t'
      f'{r["best_bound_by"]}\t{ratio:.4f}\t{wall:.1f}\t{cpu:.1f}\t{rss:.0f}')
sys.exit(0 if ratio <= 1.001 and wall <= 60 and rss <= 4096 else 1)
EOF
    tail -1 "$TSV"
  done
done
column -t -s $'\t' "$TSV"
[ "$fail" = 0 ] && echo "certify-long: every point proven within 60 s and 4 GB" || echo "certify-long: some point missed (ratio > 1.001, > 60 s or > 4 GB)"
exit $fail
