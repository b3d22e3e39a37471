#!/usr/bin/env bash
# command-scan.sh — every command on random chains at byte, MiB, GiB and TiB scale, checked for
# what a user must never see: an unexpected exit status, a panic, NaN/+Inf/-0.00 printed, a
# ratio below 1 (a schedule faster than a global bound), a run past its limit. The commands,
# budgets and counts are in scripts/command_scan.py's docstring. It found the peak split that
# ran 125 s past every --time-limit, offload-act's "events (optimal)" without a proof, the exact
# search that searched a minute below MinMemory, and "gap +Inf"/"bound NaN s" in notes.
#
#   scripts/command-scan.sh [BINARY] [command_scan.py options: --chains N --seed S --jobs J]
#
# (default bin/memsched, 30 chains: about an hour on one core — each certify takes 8 s.) Exit
# status 1 when a count is not 0.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(realpath "${1:-$root/bin/memsched}")
shift || true
exec python3 "$root/scripts/command_scan.py" "$bin" "$@"
