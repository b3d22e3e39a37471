#!/usr/bin/env bash
# The measurements of docs/pipeline.md's "Non-contiguous allocations" table: SPEC §7's chain
# (P = 2, m = 4, free links and 1 B/s), GPT-2 with 48 blocks on 4 GPUs and ResNet-152 on 8,
# every algorithm (exact, the baselines, packing, milp, milp-alloc) with the MILPs' bounds.
# Usage: scripts/pipeline-noncontig.sh [OUTDIR]   (needs bin/memsched built with make)
set -euo pipefail
out=${1:-out/pipeline-noncontig}
mkdir -p "$out"
ms=bin/memsched
uptime | tee "$out/load.txt"
python3 - "$out/spec7.json" <<'PY'
import json, sys
st = [{"name": f"s{i+1}", "uf": 1, "ub": 2, "a": 1, "abar": 1, "delta": 0} for i in range(4)]
st.append({"name": "loss", "uf": 0, "ub": 0, "a": 0, "abar": 0, "delta": 0})
json.dump({"format": "memsched.chain/v1", "name": "SPEC 7 chain", "units": {"memory": "B", "time": "s"},
           "input": {"a": 0, "delta": 0}, "stages": st}, open(sys.argv[1], "w"), indent=1)
PY
$ms gen zoo gpt2 --layers 48 --hidden 1600 --heads 25 --batch 1 -o "$out/gpt2.json"
$ms gen zoo resnet --depth 152 --batch 32 -o "$out/r152.json"
run() { name=$1; shift; echo "== $name: $*"; $ms pipeline "$@" --json > "$out/$name.json"; $ms pipeline "$@" | tee "$out/$name.txt"; }
run spec-free --chain "$out/spec7.json" --gpus 2 --mem 1TiB --bandwidth inf --micro-batches 4 --remat none
run spec-1Bps --chain "$out/spec7.json" --gpus 2 --mem 1TiB --bandwidth 1B/s --micro-batches 4 --remat none
run gpt2-p4 --chain "$out/gpt2.json" --gpus 4 --mem 16GiB --bandwidth 25GB/s --micro-batches 8
run r152-p8 --chain "$out/r152.json" --gpus 8 --mem 8GiB --bandwidth 25GB/s --micro-batches 32 --remat none
