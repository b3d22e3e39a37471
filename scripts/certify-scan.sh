#!/usr/bin/env bash
# certify-scan.sh — issue 29's scan of what certify's certificates claim: `memsched certify`
# on 636 points — 53 random integer chains (`gen random --seed 100..152 --integer --max-size 200
# --max-time 10`, 4 to 7 stages), each at six budgets from one byte below the smallest feasible
# to 80 % of the way to store-all's peak, at two bandwidths in 1..16 B/s — plus the issue's two
# reproductions, and prints how many points break each of these (every count must be 0):
#   a lever "optimal" above another verified schedule of its model; remat-offload slower than
#   remat; a global bound above a verified schedule; "none fits" where a schedule fits.
#
#   scripts/certify-scan.sh [BINARY] [certify_scan.py options: --chains N --jobs J --time-limit S]
#
# (default bin/memsched; about 5–10 minutes on one core; BINARY may be an older build, to
# compare: its JSON without scopes and outcomes is read as its summary printed it.) Exit
# status 1 when a count is not 0.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(realpath "${1:-$root/bin/memsched}")
shift || true
exec python3 "$root/scripts/certify_scan.py" "$bin" "$@"
