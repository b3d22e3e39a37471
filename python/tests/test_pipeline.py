"""The pipelined executor (memsched_torch.pipemodel, pipestage, piperun, pipeline; docs/torch.md
"Pipelined execution"): SPEC §7's replay on its hand-checked cases, a part with recomputation
against one-process training, the ranks over gloo (gradients bitwise, each rank's peak against
the prediction), and bad input refused in one line before anything runs.

The heavy matrix (transformer and ResNet-18, 2 and 4 processes, both schedules, with and without
recomputation) is marked heavy: pytest --heavy python/tests/test_pipeline.py -k matrix."""

import argparse
import json
import math
import re
import sys

import pytest
import torch

from memsched_torch import models, pipemodel, pipeline
from memsched_torch.__main__ import main
from memsched_torch.pipestage import MicroBatchSeeds, StageModule
from memsched_torch.schedule import Chain, Op, ScheduleError, Stage

INF = math.inf


def spec_chain():
    """SPEC §7's hand-checked chain: L = 4, u_f = 1, u_b = 2, a = ā = 1 B, δ = 0, a^0 = 0, w = 0,
    a zero-cost loss stage."""
    st = [Stage(name=f"s{i}", uf=1, ub=2, a=1, abar=1, delta=0) for i in range(1, 5)]
    st.append(Stage(name="loss", uf=0, ub=0, a=0, abar=0, delta=0))
    return Chain(name="spec7", a0=0, delta0=0, stages=st)


@pytest.mark.parametrize("intervals,bandwidth,want", [
    ([(1, 4)], INF, 48),  # one GPU: §1's makespan 12 × m
    ([(1, 2), (3, 4)], INF, 30),  # (m+S−1)·6
    ([(1, 1), (2, 2), (3, 3), (4, 4)], INF, 21),  # (m+S−1)·3
    ([(1, 2), (3, 4)], 1.0, 32),  # 1 B/s links
])
def test_replay_spec7_makespans(intervals, bandwidth, want):
    assert pipemodel.replay(spec_chain(), intervals, 4, "1f1b", bandwidth).makespan == want


def test_replay_spec7_infeasible_at_3_bytes():
    """M = 3 B on 2 GPUs: every contiguous allocation needs 4 B on some GPU (SPEC §7's table),
    e.g. [1–2] [3–4]: GPU 0 holds 2 micro-batches × 2 B."""
    c = spec_chain()
    allocs = [[(1, 4)]] + [[(1, e), (e + 1, 4)] for e in (1, 2, 3)]
    worst = [max(pipemodel.replay(c, a, 4, "1f1b").peaks) for a in allocs]
    assert min(worst) == 4
    assert pipemodel.replay(c, [(1, 2), (3, 4)], 4, "1f1b").peaks == [4, 3]


def test_replay_gpipe_holds_more_than_1f1b():
    """GPipe's peak ≥ 1F1B's on every GPU (SPEC §7's properties), equal on the last."""
    c = spec_chain()
    for alloc in ([(1, 2), (3, 4)], [(1, 1), (2, 3), (4, 4)]):
        g = pipemodel.replay(c, alloc, 6, "gpipe").peaks
        o = pipemodel.replay(c, alloc, 6, "1f1b").peaks
        assert all(a >= b for a, b in zip(g, o)) and g[0] > o[0]


def test_actions_are_pytorchs_orders():
    assert pipemodel.actions("1f1b", 0, 2, 4) == [("F", 0), ("F", 1), ("B", 0), ("F", 2), ("B", 1), ("F", 3),
                                                  ("B", 2), ("B", 3)]
    assert pipemodel.actions("1f1b", 1, 2, 4) == [("F", 0), ("B", 0), ("F", 1), ("B", 1), ("F", 2), ("B", 2),
                                                  ("F", 3), ("B", 3)]
    assert pipemodel.actions("gpipe", 1, 2, 2) == [("F", 0), ("F", 1), ("B", 0), ("B", 1)]


