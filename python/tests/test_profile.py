"""The profiler: chain format, the split (aliasing children merged), sizes that 004's model
means, and the old tools/profile_torch.py command (a shim now)."""

import json
import os
import subprocess
import sys

import pytest
import torch
from torch import nn

from memsched_torch import models, profile
from memsched_torch.__main__ import main

from conftest import ROOT


def tiny():
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1),
                         nn.BatchNorm2d(8), nn.ReLU(), nn.Flatten(1), nn.Linear(8 * 16 * 16, 10))


def vgg_like():
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2),
                         nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=True), nn.Flatten(1), nn.Linear(8 * 8 * 8, 10))


def check_chain(path):
    with open(path) as f:
        c = json.load(f)
    assert c["format"] == "memsched.chain/v1"
    assert c["stages"][-1]["name"] == "loss"
    for s in c["stages"]:
        assert s["abar"] >= s["a"] >= 0
        assert s["uf"] >= 0 and s["ub"] >= 0 and s["of"] >= 0 and s["ob"] >= 0
    return c


def test_sequential(tmp_path):
    out = tmp_path / "tiny.json"
    assert main(["profile", "--sequential", "test_profile:tiny", "--input-shape", "3,16,16",
                 "--batch", "4", "--runs", "1", "-o", str(out)]) == 0
    c = check_chain(out)
    names = [s["name"] for s in c["stages"]]
    # the flatten views its input: merged into the ReLU before it
    assert names == ["0:Conv2d", "1:ReLU", "2:Conv2d", "3:BatchNorm2d", "4:ReLU+5:Flatten", "6:Linear", "loss"]
    conv, relu, _, bn = c["stages"][:4]
    assert conv["a"] == 4 * 8 * 16 * 16 * 4  # fp32 output of the first convolution
    assert conv["w"] == (8 * 3 * 9 + 8) * 4
    assert conv["abar"] == conv["a"]  # a convolution saves its input (a^0) and weight: neither is ā
    assert relu["abar"] == relu["a"]  # ReLU saves its output
    assert bn["abar"] == bn["a"] + 2 * 8 * 4  # + the batch mean and inverse std it saves
    assert c["input"] == {"a": 4 * 3 * 16 * 16 * 4, "delta": 4 * 3 * 16 * 16 * 4}


def test_inplace_children_merge():
    net = models.build(sequential="test_profile:vgg_like", input_shape=(3, 16, 16))
    assert net.names == ["0:Conv2d+1:ReLU", "2:MaxPool2d", "3:Conv2d+4:ReLU+5:Flatten", "6:Linear", "loss"]
    x = net.make_input(2)
    chain = profile.profile_net(net, x, runs=1)
    # conv + in-place ReLU: the output is the convolution's storage, counted once
    assert chain.stage(1).a == 2 * 8 * 16 * 16 * 4
    assert chain.stage(1).abar == chain.stage(1).a


def test_input_modified_in_place_is_refused():
    def bad():
        return nn.Sequential(nn.ReLU(inplace=True), nn.Linear(4, 2))

    sys.modules[__name__].bad = bad
    with pytest.raises(ValueError, match="modifies the network's input in place"):
        models.build(sequential=f"{__name__}:bad", input_shape=(4,))


def test_profile_leaves_the_model_as_it_was():
    net = models.build("resnet18", image=32)
    before = net.state()
    profile.profile_net(net, net.make_input(2), runs=1)
    for a, b in zip(before, net.state()):
        for k in a:
            assert torch.equal(a[k], b[k]), k
    assert all(p.grad is None for p in net.parameters())


def test_shim_and_memsched(tmp_path, memsched_bin):
    """tools/profile_torch.py (the old command) still works, and memsched reads what it writes."""
    out = tmp_path / "net.json"
    subprocess.run([sys.executable, os.path.join(ROOT, "tools", "profile_torch.py"), "--model", "mlp",
                    "--batch", "4", "--runs", "1", "--threads", "1", "-o", str(out)], check=True)
    c = check_chain(out)
    assert len(c["stages"]) == 7 + 1
    assert "mlp width=64 depth=4 batch=4 input=32 measured on cpu" in c["name"]
    for args in (["info", "--chain", str(out)], ["remat", "--chain", str(out), "--mem", "1MiB", "--algo", "persistent"]):
        subprocess.run([memsched_bin, *args], check=True, capture_output=True)
