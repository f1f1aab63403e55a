"""The MPI suite (herd_bench/mpi_suite.py): result lines, medians, figures,
and one run against a fake mpirun."""
import json
import os
import stat
from pathlib import Path

import pytest

from herd_bench import mpi_suite

LINE = ("kernel=uts tree=T3 nodes=4112897 ranks={n} lock={lock} steal=half tasks=4112897 "
        "seconds={sec} mtasks_per_s={mt} efficiency=0.75 steals=3 stolen=9 failed={f} "
        "aborted=2 bytes=10 verified=yes")


def raw(tmp_path: Path) -> Path:
    lines = []
    for n in (1, 2, 4):
        for lock in ("ticket", "aborting"):
            for sec, f in ((1.0, 0), (2.0, 1), (4.0, 5)):
                lines.append(LINE.format(n=n, lock=lock, sec=sec, mt=4.0 / sec, f=f))
    lines.append("FAILED uts --tree T3 np=8 ticket:half")
    lines.append(LINE.format(n=8, lock="spin", sec=1, mt=1, f=0).replace("=yes", "=NO"))
    p = tmp_path / "raw.txt"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_parse_line_keeps_uts_trees_apart() -> None:
    d = mpi_suite.parse_line(LINE.format(n=2, lock="spin", sec=0.5, mt=8.0, f=0))
    assert d is not None
    assert d["kernel"] == "uts-T3" and d["ranks"] == 2 and d["seconds"] == 0.5
    h = mpi_suite.parse_line(LINE.format(n=2, lock="spin", sec=0.5, mt=8.0, f=0)
                             .replace("ranks=2", "ranks=2 workers=4"))
    assert h is not None and h["kernel"] == "uts-T3/w4"
    assert mpi_suite.parse_line("herd pool: 2 ranks") is None
    assert mpi_suite.parse_line("kernel=uts ranks=2") is None  # incomplete


def test_medians_table_and_unverified_rows(tmp_path: Path) -> None:
    rows = mpi_suite.load_rows([raw(tmp_path)])
    assert len(rows) == 18  # the NO line and the FAILED line are left out
    cs = mpi_suite.cells(rows)
    c = cs[("uts-T3", 2, "ticket", "half")]
    assert len(c.rows) == 3 and c.median("seconds") == 2.0 and c.median("failed") == 1
    text = mpi_suite.table(cs)
    assert "uts-T3" in text and len(text.splitlines()) == 1 + 6


def test_figures(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    cs = mpi_suite.cells(mpi_suite.load_rows([raw(tmp_path)]))
    names = {p.name for p in mpi_suite.plot(cs, tmp_path, "test")}
    assert names == {"mpi-fig5-split.png", "mpi-fig6-locks.png", "mpi-fig7-steals.png"}
    assert all((tmp_path / n).stat().st_size > 1000 for n in names)


def test_run_with_fake_mpirun(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each run is one mpirun; a verified line counts, a wrong one is FAILED."""
    fake = tmp_path / "bin" / "mpirun"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\n"
                    "np=$2\n"
                    "if [ \"$HERD_POOL_LOCK\" = ticket ] && [ \"$np\" = 2 ]; then exit 3; fi\n"
                    f"echo \"{LINE.format(n='$np', lock='$HERD_POOL_LOCK', sec=1, mt=1, f=0)}"
                    "\" | sed \"s/steal=half/steal=$HERD_POOL_STEAL/\"\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    out = tmp_path / "out"
    rc = mpi_suite.main(["run", "--build-dir", str(tmp_path), "--ranks", "1,2", "--reps", "1",
                         "--kernels", "uts-T3", "--out", str(out), "--seed", "1"])
    assert rc == 1  # ticket at 2 ranks failed
    doc = json.loads((out / "mpi.json").read_text())
    runs = doc["runs"]
    assert len(runs) == 2 * len(mpi_suite.COMBOS)
    bad = [r for r in runs if not r["ok"]]
    assert [(r["ranks"], r["lock"]) for r in bad] == [(2, "ticket")]
    assert all(r["cmd"][:4] == ["mpirun", "-np", str(r["ranks"]), "--oversubscribe"] for r in runs)
    assert {r["result"]["steal"] for r in runs if r["ok"]} == {"half", "one", "two"}
    assert doc["meta"]["reps"] == 1 and "load_start" in doc["meta"]
    assert (out / "mpi-table.txt").exists()


def test_hybrid_runs_are_planned_for_uts_only(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    seen = []

    def fake(build, kernel, ranks, lock, steal, timeout, workers=0):  # type: ignore[no-untyped-def]
        seen.append((kernel, workers))
        return {"ok": True, "wall": 0.0, "result": None}

    monkeypatch.setattr(mpi_suite, "run_one", fake)
    monkeypatch.setattr(mpi_suite, "report", lambda rows, out, note="": None)
    rc = mpi_suite.main(["run", "--build-dir", str(tmp_path), "--ranks", "2", "--reps", "1",
                         "--kernels", "uts-T3,bpc", "--hybrid-workers", "4",
                         "--out", str(tmp_path / "o")])
    assert rc == 0
    n = len(mpi_suite.COMBOS)
    assert sorted(set(seen)) == [("bpc", 0), ("uts-T3", 0), ("uts-T3", 4)]
    assert len(seen) == 3 * n
