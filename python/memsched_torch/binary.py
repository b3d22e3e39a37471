"""The memsched binary: found, run, its JSON read. memsched_torch never re-implements a scheduler;
it asks memsched (certify, remat, offload-act) and executes what memsched verified."""

import json
import os
import shutil
import subprocess

from .schedule import ScheduleError

_REPO_BIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bin", "memsched")
# the wheel's own (compiled when the wheel was built: _build_backend/memsched_build.py)
_WHEEL_BIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "memsched")


class BinaryError(RuntimeError):
    pass


def find():
    """$MEMSCHED_BIN, else the repository's bin/memsched (make build), else the binary the wheel
    carries, else memsched on PATH."""
    env = os.environ.get("MEMSCHED_BIN")
    if env:
        if not os.access(env, os.X_OK):
            raise BinaryError(f"MEMSCHED_BIN={env}: not an executable file")
        return env
    if os.access(_REPO_BIN, os.X_OK):
        return os.path.normpath(_REPO_BIN)
    if os.access(_WHEEL_BIN, os.X_OK):
        return _WHEEL_BIN
    on_path = shutil.which("memsched")
    if on_path:
        return on_path
    raise BinaryError("memsched binary not found: run `make build` (bin/memsched), install the memsched-torch "
                      "wheel (it carries one), put memsched on PATH, or set MEMSCHED_BIN")


def run_json(*args, binary=None):
    """Run `memsched ARGS --json` and return the parsed JSON. memsched's own one-line error
    (exit 2) becomes a BinaryError with that line."""
    exe = binary or find()
    p = subprocess.run([exe, *args, "--json", "--quiet"], capture_output=True, text=True)
    if p.returncode not in (0,):
        msg = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit status {p.returncode}"
        raise BinaryError(f"memsched {args[0]}: {msg}")
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError as e:
        raise BinaryError(f"memsched {args[0]}: unreadable JSON output ({e})") from None


def remat(chain_path, mem, algo="persistent", exact=False, binary=None):
    args = ["remat", "--chain", chain_path, "--mem", str(mem), "--algo", algo]
    if exact:
        args += ["--slots", "exact"]
    out = run_json(*args, binary=binary)
    if not out.get("feasible"):
        raise ScheduleError(f"memsched remat --algo {algo}: no sequence fits {mem} B "
                            f"({out.get('note') or 'infeasible'})")
    return out


def offload_act(chain_path, mem, bandwidth, algo="greedy", binary=None):
    out = run_json("offload-act", "--chain", chain_path, "--mem", str(mem), "--bandwidth", str(bandwidth),
                   "--algo", algo, binary=binary)
    if not out.get("feasible"):
        raise ScheduleError(f"memsched offload-act --algo {algo}: no schedule fits {mem} B")
    return out


def remat_offload(chain_path, mem, bandwidth, algo="pofo", binary=None):
    out = run_json("remat-offload", "--chain", chain_path, "--mem", f"{mem}B", "--bandwidth", str(bandwidth),
                   "--algo", algo, binary=binary)
    res = (out.get("results") or [{}])[0]
    if not res.get("feasible"):
        raise ScheduleError(f"memsched remat-offload --algo {algo}: no schedule fits {mem} B "
                            f"({res.get('note') or 'infeasible'})")
    return out


def certify(chain_path, mem, bandwidth=None, time_limit=None, binary=None):
    args = ["certify", "--chain", chain_path, "--mem", str(mem)]
    if bandwidth:
        args += ["--bandwidth", str(bandwidth)]
    if time_limit:
        args += ["--time-limit", str(time_limit)]
    return run_json(*args, binary=binary)


_VERSIONS = {}


def version(binary=None):
    """`memsched version --json` (version, go, and the MILP backends the binary was built with
    when it says them), read once per binary."""
    exe = binary or find()
    if exe not in _VERSIONS:
        p = subprocess.run([exe, "version", "--json"], capture_output=True, text=True)
        try:
            _VERSIONS[exe] = json.loads(p.stdout) if p.returncode == 0 else {}
        except json.JSONDecodeError:
            _VERSIONS[exe] = {}
    return _VERSIONS[exe]
