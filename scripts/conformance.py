#!/usr/bin/env python3
"""Public-instance conformance of memsched's LP/MPS readers and solver front end.

Solves every .mps/.lp file (optionally gzip-compressed) under the given source folders with
memsched (`memsched solve --solver highs` and `--solver lpsolve`), the HiGHS binary and CBC, all
under one time limit, one thread, MIP gap 1e-9, and writes a table: file, rows x cols, status and
objective of each solver, agreement. scripts/conformance.sh prepares the sources and calls it;
see docs/conformance.md.

A file is a reference when HiGHS and CBC report the same status (optimal, infeasible or
unbounded) and, if optimal, objectives within 1e-6 relative. memsched agrees on a reference when
it reports that status and objective. A "wrong optimum" is memsched reporting optimal with an
objective that no reference solver that reported optimal has, where some reference solver
reported a definite status. Results are cached in results.json: a second run re-solves only new
files (or all of them with --fresh).
"""

import argparse
import gzip
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

TOL = 1e-6
DEFINITE = ("optimal", "infeasible", "unbounded")


def same_obj(a, b):
    return a is not None and b is not None and abs(a - b) <= TOL * max(1.0, abs(a), abs(b))


def collect(sources):
    """Yields (set, name, path) for each model file under the (set, folder) sources."""
    for set_name, folder in sources:
        for root, _, files in os.walk(folder):
            for f in sorted(files):
                low = f.lower()
                base = low[:-3] if low.endswith(".gz") else low
                if base.endswith((".mps", ".lp")) or (low.endswith(".gz") and "." not in base):
                    yield set_name, os.path.relpath(os.path.join(root, f), folder), os.path.join(root, f)


def prepare(path, dest_dir, name):
    """Decompresses path into dest_dir; a gzip file without a model extension (MIPLIB 3's
    naming) is MPS. Returns the plain file's path."""
    low = name.lower()
    if low.endswith(".gz"):
        low = low[:-3]
        if not low.endswith((".mps", ".lp")):
            low += ".mps"
    out = os.path.join(dest_dir, low.replace(os.sep, "_"))
    if not os.path.exists(out):
        os.makedirs(dest_dir, exist_ok=True)
        opener = gzip.open if name.lower().endswith(".gz") else open
        with opener(path, "rb") as src, open(out + ".tmp", "wb") as dst:
            shutil.copyfileobj(src, dst)
        os.replace(out + ".tmp", out)
    return out


def nonzeros(path):
    """Counts the matrix entries of an MPS file (COLUMNS lines, markers left out); None for LP
    files, which are not counted."""
    if not path.lower().endswith(".mps"):
        return None
    n, section = 0, None
    with open(path, errors="replace") as f:
        for line in f:
            if not line.strip() or line[0] == "*":
                continue
            if line[0] not in " \t":
                section = line.split()[0].upper()
                continue
            if section == "COLUMNS" and "MARKER" not in line:
                n += (len(line.split()) - 1) // 2
    return n


def run(cmd, timeout, env=None, cwd=None):
    start = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd, errors="replace")
        return p.returncode, p.stdout, p.stderr, time.time() - start
    except subprocess.TimeoutExpired:
        return None, "", "", time.time() - start


def first_line(s):
    for line in s.splitlines():
        if line.strip():
            return line.strip()
    return ""


def grace(limit):
    """How long past its time limit a solver may run before it is killed (CBC's -sec is checked
    only between phases; a killed run reports status killed)."""
    return max(20.0, limit)


def memsched(binary, path, solver, limit):
    rc, out, err, wall = run([binary, "solve", path, "--solver", solver, "--time-limit", str(limit),
                              "--gap", "1e-9", "--threads", "1", "--json"], limit + grace(limit))
    r = {"seconds": round(wall, 2), "limit": limit}
    if rc is None:
        r.update(status="killed", note="no answer %g s past the time limit" % grace(limit))
    elif rc == 0:
        rep = json.loads(out)
        r.update(status=rep["status"], objective=rep.get("objective"))
        if rep.get("refused"):
            r["note"] = rep["refused"]
    elif rc == 2:
        r.update(status="refused", note=first_line(err))
    else:
        r.update(status="error", note=first_line(err) or "exit %s" % rc)
    return r


HIGHS_STATUS = {
    "Optimal": "optimal", "Empty": "optimal", "Infeasible": "infeasible", "Unbounded": "unbounded",
    "Primal infeasible or unbounded": "infeasible-or-unbounded", "Time limit reached": "time-limit",
    "Iteration limit reached": "iteration-limit", "Solution limit reached": "iteration-limit",
}


