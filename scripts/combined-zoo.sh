#!/usr/bin/env bash
# combined-zoo.sh (not in CI; over an hour): issue 31's zoo table of docs/remat-offload.md —
# the combined lever (rematerialization and offloading together) on ResNet-50/101/152,
# Inception v3, VGG-19, GPT-2 (12 blocks), BERT (24 blocks), DenseNet-121 and -201
# (`memsched gen zoo` defaults), at 10/25/50/75 % of the way from the smallest budget
# rematerialization fits to the store-all peak, at 12 and 6 GB/s, the remat and act-offload
# levers first (20 s each), then the combined lever for COMBINED_ZOO_SECONDS (default 60) per
# point (report.TestCombinedZooTable). Rows in out/combined-zoo.tsv, the load average before
# and after each chain in out/combined-zoo.load. Run it niced on a shared machine:
#   nice scripts/combined-zoo.sh
# Environment: COMBINED_ZOO_CHAINS (names below, default all), COMBINED_ZOO_PCTS ("10 25 50 75"),
# COMBINED_ZOO_BETAS (GB/s, "12 6"),
# COMBINED_ZOO_OUT (the rows' file, default out/combined-zoo.tsv; the gaps go beside it, -gaps.tsv).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${MEMSCHED:-bin/memsched}
OUT=out/combined-zoo
mkdir -p "$OUT"
[ -x "$BIN" ] || go build -tags "${TAGS:-highs lpsolve}" -o "$BIN" ./cmd/memsched
source scripts/zoo-chains.sh # GEN: the chains and their `gen zoo` arguments
CHAINS=${COMBINED_ZOO_CHAINS:-resnet50 resnet101 resnet152 inception3 vgg19 gpt2-12 bert-24 densenet121 densenet201}
TSV=${COMBINED_ZOO_OUT:-out/combined-zoo.tsv}
LOAD=${TSV%.tsv}.load
GAPS=${TSV%.tsv}-gaps.tsv
printf 'chain\tstages\tbeta_GBps\tpct\tbudget_B\tsum_u_ms\tremat_ms\tact_ms\tact_maps\tcombined_ms\tcombined_by\tbound_ms\tbound_by\tratio\tproven\tlink_credit_ms\tmilp_ms\tseconds\n' >"$TSV"
: >"$LOAD"
go test -tags "${TAGS:-highs lpsolve}" -c -o "$OUT/report.test" ./report/
for name in $CHAINS; do
  f=$OUT/$name.json
  [ -f "$f" ] || "$BIN" gen zoo ${GEN[$name]} -o "$f" 2>/dev/null
  echo "$name before: $(cat /proc/loadavg)" >>"$LOAD"
  MEMSCHED_COMBINED_TABLE_DIR=$OUT MEMSCHED_COMBINED_TABLE_CHAINS=$name MEMSCHED_COMBINED_TABLE_OUT=$TSV \
    MEMSCHED_COMBINED_TABLE_SECONDS=${COMBINED_ZOO_SECONDS:-60} MEMSCHED_COMBINED_TABLE_PCTS="${COMBINED_ZOO_PCTS:-10 25 50 75}" \
    MEMSCHED_COMBINED_TABLE_BETAS="${COMBINED_ZOO_BETAS:-12 6}" \
    "$OUT/report.test" -test.run 'TestCombinedZooTable$' -test.timeout 4h -test.v | grep -v '^=== ' || exit 1
  echo "$name after: $(cat /proc/loadavg)" >>"$LOAD"
done
# Why each open point is open: the link credit's own sequence, scheduled ($GAPS).
MEMSCHED_COMBINED_TABLE_DIR=$OUT MEMSCHED_COMBINED_TABLE_OUT=$TSV MEMSCHED_COMBINED_GAPS_OUT=$GAPS \
  "$OUT/report.test" -test.run 'TestCombinedZooGaps$' -test.timeout 4h -test.v | grep -v '^=== ' || exit 1
echo "wrote $TSV ($LOAD: load averages) and $GAPS"
# The markdown of docs/remat-offload.md's table, counts and reasons.
python3 scripts/combined_zoo_table.py "$TSV" "$GAPS"
