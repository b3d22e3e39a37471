#!/usr/bin/env bash
# bench-report.sh: reports that take longer than tests should (run by `make bench`):
# the replica of 002 Table 1 (weight offloading, HiGHS with a per-row time limit).
set -euo pipefail
cd "$(dirname "$0")/.."
MEMSCHED_TABLE1_REPORT=1 MEMSCHED_TABLE1_LIMIT="${MEMSCHED_TABLE1_LIMIT:-10}" \
  go test -tags "highs lpsolve" -count=1 -run TestTable1Report -v ./instances/zoo/ | grep -vE '^(=== RUN|--- PASS|PASS|ok )'
