#!/usr/bin/env python3
"""Side by side: memsched's C_MP against rockmate 2.0.0's rotor C solver (issues 14, 23).

For each chain, budget and slot count it times
  - memsched: the whole process `memsched remat --algo persistent --slots S --mem B --json`
    (load, table, rebuild, replay), and
  - rockmate: its C solver alone (RkTable(chain, mmax), get_opt, build_sequence), on the same
    chain converted to rockmate's inputs with the same slot size,
then replays rockmate's sequence with `memsched remat --sequence` under 004's memory model and
prints the makespans side by side.

Conversion (memsched stages 1..L+1, the last one the loss; rockmate blocks 0..L-1 and a
zero-cost loss block L): block i is stage i+1 with one option, fw = ff_fw = u_f, bw = u_b,
cw[i] = ω_a^i (cw[L+1] = 0), cbw[i+1] = ω_ā^{i+1} (for the last block minus its output, which
rockmate keeps outside the budget, as it does cw[0]), fwd_tmp = ff_fwd_tmp = o_f, bwd_tmp = o_b.
Sizes are rounded up to the slot of memsched's table (q = ⌈budget/S⌉).

The two models count the final output a^L differently: rockmate keeps it outside its budget and
takes a whole slot for it (its discretize_budget, ⌊M/q⌋ − cw[0] − cw[L]), memsched counts its
bytes inside like any activation (as a^L, δ^L and in the loss stage's ā^{L+1}, where rockmate's
loss block has none). With --same-problem (the default) both solve the same discrete problem:
the chain given to both has ω_a^L = ω_δ^L = ω_ā^{L+1} = 0 (ResNet-1001: 1280 B of logits,
against q ≈ 244 MB; ā^L still holds them), and rockmate's budget is memsched's table width
⌊(M − ω_a^0)/q⌋. Without it, the chain is the zoo's and rockmate's budget its own, so that it
often answers memsched's makespan for one slot less.

Where the makespans still differ, rockmate's memory model is the reason (its solver.c):
  - a split of (a, b) is allowed only when m ≥ 004's printed m_∅^{a,b} (all forward steps up
    to b, whatever the split), which rejects persistent sequences that memsched's exact per-split
    check (SPEC §1) accepts;
  - the check of B^i reads m ≥ cw[i] + cbw[i+1] + bwd_tmp (its own comment: "No cw[i+1] ??"):
    the incoming gradient is not counted, so rockmate may accept sequences whose backward
    steps exceed the budget under 004's model (the replay then reports peak > budget).
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

UNITS = {"B": 1, "KB": 1e3, "KiB": 1024, "MB": 1e6, "MiB": 1 << 20, "GB": 1e9, "GiB": 1 << 30}
TIMES = {"s": 1.0, "ms": 1e-3, "us": 1e-6}


def load_chain(path):
    with open(path) as f:
        d = json.load(f)
    units = d.get("units", {})
    mem = UNITS[units.get("memory", "B")]
    sec = TIMES[units.get("time", "s")]
    stages = []
    for st in d["stages"]:
        a = round(st.get("a", 0) * mem)
        stages.append({
            "uf": st.get("uf", 0) * sec, "ub": st.get("ub", 0) * sec, "a": a,
            "abar": round(st.get("abar", st.get("a", 0)) * mem),
            "of": round(st.get("of", 0) * mem), "ob": round(st.get("ob", 0) * mem),
        })
    a0 = round(d["input"]["a"] * mem)
    return a0, stages


def zero_final_output(path, tmpdir):
    """A copy of the chain with the final output a^L (δ^L, and the loss stage's ā, which holds it)
    of size 0 (see the module doc)."""
    with open(path) as f:
        d = json.load(f)
    st, loss = d["stages"][-2], d["stages"][-1]
    st["a"] = 0
    if "delta" in st:
        st["delta"] = 0
    loss["abar"] = 0
    out = os.path.join(tmpdir, os.path.basename(path))
    with open(out, "w") as f:
        json.dump(d, f)
    return out


class RkChain:
    """The attributes rockmate's solver.c reads (get_rk_chain)."""

    def __init__(self, a0, stages, q):
        up = lambda x: int(math.ceil(x / q))
        loss = stages[-1]
        body = stages[:-1]
        if loss["uf"] or loss["ub"]:
            print(f"note: the loss stage's times ({loss['uf']}, {loss['ub']} s) are not in rockmate's chain", file=sys.stderr)
        ln = len(body)
        self.ln = ln
        self.nb_sol = [1] * (ln + 1)
        self.fw = [[s["uf"]] for s in body] + [[0.0]]
        self.bw = [[s["ub"]] for s in body] + [[0.0]]
        self.ff_fw = [s["uf"] for s in body] + [0.0]
        cw = [a0] + [s["a"] for s in body] + [0]
        cbw = [[0]] + [[s["abar"]] for s in body] + [[0]]
        cbw[ln] = [cbw[ln][0] - cw[ln]]  # rockmate: the final output is not in the budget
        self.cw = [up(x) for x in cw]
        self.cbw = [[up(x) for x in c] for c in cbw]
        self.fwd_tmp = [[up(s["of"])] for s in body] + [[0]]
        self.bwd_tmp = [[up(s["ob"])] for s in body] + [[0]]
        self.ff_fwd_tmp = [up(s["of"]) for s in body] + [0]


def to_memsched(seq, n):
    """rockmate's sequence as memsched operations (block i = stage i+1, Loss = stage n)."""
    kinds = {"SeqBlockFe": "Fall", "SeqBlockFc": "Fck", "SeqBlockFn": "Fn", "SeqBlockBwd": "B"}
    out = []
    for op in seq:
        name = type(op).__name__
        if name == "SeqLoss":
            out += [{"op": "Fall", "stage": n}, {"op": "B", "stage": n}]
        else:
            out.append({"op": kinds[name], "stage": op.index + 1})
    return out


def memsched_json(memsched, *args):
    t0 = time.perf_counter()
    out = subprocess.run([memsched, *args, "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out), time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memsched", required=True)
    ap.add_argument("--baseline", help="a second memsched binary (e.g. an earlier build), timed on the same points"
                    " in the same run: its time and ratio are printed beside memsched's")
    ap.add_argument("--rockmate", required=True, help="folder holding the rockmate package with the built csolver")
    ap.add_argument("--slots", default="200,500")
    ap.add_argument("--same-problem", action=argparse.BooleanOptionalAction, default=True,
                    help="final output a^L = 0 for both and rockmate's budget = memsched's table width")
    ap.add_argument("--budgets", default="25,50,75", help="percent between the smallest feasible budget and the store-all peak")
    ap.add_argument("chains", nargs="+")
    o = ap.parse_args()
    sys.path.insert(0, o.rockmate)
    kernel = memsched_json(o.memsched, "version")[0].get("minplus_kernel", "?")
    print(f"load average {os.getloadavg()[0]:.1f} at the start (the machine is shared)")
    from rockmate.solvers.rk_rotor import csolver  # noqa: E402

    base_hdr = f" {'baseline s':>10} {'ratio':>7}" if o.baseline else ""
    print(f"{'chain':<14} {'budget':>5} {'GiB':>7} {'slots':>5} {'memsched s':>10} {'rockmate s':>10} {'ratio':>7}{base_hdr}"
          f" {'memsched ms':>12} {'rockmate ms':>12} {'rockmate replayed':>20}")
    ratios, base_ratios, equal, points = [], [], 0, 0
    tmpdir = tempfile.mkdtemp()
    for path in o.chains:
        if o.same_problem:
            path = zero_final_output(path, tmpdir)
        a0, stages = load_chain(path)
        info, _ = memsched_json(o.memsched, "info", "--chain", path)
        lo, hi = info["min_budget"], info["store_all_peak"]
        name = os.path.splitext(os.path.basename(path))[0]
        for slots in [int(s) for s in o.slots.split(",")]:
            for pct in [int(p) for p in o.budgets.split(",")]:
                budget = lo + (hi - lo) * pct // 100
                args = ["remat", "--chain", path, "--algo", "persistent", "--slots", str(slots), "--mem", str(budget)]
                base = ""
                if o.baseline and points % 2:  # alternately first, so that neither gains from order
                    bs, bs_t = memsched_json(o.baseline, *args)
                ms, ms_t = memsched_json(o.memsched, *args)
                if o.baseline and not points % 2:
                    bs, bs_t = memsched_json(o.baseline, *args)
                if o.baseline:
                    if bs.get("sequence") != ms.get("sequence") or bs.get("makespan") != ms.get("makespan"):
                        print(f"note: the baseline's answer differs from memsched's at {pct}% and {slots} slots", file=sys.stderr)
                q = ms.get("slot_size") or max(1, -(-budget // slots))
                chain = RkChain(a0, stages, q)
                if o.same_problem:
                    mmax = (budget - a0) // q
                else:
                    mmax = budget // q - chain.cw[0] - chain.cw[chain.ln]
                t0 = time.perf_counter()
                table = csolver.RkTable(chain, mmax)
                opt = table.get_opt(mmax)
                seq = None
                if math.isfinite(opt):
                    seq = table.build_sequence(mmax)
                rk_t = time.perf_counter() - t0
                del table
                replay = "infeasible"
                if seq is not None:
                    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
                        json.dump(to_memsched(seq, len(stages)), f)
                    rep, _ = memsched_json(o.memsched, "remat", "--chain", path, "--mem", str(budget), "--sequence", f.name)
                    os.unlink(f.name)
                    fits = "fits" if rep["feasible"] else f"peak {rep['peak_memory'] / budget:.3f}×budget"
                    replay = f"{rep['makespan'] * 1e3:.4f} {fits}"
                ratio = rk_t / ms_t
                ratios.append(ratio)
                if o.baseline:
                    base_ratios.append(rk_t / bs_t)
                    base = f" {bs_t:>10.3f} {rk_t / bs_t:>6.1f}×"
                points += 1
                if ms["feasible"] and math.isfinite(opt) and abs(ms["makespan"] - opt) <= 1e-9 * opt:
                    equal += 1
                msv = f"{ms['makespan'] * 1e3:.4f}" if ms["feasible"] else "infeasible"
                rkv = f"{opt * 1e3:.4f}" if math.isfinite(opt) else "infeasible"
                print(f"{name:<14} {pct:>4}% {budget / 2**30:>7.2f} {slots:>5} {ms_t:>10.3f} {rk_t:>10.3f} {ratio:>6.1f}×{base}"
                      f" {msv:>12} {rkv:>12} {replay:>20}", flush=True)
    print(f"\nratio (rockmate's C solve / memsched's whole process): {min(ratios):.1f}× to {max(ratios):.1f}×"
          f" (geometric mean {math.exp(sum(map(math.log, ratios)) / len(ratios)):.1f}×); makespans equal on {equal} of {points}"
          f" ({'the same problem: a^L = 0, the same table width' if o.same_problem else 'each model as it is'})")
    if base_ratios:
        print(f"baseline {o.baseline}: {min(base_ratios):.1f}× to {max(base_ratios):.1f}×"
              f" (geometric mean {math.exp(sum(map(math.log, base_ratios)) / len(base_ratios)):.1f}×) in the same run")
    print(f"memsched min-plus kernel: {kernel}; load average {os.getloadavg()[0]:.1f} at the end (the machine is shared)")


if __name__ == "__main__":
    main()
