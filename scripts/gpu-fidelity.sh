#!/usr/bin/env bash
# gpu-fidelity.sh: the whole GPU check of memsched_torch in one command (docs/torch.md, "GPU run"):
#   1. the device: nvidia-smi, torch, CUDA, cuDNN;
#   2. python -m memsched_torch.fidelity --device cuda --offload --combined: profile each model
#      on the GPU, remat rows (certify's fastest), act-offload rows (memsched offload-act at the
#      pinned copy bandwidth measured first, executed with real copies on a side stream) and one
#      remat-offload row per model; predicted against measured (storage tracker and allocator)
#      peak and time, forward counts, gradients against plain training;
#   3. the pytest suite with MEMSCHED_TEST_DEVICE=cuda (every step's memory, gradients bitwise);
#   4. `python -m memsched_torch plan --device cuda`, the one-command path, on a remat and an
#      act-offload budget (plan-*.json).
# Everything goes to $OUT (log, fidelity-gpu.json, pytest-cuda.xml), written as it goes so a run
# cut short keeps what it measured. The device has no Go and no venv: a pure-Go memsched is built
# beforehand and carried (.gpu/memsched: CGO_ENABLED=0 GOEXPERIMENT=simd go build -o
# .gpu/memsched ./cmd/memsched), and python3 there has torch.
#
#   scripts/gpu-fidelity.sh          # on the GPU machine
#   scripts/gpu-fidelity.sh --cpu    # dry run here: tiny models, CPU, a made-up bandwidth
#
# Time limits per part (seconds) can be set with FIDELITY_S, PYTEST_S and PLAN_S; PARTS picks
# the parts (default "fidelity pytest plan"; the device is always described).
set -uo pipefail
cd "$(dirname "$0")/.."
cpu=0
[ "${1:-}" = "--cpu" ] && cpu=1
OUT=${OUT:-out/gpu-fidelity}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
# cuBLAS reads it at its initialisation: bitwise-reproducible matrix products (fidelity sets it too).
export CUBLAS_WORKSPACE_CONFIG=:4096:8
if [ -x .gpu/memsched ]; then
  export MEMSCHED_BIN=${MEMSCHED_BIN:-$PWD/.gpu/memsched}
fi
if [ $cpu = 1 ]; then
  py=${PY:-.venv/bin/python}
  dev=cpu
  extra=(--preset tiny --bandwidth 0.05GB/s --runs 1)
else
  py=${PY:-python3}
  dev=cuda
  extra=(--runs 5)
fi
{
  echo "== device ($(date -u +%FT%TZ))"
  if [ $cpu = 0 ]; then
    nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.current,pcie.link.width.current \
      --format=csv || true
  fi
  $py -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda,
"cudnn", torch.backends.cudnn.version(), "gpu", torch.cuda.get_device_name(0) if torch.cuda.is_available() else None)'
  echo "memsched: ${MEMSCHED_BIN:-bin/memsched}"
  parts=" ${PARTS:-fidelity pytest plan} "
  if [[ $parts == *" fidelity "* ]]; then
    echo
    echo "== fidelity ($dev)"
    start=$SECONDS
    timeout "${FIDELITY_S:-240}" $py -m memsched_torch.fidelity --device $dev --offload --combined "${extra[@]}" \
      -o "$OUT/fidelity-$dev.json"
    echo "fidelity: exit $? after $((SECONDS - start)) s"
  fi
  if [[ $parts == *" pytest "* ]]; then
    echo
    echo "== pytest, MEMSCHED_TEST_DEVICE=$dev"
    start=$SECONDS
    MEMSCHED_TEST_DEVICE=$dev timeout "${PYTEST_S:-120}" $py -m pytest -q -rfE --tb=short -p no:cacheprovider \
      --junitxml="$OUT/pytest-$dev.xml" python/tests
    echo "pytest: exit $? after $((SECONDS - start)) s"
  fi
  if [[ $parts == *" plan "* ]]; then
    if [ $cpu = 1 ]; then
      model=(--model resnet18 --batch 2 --image 32 --runs 1); bw=0.05GB/s; frac=0.9
    else
      model=(--model resnet50 --batch 64 --image 224 --runs 5); bw=${PLAN_BANDWIDTH:-54GB/s}; frac=0.6
    fi
    for lever in remat act-offload; do
      echo
      echo "== plan --device $dev --lever $lever"
      start=$SECONDS
      timeout "${PLAN_S:-60}" $py -m memsched_torch plan --device $dev "${model[@]}" --mem-fraction $frac \
        --bandwidth $bw --lever $lever --time-limit 10 --json > "$OUT/plan-$lever.json"
      echo "plan: exit $? after $((SECONDS - start)) s"
      timeout 60 $py -m memsched_torch plan --device $dev "${model[@]}" --mem-fraction $frac --bandwidth $bw \
        --lever $lever --time-limit 10
    done
  fi
} 2>&1 | tee "$OUT/log"
