"""herd_bench.multiprog: scenario scaling and one run against fake programs."""
import sys
from pathlib import Path

from herd_bench import multiprog


def test_scaling_two_and_sixteen_pus():
    two = multiprog.scenarios(Path("/b"), 2)
    assert [q.workers for q in two["1"][0][1]] == [1, 1, 1]
    assert [q.workers for q in two["2"][0][1]] == [1, 1, 2, 2]
    assert [label for label, _ in two["3"]] == ["width 2", "width 1"]
    sixteen = multiprog.scenarios(Path("/b"), 16)
    assert [q.workers for q in sixteen["1"][0][1]] == [8, 8, 8]
    assert [q.workers for q in sixteen["2"][0][1]] == [4, 8, 16, 16]
    assert len(sixteen["3"][0][1]) == 10
    assert [q.arrival for q in two["1"][0][1]] == [0.0, 1.0, 2.0]


def test_scenario_two_runs_openmp_programs_on_herd():
    progs = {q.name: q for q in multiprog.scenarios(Path("/b/bench"), 16)["2"][0][1]}
    for name in ("strassen", "nqueens"):
        q = progs[name]
        assert q.omp and q.argv[0] == f"/b/bench/omp/omp_{name}"
        assert q.env == {"OMP_NUM_THREADS": "16", "LD_LIBRARY_PATH": "/b/lib/herd"}
    assert not progs["sort"].omp and progs["sort"].env == {}


def test_scenario_four_hogs_first_half_of_pus():
    four = multiprog.scenarios(Path("/b/bench"), 2)["4"][0][1]
    hogs = [q for q in four if q.background]
    assert len(hogs) == 1 and "sched_setaffinity" in hogs[0].argv[-1]
    assert [(q.name, q.arrival, q.workers) for q in four if not q.background] == \
        [("first-look", 0.0, 1), ("fib-38", 0.5, 1)]


def test_run_once_kills_background_and_leaves_it_out(tmp_path):
    hog = multiprog.Program("hog", [sys.executable, "-c", "import time\nwhile True: time.sleep(1)"],
                            0.0, 0, background=True)
    ok = multiprog.Program("ok", [sys.executable, "-c", "print('{\"verified\": true}')"], 0.1, 1)
    t0 = __import__("time").monotonic()
    res = multiprog.run_once([hog, ok], "bll", str(tmp_path / "reg"), 30)
    assert [r.name for r in res] == ["ok"] and res[0].verified
    assert __import__("time").monotonic() - t0 < 10  # the hog did not keep the run going


def test_run_once_passes_program_env_and_samples_omp_main_thread(tmp_path):
    """A program's env is added to the scenario's (HERD_BIND stays); an
    OpenMP program's main thread (worker 0) is sampled too."""
    code = ("import os,time; assert os.environ['HERD_BIND']=='bll'; "
            "assert os.environ['OMP_NUM_THREADS']=='3'; time.sleep(0.2); "
            "print('{\"verified\": true}')")
    q = multiprog.Program("omp", [sys.executable, "-c", code], 0.0, 3,
                          env={"OMP_NUM_THREADS": "3"}, omp=True)
    res = multiprog.run_once([q], "bll", str(tmp_path / "reg"), 30)
    assert res[0].rc == 0 and res[0].verified
    assert sum(res[0].cpus.values()) > 0  # the single (main) thread was sampled


def test_run_once_turnaround_and_failure(tmp_path):
    ok = multiprog.Program("ok", [sys.executable, "-c",
                                  "import os,time; assert os.environ['HERD_BIND']=='xll'; "
                                  "time.sleep(0.2); print('{\"verified\": true}')"], 0.0, 1)
    bad = multiprog.Program("bad", [sys.executable, "-c", "print('{\"verified\": false}')"],
                            0.1, 1)
    res = multiprog.run_once([ok, bad], "xll", str(tmp_path / "reg"), 30)
    assert res[0].rc == 0 and res[0].verified and res[0].turnaround >= 0.2  # it slept 0.2 s
    assert res[1].rc == 0 and not res[1].verified


def test_bench_multiprog_dispatch_and_dry_run(tmp_path, capsys):
    """`herd bench multiprog ARGS` reaches multiprog with herd's build/bench as
    --bench-dir and results/ as the default output; a dry run writes nothing."""
    from herd_bench import __main__ as entry
    build = tmp_path / "build"
    (build / "bench").mkdir(parents=True)
    exe = build / "herd"
    assert entry._subcommand(["--herd-exe", str(exe), "multiprog", "--reps", "1"]) == (
        "multiprog", exe, ["--reps", "1"])
    assert entry._subcommand(["--herd-exe", str(exe), "--suite", "quick"]) is None
    rc = entry.main(["bench", "--herd-exe", str(exe), "multiprog", "--dry-run",
                     "--scenarios", "3", "--policies", "none,xll", "--reps", "2"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "  sort-9     at  2.7 s" in out and str(build / "bench" / "bench_sort") not in out
    assert "8 scenario runs (2 policies x 2 reps per variant)" in out  # 2 widths x 2 x 2
    assert "results/multiprog-" in out
    assert not (tmp_path / "results").exists()


def test_multiprog_rejects_bad_arguments(tmp_path):
    import pytest
    for bad in (["--policies", "frob"], ["--scenarios", "5"], ["--reps", "0"]):
        with pytest.raises(SystemExit) as e:
            multiprog.main(bad + ["--dry-run"], bench_dir=tmp_path, out=tmp_path / "o")
        assert e.value.code == 2
    # Without --dry-run, a folder with no kernels is refused before anything runs.
    with pytest.raises(SystemExit):
        multiprog.main(["--reps", "1"], bench_dir=tmp_path, out=tmp_path / "o")
    assert not (tmp_path / "o").exists()
