"""Tests of tools/profile_torch.py; they run only where torch is installed."""

import json
import os
import shutil
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import profile_torch  # noqa: E402


def tiny():
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(8, 8, 3, padding=1),
        torch.nn.BatchNorm2d(8), torch.nn.ReLU(), torch.nn.Flatten(1), torch.nn.Linear(8 * 16 * 16, 10))


def check_chain(path):
    with open(path) as f:
        c = json.load(f)
    assert c["format"] == "memsched.chain/v1"
    assert c["stages"][-1]["name"] == "loss"
    for s in c["stages"]:
        assert s["abar"] >= s["a"] >= 0
        assert s["uf"] >= 0 and s["ub"] >= 0
    return c


def test_sequential(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "tiny", tiny)
    out = tmp_path / "tiny.json"
    assert profile_torch.main(["--sequential", f"{__name__}:tiny", "--input-shape", "3,16,16",
                               "--batch", "4", "--runs", "2", "-o", str(out)]) == 0
    c = check_chain(out)
    assert len(c["stages"]) == 8  # 7 children + loss
    conv = c["stages"][0]
    assert conv["a"] == 4 * 8 * 16 * 16 * 4  # fp32 output of the first convolution
    assert conv["w"] == (8 * 3 * 9 + 8) * 4


def test_resnet18_and_memsched(tmp_path):
    pytest.importorskip("torchvision")
    out = tmp_path / "r18.json"
    assert profile_torch.main(["--model", "resnet18", "--batch", "2", "--image", "64", "--runs", "1",
                               "-o", str(out)]) == 0
    c = check_chain(out)
    assert len(c["stages"]) == 1 + 8 + 1 + 1
    binary = os.path.join(HERE, "..", "bin", "memsched")
    if not os.path.exists(binary):
        pytest.skip("bin/memsched not built (make build)")
    for args in (["info", "--chain", str(out)], ["remat", "--chain", str(out), "--mem", "64MiB", "--algo", "persistent"]):
        subprocess.run([binary, *args], check=True)
