"""Tests of `herd bench` / `herd report` (herd_bench.suite, .matrix, .paper,
.timeline): kernel selection, matrix expansion, commands per runtime, how a
run is judged, a matrix run against fake kernel binaries, and the report
from a small recorded result (tools/tests/data/bench-tiny, a real run of
fib and uts at small inputs). No timing is asserted."""
from __future__ import annotations

import io
import json
import stat
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from herd_bench import __main__ as entry  # noqa: E402
from herd_bench.matrix import judge, run_matrix, write_results  # noqa: E402
from herd_bench.paper import Results, load, steals, table2, variability, write_report  # noqa: E402
from herd_bench.suite import (VARIANTS, Cell, Command, Paths, Selection, command,  # noqa: E402
                              expand, input_mismatches, libomp_links, parse_kernels,
                              published_inputs, suite)
from herd_bench.timeline import parse as parse_trace  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"


# ------------------------------------------------------------- selection

def test_parse_kernels_variants_and_inputs() -> None:
    assert parse_kernels("fib", "medium") == (("fib", "cutoff", "medium"),
                                              ("fib", "nocutoff", "medium"))
    assert parse_kernels("sort@small,nqueens/nocutoff", "large") == (
        ("sort", "mergesort", "small"), ("nqueens", "nocutoff", "large"))


