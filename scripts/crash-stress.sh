#!/usr/bin/env bash
# crash-stress.sh — runs `memsched certify` many times over the three tiny chains on which
# issue 18 measured an intermittent SIGSEGV at the end of a HiGHS solve (the toy chain with one
# uf = 1e300, the toy chain with every size and time 0, a two-stage all-zero chain), with and
# without --bandwidth, and counts the runs that did not exit 0.
#
#   scripts/crash-stress.sh [RUNS] [BINARY]      (default 1000 runs of bin/memsched)
#
# Prints one line per failing run (chain, arguments, exit status, last stderr line) and a
# summary: runs, failures, wall time. Exit status 1 when any run failed.
set -euo pipefail
runs=${1:-1000}
bin=${2:-bin/memsched}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$bin" gen toy -o "$tmp/toy.json" 2>/dev/null
python3 - "$tmp" <<'PY'
import json, sys, os
d = sys.argv[1]
toy = json.load(open(os.path.join(d, "toy.json")))
big = json.loads(json.dumps(toy)); big["stages"][0]["uf"] = 1e300
json.dump(big, open(os.path.join(d, "toy-uf1e300.json"), "w"))
zero = json.loads(json.dumps(toy)); zero["input"] = {"a": 0, "delta": 0}
for s in zero["stages"]:
    for k in ("uf", "ub", "a", "abar", "delta", "of", "ob", "w"):
        s[k] = 0
json.dump(zero, open(os.path.join(d, "toy-zero.json"), "w"))
two = {"format": "memsched.chain/v1", "input": {"a": 0},
       "stages": [{"uf": 0, "ub": 0, "a": 0}, {"uf": 0, "ub": 0, "a": 0}]}
json.dump(two, open(os.path.join(d, "two-zero.json"), "w"))
PY

chains=(toy-uf1e300 toy-zero two-zero)
extra=("" "--bandwidth 12GB/s")
fail=0
start=$(date +%s.%N)
for ((i = 0; i < runs; i++)); do
	c=${chains[i % 3]}
	x=${extra[(i / 3) % 2]}
	set +e
	# shellcheck disable=SC2086
	"$bin" certify --chain "$tmp/$c.json" $x >/dev/null 2>"$tmp/err"
	rc=$?
	set -e
	if [[ $rc -ne 0 ]]; then
		fail=$((fail + 1))
		echo "run $i: $c $x: exit $rc: $(grep -m1 -E 'SIG|fatal|panic|memsched:' "$tmp/err" || tail -n1 "$tmp/err")"
	fi
done
end=$(date +%s.%N)
printf 'crash-stress: %d runs, %d failed, %.1f s\n' "$runs" "$fail" "$(echo "$end - $start" | bc)"
[[ $fail -eq 0 ]]
