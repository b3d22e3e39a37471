#!/usr/bin/env bash
# combined-credit.sh (not in CI; about 20 minutes): the link credit alone re-measured at every
# point of issue 31's zoo table (docs/combined-zoo.tsv), as certify runs it, with each point's
# best verified schedule as its upper end (report.TestCombinedZooCredit): what a change to the
# bound moves without running the strategies again. Rows in out/combined-credit.tsv.
#   nice scripts/combined-credit.sh
# Environment: COMBINED_ZOO_SECONDS (default 60), COMBINED_TABLE (default docs/combined-zoo.tsv).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${MEMSCHED:-bin/memsched}
OUT=out/combined-zoo
mkdir -p "$OUT"
[ -x "$BIN" ] || go build -tags "${TAGS:-highs lpsolve}" -o "$BIN" ./cmd/memsched
source scripts/zoo-chains.sh # GEN: the chains and their `gen zoo` arguments
for name in "${!GEN[@]}"; do
  f=$OUT/$name.json
  [ -f "$f" ] || "$BIN" gen zoo ${GEN[$name]} -o "$f" 2>/dev/null
done
go test -tags "${TAGS:-highs lpsolve}" -c -o "$OUT/report.test" ./report/
MEMSCHED_COMBINED_TABLE_DIR=$OUT MEMSCHED_COMBINED_TABLE_OUT=${COMBINED_TABLE:-docs/combined-zoo.tsv} \
  MEMSCHED_COMBINED_CREDIT_OUT=out/combined-credit.tsv MEMSCHED_COMBINED_TABLE_SECONDS=${COMBINED_ZOO_SECONDS:-60} \
  "$OUT/report.test" -test.run 'TestCombinedZooCredit$' -test.timeout 4h -test.v | grep -v '^=== ' || exit 1
echo "wrote out/combined-credit.tsv"
