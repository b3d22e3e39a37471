"""memsched_torch.Scheduled in the training loop: training through it equals plain training bit for
bit (losses, parameters, buffers, RNG after every iteration) for every lever, SGD and Adam; every
iteration's measured peak is under the budget and within 5 % of the prediction; the plan cache,
the re-plan after a measured peak above the budget (a prediction made wrong on purpose), AMP,
train/eval/no_grad, state_dict, gradient accumulation and the refusals.

Heavy cases (more models, BERT, Llama, DenseNet) run with MEMSCHED_TORCH_HEAVY=1 (marker heavy)."""

import argparse
import copy
import warnings

import pytest
import torch
from torch import nn
from torch.nn import functional as F

from conftest import DEVICE
from memsched_torch import train
from memsched_torch.chains import ChainError
from memsched_torch.scheduled import MemschedWarning, Scheduled

ITERATIONS = 20


def task(model, **kw):
    a = dict(model=model, batch=2, image=32, classes=10, layers=4, hidden=32, heads=2, seq=16, vocab=200, seed=0)
    a.update(kw)
    return train.build_task(argparse.Namespace(**a), DEVICE)


def fixed_times(chain):
    """Every stage 4 ms forward, 8 ms backward: the schedules then do not depend on the machine's
    load (the sizes are measured exactly; times are not)."""
    for st in chain.stages:
        st.uf, st.ub = 0.004, 0.008


# (model, lever, budget as a fraction of store-all, bandwidth): budgets where the lever has work
# to do (recomputations; transfers, checked below), at bandwidths where offloading pays.
CASES = [
    ("resnet18", "remat", 0.8, None),
    ("resnet18", "act-offload", 0.85, "2MB/s"),
    ("resnet18", "remat-offload", 0.8, "1GB/s"),
    ("gpt2-hf", "remat", 0.6, None),
    ("gpt2-hf", "act-offload", 0.8, "20MB/s"),
    ("gpt2-hf", "remat-offload", 0.8, "1GB/s"),
    ("transformer", "remat", 0.6, None),
    ("transformer", "act-offload", 0.8, "20MB/s"),
    ("transformer", "remat-offload", 0.6, "1GB/s"),
]


def check(r, lever):
    assert r["lever"] == lever
    assert r["losses_match"], r["losses"]
    assert r["params_match"], r["params_match_per_iteration"]
    assert r["rng_match"]
    assert len(r["measured_peaks"]) == r["iterations"]
    for m in r["measured_peaks"]:
        assert m <= r["budget"], (m, r["budget"], r["history"])
        assert abs(m / r["predicted_peak"] - 1) <= 0.05, (m, r["predicted_peak"])
    s = r["schedule"]
    if lever == "remat":
        assert max(s["forwards"]) > 1  # something is recomputed
    elif lever == "act-offload":
        assert s["offloaded"]  # something moves
    else:
        assert s["offloaded"] > 0
    assert max(r["measured_peaks"]) < max(r["plain_measured_peaks"])


def in_ci(model, lever, optimizer):
    """make test's share of the matrix (the rest runs with --heavy): GPT-2 with every lever and
    both optimizers, the transformer stack with every lever, ResNet-18 with remat (its iterations
    are the slowest on CPU)."""
    return model == "gpt2-hf" or (optimizer == "sgd" and (model == "transformer" or lever == "remat"))


@pytest.mark.parametrize("model,lever,fraction,bandwidth", CASES)
@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_training_equals_training(model, lever, fraction, bandwidth, optimizer, request):
    if not in_ci(model, lever, optimizer) and not request.config.getoption("heavy"):
        pytest.skip("heavy: run with --heavy or MEMSCHED_TORCH_HEAVY=1")
    r = train.compare(task(model), ITERATIONS, optimizer=optimizer, budget=fraction, bandwidth=bandwidth, lever=lever,
                      profile_hook=fixed_times, device=DEVICE)
    check(r, lever)


