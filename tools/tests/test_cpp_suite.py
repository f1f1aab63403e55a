"""Tests of `python3 -m herd_bench cpp`'s table logic on fake records: the
ratios to the C API row, the targets' met/missed lines, a FAILED run hiding
its row's median, and a run judged by its JSON line. No timing is asserted."""
from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from herd_bench import cpp_suite  # noqa: E402


def fake(rows: list[cpp_suite.Row], secs: dict[str, float], w: int) -> list[dict]:
    return [{"bench": r.bench, "impl": r.impl, "workers": w, "seconds": secs[r.impl]}
            for r in rows if r.impl in secs]


def test_ratios_and_targets() -> None:
    rows = [r for r in cpp_suite.rows(35, 1000, 1000, 1000, ["split"], False)
            if r.bench == "fib(35)"]
    secs = {"herd C herd_spawn": 1.0, "herd C++ task_group": 1.1, "herd C++ future": 2.0,
            "oneTBB task_group": 6.0}
    summary, lines = cpp_suite.summarise(fake(rows, secs, 1), rows, [1])
    group = next(s for s in summary if s["impl"] == "herd C++ task_group")
    assert group["median"] == 1.1
    assert any("C++ task_group fib / C API fib = 1.100" in ln and "met" in ln for ln in lines)
    assert any("= 5.45x" in ln and ln.endswith("met") for ln in lines)
    secs["herd C++ task_group"] = 1.3
    _, lines = cpp_suite.summarise(fake(rows, secs, 1), rows, [1])
    assert any("= 1.300" in ln and ln.endswith("missed") for ln in lines)
    assert any("= 4.62x" in ln and ln.endswith("missed") for ln in lines)


def test_failed_run_hides_the_median() -> None:
    rows = [r for r in cpp_suite.rows(35, 1000, 1000, 1000, ["split"], False)
            if r.bench == "fib(35)"]
    recs = fake(rows, {"herd C herd_spawn": 1.0, "herd C++ task_group": 1.0,
                       "oneTBB task_group": 9.0}, 2)
    recs.append({"bench": "fib(35)", "impl": "herd C++ task_group", "workers": 2,
                 "error": "exit 1"})
    summary, lines = cpp_suite.summarise(recs, rows, [2])
    group = next(s for s in summary if s["impl"] == "herd C++ task_group")
    assert group["median"] is None and group["failed"] == ["exit 1"]
    assert any("FAILED" in ln and "task_group" in ln for ln in lines)
    assert any("no figure" in ln for ln in lines)


def test_run_one_judges_the_json_line(tmp_path: Path) -> None:
    exe = tmp_path / "fake"
    exe.write_text("#!/bin/sh\necho noise\necho '" +
                   json.dumps({"verified": True, "workers": 2, "seconds": 0.5}) + "'\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    row = cpp_suite.Row("fib(1)", "x", "fake", ())
    assert cpp_suite.run_one(tmp_path, row, 2, 10)["seconds"] == 0.5
    assert "asked for 3" in cpp_suite.run_one(tmp_path, row, 3, 10)["error"]


def test_targets_without_fib_rows() -> None:
    rows = [r for r in cpp_suite.rows(35, 1000, 1000, 1000, ["split"], False)
            if r.bench.startswith("sort")]
    _, lines = cpp_suite.summarise(fake(rows, {r.impl: 1.0 for r in rows}, 1), rows, [1])
    assert any("not measured" in ln for ln in lines)
    assert not any("FAILED" in ln for ln in lines)
