#!/usr/bin/env bash
# bad-inputs.sh — runs the built binary over the bad-input table of internal/cli/testdata/
# bad-inputs.txt (the cases TestBadInputs runs over cli.Main) and prints one row per case:
# the case, the exit status, the number of lines on stderr and the first of them, and FAIL
# where the promise is broken: exit status 2, nothing on stdout, exactly one line on stderr,
# and that line names the flag, file, field or value the case's third field gives.
#
#   scripts/bad-inputs.sh [BINARY]      (default bin/memsched; run from the repository root)
#
# The cases run in a copy of internal/cli/testdata/bad/ with an empty stdin. Exit status 1
# when any case fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(realpath "${1:-$root/bin/memsched}")
table=$root/internal/cli/testdata/bad-inputs.txt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$root/internal/cli/testdata/bad" "$tmp/work"
cd "$tmp/work"

n=0 pass=0
printf '%-4s  %-55s  %4s  %5s  %s\n' "" "case" "exit" "lines" "first stderr line"
while IFS='|' read -r name args want; do
	[[ -z "${name// /}" || "$name" =~ ^[[:space:]]*# ]] && continue
	name=$(echo "$name" | xargs -0 | sed 's/^ *//;s/ *$//')
	want=$(echo "$want" | sed 's/^ *//;s/ *$//')
	eval "set -- $args"
	[[ "${1:-}" == memsched_torch ]] && continue # the Python side's case (python/tests runs it)
	set +e
	"$bin" "$@" </dev/null >"$tmp/out" 2>"$tmp/err"
	rc=$?
	set -e
	lines=$(wc -l <"$tmp/err")
	first=$(head -n1 "$tmp/err")
	ok=ok
	if [[ $rc -ne 2 || -s "$tmp/out" || $lines -ne 1 || "$first" != *"$want"* ]]; then
		ok=FAIL
	else
		pass=$((pass + 1))
	fi
	n=$((n + 1))
	printf '%-4s  %-55s  %4d  %5d  %s\n' "$ok" "$name" "$rc" "$lines" "$first"
done <"$table"
echo
echo "bad-inputs: $n cases, $pass exit 2 with one line naming the flag, file, field or value, $((n - pass)) fail"
[[ $pass -eq $n ]]
