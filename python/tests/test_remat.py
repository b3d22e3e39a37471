"""The remat executor against plain training and against 004's model, for every algorithm memsched
offers, at three budgets, on an MLP, ResNet-18 (32×32) and a stack of TransformerEncoderLayers
(with dropout: the RNG must be replayed)."""

import json

import pytest
import torch

from memsched_torch import binary, remat, schedule
from memsched_torch.tracker import StorageTracker

ALGOS = ["persistent", "floating", "revolve", "sequential", "store-all"]


def budgets(p, memsched_bin):
    """Three budgets from the smallest feasible one to the store-all peak."""
    info = binary.run_json("info", "--chain", p.path, binary=memsched_bin)
    lo, hi = info["min_budget"], info["store_all_peak"]
    return [lo + (hi - lo) * f // 100 for f in (5, 50, 95)]


def run_one(p, ops, free="model"):
    net, x = p.net, p.x
    state, rng = net.state(), remat.get_rng(x.device)
    ref = remat.plain_training(net, x)
    net.load_state(state)
    net.zero_grad()
    remat.set_rng(rng, x.device)
    tr = StorageTracker(x.device)
    with tr:
        res = remat.execute(net, x, ops, chain=p.chain, tracker=tr, free=free)
    cmp = remat.compare(ref, net, res.delta0)
    net.load_state(state)
    net.zero_grad()
    return res, cmp


def check_algos(p, memsched_bin, algos):
    seen = set()
    for mem in budgets(p, memsched_bin):
        for algo in algos:
            args = ["remat", "--chain", p.path, "--mem", str(mem), "--algo", algo]
            out = binary.run_json(*args, binary=memsched_bin)
            if not out["feasible"]:
                assert algo in ("sequential", "store-all"), (algo, mem)
                continue
            ops = schedule.parse_sequence(json.dumps(out))
            seen.add(schedule.format_sequence(ops))
            sim = schedule.simulate(p.chain, ops)
            # The Python replay of 004's rules agrees with memsched's verifier.
            assert sim.peak == out["peak_memory"]
            assert sim.makespan == pytest.approx(out["makespan"], rel=1e-9)
            res, cmp = run_one(p, ops)
            assert cmp.equal, (algo, mem, cmp.detail)
            assert res.forwards[1:] == sim.forwards[1:], (algo, mem)
            assert sum(res.forwards) == sum(1 for o in ops if o.kind != "B")
            # Measured (live storages) against predicted (the profile in 004's model), step by
            # step: a backward exactly (up to the 4-byte loss gradient the chain counts as 0); a
            # forward at most the prediction and at least the prediction minus o_f (the chain's
            # one o_f serves F_ck/F_∅ and F_all alike; F_all needs less on top of ā).
            for op, pred, (label, meas) in zip(ops, sim.memory, res.steps):
                if op.kind == "B":
                    assert abs(meas - pred) <= 16, (algo, mem, label, pred, meas)
                else:
                    of = p.chain.stage(op.stage).of
                    assert pred - of - 16 <= meas <= pred + 16, (algo, mem, label, pred, meas, of)
            assert res.peak <= out["peak_memory"] + 16, (algo, mem, res.peak, out["peak_memory"])
    return seen


def test_mlp_every_algorithm(mlp, memsched_bin):
    seen = check_algos(mlp, memsched_bin, ALGOS + ["exhaustive"])
    assert len(seen) >= 4  # the budgets give different sequences


def test_resnet18_every_algorithm(resnet18, memsched_bin):
    check_algos(resnet18, memsched_bin, ALGOS)


def test_transformer_every_algorithm(transformer, memsched_bin):
    check_algos(transformer, memsched_bin, ALGOS + ["exhaustive"])


def quadratic(n):
    """The least-memory sequence: before each B^ℓ, recompute a^{ℓ-1} from a^0 (F_ck^1, then F_∅)."""
    ops = []
    for l in range(n, 0, -1):
        if l > 1:
            ops.append(schedule.Op("Fck", 1))
            ops += [schedule.Op("Fn", k) for k in range(2, l)]
        ops += [schedule.Op("Fall", l), schedule.Op("B", l)]
    return ops


def test_recomputation_replays_dropout_and_batchnorm(resnet18, transformer):
    """Every stage recomputed many times: gradients, δ^0 and BatchNorm running statistics still
    equal plain training's bitwise (RNG replayed, buffers restored after each recomputation)."""
    for p in (resnet18, transformer):
        n = len(p.chain)
        ops = quadratic(n)
        sim = schedule.simulate(p.chain, ops)
        res, cmp = run_one(p, ops)
        assert cmp.equal, cmp.detail
        assert res.forwards[1:] == sim.forwards[1:]
        assert res.forwards[1] == n


def test_eager_freeing_is_lower_and_equal(resnet18):
    n = len(resnet18.chain)
    ops = [schedule.Op("Fall", l) for l in range(1, n + 1)] + [schedule.Op("B", l) for l in range(n, 0, -1)]
    model, cm = run_one(resnet18, ops, free="model")
    eager, ce = run_one(resnet18, ops, free="eager")
    assert cm.equal and ce.equal
    assert eager.peak < model.peak


def test_refusals(resnet18, mlp):
    n = len(resnet18.chain)
    store_all = [schedule.Op("Fall", l) for l in range(1, n + 1)] + [schedule.Op("B", l) for l in range(n, 0, -1)]
    with pytest.raises(schedule.ScheduleError, match="stages"):
        remat.execute(resnet18.net, resnet18.x, store_all, chain=mlp.chain)
    with pytest.raises(schedule.ScheduleError, match="exceeds the budget"):
        remat.execute(resnet18.net, resnet18.x, store_all, chain=resnet18.chain, budget=1000)
    with pytest.raises(schedule.ScheduleError, match=r"step 2 \(B\^2\)"):
        remat.execute(resnet18.net, resnet18.x, [schedule.Op("Fall", 1), schedule.Op("B", 2)],
                      chain=resnet18.chain)
    with pytest.raises(schedule.ScheduleError, match="out of range"):
        remat.execute(resnet18.net, resnet18.x, [schedule.Op("Fall", n + 1)], chain=resnet18.chain)
