"""Tests of the benchmark harness's logic: scheduler variants, counter
parsing, the tables built from a fake results set, and one end-to-end run
against fake benchmark binaries (a refused scheduler must show as FAILED).
No timing is asserted anywhere."""
from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from herd_bench import cli, lace, report  # noqa: E402
from herd_bench.counters import median_counters, run_counters  # noqa: E402
from herd_bench.model import (Config, Row, Run, build_configs, expand_scheds,  # noqa: E402
                              parse_sched, size_name)
from herd_bench.runner import herd_message, judge  # noqa: E402

DASH = "\u2014"

# ------------------------------------------------------------- variants


def test_parse_sched_plain_and_settings() -> None:
    assert parse_sched("ws").env == (("HERD_SCHED", "ws"),)
    s = parse_sched("ws:spawn=work-first")
    assert s.name == "ws:spawn=work-first" and s.base == "ws"
    assert dict(s.env) == {"HERD_SCHED": "ws", "HERD_SPAWN": "work-first"}
    # chunk:N keeps its colon; settings combine.
    s = parse_sched("mts:steal=chunk:8:spawn=work-first")
    assert dict(s.env) == {"HERD_SCHED": "mts", "HERD_STEAL": "chunk:8",
                           "HERD_SPAWN": "work-first"}


@pytest.mark.parametrize("bad", ["", ":steal=half", "ws:bogus=1", "ws:steal=", "ws:half",
                                 "ws:steal=one:steal=half", "w s"])
