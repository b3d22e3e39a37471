"""From a wheel: `pip wheel python/` compiles the memsched binary into the wheel
(_build_backend/memsched_build.py); in a fresh virtual environment outside the repository, with
the wheel installed and no other memsched reachable (no MEMSCHED_BIN, no repository, nothing on
PATH), the ten-line training script of docs/torch.md trains and prints its measured peak.

The fresh environment gets torch from this one through a .pth line (a 5 GB download otherwise);
memsched_torch itself only from the wheel (checked: its path and its binary's)."""

import os
import shutil
import subprocess
import sys
import sysconfig

import pytest

from conftest import ROOT

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.skipif(not shutil.which("go"), reason="building the wheel compiles memsched: needs Go")
def test_wheel_in_a_fresh_venv(tmp_path):
    dist = tmp_path / "dist"
    # --no-build-isolation: setuptools from this environment (no download); the backend is ours.
    p = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(dist),
                        os.path.join(ROOT, "python")], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    wheels = list(dist.glob("memsched_torch-*.whl"))
    assert len(wheels) == 1
    assert not os.path.exists(os.path.join(ROOT, "python", "memsched_torch", "_bin")), "the build left its binary"
    env = {k: v for k, v in os.environ.items() if k not in ("MEMSCHED_BIN", "PYTHONPATH", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join(d for d in env.get("PATH", "").split(os.pathsep)
                                  if not os.path.exists(os.path.join(d, "memsched")))
    env["HOME"] = str(tmp_path)  # the plan cache too stays out of the way
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=env)
    py = str(venv / "bin" / "python")
    site = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True, env=env).stdout.strip()
    p = subprocess.run([py, "-m", "pip", "install", "--no-deps", "--no-index", str(wheels[0])], capture_output=True,
                       text=True, env=env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    # Then torch (and its dependencies) from this environment, not memsched_torch: a plain path
    # line does not run this environment's .pth files (its editable memsched_torch finder), and
    # the fresh environment's own site-packages come first.
    with open(os.path.join(site, "torch-from-host.pth"), "w") as f:
        f.write(sysconfig.get_paths()["purelib"] + "\n")
    work = tmp_path / "elsewhere"
    work.mkdir()
    shutil.copy(os.path.join(HERE, "wheel_demo.py"), work / "train.py")
    p = subprocess.run([py, "train.py"], cwd=work, env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "measured peaks: [" in p.stdout
    peaks = eval(p.stdout.split("measured peaks:")[1].strip())
    assert len(peaks) == 2 and all(m > 0 for m in peaks)  # the first two iterations are measured
    q = subprocess.run([py, "-c", "import memsched_torch, memsched_torch.binary as b; print(memsched_torch.__file__);"
                        " print(b.find()); print(b.version())"], cwd=work, env=env, capture_output=True, text=True)
    lines = q.stdout.splitlines()
    assert lines[0].startswith(site), lines
    assert lines[1].startswith(site) and lines[1].endswith(os.path.join("_bin", "memsched")), lines
    assert "ref" in lines[2] and "milp_note" in lines[2]  # pure Go: it says which bounds it lacks
