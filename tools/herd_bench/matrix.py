"""`herd bench`: run a matrix of cells (suite.py), one process per repetition,
in a shuffled order, with a progress line; record everything.

Each run is judged: it must exit 0 and end with a JSON line saying
"verified": true, with the requested thread count ("workers"; 0 for the
serial twin), and an OpenMP run must report the library it was meant to run
on. Anything else -- a crash, a timeout, a wrong result, the wrong runtime
-- is recorded as a failure with its reason, and counts in every table.
A cell whose runtime is not available gets one "not built" record.

The results folder (results/bench-<timestamp>/ by default) gets
results.json (the commit, the machine, `herd topo`'s output, the
environment, the runtimes found, every run with its JSON line and its
HERD_STATS counters) and results.csv (one line per run).
"""
from __future__ import annotations

import csv
import datetime as _dt
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Optional, TextIO

from .counters import run_counters
from .runner import describe_rc, git_commit, herd_message, loadavg, machine
from .suite import Cell, Command, Paths, command, libomp_links

CLEAR = "\r\033[K"  # back to the line's start and erase it
CSV_FIELDS = ("kernel", "variant", "input", "runtime", "sched", "threads", "rep", "ok",
              "status", "seconds", "wall_s", "error", "steals", "steals_remote", "failed_steals")


def judge(cell: Cell, cmd: Command, rc: Optional[int], stdout: str, stderr: str
          ) -> tuple[Optional[dict[str, Any]], str, Optional[float]]:
    """(the JSON record, the error or "", the seconds) of one finished run."""
    rec: Optional[dict[str, Any]] = None
    lines = [ln for ln in stdout.splitlines() if ln.strip()]
    if lines:
        try:
            obj = json.loads(lines[-1])
            rec = obj if isinstance(obj, dict) else None
        except ValueError:
            rec = None
    if rc is not None and rc != 0:
        what = describe_rc(rc)
        msg = herd_message(stderr)
        if msg:
            what += ", herd: " + msg
        elif rec is not None and rec.get("verified") is False:
            what += ", verification failed"
        elif stderr.strip():
            what += ": " + stderr.strip().splitlines()[-1][:200]
        return rec, what, None
    if rec is None:
        return None, "no JSON result line", None
    if rec.get("verified") is not True:
        return rec, "verification failed", None
    if rec.get("workers") != cell.threads:
        return rec, f"ran on {rec.get('workers')} threads, asked for {cell.threads}", None
    if cmd.expect_lib is not None:
        got = rec.get("omp_lib") or ""
        if not got or os.path.realpath(got) != os.path.realpath(cmd.expect_lib):
            return rec, f"ran on {got or 'an unknown library'}, not {cmd.expect_lib}", None
    try:
        return rec, "", float(rec["seconds"])
    except (KeyError, TypeError, ValueError):
        return rec, "no seconds in the JSON line", None


def run_one(cell: Cell, cmd: Command, timeout: float, tmp: Path) -> dict[str, Any]:
    env = dict(os.environ)
    env.update(cmd.env)
    stats_path = tmp / "stats.json"
    if cmd.stats:
        env["HERD_STATS"] = str(stats_path)
        stats_path.unlink(missing_ok=True)
    out: dict[str, Any] = {"cmd": cmd.argv, "env": cmd.env}
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd.argv, capture_output=True, text=True, timeout=timeout, env=env)
        rc, so, se = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, so = None, ""
        se = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        out.update(wall_s=round(time.monotonic() - t0, 6), ok=False, status="failed",
                   error=f"timeout after {timeout:g} s", seconds=None, json=None,
                   stderr_tail=se[-1500:])
        return out
    except OSError as e:
        out.update(wall_s=0.0, ok=False, status="failed", error=f"cannot run: {e}",
                   seconds=None, json=None)
        return out
    out["wall_s"] = round(time.monotonic() - t0, 6)
    rec, err, secs = judge(cell, cmd, rc, so, se)
    out.update(rc=rc, ok=not err, status="ok" if not err else "failed", error=err or None,
               seconds=secs, json=rec)
    if err:
        out["stderr_tail"] = se[-1500:]
    if cmd.stats:
        try:
            stats = json.loads(stats_path.read_text())
            out["counters"] = run_counters(stats)
        except (OSError, ValueError):
            out["counters"] = None
        stats_path.unlink(missing_ok=True)
    return out


def not_run(records: list[dict[str, Any]], rest: list[tuple[Cell, int]]) -> None:
    """After an interrupt, record every run not made as `not run` (visible in
    the tables, like a failure)."""
    records.extend({**c.to_json(), "rep": r, "ok": False, "status": "not run",
                    "error": "not run: the matrix was interrupted", "seconds": None}
                   for c, r in rest)


