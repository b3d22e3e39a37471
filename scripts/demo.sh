#!/usr/bin/env bash
# demo.sh is memsched's main job on the embedded default instance (run by `make demo`):
# describe the toy chain of 004 Table 2, certify every rematerialization strategy at 90 MiB
# against the proven optimum, show the time-vs-memory frontier, compare the weight-offloading
# algorithms on a generated 36-block GPT-2 against the certified MILP bound (002), and solve a
# tiny MILP with both solver backends.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=bin/memsched
$bin version
echo
echo "== the chain (built-in toy chain, 004 Table 2) =="
$bin info
echo
echo "== certify: every strategy at 90 MiB against the optimum =="
$bin certify --mem 90MiB
echo
echo "== the optimal sequence (004 §3.2) =="
$bin remat --mem 90MiB --algo floating | grep -E "makespan|peak|sequence"
echo
echo "== makespan-vs-budget frontier (C_MP, one table) =="
$bin remat --mem 108MiB --frontier --slots 1000
echo
echo "== weight offloading (002): 36-block GPT-2, fp16, 6 GiB, 12 GB/s; every algorithm vs the bound =="
mkdir -p out
$bin gen zoo gpt2 --hidden 3072 --heads 24 --layers 36 --seq 1024 --batch 16 --dtype fp16 -o out/demo-gpt2.json 2>/dev/null
$bin offload-weights --chain out/demo-gpt2.json --mem 6GiB --bandwidth 12GB/s --algo all --bound --time-limit 30
echo
echo "== a tiny MILP (testdata/tiny.mps) with both backends =="
for s in highs lpsolve; do
  $bin solve testdata/tiny.mps --solver "$s" | grep -E "solver|status|objective|bound"
done