def highs(binary, path, limit, work):
    sol = os.path.join(work, "highs.sol")
    opts = os.path.join(work, "highs.opt")
    with open(opts, "w") as f:
        f.write("mip_rel_gap = 1e-9\nthreads = 1\n")
    if os.path.exists(sol):
        os.remove(sol)
    env = dict(os.environ)
    lib = os.path.join(os.path.dirname(os.path.dirname(binary)), "lib")
    env["LD_LIBRARY_PATH"] = lib + os.pathsep + env.get("LD_LIBRARY_PATH", "")
    rc, out, err, wall = run([binary, "--model_file", path, "--time_limit", str(limit), "--options_file", opts,
                              "--solution_file", sol], limit + grace(limit), env, cwd=work)  # HiGHS writes Highs.log in its cwd
    r = {"seconds": round(wall, 2), "limit": limit}
    m = re.search(r"(\d+) rows?; (\d+) cols?", out)
    if m:
        r["size"] = "%s x %s" % (m.group(1), m.group(2))
    if rc is None:
        r.update(status="killed")
        return r
    if not os.path.exists(sol):
        errs = [l.strip() for l in (out + err).splitlines() if "ERROR" in l or "rror" in l]
        r.update(status="read-error", note=errs[0] if errs else first_line(out + err))
        return r
    text = open(sol).read()
    lines = text.splitlines()
    status = lines[1].strip() if len(lines) > 1 else "?"
    r["status"] = HIGHS_STATUS.get(status, status.lower())
    m = re.search(r"^Objective (\S+)", text, re.M)
    if m and r["status"] == "optimal":
        r["objective"] = float(m.group(1))
    return r


def maximizes(path):
    """CBC ignores the OBJSENSE section of MPS files: the sense is passed as -max."""
    if not path.lower().endswith(".mps"):
        return False
    with open(path, errors="replace") as f:
        section = None
        for line in f:
            if not line.strip() or line[0] == "*":
                continue
            words = line.split()
            if line[0] not in " \t":
                section = words[0].upper()
                if section in ("OBJSENSE", "OBJSENCE") and len(words) > 1:
                    return words[1].upper().startswith("MAX")
                if section == "ROWS":
                    return False
            elif section in ("OBJSENSE", "OBJSENCE"):
                return words[0].upper().startswith("MAX")
    return False


def cbc(path, limit, work):
    cmd = ["cbc", path] + (["-max"] if maximizes(path) else []) + ["-sec", str(limit), "-solve", "-quit"]
    rc, out, err, wall = run(cmd, limit + grace(limit), cwd=work)  # cbc may write files (xx.mps) in its cwd
    r = {"seconds": round(wall, 2), "limit": limit}
    if rc is None:
        r.update(status="killed")
        return r
    text = out + err
    if re.search(r"There were -?\d+ errors on input|Current model not valid|### ERROR", text):
        errs = [l.strip() for l in text.splitlines() if "ERROR" in l or "Bad image" in l or "Duplicate" in l]
        r.update(status="read-error", note=errs[0] if errs else "errors on input")
        return r
    res = re.search(r"^Result - (.*)$", text, re.M)
    if res:  # a MIP (branch and bound ran)
        what = res.group(1)
        if what.startswith("Optimal solution found"):
            m = re.search(r"Objective value:\s+(\S+)", text)
            r.update(status="optimal", objective=float(m.group(1)) if m else None)
        elif "infeasible" in what.lower():
            r.update(status="infeasible")
        elif "unbounded" in what.lower():
            r.update(status="unbounded")
        elif "time" in what.lower():
            r.update(status="time-limit")
        else:
            r.update(status="other", note=what)
        return r
    m = re.search(r"^Optimal objective (\S+) -", text, re.M) or re.search(r"Optimal - objective value (\S+)", text)
    if m:
        r.update(status="optimal", objective=float(m.group(1)))
    elif re.search(r"Primal ?infeasible|PrimalInfeasible", text):
        r.update(status="infeasible")
    elif re.search(r"Dual ?infeasible|DualInfeasible", text):
        r.update(status="unbounded")
    elif re.search(r"Stopped", text):
        r.update(status="time-limit")
    else:
        r.update(status="other", note=first_line(text[-400:]))
    return r


def judge(e):
    """Adds the agreement fields to one file's entry."""
    h, c, mh, ml = e["highs"], e["cbc"], e["memsched-highs"], e["memsched-lpsolve"]
    ref = None
    if h["status"] == c["status"] and h["status"] in DEFINITE:
        if h["status"] != "optimal" or same_obj(h.get("objective"), c.get("objective")):
            ref = {"status": h["status"], "objective": h.get("objective")}
    e["reference"] = ref

    def agrees(m):
        if ref is None or m["status"] != ref["status"]:
            return False
        return ref["status"] != "optimal" or same_obj(m.get("objective"), ref["objective"])

    e["highs_agrees"] = agrees(mh) if ref else None
    e["highs_timed_out"] = bool(ref) and not e["highs_agrees"] and mh["status"] in ("time-limit", "killed")
    e["lpsolve_agrees"] = agrees(ml) if ref else None
    wrong = []
    for key, m in (("memsched-highs", mh), ("memsched-lpsolve", ml)):
        if m["status"] != "optimal":
            continue
        definite = [r for r in (h, c) if r["status"] in DEFINITE]
        optima = [r.get("objective") for r in definite if r["status"] == "optimal"]
        if definite and not any(same_obj(m.get("objective"), o) for o in optima):
            wrong.append(key)
    e["wrong_optimum"] = wrong


