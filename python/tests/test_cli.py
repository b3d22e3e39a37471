"""python -m memsched_torch plan / run: the one-command path, and bad input refused in one line
(exit 2) before anything runs."""

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT
from memsched_torch.__main__ import main

PY = [sys.executable, "-m", "memsched_torch"]
MLP = ["--model", "mlp", "--batch", "16", "--threads", "1", "--runs", "1"]


def cli(*args, env=None):
    """The real command line, in a new process (python -m memsched_torch)."""
    return subprocess.run([*PY, *args], capture_output=True, text=True, cwd=ROOT,
                          env=dict(os.environ, **(env or {})))


class Done:
    def __init__(self, code, out, err):
        self.returncode, self.stdout, self.stderr = code, out, err


@pytest.fixture
def incli(capsys, monkeypatch):
    """The same command line in this process (torch imported once: the suite stays fast)."""

    def run(*args, env=None):
        for k, v in (env or {}).items():
            monkeypatch.setenv(k, v)
        capsys.readouterr()
        code = main(list(args))
        out, err = capsys.readouterr()
        return Done(code, out, err)

    return run


def test_plan_json(memsched_bin):
    p = cli("plan", *MLP, "--mem-fraction", "0.7", "--time-limit", "5", "--json")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    for k in ("predicted_peak", "measured_peak", "predicted_time", "measured_time", "grads_match", "schedule"):
        assert k in r
    assert r["grads_match"] is True
    assert r["forwards"] == r["forwards_expected"]
    assert r["predicted_peak"] <= r["budget"] <= 0.7 * r["store_all_peak"] + 1
    assert 0.97 * r["predicted_peak"] <= r["measured_peak"] <= r["predicted_peak"] + 16
    assert r["schedule"]["lever"] == "remat"
    assert any(f > 1 for f in r["forwards"])  # 0.7 of store-all needs recomputation


def test_plan_text_and_offloading(memsched_bin, incli):
    p = incli("plan", *MLP, "--mem-fraction", "0.75", "--bandwidth", "100MB/s", "--time-limit", "5")
    assert p.returncode == 0, p.stderr
    assert "gradients   equal to plain training" in p.stdout
    assert "predicted" in p.stdout and "measured" in p.stdout


def test_plan_remat_offload(memsched_bin, incli):
    """--lever remat-offload: certify's combined lever, the command's schedule executed through the
    combined executor — gradients equal, forwards as scheduled, measured peak at most the prediction
    (+16 B: the loss gradient) — and the lever needs a bandwidth."""
    p = incli("plan", *MLP, "--mem-fraction", "0.75", "--bandwidth", "100MB/s", "--time-limit", "5",
              "--lever", "remat-offload", "--json")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["schedule"]["lever"] == "remat-offload"
    assert r["schedule"]["strategy"] in ("pofo", "remat-then-offload", "offload-then-remat")
    assert r["grads_match"] is True
    assert r["forwards"] == r["forwards_expected"]
    assert r["measured_peak"] <= r["predicted_peak"] + 16
    p = incli("plan", *MLP, "--mem-fraction", "0.75", "--lever", "remat-offload")
    assert p.returncode == 2
    assert "--lever remat-offload needs --bandwidth" in p.stderr


@pytest.fixture(scope="module")
def mlp_chain(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("cli") / "mlp.json")
    assert main(["profile", *MLP, "-o", path]) == 0
    return path


def test_run_sequence_and_refusals(mlp_chain, tmp_path, memsched_bin, incli):
    with open(mlp_chain) as f:
        n = len(json.load(f)["stages"])
    seq = tmp_path / "s.txt"
    seq.write_text("# store-all\n" + " ".join(f"Fall^{l}" for l in range(1, n + 1)) + "\n"
                   + " ".join(f"B^{l}" for l in range(n, 0, -1)) + "\n")
    p = incli("run", *MLP, "--chain", mlp_chain, "--sequence", str(seq), "--json")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["grads_match"] and r["forwards"] == [1] * n
    assert len(r["steps"]) == 2 * n

    def refused(args, text):
        q = incli("run", *args)
        assert q.returncode == 2, (q.stdout, q.stderr)
        assert text in q.stderr
        assert len(q.stderr.strip().splitlines()) == 1, q.stderr
        assert q.stdout == ""

    bad = tmp_path / "bad.txt"
    bad.write_text("Fall^1 Fzz^2\n")
    refused([*MLP, "--chain", mlp_chain, "--sequence", str(bad)], "unknown operation 'Fzz'")
    bad.write_text("Fall^1 Del^1\n")
    refused([*MLP, "--chain", mlp_chain, "--sequence", str(bad)], "free-delete")
    refused([*MLP, "--chain", mlp_chain, "--sequence", str(seq), "--mem", "1KiB"], "over the budget")
    # a chain of another model: the stage count differs
    refused(["--model", "resnet18", "--image", "32", "--batch", "2", "--chain", mlp_chain, "--sequence", str(seq)],
            "stages")
    bad.write_text(" ".join(f"Fall^{l}" for l in range(1, n + 1)) + " B^3\n")
    refused([*MLP, "--chain", mlp_chain, "--sequence", str(bad)], f"step {n + 1} (B^3)")


def test_missing_binary(incli):
    p = incli("plan", *MLP, "--mem", "1MiB", env={"MEMSCHED_BIN": "/nonexistent/memsched"})
    assert p.returncode == 2
    assert "not an executable file" in p.stderr


def test_plan_needs_one_budget(incli):
    p = incli("plan", *MLP)
    assert p.returncode == 2 and "--mem" in p.stderr
