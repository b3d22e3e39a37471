"""StorageTracker: what counts as an allocation, and what does not."""

import torch

from memsched_torch.tracker import StorageTracker


def test_counts_new_storages_once():
    w = torch.randn(64, 64)  # allocated before: not counted
    tr = StorageTracker()
    with tr:
        a = torch.randn(1000)  # 4000 B
        v = a[10:]  # a view: no allocation
        a.mul_(2)  # in place: no allocation
        wt = w.t()  # a view of an uncounted storage
        b = a * 2  # 4000 B
        assert tr.current == 8000
        del a
        assert tr.current == 8000  # the view still holds a's storage
        del v
        assert tr.current == 4000
    assert tr.peak == 8000
    del b, wt


def test_free_and_peak_and_steps():
    tr = StorageTracker()
    with tr:
        tr.step("one")
        a = torch.zeros(250)  # 1000 B
        b = torch.zeros(250)
        del a, b
        tr.step("two")
        c = torch.zeros(100)
    assert tr.peak == 2000
    assert tr.steps == [("one", 2000), ("two", 400)]
    assert tr.peak_step == "one"
    del c


def test_untracked_exclude_refresh_and_count():
    x = torch.zeros(1000)
    tr = StorageTracker()
    with tr:
        tr.count(x)
        assert tr.current == 4000
        with tr.untracked():
            h = torch.zeros(1000)
        g = torch.zeros(500)
        assert tr.current == 6000
        tr.exclude(g)  # from its allocation on
        assert tr.current == 4000 and tr.peak == 4000
        st = x.untyped_storage()
        st.resize_(0)
        tr.refresh(st)
        assert tr.current == 0
        st.resize_(4000)
        tr.refresh(st)
        assert tr.current == 4000
    del h, g


def test_parameter_gradients_excluded():
    lin = torch.nn.Linear(100, 100)
    x = torch.randn(8, 100)
    tr = StorageTracker()
    with tr, tr.parameter_gradients_excluded(lin.parameters()):
        lin(x).sum().backward()
    assert lin.weight.grad is not None
    assert tr.current == 0  # the output and its graph are gone; the gradients never counted
    # the peak is the activations and temporaries, not the 40 000-byte weight gradient
    assert tr.peak < 100 * 100 * 4
