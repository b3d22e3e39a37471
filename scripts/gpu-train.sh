#!/usr/bin/env bash
# The GPU rows of docs/torch.md's training section, on one CUDA GPU in about 4 minutes:
#   1. `memsched_torch train` (Scheduled beside plain training, bitwise, 20 iterations, fp16
#      autocast with a GradScaler, every lever the plan picks at the measured link bandwidth);
#   2. the side-by-side table against checkpoint_sequential and torch.compile's
#      activation_memory_budget (memsched_torch.peers) on the same model.
# Works on a bare machine with torch installed system-wide: no .venv, no Go, no transformers or
# torchvision (the model is a TransformerEncoderLayer stack); the memsched binary is carried:
#   here:  CGO_ENABLED=0 go build -o bin/memsched-gpu ./cmd/memsched   (then carry bin/)
#   there: bash scripts/gpu-train.sh            (writes into $OUT, else out/gpu-train)
# Dry run on CPU (small model): bash scripts/gpu-train.sh --cpu
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-out/gpu-train}
mkdir -p "$out"
py=${PYTHON:-python3}
export PYTHONPATH=$PWD/python MEMSCHED_BIN=${MEMSCHED_BIN:-$PWD/bin/memsched-gpu}
[ -x "$MEMSCHED_BIN" ] || MEMSCHED_BIN=$PWD/bin/memsched
export MEMSCHED_TORCH_CACHE=$out/plan-cache
# per-command limits (seconds): the GPU run fits ~4 minutes in all; the CPU dry run is slow
if [ "${1:-}" = --cpu ]; then
	dev=cpu model=(--model transformer --layers 4 --hidden 64 --heads 4 --seq 32 --batch 4) it=3 amp=()
	t_train=${T_TRAIN:-600} t_peers=${T_PEERS:-900}
else
	dev=cuda model=(--model transformer --layers 12 --hidden 1024 --heads 16 --seq 512 --batch 8) it=20 amp=(--amp)
	t_train=${T_TRAIN:-40} t_peers=${T_PEERS:-100}
fi
"$py" -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else '')" | tee "$out/env.txt"
"$MEMSCHED_BIN" version | tee -a "$out/env.txt"
bw=$("$py" -c "
import torch
if torch.cuda.is_available():
    from memsched_torch.offload import measure_bandwidth
    r = measure_bandwidth('cuda'); print(f\"{min(r['h2d'], r['d2h']):.0f}B/s\")
else:
    print('1GB/s')")
echo "link: $bw" | tee -a "$out/env.txt"
# lever:optimizer:budget (act-offload's smallest budget is 001's: above half the store-all peak here)
for run in remat:sgd:0.5 remat:adam:0.5 act-offload:adam:0.75 remat-offload:adam:0.5; do
	IFS=: read -r lever opt frac <<<"$run"
	{
		timeout "$t_train" "$py" -m memsched_torch train --device "$dev" "${model[@]}" --iterations "$it" --optimizer "$opt" \
			--mem-fraction "$frac" --bandwidth "$bw" --lever "$lever" "${amp[@]}" --json >"$out/train-$lever-$opt.json" \
			2>"$out/train-$lever-$opt.err"
		echo "train $lever $opt: exit $? $(tail -c 300 "$out/train-$lever-$opt.err" | tr '\n' ' ')"
	}
done
# rows are written as they complete (--out): a timeout keeps the finished ones; torch.compile last
timeout "$t_peers" "$py" -m memsched_torch.peers --device "$dev" "${model[@]}" --iterations 5 --repeat 3 --compile-budgets 0.5 \
	--out "$out/peers.json" >/dev/null 2>"$out/peers.err"
echo "peers: exit $?"
"$py" - "$out" <<'PY'
import json, sys, glob, os
for f in sorted(glob.glob(os.path.join(sys.argv[1], "train-*.json"))):
    try:
        r = json.load(open(f))
    except Exception as e:
        print(os.path.basename(f), "no report", e); continue
    mp = r["measured_peaks"]
    print(os.path.basename(f), r["lever"], r["strategy"], "budget", r["budget"], "predicted", r["predicted_peak"],
          "measured", min(mp), max(mp), "plain", max(r["plain_measured_peaks"]), "params", r["params_match"],
          "losses", r["losses_match"], "it/s", {k: round(v, 2) for k, v in r["iterations_per_s"].items()})
try:
    from memsched_torch.peers import print_table
    print_table(json.load(open(os.path.join(sys.argv[1], "peers.json"))))
except Exception as e:
    print("peers: no table", e)
PY
