#!/usr/bin/env bash
# pipeline-cpu.sh: issue 30's "executor on CPU" table (docs/torch.md, "Pipelined execution"):
# `python -m memsched_torch pipeline` on a 12-layer transformer and ResNet-18, 2 and 4 processes
# (gloo), m = 2P, both schedules, with and without recomputation inside the stages. Per run: the
# runtime that ran, whether the gradients equal one-process training (bitwise), and per rank the
# measured peak against memsched's prediction (total, and without the parameters on both sides).
#
#   scripts/pipeline-cpu.sh              # the whole matrix (about 20 minutes on 2 free cores)
#   FREE=eager scripts/pipeline-cpu.sh   # autograd frees as it goes (PyTorch's own way)
#   ONLY=transformer PS="2" scripts/pipeline-cpu.sh
#
# Budgets (--mem-fraction: of the store-all floor, the least memory per GPU at which memsched stores
# everything on ≤ P GPUs): 1.0 with --remat none; with --remat stage 0.5 (transformer) and 0.9
# (ResNet-18, whose weights decide its floor: no plan fits below 0.80 of it on 2 GPUs), where every
# plan must recompute inside some part.
# Output: $OUT/pipeline-cpu.jsonl (one JSON report per run) and the table.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out/pipeline-cpu}
mkdir -p "$OUT"
py=${PY:-.venv/bin/python}
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
export MEMSCHED_BIN=${MEMSCHED_BIN:-$PWD/bin/memsched}
free=${FREE:-model}
jsonl="$OUT/pipeline-cpu-$free.jsonl"
: > "$jsonl"
echo "# $(date -u +%FT%TZ), load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores, --free $free"
for name in ${ONLY:-transformer resnet18}; do
  case $name in
    transformer) model=(--model transformer --layers 12 --hidden 256 --heads 4 --seq 64 --batch 4); rf=0.5 ;;
    resnet18) model=(--model resnet18 --image 128 --batch 4); rf=0.9 ;;
  esac
  for P in ${PS:-2 4}; do
    for sch in 1f1b gpipe; do
      for remat in none stage; do
        frac=1.0
        [ $remat = stage ] && frac=${REMAT_FRACTION:-$rf}
        $py -m memsched_torch pipeline "${model[@]}" --gpus "$P" --micro-batches $((2 * P)) --schedule $sch \
          --remat $remat --mem-fraction "$frac" --free "$free" --runs 1 --time-limit 60 --json \
          > "$OUT/run.json" 2> "$OUT/run.err"
        rc=$?
        if [ $rc -ne 0 ] && [ ! -s "$OUT/run.json" ]; then
          echo "$name P=$P $sch remat=$remat: exit $rc: $(tail -1 "$OUT/run.err")"
          continue
        fi
        tr -d '\n' < "$OUT/run.json" >> "$jsonl"
        echo >> "$jsonl"
        $py - "$OUT/run.json" "$name" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
g = "bitwise" if r["grads_bitwise"] else ("within 1e-6" if r["grads_match"] else "DIFFER")
head = f"{sys.argv[2]} P={r['gpus']} m={r['micro_batches']} {r['schedule']} remat={r['remat']}"
print(f"{head:<34} {r['algo']:<10} {r['runtime']:<5} grads {g:<8} makespan {r['predicted_makespan'] * 1e3:8.1f} ms "
      f"predicted, {r['measured_makespan'] * 1e3:8.1f} ms measured")
for k in r["ranks"]:
    act = k["measured_activations"] / k["predicted_activations"] - 1 if k["predicted_activations"] else 0
    print(f"    rank {k['rank']} stages {k['stages'][0]:>2}–{k['stages'][1]:<2} predicted {k['predicted_peak'] / 2**20:8.2f} MiB "
          f"measured {k['measured_peak'] / 2**20:8.2f} MiB {100 * k['error']:+6.1f} % "
          f"(without parameters {100 * act:+6.1f} %) at {k['peak_step']}")
EOF
      done
    done
  done
done
echo "# done $(date -u +%FT%TZ), load: $(cut -d' ' -f1-3 /proc/loadavg)"