@pytest.mark.heavy
@pytest.mark.parametrize("model,kw,fraction", [
    ("bert-hf", {}, 0.6), ("llama-hf", {}, 0.6), ("densenet121", {"image": 32}, 0.7), ("vgg11", {"image": 32}, 0.9),
    ("resnet50", {"image": 32}, 0.6),
])
def test_more_models(model, kw, fraction):
    r = train.compare(task(model, **kw), 5, optimizer="adam", budget=fraction, lever="remat", profile_hook=fixed_times,
                      device=DEVICE)
    check(r, "remat")


def test_autocast_bf16():
    """AMP (bf16 autocast on CPU): recomputations run under the forward's autocast state; GPT-2 and
    ResNet-18 train bitwise as plain training under the same autocast."""
    if DEVICE.type == "cuda":
        pytest.skip("the CUDA run uses fp16 with a GradScaler: the train command covers it")
    for model, fraction in (("gpt2-hf", 0.6),):
        r = train.compare(task(model), 3, optimizer="adam", budget=fraction, lever="remat", amp=True,
                          profile_hook=fixed_times, device=DEVICE)
        assert r["amp"] == "torch.bfloat16"
        check(r, "remat")


def test_module_behaves_like_the_model(tmp_path):
    """state_dict is the model's own (same keys, same tensors, loads back), parameters() are the
    model's, eval() and no_grad() run a plain forward equal to the model's, and gradient
    accumulation over two micro-batches equals plain training's."""
    t = task("resnet18")
    ref = copy.deepcopy(t.model)
    x, y = t.batch(0)
    net = Scheduled(t.model, x, 0.8, cache=False, profile_hook=fixed_times)
    assert list(net.state_dict().keys()) == list(ref.state_dict().keys())
    assert all(a is b for a, b in zip(net.state_dict(keep_vars=True).values(),
                                      t.model.state_dict(keep_vars=True).values()))
    assert [p for p in net.parameters()] == [p for p in t.model.parameters()]
    path = tmp_path / "ck.pt"
    torch.save(net.state_dict(), path)
    fresh = copy.deepcopy(ref)
    fresh.load_state_dict(torch.load(path))
    net.load_state_dict(ref.state_dict())
    # eval and no_grad: plain forwards (no plan is used), equal to the model's
    net.eval(), ref.eval()
    assert not t.model.training
    assert torch.equal(net(x), ref(x))
    net.train(), ref.train()
    with torch.no_grad():
        rng = torch.get_rng_state()
        a = net(x)
        torch.set_rng_state(rng)
        assert torch.equal(a, ref(x))
    # gradient accumulation: two micro-batches, one step; the second adds into existing .grad
    # (its weight gradients are temporaries of parameter-gradient memory: out of the budget,
    # so the measurement stays at the prediction and nothing is re-planned)
    opt, opt_ref = torch.optim.SGD(net.parameters(), lr=0.1), torch.optim.SGD(ref.parameters(), lr=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", MemschedWarning)
        for model, o in ((ref, opt_ref), (net, opt)):
            torch.manual_seed(5)
            o.zero_grad()
            for i in (1, 2):
                xb, yb = t.batch(i)
                (F.cross_entropy(model(xb), yb) / 2).backward()
            o.step()
    assert all(torch.equal(a, b) for a, b in zip(ref.state_dict().values(), net.state_dict().values()))
    peaks = [it["measured_peak"] for it in net.stats["iterations"]]
    assert len(peaks) == 2 and all(abs(m / net.plan.predicted_peak - 1) <= 0.05 for m in peaks), peaks


def test_input_requiring_grad():
    """δ^0 reaches the caller's input as plain training computes it."""
    t = task("transformer")
    ref = copy.deepcopy(t.model)
    x, y = t.batch(0)
    net = Scheduled(t.model, budget=0.6, cache=False, profile_hook=fixed_times, lever="remat")
    xs = [x.clone().requires_grad_(True) for _ in range(2)]
    for model, xi in ((ref, xs[0]), (net, xs[1])):
        torch.manual_seed(3)
        F.mse_loss(model(xi), y).backward()
    assert torch.equal(xs[0].grad, xs[1].grad)
    assert net.plan.input_grad


def test_cache_and_shape_change(tmp_path, monkeypatch):
    """The second module of the same model, input and budget plans from the cache without profiling;
    another input shape (batch) is planned anew; the cache entry's schedule is checked again."""
    from memsched_torch import scheduled

    t = task("mlp")
    x, y = t.batch(0)
    a = Scheduled(t.model, x, 0.7, cache=str(tmp_path))
    assert not a.plan_for(x).from_cache
    calls = []
    real = scheduled.profile_net
    monkeypatch.setattr(scheduled, "profile_net", lambda *aa, **kk: calls.append(1) or real(*aa, **kk))
    b = Scheduled(t.model, x, 0.7, cache=str(tmp_path))
    p = b.plan_for(x)
    assert p.from_cache and not calls
    assert p.predicted_peak == a.plan_for(x).predicted_peak
    x8 = torch.randn(8, *x.shape[1:])
    q = b.plan_for(x8)
    assert calls and not q.from_cache and q.chain.a0 == x8.untyped_storage().nbytes()
    # another budget is another key
    c = Scheduled(t.model, x, 0.8, cache=str(tmp_path))
    assert not c.plan_for(x).from_cache
    # a corrupted entry is ignored (profiled again)
    for f in tmp_path.iterdir():
        f.write_text("{not json")
    calls.clear()
    d = Scheduled(t.model, x, 0.7, cache=str(tmp_path))
    assert not d.plan_for(x).from_cache and calls


def test_replan_after_a_wrong_prediction():
    """A profile made wrong on purpose (every ā and o understated by 30 %): the first measured
    peak exceeds the budget, the module says so (MemschedWarning), re-plans with the excess taken
    off the budget, and converges under the budget within its bounded re-plans."""
    def wrong(chain):
        fixed_times(chain)
        for st in chain.stages:
            st.abar = max(st.a, int(st.abar * 0.7))
            st.of, st.ob = int(st.of * 0.7), int(st.ob * 0.7)

    t = task("transformer")
    x, y = t.batch(0)
    net = Scheduled(t.model, x, 0.7, cache=False, profile_hook=wrong, lever="remat", measure=1, max_replans=4)
    budget = net.plan_for(x).user_budget
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    peaks = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(8):
            xb, yb = t.batch(i)
            loss = F.mse_loss(net(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if net.stats["iterations"]:
                peaks.append(net.stats["iterations"][-1]["measured_peak"])
    said = [str(w.message) for w in caught if issubclass(w.category, MemschedWarning)]
    assert peaks[0] > budget, "the wrong prediction must show as a measured peak above the budget"
    assert any("re-planning under" in m for m in said)
    assert net.plan.replans >= 1
    assert peaks[-1] <= budget, (peaks, budget, net.plan.history)
    assert net.plan.budget < budget  # the excess was taken off


def test_refusals():
    class Branchy(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(4, 4), nn.Linear(4, 4)

        def forward(self, x):
            return self.a(x) + self.b(x)

    with pytest.raises(ChainError) as e:
        Scheduled(Branchy(), budget="1MiB")
    assert "Branchy cannot be cut into a chain" in str(e.value) and "\n" not in str(e.value)

    class Pair(nn.Module):
        def forward(self, x):
            return x, x

    with pytest.raises(ChainError, match="not one tensor"):
        Scheduled(nn.Sequential(nn.Linear(4, 4), Pair()), torch.randn(2, 4), "1MiB", cache=False)
    from memsched_torch.schedule import ScheduleError

    for bad, text in ((dict(budget=0), "more than 0"), (dict(budget="lots"), "size"),
                      (dict(budget=1.0, lever="act-offload"), "needs a bandwidth"),
                      (dict(budget=1.0, bandwidth="0GB/s"), "positive"),
                      (dict(budget=1.0, lever="magic"), "lever")):
        with pytest.raises(ScheduleError, match=text):
            Scheduled(nn.Sequential(nn.Linear(4, 4)), **bad)
