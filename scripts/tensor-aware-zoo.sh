#!/usr/bin/env bash
# tensor-aware-zoo.sh (not in CI; about 20 minutes for the small chains, then 10–20 s a zoo
# point): where issue 31's link credit is loose (docs/remat-offload.md, "Which side the CNNs'
# gap is on"). Runs lever/rematoffload's tensor-aware measurements:
#   - TestTensorAwareTiny: 400 random tiny chains, the tensor-aware relaxation and the link
#     credit against the exact optimum;
#   - TestZooShapedChains: the zoo's networks cut into 5 stages and the loss, rounded to tiny
#     chains, the lever's best, the link credit and the relaxation against the exact optimum;
#   - TestTensorAwareZooPoint at every point of docs/combined-zoo-current.tsv not proven
#     optimal (scripts/combined_zoo_current.py: the table as it stands, each point's latest
#     run): the link credit's own best sequences, each with its tensor-aware value below the
#     point's best schedule (3–25 s a point, DenseNet-201's included). Rows in
#     out/tensor-aware-zoo.tsv (docs/tensor-aware-zoo.tsv).
# Environment: TENSOR_AWARE_SKIP_TINY=1 skips the first two. Run it niced on a shared machine.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${MEMSCHED:-bin/memsched}
OUT=out/combined-zoo
mkdir -p "$OUT"
[ -x "$BIN" ] || go build -tags "${TAGS:-highs lpsolve}" -o "$BIN" ./cmd/memsched
source scripts/zoo-chains.sh # GEN: the chains and their `gen zoo` arguments
go test -tags "${TAGS:-highs lpsolve}" -c -o "$OUT/rematoffload.test" ./lever/rematoffload/
export MEMSCHED_COMBINED_TENSOR_AWARE=1
if [ -z "${TENSOR_AWARE_SKIP_TINY:-}" ]; then
  "$OUT/rematoffload.test" -test.run 'TestTensorAwareTiny$|TestZooShapedChains$' -test.timeout 4h -test.v | grep -v '^=== '
fi
TSV=out/tensor-aware-zoo.tsv
printf 'chain\tbeta_GBps\tpct\tbudget_B\tcombined_ms\tfluid_credit_ms\tsequences\tleast_tensor_aware_ms\n' >"$TSV"
# The open points: chain, β, pct, budget, best schedule (ms).
awk -F'\t' 'NR > 1 && $10 == "false" {print $1, $2, $3, $4, $5}' docs/combined-zoo-current.tsv |
  while read -r name gbps pct budget best; do
    f=$OUT/$name.json
    [ -f "$f" ] || "$BIN" gen zoo ${GEN[$name]} -o "$f" 2>/dev/null
    upper=$(python3 -c "print($best / 1000)")
    line=$(MEMSCHED_TENSOR_AWARE_POINT="$f $budget $gbps $upper" "$OUT/rematoffload.test" \
      -test.run 'TestTensorAwareZooPoint$' -test.timeout 1h -test.v | grep 'RESULT' || true)
    [ -n "$line" ] || { echo "$name $gbps GB/s $pct %: no result" >&2; exit 1; }
    eval "$(echo "$line" | sed 's/.*RESULT //')" # fluid_credit_ms, sequences, least_tensor_aware_ms, upper_ms
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$gbps" "$pct" "$budget" "$best" "$fluid_credit_ms" "$sequences" "$least_tensor_aware_ms" | tee -a "$TSV"
  done
echo "wrote $TSV"
