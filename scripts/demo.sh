#!/usr/bin/env bash
# demo.sh is memsched's main job on the embedded default instance (run by `make demo`):
# describe the toy chain of 004 Table 2, certify the rematerialization strategies at 90 MiB
# against the exact optimum, and solve a tiny MILP with both solver backends.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=bin/memsched
$bin version
echo
echo "== the chain (built-in toy chain, 004 Table 2) =="
$bin info
echo
echo "== strategies at a 90 MiB budget, each sequence replayed by the simulator =="
opt=""
printf '%-11s %-9s %-12s %-12s %s\n' algorithm feasible makespan peak "ratio to optimum"
for algo in exhaustive floating persistent revolve sequential store-all; do
  json=$($bin remat --mem 90MiB --algo "$algo" --json)
  python3 - "$algo" "$json" "${opt:-}" <<'PY'
import json, sys
algo, rep, opt = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
if rep["feasible"]:
    ratio = "%.4f" % (rep["makespan"] / float(opt)) if opt else "1 (optimum)"
    print("%-11s %-9s %-12s %-12s %s" % (algo, "yes", "%.2f ms" % (rep["makespan"] * 1e3),
          "%.2f MiB" % (rep["peak_memory"] / 2**20), ratio))
else:
    print("%-11s %-9s %-12s %-12s %s" % (algo, "no", "-", "-", "does not fit"))
PY
  if [ "$algo" = exhaustive ]; then
    opt=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["makespan"])' "$json")
  fi
done
echo
echo "== the optimal sequence (004 §3.2) =="
$bin remat --mem 90MiB --algo floating | grep -E "makespan|peak|sequence"
echo
echo "== makespan-vs-budget frontier (C_MP, one table) =="
$bin remat --mem 108MiB --frontier --slots 1000
echo
echo "== a tiny MILP (testdata/tiny.mps) with both backends =="
for s in highs lpsolve; do
  $bin solve testdata/tiny.mps --solver "$s" | grep -E "solver|status|objective|bound"
done