def recompute_all(first, last, L):
    """A 004 sequence for part [first, last] (top stage: the loss L+1, or last+1 for the next
    GPU) that keeps the least between its phases: its input and a^last as sent; the backward
    phase recomputes every stage from the input."""
    end = pipemodel.part_end(last, L)

    def upto(l):  # a^l plain from a^{first−1}, which stays
        return [Op("Fck" if j == first else "Fn", j) for j in range(first, l + 1)]

    ops = []
    for l in range(end, first - 1, -1):
        ops += upto(l - 1) + [Op("Fall", l), Op("B", l)]
    return ops


def test_replay_part_recompute_all_holds_input_and_output():
    c = spec_chain()
    c.a0 = 5
    assert pipemodel.replay_part(c, 2, 3, recompute_all(2, 3, 4)).held == 2  # a^1, a^3 (sent)
    assert pipemodel.replay_part(c, 3, 4, recompute_all(3, 4, 4)).held == 2  # a^2, a^4, ā^5 = 0
    first = pipemodel.replay_part(c, 1, 2, recompute_all(1, 2, 4))
    assert first.held == 5 + 1 and first.f == 2 and first.b == 7  # F^1 recomputed once, F^2 once
    assert pipemodel.replay_part(c, 1, 2).held == 5 + 2  # store-all: a^0, ā^1, ā^2


@pytest.mark.parametrize("seq,text", [
    ([Op("Fall", 1), Op("Fall", 2), Op("Fall", 2)], "already stored"),
    ([Op("Fall", 1), Op("Fall", 2)], "no backward phase"),
    ([Op("Fall", 1), Op("Fck", 2), Op("Fall", 4)], "stage 4 is not on the part (stages 1..3)"),
    ([Op("Fck", 1), Op("Fn", 2), Op("Fall", 3), Op("B", 3), Op("B", 2)], "ā^2 is not stored"),
    ([Op("Fall", 1), Op("Fn", 2)], "F_∅^2 needs a plain a^1"),
    ([Op("Fall", 1), Op("Fall", 2), Op("Fall", 3), Op("B", 3), Op("B", 2), Op("B", 1), Op("B", 1)],
     "already complete"),
    ([Op("Fall", 1), Op("Fck", 2), Op("Fck", 3)], "stands for the next GPU"),
    ([Op("Fck", 1), Op("Fall", 3)], "input a^2 is not stored"),
])
def test_replay_part_refuses(seq, text):
    with pytest.raises(ScheduleError, match=re.escape(text)):
        pipemodel.replay_part(spec_chain(), 1, 2, seq)


# --- one process: the parts chained by hand, against one-process training ---

def in_process(net, mbs, parts, seed, free="model"):
    """GPipe in one process: every micro-batch through the parts (each output detached and
    fed to the next part as a leaf, as a receive would), then the backwards from the last
    part down, each with the next part's input gradient; gradients divided by m."""
    seeds = MicroBatchSeeds(seed).attach(net.modules)
    stages = [StageModule(net, f, l, seeds, sequence=s, free=free) for f, l, s in parts]
    net.zero_grad()
    try:
        keep = []
        for x in mbs:
            ios = []
            h = x
            for k, st in enumerate(stages):
                xin = h if k == 0 else h.detach().requires_grad_(True)
                h = st(xin)
                ios.append((xin, h))
            keep.append(ios)
        for ios in keep:
            g = None
            for k in range(len(stages) - 1, -1, -1):
                xin, out = ios[k]
                torch.autograd.backward(out, g)
                g = xin.grad if k > 0 else None
        grads = []
        for p in net.parameters():
            p.grad.div_(len(mbs))
            grads.append(p.grad.detach().clone())
        bufs = [b.detach().clone() for m in net.modules for b in m.buffers()]
        losses = [float(ios[-1][1].detach()) for ios in keep]
    finally:
        seeds.detach()
        net.zero_grad()
    return grads, bufs, losses