def note(e, key):
    """The note of e's key result, the file's folder cut from the message."""
    return e[key].get("note", "").replace(os.path.dirname(e["path"]) + os.sep, "").replace("memsched: ", "", 1)


def cell(r):
    s = r["status"]
    if r.get("objective") is not None:
        s += " %.10g" % r["objective"]
    return s


def write_table(results, path, limit):
    skipped = [results[k] for k in sorted(results) if results[k].get("skipped")]
    entries = [results[k] for k in sorted(results) if not results[k].get("skipped")]
    limits = {}
    for e in entries:
        for key in ("highs", "cbc", "memsched-highs", "memsched-lpsolve"):
            limits.setdefault(key, set()).add(e[key].get("limit", limit))
    refs = [e for e in entries if e["reference"]]
    hi_ok = [e for e in refs if e["highs_agrees"]]
    lp_ok = [e for e in refs if e["lpsolve_agrees"]]
    hi_time = [e for e in refs if e["highs_timed_out"]]
    read = [e for e in refs if e["memsched-highs"]["status"] != "refused"]
    ref_refused = [e for e in refs if e["memsched-highs"]["status"] == "refused"]
    lp_time = [e for e in refs if not e["lpsolve_agrees"] and e["memsched-lpsolve"]["status"] in ("time-limit", "killed")]
    refused = [e for e in entries if e["memsched-highs"]["status"] == "refused"]
    wrong = [e for e in entries if e["wrong_optimum"]]
    lines = []
    w = lines.append
    w("# LP/MPS conformance: memsched against the HiGHS binary and CBC")
    w("")
    w("Generated by `scripts/conformance.sh` (1 thread, MIP gap 1e-9; time limit per solve: %s)." % ", ".join(
        "%s %s s" % (k, "/".join("%g" % x for x in sorted(v))) for k, v in limits.items()))
    w("")
    w("| | count |")
    w("| --- | --- |")
    w("| files | %d |" % len(entries))
    w("| reference files (HiGHS and CBC: same status, objectives within 1e-6) | %d |" % len(refs))
    w("| reference files memsched reads (the others hold a construct outside its model) | %d (%d refused) |" % (
        len(read), len(ref_refused)))
    w("| memsched-HiGHS agrees (status, objective within 1e-6 relative) | %d / %d read (+%d at its time limit) |" % (
        len(hi_ok), len(read), len(hi_time)))
    w("| memsched-lp_solve agrees | %d / %d read (+%d at its time limit) |" % (len(lp_ok), len(read), len(lp_time)))
    w("| memsched status optimal with a wrong objective | %d |" % len(wrong))
    w("| files memsched refuses (ParseError) | %d |" % len(refused))
    w("| files skipped (too many nonzeros) | %d |" % len(skipped))
    w("")
    disagree = [e for e in read if not e["highs_agrees"]]
    if disagree:
        w("## Reference files where memsched-HiGHS disagrees")
        w("")
        for e in disagree:
            w("- %s/%s: reference %s, memsched-HiGHS %s %s" % (e["set"], e["file"], cell(e["reference"]),
                                                          cell(e["memsched-highs"]), note(e, "memsched-highs")))
        w("")
    lp_other = [e for e in read if not e["lpsolve_agrees"] and e not in lp_time]
    if lp_other:
        w("## Reference files where memsched-lp_solve disagrees other than by its time limit")
        w("")
        for e in lp_other:
            m = e["memsched-lpsolve"]
            w("- %s/%s: reference %s, memsched-lp_solve %s %s" % (e["set"], e["file"], cell(e["reference"]), cell(m), note(e, "memsched-lpsolve")))
        w("")
    if wrong:
        w("## memsched optimal with an objective no reference solver has")
        w("")
        for e in wrong:
            w("- %s/%s: %s" % (e["set"], e["file"], ", ".join(e["wrong_optimum"])))
        w("")
    if skipped:
        w("## Files skipped")
        w("")
        for e in skipped:
            w("- %s/%s: %s" % (e["set"], e["file"], e["skipped"]))
        w("")
    w("## Files memsched refuses, with the construct")
    w("")
    w("(%d of them are reference files: %s.)" % (len(ref_refused), ", ".join(e["set"] + "/" + e["file"] for e in ref_refused) or "none"))
    w("")
    for e in refused:
        w("- %s/%s: %s" % (e["set"], e["file"], note(e, "memsched-highs")))
    w("")
    w("## All files")
    w("")
    w("| set | file | rows x cols | HiGHS | CBC | memsched-HiGHS | memsched-lp_solve | agreement |")
    w("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for e in entries:
        if e["reference"] is None:
            agree = "no reference"
        else:
            agree = "HiGHS %s, lp_solve %s" % ("yes" if e["highs_agrees"] else "NO",
                                              "yes" if e["lpsolve_agrees"] else e["memsched-lpsolve"]["status"])
        if e["wrong_optimum"]:
            agree += ", WRONG OPTIMUM"
        w("| %s | %s | %s | %s | %s | %s | %s | %s |" % (e["set"], e["file"], e["highs"].get("size", "?"), cell(e["highs"]),
                                                    cell(e["cbc"]), cell(e["memsched-highs"]), cell(e["memsched-lpsolve"]), agree))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return len(entries), len(refs), len(hi_ok), len(hi_time), len(lp_ok), len(lp_time), len(wrong), len(refused), len(skipped)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memsched", required=True, help="the memsched binary")
    ap.add_argument("--highs", required=True, help="the HiGHS binary")
    ap.add_argument("--time-limit", type=float, default=60)
    ap.add_argument("--out", required=True, help="output folder (results.json, table.md, files/)")
    ap.add_argument("--fresh", action="store_true", help="ignore cached results")
    ap.add_argument("--redo-memsched", action="store_true",
                    help="re-solve with memsched, keep the cached HiGHS and CBC results")
    ap.add_argument("--max-nonzeros", type=int, default=0,
                    help="skip MPS files with more matrix entries than this (0: none skipped)")
    ap.add_argument("--only", default="", help="regular expression on set/file: solve only these")
    ap.add_argument("sources", nargs="+", help="SET=FOLDER")
    a = ap.parse_args()
    a.out, a.highs, a.memsched = (os.path.abspath(x) for x in (a.out, a.highs, a.memsched))
    sources = [s.split("=", 1) for s in a.sources]
    os.makedirs(a.out, exist_ok=True)
    cache = os.path.join(a.out, "results.json")
    results = {}
    if os.path.exists(cache) and not a.fresh:
        results = json.load(open(cache))
    work = tempfile.mkdtemp(prefix="conformance-")
    todo = [(s, n, p) for s, n, p in collect(sources) if not a.only or re.search(a.only, s + "/" + n)]
    for i, (set_name, name, path) in enumerate(todo):
        key = set_name + "/" + name
        if key in results and not a.redo_memsched and not results[key].get("skipped"):
            continue
        plain = prepare(path, os.path.join(a.out, "files", set_name), name)
        nnz = nonzeros(plain) if a.max_nonzeros else None
        if nnz is not None and nnz > a.max_nonzeros:
            results[key] = {"set": set_name, "file": name, "path": plain,
                            "skipped": "%d nonzeros > %d" % (nnz, a.max_nonzeros)}
            print("[%d/%d] %s: skipped, %d nonzeros" % (i + 1, len(todo), key, nnz), flush=True)
            continue
        e = results.get(key)
        if e is None or e.get("skipped"):
            e = {"set": set_name, "file": name, "path": plain}
        if "highs" not in e:
            e["highs"] = highs(a.highs, plain, a.time_limit, work)
            e["cbc"] = cbc(plain, a.time_limit, work)
        e["memsched-highs"] = memsched(a.memsched, plain, "highs", a.time_limit)
        e["memsched-lpsolve"] = memsched(a.memsched, plain, "lpsolve", a.time_limit)
        judge(e)
        results[key] = e
        print("[%d/%d] %s: HiGHS %s | CBC %s | memsched-HiGHS %s | lp_solve %s" % (
            i + 1, len(todo), key, cell(e["highs"]), cell(e["cbc"]), cell(e["memsched-highs"]),
            cell(e["memsched-lpsolve"])), flush=True)
        with open(cache + ".tmp", "w") as f:
            json.dump(results, f, indent=1)
        os.replace(cache + ".tmp", cache)
    for e in results.values():
        if not e.get("skipped"):
            judge(e)
    n, refs, hi, hit, lp, lpt, wrong, refused, skipped = write_table(results, os.path.join(a.out, "table.md"), a.time_limit)
    print("files %d, references %d, memsched-HiGHS agrees %d (+%d at its time limit), memsched-lp_solve agrees %d "
          "(+%d at its time limit), wrong optima %d, refused %d, skipped %d; table: %s" % (
              n, refs, hi, hit, lp, lpt, wrong, refused, skipped, os.path.join(a.out, "table.md")))
    shutil.rmtree(work, ignore_errors=True)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