def test_parse_sched_rejects(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_sched(bad)


def test_expand_scheds_crosses_spawn_and_steal() -> None:
    names = [s.name for s in expand_scheds(["ws", "mts"], ["help-first", "work-first"],
                                           ["half"])]
    assert names == ["ws:spawn=help-first:steal=half", "ws:spawn=work-first:steal=half",
                     "mts:spawn=help-first:steal=half", "mts:spawn=work-first:steal=half"]
    assert [s.name for s in expand_scheds(["ws", "ws"], [], [])] == ["ws"]


def test_drop_refused_leaves_out_crossed_variants_the_runtime_refuses(tmp_path: Path,
                                                                      capsys) -> None:
    # A stand-in for `herd topo`: refuses work-first with steal=half, as herd does.
    fake = tmp_path / "herd"
    fake.write_text("#!/bin/sh\n"
                    "if [ \"$HERD_SPAWN\" = work-first ] && [ \"$HERD_STEAL\" = half ]; then\n"
                    "  echo 'herd: HERD_STEAL: refused' >&2; exit 2\n"
                    "fi\n"
                    "[ \"$1\" = topo ]\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    crossed = expand_scheds(["ws", "mts"], ["work-first"], ["one", "half"])
    kept = cli.drop_refused(fake, crossed, {"ws", "mts"})
    # The refused ones go, with the runtime's words; the others stay, in order.
    assert [s.name for s in kept] == ["ws:spawn=work-first:steal=one",
                                      "mts:spawn=work-first:steal=one"]
    out = capsys.readouterr().out
    assert "ws:spawn=work-first:steal=half left out" in out and "herd: HERD_STEAL" in out
    # A variant written out in --scheds is kept even when refused (its rows say FAILED).
    written = expand_scheds(["ws:spawn=work-first:steal=half"], [], [])
    assert cli.drop_refused(fake, written, {"ws:spawn=work-first:steal=half"}) == written


def test_build_configs_matrix() -> None:
    scheds = expand_scheds(["ws", "fifo"], [], [])
    cfgs = build_configs([1, 2], scheds, kernels=("fib", "sort"), sort_n=1000,
                         topology="pack:4 core:8 pu:1", topology_workers=8)
    # fib one/both and sort: 3 problems x 2 scheds x 2 worker counts, 2 twins, and
    # 3 problems x 2 scheds on the topology.
    assert len(cfgs) == 3 * 2 * 2 + 2 + 3 * 2
    topo = [c for c in cfgs if c.topology]
    assert all(c.workers == 8 and c.env()["HERD_BIND"] == "scatter" for c in topo)
    assert all(c.env()["HERD_TOPOLOGY"] == "pack:4 core:8 pu:1" for c in topo)
    twins = [c for c in cfgs if c.sched is None]
    assert {c.label for c in twins} == {"n=35 seq", "n=1K seq"}
    assert all(c.env() == {} for c in twins)
    # The counters-only study: largest worker count, no twins.
    only = build_configs([1, 2], scheds, kernels=("sort",), timing=False)
    assert {c.workers for c in only} == {2} and all(c.sched for c in only)
    assert size_name(4_000_000) == "4M" and size_name(33554432) == "32Mi"


def test_config_json_round_trip() -> None:
    for c in build_configs([2], expand_scheds(["ws:steal=chunk:4"], [], []),
                           topology="pack:2 core:2 pu:1"):
        assert Config.from_json(json.loads(json.dumps(c.to_json()))) == c


# ------------------------------------------------------------- counters

def stats_today(steals: list[int], failed: list[int]) -> dict:
    """The HERD_STATS format of this build: no local/remote split."""
    return {"workers": len(steals), "per_worker": [
        {"worker": i, "steals": s, "steal_attempts": 10 * s + 1, "failed_steals": f}
        for i, (s, f) in enumerate(zip(steals, failed))]}


def stats_family(local: list[int], remote: list[int], stolen: list[int],
                 sheps: list[int]) -> dict:
    """The scheduler family's format: local/remote split, tasks moved, shepherd."""
    return {"workers": len(local), "per_worker": [
        {"worker": i, "shepherd": sh, "steals": lo + re, "steals_local": lo,
         "steals_remote": re, "failed_steals": 1, "steal_attempts": 5, "stolen_tasks": st}
        for i, (lo, re, st, sh) in enumerate(zip(local, remote, stolen, sheps))]}


def test_run_counters_today_format_reports_no_split() -> None:
    c = run_counters(stats_today([3, 4], [1, 0]))
    assert c["steals"] == 7 and c["failed_steals"] == 1 and c["steal_attempts"] == 72
    assert c["steals_remote"] is None and c["steals_local"] is None
    assert c["stolen_tasks"] is None and c["per_steal"] is None and c["shepherds"] is None


def test_run_counters_family_format() -> None:
    c = run_counters(stats_family([2, 0, 1, 1], [1, 3, 0, 0], [6, 12, 1, 1], [0, 0, 1, 1]))
    assert c["steals"] == 8 and c["steals_local"] == 4 and c["steals_remote"] == 4
    assert c["stolen_tasks"] == 20 and c["per_steal"] == pytest.approx(2.5)
    assert c["shepherds"] == 2


def test_run_counters_partial_or_missing() -> None:
    s = stats_family([1, 1], [1, 1], [2, 2], [0, 1])
    del s["per_worker"][1]["steals_remote"]  # one worker lacks it: not reported, not 0
    assert run_counters(s)["steals_remote"] is None
    assert run_counters(s)["steals_local"] == 2
    assert all(v is None for v in run_counters(None).values())
    assert all(v is None for v in run_counters({"per_worker": "x"}).values())


def test_median_counters() -> None:
    m = median_counters([run_counters(stats_today([1], [0])), run_counters(stats_today([5], [2])),
                         run_counters(stats_today([3], [1]))])
    assert m["steals"] == 3 and m["failed_steals"] == 1 and m["steals_remote"] is None


# ------------------------------------------------------- judging a run

def test_refused_scheduler_fails_with_the_runtimes_message() -> None:
    cfg = build_configs([2], expand_scheds(["mts"], [], []), kernels=("sort",))[0]
    err = "herd: HERD_SCHED=mts: scheduler not available in this build; available: ws, auto\n"
    run = Run(cfg, rc=1, record={"verified": False, "error": "herd_start: invalid"})
    judge(run, herd_message(err))
    assert not run.ok and "scheduler not available" in run.error and run.seconds is None


def test_judge_wrong_workers_and_unverified() -> None:
    cfg = build_configs([2], expand_scheds(["ws"], [], []), kernels=("sort",))[0]
    run = Run(cfg, rc=0, record={"verified": True, "workers": 1, "seconds": 1.0})
    judge(run)
    assert "asked for 2" in run.error
    run = Run(cfg, rc=0, record={"verified": False, "workers": 2, "seconds": 1.0})
    judge(run)
    assert run.error == "verification failed"
    run = Run(cfg, rc=0, record={"verified": True, "workers": 2, "seconds": 1.5})
    judge(run)
    assert run.ok and run.seconds == 1.5


# --------------------------------------------------- tables from a fake set

def fake_rows() -> tuple[list[Row], list]:
    """Sort at 1 and 2 workers under ws (today's counters), fifo (the family's
    counters) and bogus (refused), plus the twin and a topology run."""
    scheds = expand_scheds(["ws", "fifo", "bogus"], [], [])
    cfgs = build_configs([1, 2], scheds, kernels=("sort",), sort_n=1000,
                         topology="pack:4 core:8 pu:1")
    rows = []
    for c in cfgs:
        row = Row(c)
        for rep in range(3):
            run = Run(c, rc=0)
            if c.sched is not None and c.sched.base == "bogus":
                run.rc, run.error = 1, "exit 1, herd: HERD_SCHED=bogus: unknown scheduler"
            else:
                base = {0: 1.0, 1: 0.8, 2: 0.5, 8: 0.6}[c.workers]
                run.seconds = base * (1 + 0.1 * rep) * (1.25 if c.sched and
                                                        c.sched.base == "fifo" else 1)
                run.raw = json.dumps({"verified": True, "workers": c.workers,
                                      "seconds": run.seconds})
                if c.sched is not None:
                    run.stats = (stats_today([2 + rep, 3], [rep, 0]) if c.sched.base == "ws"
                                 else stats_family([1, 1], [rep, 2], [4, 4], [0, 1]))
            row.runs.append(run)
        rows.append(row)
    return rows, scheds


def fake_doc(tmp_path: Path) -> dict:
    rows, scheds = fake_rows()
    return {"started": "x", "seed": 1, "reps": 3, "workers": [1, 2],
            "scheds": [s.name for s in scheds], "topology": "pack:4 core:8 pu:1",
            "topology_workers": 8, "topology_bind": "scatter", "counters_only": False,
            "git": {"commit": "0" * 40, "dirty": False},
            "machine": {"cpu": "Fake CPU", "affinity": 2, "nproc": 2},
            "configs": [r.config.to_json() for r in rows],
            "runs": [report.run_record(run, k) for r in rows for k, run in enumerate(r.runs)]}


def cells(table: str, first: str, second: str = "") -> list[str]:
    for line in table.splitlines():
        parts = line.split()
        if line.startswith(first) and (not second or second in parts):
            return parts
    raise AssertionError(f"no row {first!r} {second!r} in\n{table}")


def test_sched_table_columns(tmp_path: Path) -> None:
    rows, scheds = fake_rows()
    t = report.sched_table(rows, scheds, None)
    head = t.splitlines()[0].split()
    assert head[-3:] == ["ws", "fifo", "bogus"]
    line = cells(t, "sort 1K", "2")
    # seq median 1.1 (1.0, 1.1, 1.2); ws at 2 workers median 0.55 -> 2.00x
    assert line[3:6] == ["1.100", "0.550", "2.00x"]
    # fifo: 1.25 times slower -> 0.6875 s, 1.60x
    assert line[6:8] == ["0.688", "1.60x"]
    assert line[-1] == "FAILED"
    topo = report.sched_table(rows, scheds, "pack:4 core:8 pu:1")
    assert cells(topo, "sort 1K", "8")[-1] == "FAILED"


def test_sched_targets_ratio_bound_and_verdict(tmp_path: Path) -> None:
    rows, scheds = fake_rows()
    t = report.sched_targets(rows, scheds, None)
    # fifo is 1.25x ws on sort at 1 and 2 workers: a cut-off kernel, bound 1.1x
    assert cells(t, "fifo") == ["fifo", "1.1x", "1.25x", "0/2", "missed", "sort", "1K", "w=1"]
    assert cells(t, "bogus")[4] == "FAILED"
    assert "ws " not in t.splitlines()[2]  # the baseline has no line of its own
    assert report.sched_bound(scheds[1], "fib") == 3.0  # fifo without a cut-off
    assert report.sched_bound(expand_scheds(["mts"], [], [])[0], "fib") == 1.1
    assert report.sched_targets(rows, scheds[1:], None).startswith("(no plain ws")


def test_counter_table_dash_for_unreported(tmp_path: Path) -> None:
    rows, scheds = fake_rows()
    t = report.counter_table(rows, scheds, None, 2)
    ws = cells(t, "sort 1K", "ws")
    # steals medians of 5,6,7 -> 6; local, remote: not reported; failed 0,1,2 -> 1
    assert ws[3:7] == ["6", DASH, DASH, "1"]
    fifo = cells(t, "sort 1K", "fifo")
    # local 2, remote median of 2,3,4 -> 3, steals 5, stolen 8, per steal 8/5
    assert fifo[3:6] == ["5", "2", "3"] and fifo[8:11] == ["8", "1.60", "2"]
    assert cells(t, "sort 1K", "bogus")[3:] == ["FAILED", "0/3"]


def test_results_round_trip_and_report(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    doc = fake_doc(tmp_path)
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc))
    rows = report.rows_from_doc(json.loads(path.read_text()))
    assert [r.config for r in rows] == [r.config for r in fake_rows()[0]]
    assert all(len(r.runs) == 3 for r in rows)
    rc = cli.main(["--report", str(path), "--no-plot"])
    out, err = capsys.readouterr()
    assert rc == 1  # bogus failed
    assert "main comparison, scheduler ws" in out and "steal counters" in out
    assert "OVERSUBSCRIBED" in out
    assert "bogus:" in err and "unknown scheduler" in err


def test_plot_draws_a_png(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from herd_bench.plot import plot
    rows, scheds = fake_rows()
    line = plot(rows, scheds, tmp_path / "f.png", workers=2, topology="pack:4 core:8 pu:1")
    assert (tmp_path / "f.png").stat().st_size > 1000 and "f.png" in line


# --------------------------------------------- end to end, fake binaries

FAKE = r'''
import json, os, sys
args = sys.argv[1:]
sched = os.environ.get("HERD_SCHED", "auto")
if sched == "slow":
    import time
    time.sleep(60)
if "--seq" not in args and sched not in ("ws", "auto", "slow"):
    print(f"herd: HERD_SCHED={sched}: unknown scheduler; accepted: ws, auto", file=sys.stderr)
    print(json.dumps({"kernel": "sort", "verified": False, "error": "herd_start"}))
    sys.exit(1)
w = int(args[args.index("--workers") + 1]) if "--workers" in args else 0
if os.environ.get("HERD_STATS"):
    with open(os.environ["HERD_STATS"], "w") as f:
        json.dump({"workers": w, "per_worker": [
            {"worker": i, "steals": 1, "steal_attempts": 2, "failed_steals": 0}
            for i in range(w)]}, f)
print(json.dumps({"kernel": "sort", "workers": w, "seconds": 0.01, "verified": True}))
'''


def fake_bindir(tmp_path: Path) -> Path:
    exe = tmp_path / "bench_sort"
    exe.write_text(f"#!{sys.executable}\n{FAKE}")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return tmp_path


def test_timeout_costs_one_run_per_configuration(tmp_path: Path) -> None:
    out_json = tmp_path / "r.json"
    rc = cli.main(["--bindir", str(fake_bindir(tmp_path)), "--kernels", "sort", "--scheds",
                   "slow", "--workers", "2", "--reps", "3", "--topology", "none", "--no-plot",
                   "--timeout", "0.5", "--out", str(out_json)])
    assert rc == 1
    runs = [r for r in json.loads(out_json.read_text())["runs"] if r["sched"] == "slow"]
    assert len(runs) == 3 and not any(r["ok"] for r in runs)
    assert sorted(r["error"].split()[0] for r in runs) == ["not", "not", "timeout"]


def test_end_to_end_refused_scheduler_is_failed_not_dropped(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out_json = tmp_path / "r.json"
    rc = cli.main(["--bindir", str(fake_bindir(tmp_path)), "--kernels", "sort", "--scheds", "ws,nosuch",
                   "--workers", "1,2", "--reps", "2", "--topology", "pack:2 core:2 pu:1",
                   "--topology-workers", "4", "--no-plot", "--out", str(out_json),
                   "--sort-n", "1000"])
    out, err = capsys.readouterr()
    assert rc == 1
    doc = json.loads(out_json.read_text())
    # 2 scheds x 2 worker counts + twin + 2 topology configurations, 2 runs each
    assert len(doc["runs"]) == (2 * 2 + 1 + 2) * 2
    bad = [r for r in doc["runs"] if r["sched"] == "nosuch"]
    assert len(bad) == 6 and not any(r["ok"] for r in bad)
    assert all("unknown scheduler" in r["error"] for r in bad)
    good = [r for r in doc["runs"] if r["sched"] == "ws"]
    assert all(r["ok"] and r["stats"]["per_worker"] for r in good)
    assert all(r["counters"]["steals_remote"] is None for r in good)
    assert cells(report.sched_table(report.rows_from_doc(doc),
                                    expand_scheds(["ws", "nosuch"], [], []), None),
                 "sort 1K", "2")[-1] == "FAILED"
    assert "nosuch: 3 configuration(s) FAILED" in err


def test_busy_note_only_when_loaded_at_start() -> None:
    assert cli.busy_note([1.0, 1.0, 1.0], 2) == ""
    assert cli.busy_note(None, 2) == ""
    assert "busy" in cli.busy_note([9.5, 3.0, 1.0], 2)


def test_counters_only_runs_largest_worker_count_and_topology(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out_json = tmp_path / "r.json"
    rc = cli.main(["--bindir", str(fake_bindir(tmp_path)), "--kernels", "sort", "--scheds",
                   "ws", "--workers", "1,2", "--reps", "2", "--counters", "--no-plot",
                   "--topology-workers", "4", "--out", str(out_json)])
    out, _ = capsys.readouterr()
    assert rc == 0
    runs = json.loads(out_json.read_text())["runs"]
    assert sorted(r["workers"] for r in runs) == [2, 2, 4, 4]
    assert "main comparison" not in out and "steal counters" in out
    # The fake writes steals 1 per worker: 2 on this machine, 4 on the topology.
    assert cells(out, "sort 4M", "ws")[3] == "2"


def test_summary_runs_main_table_and_counters(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """--summary (./scripts/bench): the first scheduler at every worker count
    with the twin (the main table, the targets), the others at the largest
    worker count and on the topology (the counters)."""
    out_json = tmp_path / "r.json"
    rc = cli.main(["--bindir", str(fake_bindir(tmp_path)), "--kernels", "sort", "--scheds",
                   "ws,auto", "--workers", "1,2", "--reps", "1", "--summary", "--no-plot",
                   "--topology-workers", "4", "--sort-n", "1000", "--out", str(out_json)])
    out, _ = capsys.readouterr()
    assert rc == 0
    doc = json.loads(out_json.read_text())
    got = sorted((r["sched"] or "seq", r["workers"], bool(r["topology"])) for r in doc["runs"])
    assert got == [("auto", 2, False), ("auto", 4, True), ("seq", 0, False), ("ws", 1, False),
                   ("ws", 2, False), ("ws", 4, True)]
    assert "main comparison, scheduler ws" in out and "targets (issue" in out
    assert "idle runtime: bench_idle not built" in out  # the fake folder has none
    assert cells(out, "sort    n=1K", "w=2")[3] == "0.0100"  # the fake's seconds
    assert cells(out, "sort 1K", "auto")[3] == "2"  # counters: 1 steal per worker
    with pytest.raises(SystemExit):
        cli.parse_args(["--bindir", str(tmp_path), "--summary", "--counters"])


# ------------------------------------------------------ Lace beside herd

def test_lace_parse_checks_the_value() -> None:
    assert lace.parse("fib(20) = 6765\nTime: 0.0074\n", 20) == (0.0074, "")
    t, why = lace.parse("fib(20) = 6766\nTime: 0.0074\n", 20)
    assert t is None and "wrong result" in why
    t, why = lace.parse("fib(21) = 10946\nTime: 0.01\n", 20)
    assert t is None and "wrong result" in why
    assert lace.parse("nothing", 20)[0] is None


def fib_rows(times: dict[int, float]) -> tuple[list[Row], list]:
    scheds = expand_scheds(["ws"], [], [])
    rows = []
    for c in build_configs(sorted(times), scheds, kernels=("fib",)):
        row = Row(c)
        if c.workers in times and c.problem.endswith(" one"):
            row.runs.append(Run(c, rc=0, seconds=times[c.workers]))
        rows.append(row)
    return rows, scheds


def test_lace_table_ratios_and_targets() -> None:
    rows, scheds = fib_rows({1: 0.25, 2: 0.125})
    doc = {"runs": [{"workers": 1, "seconds": 0.05}, {"workers": 1, "seconds": 0.07},
                    {"workers": 2, "seconds": 0.04}, {"workers": 2, "seconds": 0.02}]}
    t = lace.table(rows, scheds[0], doc, 35)
    assert cells(t, "      1")[1:] == ["0.2500", "0.0600", "4.17x"]
    assert cells(t, "      2")[1:] == ["0.1250", "0.0300", "4.17x"]
    assert "on 1 worker: 4.17x  missed" in t
    assert "1.95x faster than 1: 2.00x  met; Lace 2.00x" in t
    rows, scheds = fib_rows({1: 0.05, 2: 0.04})
    t = lace.table(rows, scheds[0], {"runs": [{"workers": 1, "seconds": 0.06},
                                              {"workers": 2, "seconds": None,
                                               "error": "exit 1"}]}, 35)
    assert "on 1 worker: 0.83x  met" in t and "1.25x  missed" in t
    assert cells(t, "      2")[2] == "FAILED"


FAKE_LACE = r'''
import sys
w, n = int(sys.argv[2]), int(sys.argv[3])
a, b = 0, 1
for _ in range(n):
    a, b = b, a + b
print(f"fib({n}) = {a + (1 if w == 2 else 0)}")
print("Time: 0.0125")
'''


def test_end_to_end_lace_runs_interleaved_and_wrong_values_fail(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    lace_dir = tmp_path / "lace" / "benchmarks"
    lace_dir.mkdir(parents=True)
    exe = lace_dir / "fib-lace"
    exe.write_text(f"#!{sys.executable}\n{FAKE_LACE}")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    out_json = tmp_path / "r.json"
    # A --lace folder without fib-lace, and one without the fib kernel, are refused.
    assert cli.main(["--bindir", str(fake_bindir(tmp_path)), "--kernels", "sort", "--lace",
                     str(tmp_path / "lace"), "--no-plot", "--out", str(out_json)]) == 2
    assert cli.main(["--bindir", str(fake_bindir(tmp_path)), "--kernels", "sort", "--lace",
                     str(tmp_path), "--no-plot", "--out", str(out_json)]) == 2
    bindir = fake_bindir(tmp_path)
    (bindir / "bench_fib").write_text((bindir / "bench_sort").read_text())
    (bindir / "bench_fib").chmod(exe.stat().st_mode)
    capsys.readouterr()
    rc = cli.main(["--bindir", str(bindir), "--kernels", "fib", "--scheds", "ws", "--workers",
                   "1,2", "--reps", "2", "--topology", "none", "--no-plot", "--out",
                   str(out_json), "--lace", str(tmp_path / "lace")])
    out, err = capsys.readouterr()
    assert rc == 1  # fib-lace's wrong value on 2 workers is a failure
    runs = json.loads(out_json.read_text())["lace"]["runs"]
    assert sorted((r["workers"], r["seconds"]) for r in runs) == [(1, 0.0125), (1, 0.0125),
                                                                 (2, None), (2, None)]
    assert "spawn cost against Lace" in out and "fib-lace w=2: FAILED (wrong result" in err
    assert cells(out, "      1")[1:] == ["0.0100", "0.0125", "0.80x"]