@pytest.mark.parametrize("bad", ["", "frob", "fib/none", "fib@huge"])
def test_parse_kernels_rejects(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_kernels(bad, "small")


def test_quick_suite_expansion() -> None:
    sel = suite("quick", 2)
    assert sel.threads == (1, 2) and sel.reps == 2
    cells = expand(sel)
    kv = {(c.kernel, c.variant) for c in cells}
    assert len(kv) == 14  # every kernel variant
    assert all(c.input == "medium" for c in cells)
    serial = [c for c in cells if c.runtime == "serial"]
    assert len(serial) == 14 and all(c.threads == 0 for c in serial)
    # herd native only where it has a version: fib x2, nqueens x2, sort, uts.
    native = {(c.kernel, c.variant) for c in cells if c.runtime == "herd"}
    assert native == {("fib", "cutoff"), ("fib", "nocutoff"), ("nqueens", "cutoff"),
                      ("nqueens", "nocutoff"), ("sort", "mergesort"), ("uts", "tasks")}
    assert {c.kernel for c in cells if c.runtime == "tbb"} == {"fib", "sort"}
    # herd-omp: every kernel under auto at 1 and 2 threads, ws and mts at 2 only.
    omp = [c for c in cells if c.runtime == "herd-omp"]
    assert len(omp) == 14 * (2 + 1 + 1)
    assert {(c.sched, c.threads) for c in omp} == {("auto", 1), ("auto", 2), ("ws", 2),
                                                   ("mts", 2)}
    assert {(c.sched, c.threads) for c in cells if c.runtime == "herd"} == {
        ("auto", 1), ("auto", 2), ("ws", 2), ("mts", 2)}
    # The clang twins: every kernel on libomp, and on herd under auto only.
    assert {(c.sched, c.threads) for c in cells if c.runtime == "clang-libomp"} == {
        (None, 1), (None, 2)}
    kmp = [c for c in cells if c.runtime == "clang-herd-omp"]
    assert len(kmp) == 14 * 2 and {(c.sched, c.threads) for c in kmp} == {("auto", 1),
                                                                          ("auto", 2)}
    assert len(cells) == len(set(cells))
    # full: every scheduler at every thread count, for both ABIs.
    full = expand(suite("full", 4))
    omp_full = [c for c in full if c.runtime == "herd-omp"]
    assert len(omp_full) == 14 * 2 * 10 * 3  # variants x inputs x schedulers x (1, 2, 4)
    assert len([c for c in full if c.runtime == "clang-herd-omp"]) == len(omp_full)


def test_chosen_threads_apply_to_every_scheduler() -> None:
    ap = entry.bench_parser()
    args = ap.parse_args(["--threads", "1,2"])
    _, sel = entry.selection(args, ap)
    assert sel.side_threads is None
    args = ap.parse_args(["--kernels", "fib"])
    _, sel = entry.selection(args, ap)
    assert sel.side_threads == (entry._nproc(),)
    assert sel.clang_first_sched  # the quick suite's clang-herd-omp: auto only


def test_chosen_scheds_apply_to_clang_herd_omp() -> None:
    ap = entry.bench_parser()
    args = ap.parse_args(["--kernels", "fib/cutoff", "--runtimes", "clang-herd-omp",
                          "--scheds", "ws,mts", "--threads", "2"])
    _, sel = entry.selection(args, ap)
    assert not sel.clang_first_sched
    assert {(c.rt, c.threads) for c in expand(sel)} == {("clang-herd-omp:ws", 2),
                                                        ("clang-herd-omp:mts", 2)}
    with pytest.raises(SystemExit):
        entry.selection(ap.parse_args(["--runtimes", "clang"]), ap)


def test_sched_variants_set_their_variables(tmp_path: Path) -> None:
    """--scheds takes bench_table's variants: each run gets every HERD_* they name."""
    ap = entry.bench_parser()
    args = ap.parse_args(["--kernels", "fib/nocutoff", "--runtimes", "herd-omp,herd",
                          "--scheds", "ws,ws:spawn=work-first,hier:steal=half", "--threads", "2"])
    _, sel = entry.selection(args, ap)
    assert {c.rt for c in expand(sel)} == {
        "herd-omp:ws", "herd-omp:ws:spawn=work-first", "herd-omp:hier:steal=half",
        "herd:ws", "herd:ws:spawn=work-first", "herd:hier:steal=half"}
    paths = Paths(tmp_path, herd_omp=tmp_path / "lib/herd/libgomp.so.1")
    wf = command(Cell("fib", "nocutoff", "small", "herd-omp", "ws:spawn=work-first", 2), paths,
                 None)
    assert wf.env["HERD_SCHED"] == "ws" and wf.env["HERD_SPAWN"] == "work-first"
    nat = command(Cell("fib", "nocutoff", "small", "herd", "hier:steal=half", 2), paths, None)
    assert nat.env == {"HERD_SCHED": "hier", "HERD_STEAL": "half"}
    plain = command(Cell("fib", "nocutoff", "small", "herd-omp", None, 2), paths, None)
    assert plain.env["HERD_SCHED"] == "auto" and "HERD_SPAWN" not in plain.env
    for bad in ("ws:spawn", "ws:colour=red", "ws:spawn=a:spawn=b"):
        with pytest.raises(SystemExit):
            entry.selection(ap.parse_args(["--scheds", bad]), ap)


def test_single_thread_count_on_one_pu() -> None:
    assert suite("quick", 1).threads == (1,)
    assert suite("full", 8).threads == (1, 2, 4, 8)


def test_commands_per_runtime(tmp_path: Path) -> None:
    paths = Paths(tmp_path, herd_omp=tmp_path / "lib/herd/libgomp.so.1",
                  libomp=Path("/usr/lib/llvm-14/lib/libomp.so.5"),
                  herd_kmp=tmp_path / "lib/herd/libomp.so.5")
    libdir = tmp_path / "libomp"
    ser = command(Cell("fib", "cutoff", "small", "serial", None, 0), paths, libdir)
    assert ser.argv[-1] == "--seq" and "OMP_NUM_THREADS" not in ser.env
    lo = command(Cell("fib", "cutoff", "small", "libomp", None, 2), paths, libdir)
    assert lo.env["OMP_NUM_THREADS"] == "2"
    assert lo.env["LD_LIBRARY_PATH"].split(":")[0] == str(libdir)
    assert lo.expect_lib == paths.libomp
    ho = command(Cell("sort", "mergesort", "small", "herd-omp", "mts", 2), paths, libdir)
    assert ho.env["HERD_SCHED"] == "mts" and ho.stats
    assert ho.env["LD_LIBRARY_PATH"].split(":")[0] == str(tmp_path / "lib/herd")
    assert ho.argv[0] == str(tmp_path / "omp" / "omp_sort") and ho.expect_lib == paths.herd_omp
    # The clang twins: the same arguments, the _clang binary, libomp.so.5 of each runtime.
    cl = command(Cell("fib", "cutoff", "small", "clang-libomp", None, 2), paths, libdir)
    assert cl.argv[0] == str(tmp_path / "omp" / "omp_fib_clang") and cl.argv[1:] == lo.argv[1:]
    assert cl.env == lo.env and cl.expect_lib == paths.libomp and not cl.stats
    ck = command(Cell("sort", "mergesort", "small", "clang-herd-omp", "mts", 2), paths, libdir)
    assert ck.argv[0] == str(tmp_path / "omp" / "omp_sort_clang") and ck.argv[1:] == ho.argv[1:]
    assert ck.env == ho.env and ck.stats and ck.expect_lib == tmp_path / "lib/herd/libomp.so.5"
    nat = command(Cell("nqueens", "nocutoff", "medium", "herd", "ws", 2), paths, libdir)
    assert nat.argv[0].endswith("bench_nqueens")
    assert nat.argv[1:5] == ["--n", "12", "--cutoff", "12"]  # no cut-off: every row a task
    fib = command(Cell("fib", "cutoff", "medium", "herd", "ws", 2), paths, libdir)
    assert fib.argv[1:7] == ["--n", "40", "--shape", "both", "--cutoff", "12"]
    fnc = command(Cell("fib", "nocutoff", "small", "herd", "ws", 2), paths, libdir)
    assert fnc.argv[1:5] == ["--n", "22", "--shape", "both"] and "--cutoff" not in fnc.argv
    tbb = command(Cell("fib", "cutoff", "medium", "tbb", None, 2), paths, libdir)
    assert tbb.argv[0].endswith("tbb/tbb_fib") and "--cutoff" in tbb.argv


def test_input_mismatches() -> None:
    """What the kernels print with --list-inputs against suite.py's copies."""
    good = {k: {"kernel": k, "variants": list(VARIANTS[k]), "inputs": v}
            for k, v in published_inputs().items()}
    assert input_mismatches(good) == []
    assert good["fib"]["inputs"]["cutoff"] == {"n": [30, 40, 50], "cutoff": 12}
    assert good["health"]["inputs"] is None  # no copy kept: nothing to disagree with
    bad = json.loads(json.dumps(good))
    bad["sort"]["inputs"]["mergesort"]["n"][1] = 123
    bad["nqueens"]["variants"] = ["cutoff"]
    bad["uts"] = None
    got = input_mismatches(bad)
    assert len(got) == 3
    assert got[0].startswith("nqueens: variants") and got[1].startswith("sort: inputs")
    assert got[2] == "uts: omp_uts --list-inputs gave no JSON line"


# -------------------------------------------------------------- judging

CELL = Cell("fib", "cutoff", "small", "libomp", None, 2)


def line(**kw: object) -> str:
    rec = {"kernel": "fib", "workers": 2, "verified": True, "seconds": 0.5,
           "omp_lib": "/x/libomp.so.5"}
    rec.update(kw)
    return "noise\n" + json.dumps(rec) + "\n"


def test_judge_accepts_a_good_run(tmp_path: Path) -> None:
    lib = tmp_path / "libomp.so.5"
    lib.write_text("")
    rec, err, secs = judge(CELL, Command([], expect_lib=lib), 0, line(omp_lib=str(lib)), "")
    assert err == "" and secs == 0.5 and rec is not None


def test_libomp_links_serve_both_abis(tmp_path: Path) -> None:
    lib = tmp_path / "libomp.so.5"
    lib.write_text("")
    d = libomp_links(tmp_path, Paths(tmp_path, libomp=lib))
    assert d is not None
    assert (d / "libgomp.so.1").resolve() == lib and (d / "libomp.so.5").resolve() == lib
    assert libomp_links(tmp_path / "x", Paths(tmp_path)) is None


def test_clang_rows_not_built_without_twins(tmp_path: Path) -> None:
    (tmp_path / "omp").mkdir()
    lib = tmp_path / "libomp.so.5"
    lib.write_text("")
    paths = Paths(tmp_path, herd_omp=lib, libomp=lib, herd_kmp=lib)
    for rt in ("clang-libomp", "clang-herd-omp"):
        ok, why = paths.available(rt)
        assert not ok and why.startswith("not built") and "clang" in why
    (tmp_path / "omp" / "omp_fib_clang").write_text("")
    assert paths.available("clang-libomp") == (True, "")
    assert paths.available("clang-herd-omp", "fib") == (True, "")
    assert not paths.available("clang-herd-omp", "uts")[0]  # that kernel's twin is missing
    ok, why = Paths(tmp_path, libomp=lib).available("clang-herd-omp", "fib")
    assert not ok and "lib/herd/libomp.so.5" in why


@pytest.mark.parametrize("rc,out,err_part", [
    (0, line(verified=False), "verification failed"),
    (1, line(verified=False), "exit 1, verification failed"),
    (-11, "", "killed by SIGSEGV"),
    (0, "no json here\n", "no JSON result line"),
    (0, line(workers=1), "ran on 1 threads, asked for 2"),
    (0, line(omp_lib="/lib/x86_64-linux-gnu/libgomp.so.1"), "ran on /lib/x86_64-linux-gnu"),
])
def test_judge_failures(tmp_path: Path, rc: int, out: str, err_part: str) -> None:
    lib = tmp_path / "libomp.so.5"
    lib.write_text("")
    _, err, secs = judge(CELL, Command([], expect_lib=lib), rc, out, "")
    assert err_part in err and secs is None


# ------------------------------------------------- a run with fake kernels

FAKE = """#!/bin/sh
# A fake OpenMP kernel: prints what a real one prints; $VERDICT decides. It
# reports the library it would load from the first LD_LIBRARY_PATH folder
# (@LIB@: libgomp.so.1 for a gcc binary, libomp.so.5 for a clang twin).
seq=0; for a in "$@"; do [ "$a" = --seq ] && seq=1; done
w=${OMP_NUM_THREADS:-0}; [ $seq = 1 ] && w=0
lib="${LD_LIBRARY_PATH%%:*}/@LIB@"
echo '{"kernel":"k","workers":'$w',"omp_lib":"'$lib'","seconds":0.25,"verified":VERDICT}'
"""


def fake(path: Path, verdict: str = "true", lib: str = "libgomp.so.1") -> None:
    path.write_text(FAKE.replace("VERDICT", verdict).replace("@LIB@", lib))
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def make_bench(tmp: Path) -> Paths:
    """Fake gcc kernels fib (good) and nqueens (wrong result), and a clang twin
    of fib only."""
    omp = tmp / "bench" / "omp"
    omp.mkdir(parents=True)
    for k, verdict in (("fib", "true"), ("nqueens", "false")):
        fake(omp / f"omp_{k}", verdict)
    fake(omp / "omp_fib_clang", lib="libomp.so.5")
    libomp = tmp / "libomp.so.5"
    libomp.write_text("")
    return Paths(tmp / "bench", herd_omp=None, libomp=libomp)


def test_run_matrix_records_failures_and_not_built(tmp_path: Path) -> None:
    paths = make_bench(tmp_path)
    sel = Selection(parse_kernels("fib/cutoff,nqueens/cutoff", "small"),
                    ("serial", "libgomp", "libomp", "herd-omp", "clang-libomp",
                     "clang-herd-omp"), ("ws",), (1, 2), 2)
    cells = expand(sel)
    progress = io.StringIO()
    recs = run_matrix(cells, 2, paths, timeout=20, seed=3, progress=progress)
    by = {}
    for r in recs:
        by.setdefault((r["kernel"], r["runtime"], r["threads"]), []).append(r)
    # fib: everything good, both libomp rows included (the fake reports the
    # libomp folder's link of its ABI: libgomp.so.1, or libomp.so.5 for the twin).
    herdless = ("herd-omp", "clang-herd-omp")
    assert all(r["ok"] for k, v in by.items() if k[0] == "fib" and k[1] not in herdless
               for r in v)
    assert len(by[("fib", "libomp", 2)]) == 2 and len(by[("fib", "clang-libomp", 2)]) == 2
    # nqueens: every run fails verification, and says so; it has no clang twin.
    assert all(not r["ok"] and r["error"] == "verification failed"
               for k, v in by.items() if k[0] == "nqueens" and k[1] in ("libgomp", "libomp")
               for r in v)
    assert all(r["status"] == "not built" for r in by[("nqueens", "clang-libomp", 2)])
    # herd-omp (both ABIs) is not built: one visible record per cell, never run.
    for rt in herdless:
        nb = [r for r in recs if r["runtime"] == rt]
        assert len(nb) == 4 and all(r["status"] == "not built" for r in nb)
    assert "left" in progress.getvalue() and "ETA" in progress.getvalue()
    # The report shows all of it.
    doc = {"format": "herd-bench-matrix/1", "suite": "custom", "reps": 2, "seed": 3,
           "cells": [c.to_json() for c in cells], "runs": recs,
           "runtimes": {"herd-omp": {"available": False, "why": "not built: test"}}}
    write_results(doc, tmp_path / "out")
    assert (tmp_path / "out" / "results.csv").read_text().count("\n") == len(recs) + 1
    md, text = write_report(load(tmp_path / "out"), tmp_path / "out")
    report = md.read_text()
    assert "nqueens/cutoff" in report and "FAILED" in report and "not built" in report
    assert "verification failed" in report  # the Failures section gives the reason
    head = [ln for ln in report.splitlines() if ln.startswith("| kernel |")][0]
    assert "| herd-omp:ws | clang-libomp | clang-herd-omp:ws |" in head  # beside the gcc rows


def test_clang_run_on_the_wrong_library_fails(tmp_path: Path) -> None:
    """A clang twin that did not get the libomp.so.5 it asked for (here: one
    that reports another file, as the system libgomp) is a failed run, never
    a silent one."""
    paths = make_bench(tmp_path)
    other = tmp_path / "libgomp.so.1"
    other.write_text("")
    twin = paths.bench / "omp" / "omp_fib_clang"
    twin.write_text(twin.read_text().replace('"${LD_LIBRARY_PATH%%:*}/libomp.so.5"',
                                             f'"{other}"'))
    kmp = tmp_path / "herd" / "libomp.so.5"
    kmp.parent.mkdir()
    kmp.write_text("")
    paths.herd_kmp = kmp
    cells = expand(Selection(parse_kernels("fib/cutoff", "small"),
                             ("clang-libomp", "clang-herd-omp"), ("auto",), (2,), 1))
    recs = run_matrix(cells, 1, paths, timeout=20, seed=1, progress=io.StringIO())
    assert len(recs) == 2 and not any(r["ok"] for r in recs)
    assert all(r["error"].startswith("ran on ") and "libgomp.so.1, not " in r["error"]
               for r in recs)


# ------------------------------------------------- report from a recording

def test_report_tables_from_recorded_result() -> None:
    res = Results(load(DATA / "bench-tiny"))
    t2 = table2(res)
    assert t2[0][:3] == ("kernel", "input", "serial s")
    assert t2[0][3:6] == ("libgomp", "libomp", "herd-omp:ws")  # runtime order is fixed
    row = {r[0]: r for r in t2[1:]}
    assert set(row) == {"fib/cutoff", "fib/nocutoff", "uts"}
    col = t2[0].index("herd:ws")
    assert row["fib/cutoff"][col] == "n/a"  # no native fib with a cut-off
    assert row["uts"][t2[0].index("herd-omp:ws")] == "not built"
    assert "x)" in row["uts"][col]  # a median with its speedup
    t3 = variability(res)
    assert t3[0][2] == "serial" and all(c.endswith("%") or c in ("n/a", "not built", "-")
                                        for r in t3[1:] for c in r[2:])
    t4 = steals(res)
    assert [r[2] for r in t4[1:]] == ["herd:ws", "herd:ws"]  # fib/nocutoff, uts; no herd-omp


def test_report_writes_markdown_and_figures(tmp_path: Path) -> None:
    md, text = write_report(load(DATA / "bench-tiny"), tmp_path)
    report = md.read_text()
    for part in ("Table 2 analogue", "Table 3 analogue", "Table 4 analogue", "## Failures",
                 "| fib/nocutoff | small |", "Machine topology"):
        assert part in report
    pytest.importorskip("matplotlib")
    pngs = sorted(p.name for p in tmp_path.glob("*.png"))
    assert pngs == ["speedup-fib-cutoff-small.png", "speedup-fib-nocutoff-small.png",
                    "speedup-uts-small.png"]
    assert all(f"]({p})" in report for p in pngs)


def test_report_command_rejects_other_json(tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    bad.write_text("{}")
    assert entry.main(["report", str(bad)]) == 1


# -------------------------------------------------------------- timeline

def test_trace_parse_counts() -> None:
    doc = json.loads((DATA / "trace-sort.json").read_text())
    lanes = parse_trace(doc)
    assert sorted(lanes.names.values()) == ["worker 0 (PU 0)", "worker 1 (PU 1)"]
    n = {cat: len(v) for cat, v in lanes.spans.items()}
    want = {}
    for e in doc["traceEvents"]:
        if e["ph"] == "X":
            want[e["cat"]] = want.get(e["cat"], 0) + 1
    assert n == want
    assert len(lanes.steals) == sum(1 for e in doc["traceEvents"] if e.get("cat") == "steal")
    assert all(v in (1, 2) for _, _, v in lanes.steals)  # victims map to lanes
    with pytest.raises(ValueError):
        parse_trace({"nothing": []})


def test_trace_draw(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "t.png"
    assert entry.main(["report", "--trace", str(DATA / "trace-sort.json"), "--out",
                       str(out)]) == 0
    assert out.stat().st_size > 1000


def test_interrupt_keeps_what_ran(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from herd_bench import matrix
    paths = make_bench(tmp_path)
    cells = expand(Selection(parse_kernels("fib/cutoff", "small"), ("serial", "libgomp"),
                             ("ws",), (1,), 2))
    real, calls = matrix.run_one, []

    def flaky(*a: object, **kw: object) -> dict:
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(matrix, "run_one", flaky)
    recs = run_matrix(cells, 2, paths, timeout=20, seed=1, progress=io.StringIO())
    assert len(recs) == 4  # one ran, three recorded as not run
    assert sum(r["status"] == "not run" for r in recs) == 3
