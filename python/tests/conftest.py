"""Shared fixtures: one torch thread (steadier timings, fair on a shared machine), the memsched
binary (MEMSCHED_BIN, bin/memsched, PATH, else built here with go), small profiled nets.

MEMSCHED_TEST_DEVICE=cuda puts the profiled nets (and what runs on them: the remat, offloading
and combined executors, the latter two in their "cuda" mode) on the GPU, with the deterministic
settings of the fidelity run, so that the gradients are still compared bitwise and every step's
memory still against its prediction. The default is the CPU (CI has no GPU)."""

import json
import os
import shutil
import subprocess

import pytest
import torch

from memsched_torch import binary, models, profile
from memsched_torch.measure import deterministic

torch.set_num_threads(1)
DEVICE = torch.device(os.environ.get("MEMSCHED_TEST_DEVICE") or "cpu")
deterministic(DEVICE)  # before the first CUDA matrix product (CUBLAS_WORKSPACE_CONFIG)
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


@pytest.fixture(scope="session")
def memsched_bin(tmp_path_factory):
    try:
        return binary.find()
    except binary.BinaryError:
        pass
    if not shutil.which("go"):
        pytest.fail("no memsched binary and no go to build one (make build)")
    out = str(tmp_path_factory.mktemp("bin") / "memsched")
    env = dict(os.environ, CGO_ENABLED="0")
    subprocess.run(["go", "build", "-o", out, "./cmd/memsched"], cwd=ROOT, env=env, check=True)
    os.environ["MEMSCHED_BIN"] = out
    return out


class Profiled:
    """A net, its input, its chain (profiled here) and the chain file."""

    def __init__(self, net, x, chain, path):
        self.net, self.x, self.chain, self.path = net, x, chain, path


def profiled(tmp_path_factory, name, batch, **kw):
    net = models.build(name, device=DEVICE, **kw)
    x = net.make_input(batch, DEVICE)
    chain = profile.profile_net(net, x, runs=1)
    if DEVICE.type == "cuda":
        # The overheads the storage tracker saw, not the allocator's: the tests compare every
        # step with the tracker, which cannot see cuDNN's workspaces (on these tiny inputs they
        # dwarf the activations: ResNet-18's stem backward asks for ~8 MB at batch 2, 32×32,
        # and no budget between the smallest and the store-all peak would offload anything).
        for st in chain.stages:
            st.of, st.ob = st.of_storages, st.ob_storages
    path = str(tmp_path_factory.mktemp(name) / f"{name}.json")
    with open(path, "w") as f:
        json.dump(chain.to_json(), f)
    return Profiled(net, x, chain, path)


@pytest.fixture(scope="session")
def mlp(tmp_path_factory):
    return profiled(tmp_path_factory, "mlp", 16)


@pytest.fixture(scope="session")
def resnet18(tmp_path_factory):
    return profiled(tmp_path_factory, "resnet18", 2, image=32)


@pytest.fixture(scope="session")
def transformer(tmp_path_factory):
    return profiled(tmp_path_factory, "transformer", 2, layers=4, hidden=32, heads=2, seq=8)


def with_fixed_times(p, tmp_path_factory, uf=0.004, ub=0.008):
    """p with every stage's times set to uf and ub: its sizes are deterministic (live storages),
    measured times are not, and schedules made from them must not depend on the machine's load
    (the executors use the times only to order events)."""
    from memsched_torch.schedule import Chain

    obj = p.chain.to_json()
    for st in obj["stages"]:
        st["uf"], st["ub"] = uf, ub
    path = str(tmp_path_factory.mktemp("fixed") / "chain.json")
    with open(path, "w") as f:
        json.dump(obj, f)
    return Profiled(p.net, p.x, Chain.from_json(obj), path)


def pytest_addoption(parser):
    parser.addoption("--heavy", action="store_true", default=os.environ.get("MEMSCHED_TORCH_HEAVY") == "1",
                     help="also run the heavy cases (marker heavy; MEMSCHED_TORCH_HEAVY=1)")


def pytest_configure(config):
    config.addinivalue_line("markers", "heavy: long cases, run with --heavy or MEMSCHED_TORCH_HEAVY=1 (not in CI)")


def pytest_collection_modifyitems(config, items):
    if config.getoption("heavy"):
        return
    skip = pytest.mark.skip(reason="heavy: run with --heavy or MEMSCHED_TORCH_HEAVY=1")
    for item in items:
        if "heavy" in item.keywords:
            item.add_marker(skip)
