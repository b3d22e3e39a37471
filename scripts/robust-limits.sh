#!/usr/bin/env bash
# robust-limits.sh — the figures of issue 18's items 3 and 4 (resource guards, --time-limit
# as a whole-command budget), measured side by side in one run:
#   - GPT-2 with 300 blocks: `bound --time-limit 5` and `certify --time-limit 5` (must end
#     within 6.5 s: 10 % + 1 s);
#   - GPT-2 with 1000 blocks: `bound --time-limit 20`, and `certify` with the defaults (target
#     ≤ 60 s and ≤ 4 GB), wall time and peak RSS;
#   - GPT-2 with 10 000 blocks: `remat --algo persistent|revolve` (a clear answer in seconds).
#
#   scripts/robust-limits.sh [RUNS] [BINARY]      (default 3 runs of bin/memsched)
#
# Prints one line per run: command, wall seconds, peak RSS, exit status. The machine's load
# average is printed first: on a shared machine the wall times move with it.
set -euo pipefail
runs=${1:-3}
bin=${2:-bin/memsched}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for n in 300 1000 10000; do
	"$bin" gen zoo gpt2 --layers "$n" -o "$tmp/g$n.json" 2>/dev/null
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
measure() {
	local label=$1
	shift
	for ((i = 0; i < runs; i++)); do
		set +e
		/usr/bin/time -f "TIME %e %M" -o "$tmp/t" "$bin" "$@" -q >"$tmp/out" 2>"$tmp/err"
		rc=$?
		set -e
		read -r _ wall rss < <(grep '^TIME' "$tmp/t")
		printf '%-58s %7.2f s %8.0f MB  exit %d\n' "$label" "$wall" "$((rss / 1024))" "$rc"
	done
}
measure "gpt2-300 bound --mem 32GiB --bw 12GB/s --time-limit 5" bound --chain "$tmp/g300.json" --mem 32GiB --bandwidth 12GB/s --time-limit 5
measure "gpt2-300 certify --mem 32GiB --bw 12GB/s --time-limit 5" certify --chain "$tmp/g300.json" --mem 32GiB --bandwidth 12GB/s --time-limit 5
measure "gpt2-300 certify --mem 16GiB --bw 12GB/s --time-limit 5" certify --chain "$tmp/g300.json" --mem 16GiB --bandwidth 12GB/s --time-limit 5
measure "gpt2-1000 bound --mem 128GiB --time-limit 20" bound --chain "$tmp/g1000.json" --mem 128GiB --bandwidth 12GB/s --time-limit 20
measure "gpt2-1000 bound ... --time-limit 20 --max-memory 32GiB" bound --chain "$tmp/g1000.json" --mem 128GiB --bandwidth 12GB/s --time-limit 20 --max-memory 32GiB
measure "gpt2-1000 certify --mem 16GiB --bw 12GB/s (defaults: 60 s)" certify --chain "$tmp/g1000.json" --mem 16GiB --bandwidth 12GB/s
measure "gpt2-10000 remat --algo persistent --mem 16GiB" remat --chain "$tmp/g10000.json" --mem 16GiB --algo persistent
measure "gpt2-10000 remat --algo revolve --mem 16GiB" remat --chain "$tmp/g10000.json" --mem 16GiB --algo revolve
echo "last stderr: $(head -c 300 "$tmp/err")"
