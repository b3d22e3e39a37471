#!/usr/bin/env bash
# conformance.sh solves public LP/MPS instances with memsched (HiGHS and lp_solve backends), the
# HiGHS binary and CBC, and writes a comparison table to out/conformance/table.md. Not in CI:
# it fetches about 120 MB and runs for hours at the default time limit.
#
#   scripts/conformance.sh [--time-limit S] [--fresh | --redo-memsched] [--only REGEX]
#                          [--max-nonzeros N] [SET=SOURCE[#SUBDIR] ...]
#
# A SOURCE is a folder of files, a git repository (bare or not: its HEAD is exported), or a git
# URL (cloned shallow). Without sources, the default public sets are cloned from GitHub:
#   netlib  = https://github.com/coin-or-tools/Data-Netlib   (Netlib LPs, gzipped MPS)
#   miplib3 = https://github.com/coin-or-tools/Data-miplib3  (MIPLIB 3, gzipped MPS)
#   sample  = https://github.com/coin-or-tools/Data-Sample   (COIN-OR's sample files)
#   highs   = https://github.com/ERGO-Code/HiGHS#check/instances (HiGHS's test instances)
# Without internet, fetch those repositories by other means and pass them, e.g.
#   scripts/conformance.sh netlib=/mirror/Data-Netlib miplib3=/mirror/Data-miplib3 \
#     sample=/mirror/Data-Sample highs=/mirror/HiGHS#check/instances
# --max-nonzeros N skips MPS files with more than N matrix entries (listed as skipped).
# Files straight from netlib.org/lp/data are compressed with Netlib's emps format, which this
# script does not read: expand them first with emps (netlib.org/lp/data/emps.c).
#
# Needs: make build (bin/memsched), make setup (HiGHS binary from PyPI's highsbox in
# .deps/highs, CBC from Debian's coinor-cbc), python3. Results are cached in
# out/conformance/results.json: a second run solves only files not solved yet (--fresh: all;
# --redo-memsched: memsched again, the HiGHS and CBC results kept).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out="$root/out/conformance"
limit=60
args=()
sources=()
while (($#)); do
  case "$1" in
    --time-limit) limit=$2; shift 2 ;;
    --fresh) args+=(--fresh); shift ;;
    --redo-memsched) args+=(--redo-memsched); shift ;;
    --only) args+=(--only "$2"); shift 2 ;;
    --max-nonzeros) args+=(--max-nonzeros "$2"); shift 2 ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *=*) sources+=("$1"); shift ;;
    *) echo "conformance: unknown argument $1 (want SET=SOURCE)" >&2; exit 2 ;;
  esac
done
if ((${#sources[@]} == 0)); then
  sources=(netlib=https://github.com/coin-or-tools/Data-Netlib
           miplib3=https://github.com/coin-or-tools/Data-miplib3
           sample=https://github.com/coin-or-tools/Data-Sample
           "highs=https://github.com/ERGO-Code/HiGHS#check/instances")
fi

highs="$root/.deps/highs/highsbox/highs_dist/bin/highs"
[ -x "$highs" ] || { echo "conformance: no HiGHS binary at $highs (run make setup)" >&2; exit 2; }
command -v cbc >/dev/null || { echo "conformance: cbc not found (run make setup)" >&2; exit 2; }
make -s build

# Each source becomes a folder under out/conformance/src/SET.
mkdir -p "$out/src"
folders=()
for s in "${sources[@]}"; do
  set_name=${s%%=*}
  src=${s#*=}
  sub=""
  if [[ $src == *"#"* ]]; then sub=${src#*#}; src=${src%%#*}; fi
  dest="$out/src/$set_name"
  if [ -d "$src" ] && [ ! -e "$src/.git" ] && ! git --git-dir="$src" rev-parse --git-dir >/dev/null 2>&1; then
    folders+=("$set_name=$src${sub:+/$sub}")   # a plain folder
    continue
  fi
  if [ ! -d "$dest" ]; then
    tmp="$dest.tmp"
    rm -rf "$tmp"
    mkdir -p "$tmp"
    if [ -d "$src" ]; then
      # A git repository, bare or not: export its HEAD (only SUBDIR when given).
      gitdir=$(git -C "$src" rev-parse --git-dir 2>/dev/null || echo "$src")
      [[ $gitdir == /* ]] || gitdir="$src/$gitdir"
      git --git-dir="$gitdir" archive HEAD ${sub:+"$sub"} | tar -x -C "$tmp"
    else
      echo "conformance: cloning $src"
      git clone -q --depth 1 --filter=blob:none ${sub:+--sparse} "$src" "$tmp/repo"
      if [ -n "$sub" ]; then git -C "$tmp/repo" sparse-checkout set "$sub"; fi
      rm -rf "$tmp/repo/.git"
      mv "$tmp/repo"/* "$tmp"/ && rmdir "$tmp/repo"
    fi
    mv "$tmp" "$dest"
  fi
  folders+=("$set_name=$dest${sub:+/$sub}")
done

exec python3 scripts/conformance.py --memsched "$root/bin/memsched" --highs "$highs" \
  --time-limit "$limit" --out "$out" ${args[@]+"${args[@]}"} "${folders[@]}"
