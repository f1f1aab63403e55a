"""Lace (trolando/lace) beside herd: its own `fib-lace` benchmark as the peer
for the spawn cost (issue 15). Optional: the harness runs it only when given
a Lace build (--lace), interleaved with herd's runs, and prints herd's
fib(N) spawn-one under the first scheduler against it.

`fib-lace -w W N` prints `fib(N) = V` and `Time: S` (seconds); a run counts
only when V is the right value."""
from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from .model import Row, Sched


def find_fib(path: Path) -> Optional[Path]:
    """The fib-lace binary: path itself, or in path/, or in path/benchmarks/
    (a Lace CMake build folder)."""
    for p in (path, path / "fib-lace", path / "benchmarks" / "fib-lace"):
        if p.is_file() and os.access(p, os.X_OK):
            return p
    return None


def fib_value(n: int) -> int:
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


@dataclass
class LaceRun:
    workers: int
    seconds: Optional[float] = None
    error: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"workers": self.workers, "seconds": self.seconds, "error": self.error or None}


def parse(out: str, n: int) -> tuple[Optional[float], str]:
    """(seconds, "") from fib-lace's output, or (None, why not)."""
    m = re.search(r"fib\((\d+)\)\s*=\s*(\d+)", out)
    t = re.search(r"Time:\s*([0-9.eE+-]+)", out)
    if not m or not t:
        return None, "no 'fib(N) = V' and 'Time: S' lines"
    if int(m.group(1)) != n or int(m.group(2)) != fib_value(n):
        return None, f"wrong result: {m.group(0)} (want fib({n}) = {fib_value(n)})"
    return float(t.group(1)), ""


def run_once(exe: Path, n: int, workers: int, timeout: float) -> LaceRun:
    run = LaceRun(workers)
    try:
        p = subprocess.run([str(exe), "-w", str(workers), str(n)], capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        run.error = f"timeout after {timeout:g} s"
        return run
    except OSError as e:
        run.error = str(e)
        return run
    if p.returncode != 0:
        run.error = f"exit {p.returncode}"
        return run
    run.seconds, run.error = parse(p.stdout, n)
    return run


def _median(xs: list[float]) -> float:
    s = sorted(xs)
    k = len(s) // 2
    return s[k] if len(s) % 2 else (s[k - 1] + s[k]) / 2


def table(rows: list[Row], first: Sched, lace: dict[str, Any], fib_n: int) -> str:
    """herd's fib(fib_n) spawn-one under `first` against Lace's fib-lace, at
    each worker count both ran (medians), and issue 15's two targets: herd
    no slower than Lace on one worker, and herd on two workers at least
    1.95x faster than on one."""
    herd: dict[int, Optional[float]] = {}
    for r in rows:
        c = r.config
        if (c.sched == first and c.topology is None and c.kernel == "fib"
                and c.problem == f"fib({fib_n}) one"):
            herd[c.workers] = r.median
    peer: dict[int, list[float]] = {}
    failed: dict[int, str] = {}
    for run in lace.get("runs", []):
        w = int(run["workers"])
        if run.get("seconds") is None:
            failed[w] = run.get("error") or "failed"
        else:
            peer.setdefault(w, []).append(float(run["seconds"]))
    lines = [f"{'workers':>7}  {'herd ' + first.name:>12}  {'Lace':>9}  {'herd/Lace':>9}"]
    med: dict[int, float] = {}
    for w in sorted(set(herd) | set(peer) | set(failed)):
        h = herd.get(w)
        if w in failed:
            lcell = "FAILED"
        elif w in peer:
            med[w] = _median(peer[w])
            lcell = f"{med[w]:.4f}"
        else:
            lcell = "-"
        hcell = f"{h:.4f}" if h is not None else "-"
        ratio = f"{h / med[w]:.2f}x" if h is not None and w in med else "-"
        lines.append(f"{w:>7}  {hcell:>12}  {lcell:>9}  {ratio:>9}")
    h1, h2 = herd.get(1), herd.get(2)
    if h1 is not None and 1 in med:
        word = "met" if h1 <= med[1] else "missed"
        lines.append(f"target: herd no slower than Lace on 1 worker: {h1 / med[1]:.2f}x  {word}")
    else:
        lines.append("target: herd no slower than Lace on 1 worker: n/a (not run)")
    if h1 is not None and h2 is not None and h2 > 0:
        s = h1 / h2
        lace_s = f"; Lace {med[1] / med[2]:.2f}x" if 1 in med and 2 in med else ""
        word = "met" if s >= 1.95 else "missed"
        lines.append(f"target: herd 2 workers at least 1.95x faster than 1: {s:.2f}x  "
                     f"{word}{lace_s}")
    else:
        lines.append("target: herd 2 workers at least 1.95x faster than 1: n/a (not run)")
    return "\n".join(lines)
