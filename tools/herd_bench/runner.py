"""Running one benchmark process, and what the machine and checkout are."""
from __future__ import annotations

import json
import os
import platform
import signal
import subprocess
import time
from pathlib import Path
from typing import Any, Optional

from .model import Config, Run


def describe_rc(rc: int) -> str:
    if rc < 0:
        try:
            return f"killed by {signal.Signals(-rc).name}"
        except ValueError:
            return f"killed by signal {-rc}"
    return f"exit {rc}"


def herd_message(stderr: str) -> str:
    """The runtime's own complaint, if it made one: its first `herd: ` line
    (e.g. `herd: HERD_SCHED=mts: scheduler not available in this build`)."""
    for line in stderr.splitlines():
        if line.startswith("herd: "):
            return line[len("herd: "):].strip()
    return ""


def command(cfg: Config) -> list[str]:
    return [cfg.binary, *cfg.args, "--reps", "1"]


def run_once(bindir: Path, cfg: Config, timeout: float, stats_path: Optional[Path]) -> Run:
    """Run cfg once as its own process; a parallel run writes its counters to
    stats_path (HERD_STATS), which is read back and removed."""
    run = Run(cfg)
    cmd = command(cfg)
    cmd[0] = str(bindir / cfg.binary)
    env = dict(os.environ)
    env.update(cfg.env())
    if stats_path is not None and cfg.sched is not None:
        env["HERD_STATS"] = str(stats_path)
        stats_path.unlink(missing_ok=True)
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        run.wall = time.monotonic() - t0
        run.error = f"timeout after {timeout:g} s"
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        run.stderr_tail = err[-2000:]
        return run
    run.wall = time.monotonic() - t0
    run.rc = p.returncode
    run.stderr_tail = p.stderr[-2000:]
    lines = [ln for ln in p.stdout.splitlines() if ln.strip()]
    if lines:
        run.raw = lines[-1]
        try:
            rec = json.loads(run.raw)
            run.record = rec if isinstance(rec, dict) else None
        except json.JSONDecodeError:
            run.record = None
    if stats_path is not None and cfg.sched is not None:
        read_stats(run, stats_path)
    judge(run, herd_message(p.stderr))
    return run


def read_stats(run: Run, path: Path) -> None:
    try:
        doc = json.loads(path.read_text())
        run.stats = doc if isinstance(doc, dict) else None
        if run.stats is None:
            run.stats_error = "not a JSON object"
    except FileNotFoundError:
        run.stats_error = "no HERD_STATS file written"
    except (OSError, ValueError) as e:
        run.stats_error = f"unreadable HERD_STATS file: {e}"
    finally:
        path.unlink(missing_ok=True)


def judge(run: Run, herd_msg: str = "") -> None:
    """Set run.error (FAILED) or run.seconds from what the process left."""
    cfg = run.config
    if run.rc is not None and run.rc != 0:
        what = describe_rc(run.rc)
        if herd_msg:
            what += ", herd: " + herd_msg
        elif run.record is not None and run.record.get("verified") is False:
            what += ", " + str(run.record.get("error", "verification failed"))
        run.error = what
    elif run.record is None:
        run.error = "no JSON result line"
    elif run.record.get("verified") is not True:
        run.error = "verification failed"
    elif run.record.get("workers") != cfg.workers:
        # A runtime that ignored the requested count would make every ratio a lie.
        run.error = f"ran on {run.record.get('workers')} workers, asked for {cfg.workers}"
    else:
        run.seconds = float(run.record["seconds"])


def git_commit(repo: Path) -> dict[str, Any]:
    def git(*a: str) -> str:
        try:
            return subprocess.run(["git", "-C", str(repo), *a], capture_output=True, text=True,
                                  timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    return {"commit": git("rev-parse", "HEAD") or None,
            "dirty": bool(git("status", "--porcelain", "--untracked-files=no"))}


def machine() -> dict[str, Any]:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"host": platform.node(), "cpu": cpu, "nproc": os.cpu_count(), "loadavg": loadavg(),
            "affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
            "kernel": platform.release(), "python": platform.python_version()}


def loadavg() -> Optional[list[float]]:
    """The 1, 5 and 15 minute load averages: other work on the machine
    while benchmarks run is worth knowing about."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def measure_idle(bindir: Path, workers: int) -> tuple[Optional[dict[str, Any]], str]:
    """A started runtime with no work: CPU used over 2 s, as % of one core.
    Returns the result (None on failure) and the line to print."""
    exe = bindir / "bench_idle"
    if not os.access(exe, os.X_OK):
        return None, "  idle runtime: bench_idle not built"
    try:
        p = subprocess.run([str(exe), "--workers", str(workers), "--seconds", "2"],
                           capture_output=True, text=True, timeout=30)
        res = json.loads(p.stdout.strip().splitlines()[-1])
        pct = float(res["percent_of_core"])
    except (subprocess.SubprocessError, ValueError, IndexError, KeyError, TypeError) as e:
        return None, f"  idle runtime: FAILED ({e})"
    word = "met" if pct < 1.0 else "missed"
    return res, (f"  idle runtime, {res.get('workers')} workers: {pct:.4f}% of one core "
                 f"(target well under 1%)  {word}")
