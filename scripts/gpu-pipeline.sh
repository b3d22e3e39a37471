#!/usr/bin/env bash
# gpu-pipeline.sh: memsched's pipeline plans measured on ONE GPU, one rank at a time (issue 30's
# GPU item; docs/torch.md, "Pipelined execution", and docs/pipeline.md).
#
# With one GPU the pipeline cannot run, but each of its ranks can: its part of the model, its
# actions in the schedule's order (1F1B or GPipe), a receive replaced by a fresh buffer of the
# right size, a send dropped. For every plan in docs/pipeline-plans.json (memsched pipeline's
# plans for a 12-layer transformer and ResNet-18, P = 2 and 4, m = 2P, both schedules, with and
# without recomputation inside the stages) it prints one row per rank: the predicted peak (SPEC
# §7's replay on the chain profiled on this GPU: memsched's rules, o_f/o_b with the allocator's
# workspaces) against the CUDA allocator's measured peak (parameters and inputs counted,
# parameter gradients counted from their second accumulation on, as the model does).
#
# The device needs python3 with torch (torchvision for ResNet-18: without it those rows say
# "skipped"); no venv, no Go, no memsched binary (the plans are in the repository, made with
# `python -m memsched_torch.pipesolo --make-plans docs/pipeline-plans.json`). It takes about a
# minute on an H100 (one profile per model and m; 16 plans, 48 ranks); SOLO_S caps it (240 s).
#
#   scripts/gpu-pipeline.sh          # on the GPU machine
#   scripts/gpu-pipeline.sh --cpu    # dry run here: the same plans at small sizes on the CPU
#
# Output: the table on stdout and in $OUT/log, the rows in $OUT/pipeline-solo.json.
set -uo pipefail
cd "$(dirname "$0")/.."
cpu=0
[ "${1:-}" = "--cpu" ] && cpu=1
OUT=${OUT:-out/gpu-pipeline}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
# cuBLAS reads it at its initialisation (the deterministic settings memsched_torch uses on CUDA).
export CUBLAS_WORKSPACE_CONFIG=:4096:8
if [ $cpu = 1 ]; then
  py=${PY:-.venv/bin/python}
  args=(--device cpu --small)
else
  py=${PY:-python3}
  args=(--device cuda)
fi
{
  echo "== device ($(date -u +%FT%TZ))"
  if [ $cpu = 0 ]; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || true
  fi
  $py -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda,
"gpu", torch.cuda.get_device_name(0) if torch.cuda.is_available() else None)'
  echo
  echo "== each rank alone (${args[*]})"
  start=$SECONDS
  timeout "${SOLO_S:-240}" $py -m memsched_torch.pipesolo --plans docs/pipeline-plans.json "${args[@]}" \
    --json "$OUT/pipeline-solo.json"
  echo "pipesolo: exit $? after $((SECONDS - start)) s"
} 2>&1 | tee "$OUT/log"