def fmt_secs(s: float) -> str:
    s = max(0, int(s + 0.5))
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


def run_matrix(cells: list[Cell], reps: int, paths: Paths, *, timeout: float, seed: int,
               progress: TextIO = sys.stderr,
               clock: Callable[[], float] = time.monotonic) -> list[dict[str, Any]]:
    """Every repetition of every cell, in one shuffled order; returns the run
    records (cells of an unavailable runtime: one `not built` record each)."""
    records: list[dict[str, Any]] = []
    todo: list[tuple[Cell, int]] = []
    for c in cells:
        ok, why = paths.available(c.runtime, c.kernel)
        if ok:
            todo.extend((c, r) for r in range(reps))
        else:
            records.append({**c.to_json(), "rep": 0, "ok": False, "status": "not built",
                            "error": why, "seconds": None})
    random.Random(seed).shuffle(todo)
    t_start = clock()
    tty = progress.isatty()
    with tempfile.TemporaryDirectory(prefix="herd-bench-") as tmpname:
        tmp = Path(tmpname)
        libomp_dir = libomp_links(tmp, paths)
        for done, (c, rep) in enumerate(todo):
            elapsed = clock() - t_start
            eta = elapsed / done * (len(todo) - done) if done else 0.0
            # On a terminal one line, rewritten; in a log one line per run.
            print(f"{CLEAR if tty else ''}[{done + 1}/{len(todo)}] now: {c.key()}  |  left "
                  f"{len(todo) - done}  |  ETA {fmt_secs(eta) if done else '?'}",
                  end="" if tty else "\n", file=progress, flush=True)
            try:
                rec = run_one(c, command(c, paths, libomp_dir), timeout, tmp)
            except KeyboardInterrupt:  # subprocess.run has killed the child
                not_run(records, todo[done:])
                print(f"{CLEAR if tty else ''}herd bench: interrupted; the runs not made are "
                      f"recorded as `not run`", file=progress, flush=True)
                break
            rec.update(c.to_json(), rep=rep)
            if not rec["ok"]:
                print(f"{CLEAR if tty else ''}  FAILED {c.key()} rep {rep}: {rec['error']}", file=progress,
                      flush=True)
            records.append(rec)
    print(f"{CLEAR if tty else ''}{len(todo)} runs in {fmt_secs(clock() - t_start)}", file=progress,
          flush=True)
    return records


def topology_text(herd_exe: Optional[Path]) -> str:
    """`herd topo` (herd's own view), else lstopo's, else what /proc says."""
    for cmd in ([str(herd_exe), "topo"] if herd_exe else None, ["lstopo-no-graphics", "-p"]):
        if not cmd:
            continue
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
            if p.returncode == 0 and p.stdout.strip():
                return p.stdout
        except (OSError, subprocess.SubprocessError):
            pass
    return f"(no herd topo or lstopo; {os.cpu_count()} CPUs)"


def environment() -> dict[str, str]:
    keep = ("HERD_", "OMP_", "GOMP_", "KMP_", "LD_", "TBB_")
    return {k: v for k, v in os.environ.items() if k.startswith(keep)}


def results_doc(cells: list[Cell], records: list[dict[str, Any]], *, suite: str, reps: int,
                seed: int, paths: Paths, herd_exe: Optional[Path], started: _dt.datetime,
                argv: list[str], repo: Path,
                machine_start: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    """machine_start: machine() taken before the runs (its load average is
    the one that says whether other work competed); default: now."""
    return {"format": "herd-bench-matrix/1", "suite": suite, "argv": argv, "seed": seed,
            "reps": reps, "started": started.isoformat(timespec="seconds"),
            "finished": _dt.datetime.now().isoformat(timespec="seconds"),
            "git": git_commit(repo), "machine": machine_start or machine(), "loadavg_finished": loadavg(),
            "topology": topology_text(herd_exe), "env": environment(),
            "paths": {"bench": str(paths.bench), "herd_omp": str(paths.herd_omp or ""),
                      "herd_kmp": str(paths.herd_kmp or ""), "libomp": str(paths.libomp or "")},
            "runtimes": {rt: {"available": paths.available(rt)[0],
                              "why": paths.available(rt)[1]}
                         for rt in sorted({c.runtime for c in cells})},
            "cells": [c.to_json() for c in cells], "runs": records}


def write_results(doc: dict[str, Any], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(doc, indent=1) + "\n")
    with open(out / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, CSV_FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in doc["runs"]:
            row = dict(r)
            ctr = r.get("counters") or {}
            row.update(steals=ctr.get("steals"), steals_remote=ctr.get("steals_remote"),
                       failed_steals=ctr.get("failed_steals"))
            w.writerow(row)
