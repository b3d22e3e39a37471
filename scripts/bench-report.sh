#!/usr/bin/env bash
# bench-report.sh: reports that take longer than tests should (run by `make bench`):
# the replica of 002 Table 1 (weight offloading, HiGHS with a per-row time limit), of 001
# Fig. 5 (activation offloading) and 003's claims (rematerialization and offloading together).
set -euo pipefail
cd "$(dirname "$0")/.."
# The same cgo settings as the Makefile, so that the script also runs on its own.
export PKG_CONFIG_PATH="${PKG_CONFIG_PATH:-$PWD/.deps/pkgconfig}"
export CGO_CFLAGS="${CGO_CFLAGS:--I/usr/include/lpsolve}"
export CGO_LDFLAGS="${CGO_LDFLAGS:--llpsolve55 -lcolamd -ldl -lm}"
MEMSCHED_TABLE1_REPORT=1 MEMSCHED_TABLE1_LIMIT="${MEMSCHED_TABLE1_LIMIT:-10}" \
  go test -tags "highs lpsolve" -count=1 -run TestTable1Report -v ./instances/zoo/ | grep -vE '^(=== RUN|--- PASS|PASS|ok )'
# The replica of 001 Fig. 5 (activation offloading on the zoo, ~1 min): table and SVG plots in out/.
mkdir -p out
MEMSCHED_ACTZOO_REPORT=1 MEMSCHED_ACTZOO_OUT="$PWD/out/act-offload-zoo.tsv" \
  go test -count=1 -run TestActZooReport -v ./dp/ | grep -vE '^(=== RUN|--- PASS|PASS|ok )'
go run ./tools/actzooplot out/act-offload-zoo.tsv out/act-offload-zoo-prop3.svg
go run ./tools/actzooplot -bound best out/act-offload-zoo.tsv out/act-offload-zoo-best.svg
# 003's claims on the zoo (rematerialization and activation offloading together; tens of
# minutes): table, per-budget points and the plot in out/.
MEMSCHED_COMBINED_ZOO=1 MEMSCHED_COMBINED_ZOO_OUT="$PWD/out/remat-offload-zoo.tsv" \
  go test -count=1 -timeout 4h -run TestCombinedZooClaims -v ./report/ | grep -vE '^(=== RUN|--- PASS|PASS|ok )'
go run ./tools/combinedzooplot out/remat-offload-zoo-points.tsv out/remat-offload-zoo.svg
# Issue 21's table: activation offloading before and after the exact MILP, and the combined
# lever's relaxation, on the zoo at five budgets (60 s per MILP; about two hours on two cores).
MEMSCHED_ACTZOO_TABLE=1 MEMSCHED_ACTZOO_TABLE_OUT="$PWD/out/act-milp-zoo.tsv" \
  go test -tags "highs lpsolve" -count=1 -timeout 600m -run TestActZooTable -v ./report/ | grep -vE '^(=== RUN|--- PASS|PASS|ok )'
go run ./tools/actzooplot out/act-milp-zoo.tsv out/act-milp-zoo.svg
# The full exactness sweeps (minutes each).
MEMSCHED_ACTMILP_FULL=1 go test -tags "highs lpsolve" -count=1 -run TestMILPEqualsExact -v ./milp/actmilp/ | grep -vE '^(=== RUN|--- PASS|PASS|ok )'
MEMSCHED_COMBINEDLB_FULL=1 go test -tags "highs lpsolve" -count=1 -run TestBelowEverySchedule -v ./milp/combinedlb/ | grep -vE '^(=== RUN|--- PASS|PASS|ok )'
# Issue 30's zoo table (pipelined model parallelism: 60 points through the binary, minutes):
# out/pipeline-zoo.tsv, to compare with docs/pipeline-zoo.tsv.
bash scripts/pipeline-zoo.sh out/pipeline-zoo.tsv
# Issue 31: the combined lever's soundness on 2000 tiny chains at byte and GiB scale (the link
# credit and every strategy against the exhaustive search of strict schedules; tens of minutes).
MEMSCHED_COMBINED_SOUNDNESS=1 go test -count=1 -timeout 4h -run TestSoundness -v ./lever/rematoffload/ | grep -vE '^(=== RUN|--- PASS|PASS|ok )'
