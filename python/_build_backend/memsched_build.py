"""The wheel of memsched_torch carries the memsched binary, compiled when the wheel is built.

A PEP 517 backend around setuptools': build_wheel first runs `go build` of ../cmd/memsched (the
repository this python/ folder belongs to, or $MEMSCHED_SRC) into memsched_torch/_bin/memsched,
with CGO_ENABLED=0 — a static pure-Go binary that runs on any Linux of the wheel's platform,
without HiGHS or lp_solve (their shared libraries do not travel in a wheel): `memsched version`
says which bounds it then lacks; the repository's `make build` keeps both backends. Editable
installs (scripts/setup.sh) compile nothing: they use the repository's bin/memsched.

Needs a Go toolchain at wheel-build time (go on PATH, or $GO); $MEMSCHED_BIN_PREBUILT names an
already built binary to carry instead.
"""

import os
import shutil
import subprocess

from setuptools import build_meta as _sb
from setuptools.build_meta import (  # noqa: F401 (the rest of the backend is setuptools')
    build_editable, build_sdist, get_requires_for_build_editable, get_requires_for_build_sdist,
    get_requires_for_build_wheel, prepare_metadata_for_build_editable, prepare_metadata_for_build_wheel)

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # python/
BIN = os.path.join(HERE, "memsched_torch", "_bin", "memsched")


class BuildError(RuntimeError):
    pass


def _source():
    src = os.environ.get("MEMSCHED_SRC") or os.path.dirname(HERE)
    if not os.path.isfile(os.path.join(src, "go.mod")) or not os.path.isdir(os.path.join(src, "cmd", "memsched")):
        raise BuildError(f"memsched_torch wheel: no memsched sources at {src} (go.mod, cmd/memsched): build the wheel "
                         "from the repository's python/ folder, or set MEMSCHED_SRC")
    return src


def _compile():
    os.makedirs(os.path.dirname(BIN), exist_ok=True)
    pre = os.environ.get("MEMSCHED_BIN_PREBUILT")
    if pre:
        shutil.copy2(pre, BIN)
        return
    go = os.environ.get("GO") or shutil.which("go")
    if not go:
        raise BuildError("memsched_torch wheel: building it compiles the memsched binary and needs Go (go on PATH, or "
                         "$GO), or $MEMSCHED_BIN_PREBUILT")
    env = dict(os.environ, CGO_ENABLED="0")
    p = subprocess.run([go, "build", "-trimpath", "-o", BIN, "./cmd/memsched"], cwd=_source(), env=env,
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise BuildError(f"memsched_torch wheel: go build ./cmd/memsched failed: {p.stderr.strip()}")


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _compile()
    try:
        return _sb.build_wheel(wheel_directory, config_settings, metadata_directory)
    finally:
        shutil.rmtree(os.path.dirname(BIN), ignore_errors=True)
