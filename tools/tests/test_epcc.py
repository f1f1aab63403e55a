"""`herd bench epcc` (herd_bench.epcc): the runs' plan, how a run is judged,
the table with herd's ratio per ABI, and a whole run against fake omp_epcc
binaries. No timing is asserted."""
from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from herd_bench import epcc  # noqa: E402

# A fake omp_epcc: one JSON line per --only construct, as epcc.c prints them,
# naming the library it would load from the first LD_LIBRARY_PATH folder
# (@LIB@); its overhead is @US@, halved on a herd folder.
FAKE = """#!/bin/sh
only=""; while [ $# -gt 0 ]; do [ "$1" = --only ] && only=$2; shift; done
dir="${LD_LIBRARY_PATH%%:*}"; us=@US@
case "$dir" in */lib/herd) us=$(awk "BEGIN { print $us / 2 }") ;; esac
for c in $(echo "$only" | tr , ' '); do
  t=$OMP_NUM_THREADS; [ "$c" = nested ] && t="${t}x2"
  printf '{"construct":"%s","threads":"%s","overhead_us":%s,"omp_lib":"%s"}\\n' \
    "$c" "$t" "$us" "$dir/@LIB@"
done
"""


def fake(path: Path, us: str, lib: str) -> None:
    path.write_text(FAKE.replace("@US@", us).replace("@LIB@", lib))
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def make_build(tmp: Path, clang: bool = True, herd_kmp: bool = True) -> Path:
    build = tmp / "build"
    omp = build / "bench" / "omp"
    omp.mkdir(parents=True)
    fake(omp / "omp_epcc", "1.0", "libgomp.so.1")
    if clang:
        fake(omp / "omp_epcc_clang", "2.0", "libomp.so.5")
    herd = build / "lib" / "herd"
    herd.mkdir(parents=True)
    (herd / "libgomp.so.1").write_text("")
    if herd_kmp:
        (herd / "libomp.so.5").write_text("")
    (tmp / "libomp.so.5").write_text("")
    return build


def run(tmp: Path, build: Path, *args: str) -> int:
    return epcc.main(["--libomp", str(tmp / "libomp.so.5"), "--out", str(tmp / "out"), *args],
                     repo=tmp, nproc=2, locate_build=lambda d: d or build)


def test_plan_interleaves_rounds() -> None:
    runs = epcc.plan(("libgomp", "herd-omp", "clang-libomp"), (1, 2), 3, seed=5)
    assert len(runs) == 18
    for k in range(3):  # every round holds every (runtime, threads) pair once
        rnd = runs[6 * k:6 * k + 6]
        assert {r.round for r in rnd} == {k}
        assert len({(r.runtime, r.threads) for r in rnd}) == 6


def rec(c: str, threads: str = "2", lib: str = "/l/libomp.so.5", us: float = 1.0) -> str:
    return json.dumps({"construct": c, "threads": threads, "overhead_us": us, "omp_lib": lib})


@pytest.mark.parametrize("rc,out,err_part", [
    (0, rec("parallel"), "no result for task"),
    (0, rec("parallel") + "\n" + rec("task", "1"), "task ran on 1 threads, asked for 2"),
    (0, rec("parallel", lib="/x/libgomp.so.1") + "\n" + rec("task"), "ran on /x/libgomp.so.1"),
    (-6, rec("parallel"), "killed by SIGABRT"),
])
def test_judge_failures(tmp_path: Path, rc: int, out: str, err_part: str) -> None:
    lib = tmp_path / "libomp.so.5"
    lib.write_text("")
    r = epcc.Run("clang-libomp", 2, 0)
    epcc.judge(r, rc, out.replace("/l/libomp.so.5", str(lib)), "", ("parallel", "task"), lib)
    assert not r.ok and err_part in r.error


