"""Every case of tests/bad-inputs.txt (the Python twin of internal/cli/testdata/bad-inputs.txt),
and every case of the Go table whose arguments start with the word memsched_torch: exit 2, one
line on stderr naming the flag, file or value, nothing on stdout, and before any profiling
(profiling is made to fail here, so a case that reaches it fails)."""

import os
import shlex

import pytest

from memsched_torch.__main__ import main

HERE = os.path.dirname(os.path.abspath(__file__))


GO_TABLE = os.path.join(HERE, "..", "..", "internal", "cli", "testdata", "bad-inputs.txt")


def cases():
    out = []
    for path, prefix in ((os.path.join(HERE, "bad-inputs.txt"), None), (GO_TABLE, "memsched_torch")):
        if not os.path.exists(path):
            continue
        name = os.path.basename(os.path.dirname(path)) + "/" + os.path.basename(path)
        with open(path) as f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                parts = [p.strip() for p in line.split(" | ")]
                assert len(parts) == 3, f"{name}:{n}: want name | arguments | text"
                args = shlex.split(parts[1])
                if prefix is not None:
                    if not args or args[0] != prefix:
                        continue
                    args = args[1:]
                out.append(pytest.param(args, parts[2], id=f"{name}:{n}: {parts[0]}"))
    return out


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad")
    assert main(["profile", "--model", "mlp", "--batch", "4", "--threads", "1", "--runs", "1",
                 "-o", str(d / "mlp-b4.json")]) == 0
    import json

    n = len(json.loads((d / "mlp-b4.json").read_text())["stages"])
    (d / "sa.txt").write_text(" ".join(f"Fall^{l}" for l in range(1, n + 1)) + " " +
                              " ".join(f"B^{l}" for l in range(n, 0, -1)) + "\n")
    (d / "adir").mkdir()
    return d


@pytest.mark.parametrize("args,text", cases())
def test_bad_input(args, text, fixtures, monkeypatch, capsys, memsched_bin):
    from memsched_torch import plan, profile, scheduled

    def no_profiling(*a, **k):
        raise AssertionError("profiling started: bad input must be refused before")

    for mod in (profile, plan, scheduled):
        monkeypatch.setattr(mod, "profile_net", no_profiling)
    monkeypatch.chdir(fixtures)
    capsys.readouterr()
    try:
        code = main(args)
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    assert code == 2, (code, err)
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert text in lines[0], lines[0]
