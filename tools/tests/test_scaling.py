"""scripts/scaling refuses what it cannot run, with a message and status 2,
before it starts anything."""
from __future__ import annotations

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "scaling"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=30)


def test_budget_must_be_whole_seconds() -> None:
    p = run("--budget", "10m")
    assert p.returncode == 2
    assert "--budget takes whole seconds, not '10m'" in p.stderr


def test_unknown_argument_is_refused() -> None:
    p = run("--workers", "4")
    assert p.returncode == 2
    assert "unknown argument '--workers'" in p.stderr


def test_option_without_value_is_refused() -> None:
    p = run("--lace")
    assert p.returncode == 2
    assert "--lace needs a value" in p.stderr


def test_build_without_herd_omp_is_refused(tmp_path: Path) -> None:
    (tmp_path / "bench" / "omp").mkdir(parents=True)  # no lib/herd/libgomp.so.1
    p = run("--build", str(tmp_path), "--out", str(tmp_path / "out"))
    assert p.returncode == 2
    assert "holds no release build with herd-omp" in p.stderr
    assert not (tmp_path / "out").exists()  # refused before anything ran
