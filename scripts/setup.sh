#!/usr/bin/env bash
# setup.sh installs what memsched's build and tests need, idempotently:
#   - Debian packages: liblpsolve55-dev (lp_solve backend), pkg-config, coinor-cbc and
#     glpk-utils (independent readers of exported .lp/.mps files);
#   - HiGHS 1.15.1 from PyPI's highsbox wheel into the git-ignored .deps/highs, with our own
#     highs.pc (the wheel's bundled one points at its build machine's paths);
#   - the Go modules;
#   - the project virtual environment .venv/ (git-ignored): torch, torchvision and pytest at the
#     versions pinned in python/requirements.txt, and memsched_torch (python/) installed
#     editable. The first run downloads about 3 GB from PyPI and fills about 5.5 GB (torch's
#     PyPI wheel carries the CUDA libraries, unused on CPU). Only with the argument `python`
#     (`make test` and `make python` pass it; `make build` and `make demo` do not need torch);
#     MEMSCHED_NO_VENV=1 skips it even then.
# A second run does nothing and takes well under two seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
deps="$root/.deps"
highs_version=1.15.1

need_apt=()
for pkg in liblpsolve55-dev pkg-config coinor-cbc glpk-utils; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need_apt+=("$pkg")
done
if ((${#need_apt[@]})); then
  echo "setup: installing Debian packages: ${need_apt[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

highs_dist="$deps/highs/highsbox/highs_dist"
if [ ! -f "$highs_dist/lib/libhighs.so" ] || [ ! -f "$deps/highs/.version-$highs_version" ]; then
  echo "setup: installing HiGHS $highs_version (PyPI highsbox) into .deps/highs"
  rm -rf "$deps/highs"
  python3 -m pip install --quiet --disable-pip-version-check --no-deps \
    --target "$deps/highs" "highsbox==$highs_version"
  touch "$deps/highs/.version-$highs_version"
fi

pc="$deps/pkgconfig/highs.pc"
if [ ! -f "$pc" ] || ! grep -q "prefix=$highs_dist\$" "$pc"; then
  mkdir -p "$deps/pkgconfig"
  cat >"$pc" <<PC
prefix=$highs_dist
libdir=\${prefix}/lib
includedir=\${prefix}/include/highs

Name: HiGHS
Description: HiGHS $highs_version from PyPI highsbox, installed by memsched's scripts/setup.sh
Version: $highs_version
Libs: -L\${libdir} -lhighs -Wl,-rpath,\${libdir}
Cflags: -I\${includedir}
PC
  echo "setup: wrote $pc"
fi

if [ ! -f "$deps/.gomod-$(sha256sum go.sum | cut -c1-16)" ]; then
  echo "setup: downloading Go modules"
  go mod download
  rm -f "$deps"/.gomod-*
  touch "$deps/.gomod-$(sha256sum go.sum | cut -c1-16)"
fi

# The Python side (python/, memsched_torch). Re-installed when python/requirements.txt or
# python/pyproject.toml change (their hash is the stamp); the editable install follows the
# sources without a reinstall.
if [ "${1:-}" = python ] && [ "${MEMSCHED_NO_VENV:-0}" != 1 ]; then
  venv="$root/.venv"
  stamp="$venv/.memsched-$(cat python/requirements.txt python/pyproject.toml | sha256sum | cut -c1-16)"
  if [ ! -f "$stamp" ]; then
    echo "setup: installing the Python environment .venv (torch, torchvision, pytest; python/requirements.txt)"
    # The install fills about 5.5 GB and, while it runs, holds the ≈ 3 GB of downloaded wheels
    # in pip's temporary folder too (--no-cache-dir: no third copy in ~/.cache/pip). Say so
    # before pip stops half-way with "No space left on device".
    free_kb=$(df -Pk "$root" | awk 'NR==2 {print $4}')
    if [ "$free_kb" -lt $((6 * 1024 * 1024)) ]; then
      echo "setup: .venv needs about 5.5 GB on the file system of $root (9 GB while installing);" \
        "only $((free_kb / 1024)) MB free there. Free some space, or set MEMSCHED_NO_VENV=1 to" \
        "skip the Python side (its tests then do not run)." >&2
      exit 1
    elif [ "$free_kb" -lt $((9 * 1024 * 1024)) ]; then
      echo "setup: warning: $((free_kb / 1024)) MB free on the file system of $root; the install" \
        "may need 9 GB while it runs" >&2
    fi
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir \
      -r python/requirements.txt
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
      --no-build-isolation -e python
    rm -f "$venv"/.memsched-*
    touch "$stamp"
  fi
fi
