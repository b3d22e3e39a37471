#!/usr/bin/env bash
# bench-peers.sh (make bench-peers; not in CI): memsched's C_MP against rockmate 2.0.0's rotor C
# solver on the same chains, budgets and slot counts (issue 14). rockmate is fetched from its
# PyPI source distribution into the git-ignored .deps/rockmate, and only its C file is built,
# against Python's headers: no torch, nothing of rockmate committed here.
# Environment: PEERS_CHAINS (zoo ResNet depths, default "1001", issue 23's configuration),
# PEERS_SLOTS (default "200,500"), PEERS_BUDGETS (percent between the smallest feasible budget
# and store-all, "25,50,75"), PEERS_SAME_PROBLEM (default 1: both solve the chain with a
# final output of size 0 and the same table width, scripts/bench_peers.py says why; 0: each
# model as it is), PEERS_BASELINE (a second memsched binary, e.g. a build of main, timed on the
# same points in the same run, its ratio printed beside).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
RK=$ROOT/.deps/rockmate
PKG=$RK/pkg/rockmate/solvers/rk_rotor
PY=${PYTHON:-python3}
SUFFIX=$($PY -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
if [ ! -f "$PKG/csolver$SUFFIX" ]; then
  mkdir -p "$RK/dl" "$PKG"
  $PY -m pip download --quiet --no-deps --no-binary :all: rockmate==2.0.0 -d "$RK/dl"
  tar -xzf "$RK/dl"/rockmate-2.0.0.tar.gz -C "$RK"
  SRC=$RK/rockmate-2.0.0/src/rockmate/solvers/rk_rotor
  # Empty package files instead of rockmate's (which import torch); its csequence.py is plain
  # Python and is what the C module builds its sequences with.
  touch "$RK/pkg/rockmate/__init__.py" "$RK/pkg/rockmate/solvers/__init__.py" "$PKG/__init__.py"
  cp "$SRC/csequence.py" "$PKG/"
  INC=$($PY -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
  ${CC:-cc} -O3 -std=c99 -shared -fPIC -I"$INC" "$SRC/solver.c" -o "$PKG/csolver$SUFFIX"
fi
mkdir -p out/peers
CHAINS=()
for d in ${PEERS_CHAINS:-1001}; do
  f=out/peers/resnet$d-224-32.json
  [ -f "$f" ] || bin/memsched gen zoo resnet --depth "$d" --image 224 --batch 32 -o "$f" 2>/dev/null
  CHAINS+=("$f")
done
$PY scripts/bench_peers.py --memsched bin/memsched --rockmate "$RK/pkg" \
  --slots "${PEERS_SLOTS:-200,500}" --budgets "${PEERS_BUDGETS:-25,50,75}" \
  $([ "${PEERS_SAME_PROBLEM:-1}" = 0 ] && echo --no-same-problem) \
  ${PEERS_BASELINE:+--baseline "$PEERS_BASELINE"} "${CHAINS[@]}" | tee out/bench-peers.txt
echo "bench-peers: report written to out/bench-peers.txt"