@pytest.mark.parametrize("name,kw,batch", [
    ("transformer", dict(layers=4, hidden=32, heads=2, seq=8), 2),  # dropout 0.1: masks per (stage, μ)
    ("resnet18", dict(image=32), 2),  # BatchNorm: running statistics once per forward
])
@pytest.mark.parametrize("mode", ["eager", "model", "remat"])
def test_parts_equal_one_process_training(name, kw, batch, mode):
    """Three parts chained in one process, store-all as plain autograd (eager), store-all on the
    executor (model), or recomputing everything on the first and last parts (remat): the
    gradients, buffers and losses bitwise those of one-process training."""
    net = models.build(name, **kw)
    L = len(net.modules) - 1
    mbs = pipeline.micro_batches(net, batch, 3, torch.device("cpu"), seed=0)
    cut = [(1, 1), (2, L // 2), (L // 2 + 1, L)]
    parts = [(f, l, recompute_all(f, l, L) if mode == "remat" and k != 1 else None) for k, (f, l) in enumerate(cut)]
    state = net.state()
    ref = pipeline.reference(net, mbs, seed=0)
    net.load_state(state)
    got = in_process(net, mbs, parts, seed=0, free="eager" if mode == "eager" else "model")
    for a, b in zip(ref[0], got[0]):
        assert torch.equal(a, b)
    for a, b in zip(ref[1], got[1]):
        assert torch.equal(a, b)
    assert ref[2] == got[2]


# --- the ranks, over gloo ---

def setup_args(**kw):
    a = dict(model="transformer", sequential=None, image=32, input_shape=None, layers=4, hidden=32, heads=2,
             seq=8, batch=2, micro_batches=4, device="cpu", threads=1, seed=0, runs=1)
    a.update(kw)
    return argparse.Namespace(**a)


def check_ranks(st, parts, schedule, results, bitwise, detail, tol=0.10):
    rep = pipemodel.replay(st.chain, [(f, l) for f, l, _ in parts], st.m, schedule, INF, [s for _, _, s in parts])
    assert bitwise, detail
    for k, r in enumerate(results):
        assert abs(r.measured_peak / rep.peaks[k] - 1) <= tol, (k, r.measured_peak, rep.peaks[k], r.steps)
    return rep


def test_ranks_over_gloo_torch_runtime():
    """2 processes, Schedule1F1B over gloo, part 0 recomputing everything from its input, part 1
    storing everything: gradients, buffers and losses bitwise those of one-process training;
    each rank's measured peak within 10 % of SPEC §7's (the same rules as memsched's)."""
    st = pipeline.Setup(setup_args())
    L = len(st.chain) - 1
    parts = [(1, 2, recompute_all(1, 2, L)), (3, L, None)]
    results, runtime, note, (bitwise, rel, detail) = pipeline.execute(st, parts, "1f1b", runtime="torch", timeout=240)
    assert runtime == "torch" and not note
    check_ranks(st, parts, "1f1b", results, bitwise, detail)
    assert [r.runtime for r in results] == ["torch", "torch"]


def test_solo_ranks_hold_what_the_pipeline_holds():
    """Each rank alone in this process (scripts/gpu-pipeline.sh's mode): no peers, the same
    actions; its peak within 10 % of the prediction."""
    st = pipeline.Setup(setup_args(micro_batches=3))
    L = len(st.chain) - 1
    parts = [(1, 1, None), (2, 3, recompute_all(2, 3, L)), (4, L, None)]
    results, runtime, _, cmp = pipeline.execute(st, parts, "gpipe", solo=True)
    assert runtime == "solo" and cmp is None
    rep = pipemodel.replay(st.chain, [(f, l) for f, l, _ in parts], 3, "gpipe", INF, [s for _, _, s in parts])
    for k, r in enumerate(results):
        assert abs(r.measured_peak / rep.peaks[k] - 1) <= 0.10, (k, r.measured_peak, rep.peaks[k])


# --- bad input: one line, exit 2, before anything runs ---

BASE = ["pipeline", "--model", "transformer", "--layers", "2", "--hidden", "16", "--heads", "2", "--seq", "4",
        "--batch", "2"]


@pytest.mark.parametrize("args,text", [
    (["--gpus", "0", "--micro-batches", "4", "--mem", "1MiB"], "--gpus 0"),
    (["--gpus", "2", "--micro-batches", "0", "--mem", "1MiB"], "--micro-batches 0"),
    (["--gpus", "2", "--micro-batches", "4"], "exactly one of --mem"),
    (["--gpus", "2", "--micro-batches", "4", "--mem", "1MiB", "--mem-fraction", "0.5"], "exactly one of --mem"),
    (["--gpus", "2", "--micro-batches", "4", "--mem-fraction", "0"], "--mem-fraction 0"),
    (["--gpus", "2", "--micro-batches", "4", "--mem", "12 parsecs"], "size"),
    (["--gpus", "2", "--micro-batches", "4", "--mem", "1MiB", "--schedule", "zb"], "--schedule 'zb'"),
    (["--gpus", "2", "--micro-batches", "4", "--mem", "1MiB", "--remat", "all"], "--remat 'all'"),
    (["--gpus", "2", "--micro-batches", "4", "--mem", "1MiB", "--bandwidth", "fast"], "--bandwidth 'fast'"),
    (["--gpus", "2", "--micro-batches", "4", "--mem", "1MiB", "--bandwidth", "2PB/s"], "outside 1 B/s to 1 PB/s"),
    (["--gpus", "2", "--micro-batches", "4", "--mem", "1MiB", "--runtime", "mpi"], "--runtime 'mpi'"),
    (["--gpus", "2", "--micro-batches", "4", "--mem", "1MiB", "--device", "cuda"] if not torch.cuda.is_available()
     else ["--gpus", "4096", "--micro-batches", "4", "--mem", "1MiB", "--device", "cuda"], "CUDA device"),
    (["--gpus", "two", "--micro-batches", "4", "--mem", "1MiB"], "--gpus: invalid int value"),
    (["--micro-batches", "4", "--mem", "1MiB"], "--gpus"),
])
def test_bad_input_one_line_before_profiling(args, text, capsys, monkeypatch):
    def no_profile(*a, **k):
        raise AssertionError("profiled before refusing bad input")

    monkeypatch.setattr(pipeline, "Setup", no_profile)
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        sys.exit(main(BASE + args))
    assert e.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert text in err, err
    assert len(err.strip().splitlines()) == 1, err


def test_auto_falls_back_to_p2p(monkeypatch):
    """--runtime auto: when torch's runtime fails (here made to raise in every rank; a hang is
    the same after --timeout), the p2p fallback runs the same actions and says why."""
    from memsched_torch import piperun

    def broken(*a, **k):
        raise RuntimeError("simulated gloo failure")

    monkeypatch.setattr(piperun, "_torch_step", broken)  # the ranks are forked: they see it
    st = pipeline.Setup(setup_args(micro_batches=2))
    L = len(st.chain) - 1
    parts = [(1, 2, None), (3, L, None)]
    results, runtime, note, (bitwise, rel, detail) = pipeline.execute(st, parts, "1f1b", runtime="auto", timeout=240)
    assert runtime == "p2p" and "simulated gloo failure" in note, note
    check_ranks(st, parts, "1f1b", results, bitwise, detail)
    with pytest.raises(piperun.RankFailure, match="simulated gloo failure"):
        pipeline.execute(st, parts, "1f1b", runtime="torch", timeout=240)


# --- the command, with memsched's plan ---

TINY = ["--model", "transformer", "--layers", "4", "--hidden", "32", "--heads", "2", "--seq", "8", "--batch", "2",
        "--threads", "1", "--runs", "1"]


def run_cli(args, capsys):
    capsys.readouterr()
    code = main(["pipeline", *args, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def check_report(r, tol=0.10):
    assert r["grads_match"] and r["grads_bitwise"], r["grads_detail"]
    for k in r["ranks"]:
        # memsched's prediction and SPEC §7's replay in Python agree to the byte
        assert k["predicted_peak"] == k["replayed_peak"], k
        assert abs(k["error"]) <= tol, k
    assert r["predicted_makespan"] > 0 and r["measured_makespan"] > 0
    assert r["lower_bounds"] and all(b["certified_by"] and b["scope"] for b in r["lower_bounds"])


def test_cli_runs_memsched_plan(memsched_bin, capsys):
    """`python -m memsched_torch pipeline`: memsched's plan at 0.7 of the store-all floor (some
    part must recompute; no plan fits at 0.5) over 2 gloo processes under Schedule1F1B: the
    report's keys, gradients bitwise those of one-process training, each rank's peak within
    10 % of memsched's."""
    r = run_cli([*TINY, "--gpus", "2", "--micro-batches", "4", "--mem-fraction", "0.7", "--remat", "stage"], capsys)
    for key in ("grads_match", "ranks", "predicted_makespan", "measured_makespan", "runtime", "algo", "budget"):
        assert key in r
    assert r["runtime"] == "torch" and r["stages_used"] == 2
    assert r["budget"] == int(0.7 * r["store_all_floor"])
    assert any(k["recompute"] for k in r["ranks"]), r["ranks"]
    check_report(r)


@pytest.mark.heavy
@pytest.mark.parametrize("model,remat_fraction", [
    (["--model", "transformer", "--batch", "4"], "0.5"),  # 12 layers, hidden 256, 64 tokens, dropout 0.1
    (["--model", "resnet18", "--image", "128", "--batch", "4"], "0.9"),  # no plan fits below 0.80 (P = 2)
])
@pytest.mark.parametrize("P", [2, 4])
@pytest.mark.parametrize("schedule", ["1f1b", "gpipe"])
@pytest.mark.parametrize("remat", ["none", "stage"])
def test_must_show_matrix(memsched_bin, capsys, model, remat_fraction, P, schedule, remat):
    """Issue 30's executor on CPU (scripts/pipeline-cpu.sh prints the same runs as a table): a
    transformer and ResNet-18 on 2 and 4 processes, m = 2P, both schedules, store-all at the
    store-all floor and recomputation below it: gradients bitwise, each rank within 10 % of
    memsched's prediction, and below the floor some part recomputes."""
    frac = "1.0" if remat == "none" else remat_fraction
    r = run_cli([*model, "--threads", "1", "--runs", "1", "--gpus", str(P), "--micro-batches", str(2 * P),
                 "--schedule", schedule, "--remat", remat, "--mem-fraction", frac, "--time-limit", "60"], capsys)
    check_report(r)
    assert any(k["recompute"] for k in r["ranks"]) == (remat == "stage")


def test_choose_runs_contiguous_plans_only():
    """A faster non-contiguous plan (several parts on a GPU, its own action lists: memsched's
    packing and milp-alloc) is named, not run; a contiguous one with the named order's action
    lists is runnable; --algo on a non-contiguous plan is refused in one line."""
    named = [[f"{k}{kind}{mu}" for kind, mu in pipemodel.actions("1f1b", k, 2, 2)] for k in range(2)]
    out = {"schedule": "1f1b", "micro_batches": 2, "results": [
        {"algo": "exact", "feasible": True, "verified": True, "makespan": 3.0, "stages": [[1, 2], [3, 4]]},
        {"algo": "packing", "feasible": True, "verified": True, "makespan": 2.0, "stages": [[1, 1], [2, 3], [4, 4]],
         "gpus": [0, 1, 0], "actions": [["0F0"], ["1F0"]]},
        {"algo": "milp", "feasible": True, "verified": True, "makespan": 2.5, "stages": [[1, 3], [4, 4]],
         "gpus": [0, 1], "actions": named},
        {"algo": "uniform", "feasible": False, "verified": False, "makespan": None, "stages": [[1, 2], [3, 4]]},
    ]}
    best, skipped = pipeline.choose(out)
    assert best["algo"] == "milp" and skipped == [("packing", 2.0)]
    with pytest.raises(ScheduleError, match="several parts on one GPU"):
        pipeline.choose(out, "packing")
    with pytest.raises(ScheduleError, match="does not fit"):
        pipeline.choose(out, "uniform")
    assert pipeline.choose(out, "exact")[0]["makespan"] == 3.0
