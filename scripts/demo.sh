#!/usr/bin/env bash
# demo.sh is memsched's main job (run by `make demo`), on instances memsched builds itself:
#   1. certify ResNet-101 (224×224, batch 32, fp32, V100 profile) under 2 GiB at 12 GB/s:
#      every strategy of every lever against the best certified lower bound;
#   2. certify a 36-block GPT-2 (hidden 3072, seq 1024, batch 16, fp16) on a 16 GiB GPU at 12 GB/s
#      with its 7.89 GiB of weights resident (--weights-resident: every lever on the same GPU);
#   3. sweep ResNet-101 from 1 GiB to 4 GiB (25 budgets): CSV, JSON and the ratio/throughput
#      plots (SVG and PNG) under out/.
# Everything it prints was replayed by an independent validator; the bounds say what certifies
# them (docs/certify.md). About 10 s on a 2-core machine once built.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=bin/memsched
out=out
mkdir -p "$out"
start=$EPOCHREALTIME
$bin version
echo
$bin gen zoo resnet --depth 101 --image 224 --batch 32 -o "$out/resnet101.json" 2>/dev/null
$bin gen zoo gpt2 --hidden 3072 --heads 24 --layers 36 --seq 1024 --batch 16 --dtype fp16 -o "$out/gpt2.json" 2>/dev/null

echo "######## 1. ResNet-101 (224, batch 32) — 2 GiB, 12 GB/s ########"
$bin certify --chain "$out/resnet101.json" --mem 2GiB --bandwidth 12GB/s --time-limit 20 --quiet
echo
echo "######## 2. GPT-2, 36 blocks (seq 1024, batch 16, fp16) — a 16 GiB GPU, weights resident, 12 GB/s ########"
$bin certify --chain "$out/gpt2.json" --mem 16GiB --weights-resident --bandwidth 12GB/s --time-limit 20 --quiet
echo
echo "######## 3. ResNet-101 across budgets: 1 GiB → 4 GiB, 25 points ########"
$bin sweep --chain "$out/resnet101.json" --from 1GiB --to 4GiB --steps 25 --bandwidth 12GB/s -o "$out" --quiet |
  sed -n '/== remat/,/^$/p'
echo "(act-offload and weight-offload tables: $out/sweep.csv)"
echo
printf 'demo: %.1f s; plots: %s/ratio.png %s/throughput.png (and .svg), data: %s/sweep.csv %s/sweep.json\n' \
  "$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')" "$out" "$out" "$out" "$out"