def test_judge_accepts_and_table_ratios(tmp_path: Path) -> None:
    lib = tmp_path / "libomp.so.5"
    lib.write_text("")
    runs = []
    for rt, us in (("libgomp", 1.0), ("libomp", 0.8), ("herd-omp", 0.4),
                   ("clang-libomp", 2.0), ("clang-herd-omp", 3.0)):
        for k, extra in enumerate((0.0, 0.1, 0.3)):
            r = epcc.Run(rt, 2, k)
            out = "\n".join([rec("parallel", lib=str(lib), us=us + extra),
                             rec("nested", "2x2", str(lib), 0.005), "noise"])
            epcc.judge(r, 0, out, "", ("parallel", "nested"), lib)
            assert r.ok, r.error
            runs.append(r)
    t = epcc.table(runs, tuple(rt for rt, _ in epcc.RUNTIMES), 2, ("parallel", "nested"),
                   "auto", {})
    assert t[0] == ("construct", "threads", "libgomp", "libomp", "herd-omp:auto",
                    "clang-libomp", "clang-herd-omp:auto", "herd/best gcc", "herd/best clang")
    # Medians 1.1, 0.9, 0.5, 2.1, 3.1: herd/best gcc 0.5/0.9, herd/best clang 3.1/2.1.
    assert t[1] == ("parallel", "2", "1.100", "0.900", "0.500", "2.100", "3.100", "0.56", "1.48")
    assert t[2][:2] == ("nested", "2x2") and t[2][-2:] == ("-", "-")  # under 0.01 us: no ratio


def test_a_whole_run_with_fake_binaries(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    build = make_build(tmp_path)
    assert run(tmp_path, build, "--runs", "2", "--only", "parallel,nested") == 0
    out = capsys.readouterr().out
    rows = [ln.split() for ln in out.splitlines() if ln.startswith(("parallel", "nested"))]
    assert [r[1] for r in rows] == ["1", "1x2", "2", "2x2"]
    # herd halves both ABIs' overheads in the fake.
    assert all(r[2:] == ["1.000", "1.000", "0.500", "2.000", "1.000", "0.50", "0.50"]
               for r in rows)
    doc = json.loads((tmp_path / "out" / "epcc.json").read_text())
    assert doc["format"] == "herd-bench-epcc/1" and len(doc["runs"]) == 2 * 5 * 2
    assert all(r["ok"] for r in doc["runs"])
    assert (tmp_path / "out" / "epcc.txt").read_text().startswith("EPCC overheads")


def test_missing_runtimes_show_and_wrong_library_fails(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture) -> None:
    build = make_build(tmp_path, herd_kmp=False)
    # The gcc binary's herd-omp run reports the system libgomp: not what it asked for.
    gomp = build / "bench" / "omp" / "omp_epcc"
    gomp.write_text(gomp.read_text().replace('$dir/libgomp.so.1', '/lib/libgomp.so.1'))
    rc = run(tmp_path, build, "--runs", "1", "--threads", "2", "--only", "parallel")
    out = capsys.readouterr().out
    assert rc == 1
    row = [ln for ln in out.splitlines() if ln.startswith("parallel")][0].split()
    # libgomp (no library asked for) counts; libomp and herd-omp reported the wrong one.
    assert row[2:6] == ["1.000", "FAILED", "FAILED", "2.000"] and "not built" in " ".join(row)
    assert "clang-herd-omp: not built: no lib/herd/libomp.so.5" in out
    assert "ran on /lib/libgomp.so.1, not " in out  # the failures section says why


def test_no_clang_twin_is_not_built(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    build = make_build(tmp_path, clang=False)
    assert run(tmp_path, build, "--dry-run", "--runs", "1") == 0
    out = capsys.readouterr().out
    assert "clang-libomp: not built" in out and "clang-herd-omp: not built" in out
    assert "6 runs" in out  # 3 gcc runtimes x threads 1, 2


def test_rejects_bad_arguments(tmp_path: Path) -> None:
    build = make_build(tmp_path)
    for bad in (["--only", "frob"], ["--runtimes", "icx"], ["--runs", "0"], ["--threads", "x"]):
        with pytest.raises(SystemExit) as e:
            run(tmp_path, build, "--dry-run", *bad)
        assert e.value.code == 2


def test_herd_bench_epcc_dispatch(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """`herd bench epcc ARGS` (python3 -m herd_bench bench --herd-exe HERD epcc
    ARGS) runs on the build that herd belongs to."""
    from herd_bench import __main__ as entry
    build = make_build(tmp_path)
    exe = build / "herd"
    assert entry._subcommand(["--herd-exe", str(exe), "epcc", "--runs", "1"]) == (
        "epcc", exe, ["--runs", "1"])
    assert entry.main(["bench", "--herd-exe", str(exe), "epcc", "--dry-run", "--runs", "1",
                       "--libomp", str(tmp_path / "libomp.so.5")]) == 0
    out = capsys.readouterr().out
    assert "10 runs" in out and "omp_epcc_clang" in out
