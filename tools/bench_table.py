#!/usr/bin/env python3
"""Run herd's native benchmarks and print one table with the targets.

    python3 tools/bench_table.py --bindir build/release/bench [--reps 5]
        [--workers 1,2] [--quick] [--large] [--out FILE] [--timeout S] [--seed N]

Kernels: fib(35) in the `one` and `both` task shapes and its sequential twin;
UTS T1 and T3 (and T1L with --large) in parallel and sequentially. Every
parallel configuration runs at each worker count of --workers (default: 1 and
all processing units).

Each configuration runs --reps times, every time as a separate process with
`--reps 1`, and all the runs of all configurations go in one shuffled order,
so that drift on the machine (frequency, a noisy neighbour) spreads over all
configurations instead of biasing whichever ran last. A run counts only if the
process exits 0 and its last stdout line is a JSON object with
"verified": true; anything else (a crash, a timeout, a wrong result) shows as
FAILED in the table and makes the exit status 1. Nothing is left out silently.

Every run's raw JSON line, exit status and stderr tail go to the results file
(default results/bench-<timestamp>.json) together with the commit, the machine
and the HERD_* environment.

Python 3 standard library only.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import random
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

FIB_N = 35


@dataclass(frozen=True)
class Config:
    """One benchmark configuration: a binary and its arguments."""

    kernel: str  # "fib" or "uts"
    label: str  # what the table shows, e.g. "n=35 one w=2"
    binary: str  # file name in --bindir
    args: tuple[str, ...]
    workers: int  # 0 for a sequential twin
    twin: str  # key shared by a configuration and its sequential twin
    variant: str  # key shared by the same configuration at other worker counts


@dataclass
class Run:
    """The outcome of one process."""

    config: Config
    rc: Optional[int] = None
    seconds: Optional[float] = None
    record: Optional[dict[str, Any]] = None
    raw: str = ""
    error: str = ""
    stderr_tail: str = ""
    wall: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.error


@dataclass
class Row:
    config: Config
    runs: list[Run] = field(default_factory=list)

    @property
    def failed(self) -> list[Run]:
        return [r for r in self.runs if not r.ok]

    @property
    def median(self) -> Optional[float]:
        if self.failed or not self.runs:
            return None
        return statistics.median(r.seconds for r in self.runs if r.seconds is not None)

    @property
    def mnodes(self) -> Optional[float]:
        m = self.median
        if m is None or m <= 0:
            return None
        nodes = self.runs[0].record.get("nodes") if self.runs[0].record else None
        return nodes / m / 1e6 if nodes else None


def build_configs(workers: list[int], large: bool) -> list[Config]:
    configs: list[Config] = []
    for shape in ("one", "both"):
        for w in workers:
            configs.append(
                Config("fib", f"n={FIB_N} {shape} w={w}", "bench_fib",
                       ("--n", str(FIB_N), "--shape", shape, "--workers", str(w)),
                       w, f"fib{FIB_N}", f"fib{FIB_N}-{shape}"))
    configs.append(Config("fib", f"n={FIB_N} seq", "bench_fib",
                          ("--n", str(FIB_N), "--shape", "seq"), 0, f"fib{FIB_N}",
                          f"fib{FIB_N}-seq"))
    for tree in ("T1", "T3") + (("T1L",) if large else ()):
        for w in workers:
            configs.append(Config("uts", f"{tree} w={w}", "bench_uts",
                                  ("--tree", tree, "--workers", str(w)), w, f"uts-{tree}",
                                  f"uts-{tree}"))
        configs.append(Config("uts", f"{tree} seq", "bench_uts", ("--tree", tree, "--seq"), 0,
                              f"uts-{tree}", f"uts-{tree}-seq"))
    return configs


def describe_rc(rc: int) -> str:
    if rc < 0:
        try:
            return f"killed by {signal.Signals(-rc).name}"
        except ValueError:
            return f"killed by signal {-rc}"
    return f"exit {rc}"


def run_once(bindir: Path, cfg: Config, timeout: float) -> Run:
    run = Run(cfg)
    cmd = [str(bindir / cfg.binary), *cfg.args, "--reps", "1"]
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
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
    if p.returncode != 0:
        what = describe_rc(p.returncode)
        if run.record is not None and run.record.get("verified") is False:
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
    return run


def fmt(x: Optional[float], spec: str) -> str:
    return "-" if x is None else format(x, spec)


def print_table(rows: list[Row], workers: list[int]) -> None:
    seq_of = {r.config.twin: r for r in rows if r.config.workers == 0}
    one_w = {r.config.variant: r for r in rows if r.config.workers == 1}
    header = ("kernel", "config", "median s", "spread", "vs seq", "speedup vs 1w", "Mnodes/s",
              "runs", "note")
    table: list[tuple[str, ...]] = [header]
    for row in rows:
        c = row.config
        n_ok = len(row.runs) - len(row.failed)
        runs = f"{n_ok}/{len(row.runs)}"
        if row.failed:
            reasons = sorted({r.error for r in row.failed})
            table.append((c.kernel, c.label, "FAILED", "", "", "", "", runs, "; ".join(reasons)))
            continue
        med = row.median
        times = [r.seconds for r in row.runs if r.seconds is not None]
        spread = (max(times) - min(times)) / med * 100 if med and len(times) > 1 else None
        ratio = speedup = None
        if c.workers > 0:
            seq = seq_of.get(c.twin)
            if seq is not None and seq.median and med:
                ratio = med / seq.median
            base = one_w.get(c.variant)
            if c.workers != 1 and base is not None and base.median and med:
                speedup = base.median / med
        table.append((c.kernel, c.label, fmt(med, ".4f"),
                      "-" if spread is None else f"{spread:.1f}%",
                      "-" if ratio is None else f"{ratio:.2f}x",
                      "-" if speedup is None else f"{speedup:.2f}x",
                      fmt(row.mnodes, ".2f"), runs, ""))
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    for k, r in enumerate(table):
        print("  ".join(v.ljust(w) if i < 2 or i == len(header) - 1 else v.rjust(w)
                        for i, (v, w) in enumerate(zip(r, widths))).rstrip())
        if k == 0:
            print("  ".join("-" * w for w in widths))


def print_targets(rows: list[Row]) -> None:
    """The issue's targets for this 2-core machine, each with met/missed."""
    by_label = {r.config.label: r for r in rows}

    def verdict(labels: list[str], value_fn, ok_fn) -> tuple[str, str]:
        picked = [by_label.get(lb) for lb in labels]
        if any(p is None for p in picked):
            return "-", "n/a (not run)"
        if any(p.failed for p in picked):
            return "-", "FAILED"
        v = value_fn(*picked)
        if v is None:
            return "-", "n/a"
        return f"{v:.2f}", "met" if ok_fn(v) else "missed"

    fib1, fib2 = f"n={FIB_N} one w=1", f"n={FIB_N} one w=2"
    targets = [
        (f"fib({FIB_N}) one, 1 worker / seq twin <= 2.0x",
         [fib1, f"n={FIB_N} seq"], lambda a, s: a.median / s.median, lambda v: v <= 2.0),
        (f"fib({FIB_N}) one, speedup 2 workers vs 1 >= 1.95x",
         [fib1, fib2], lambda a, b: a.median / b.median, lambda v: v >= 1.95),
        ("UTS T3, 1 worker >= 8 Mnodes/s", ["T3 w=1"], lambda a: a.mnodes, lambda v: v >= 8.0),
        ("UTS T3, 2 workers >= 17 Mnodes/s", ["T3 w=2"], lambda a: a.mnodes,
         lambda v: v >= 17.0),
    ]
    print("\ntargets (issue, 2-core machine):")
    width = max(len(t[0]) for t in targets)
    for name, labels, value_fn, ok_fn in targets:
        value, word = verdict(labels, value_fn, ok_fn)
        print(f"  {name.ljust(width)}  {value:>7}  {word}")


def measure_idle(bindir: Path, workers: int) -> Optional[dict[str, Any]]:
    """A started runtime with no work: CPU used over 2 s, as % of one core."""
    exe = bindir / "bench_idle"
    if not os.access(exe, os.X_OK):
        print("\nidle runtime: bench_idle not built", file=sys.stderr)
        return None
    try:
        p = subprocess.run([str(exe), "--workers", str(workers), "--seconds", "2"],
                           capture_output=True, text=True, timeout=30)
        res = json.loads(p.stdout.strip().splitlines()[-1])
    except (subprocess.SubprocessError, ValueError, IndexError) as e:
        print(f"\nidle runtime: FAILED ({e})", file=sys.stderr)
        return None
    pct = res["percent_of_core"]
    word = "met" if pct < 1.0 else "missed"
    print(f"  idle runtime, {res['workers']} workers: {pct:.4f}% of one core "
          f"(target well under 1%)  {word}")
    return res


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
    return {"host": platform.node(), "cpu": cpu, "nproc": os.cpu_count(),
            "affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
            "kernel": platform.release(), "python": platform.python_version()}


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bindir", required=True, type=Path,
                    help="folder holding bench_fib and bench_uts")
    ap.add_argument("--reps", type=int, default=None,
                    help="processes per configuration (default 5, 1 with --quick)")
    ap.add_argument("--workers", default=None,
                    help="comma-separated worker counts (default 1 and all PUs)")
    ap.add_argument("--quick", action="store_true", help="one run per configuration")
    ap.add_argument("--large", action="store_true", help="also run UTS T1L (~100M nodes)")
    ap.add_argument("--out", type=Path, default=None,
                    help="results file (default results/bench-<timestamp>.json)")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per process")
    ap.add_argument("--seed", type=int, default=None, help="seed of the run order")
    args = ap.parse_args(argv)
    if args.reps is None:
        args.reps = 1 if args.quick else 5
    if args.reps < 1:
        ap.error("--reps must be at least 1")
    nproc = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    try:
        ws = [int(w) for w in args.workers.split(",")] if args.workers else [1, nproc or 1]
    except ValueError:
        ap.error(f"--workers takes comma-separated integers, not {args.workers!r}")
    if any(w < 1 for w in ws):
        ap.error("--workers counts must be at least 1")
    args.worker_list = sorted(set(ws))
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1 << 31)
    return args


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    for b in ("bench_fib", "bench_uts"):
        if not os.access(args.bindir / b, os.X_OK):
            print(f"error: {args.bindir / b} is missing or not executable "
                  "(build the bench_fib and bench_uts targets first)", file=sys.stderr)
            return 2

    configs = build_configs(args.worker_list, args.large)
    rows = [Row(c) for c in configs]
    order = [(k, rep) for k in range(len(rows)) for rep in range(args.reps)]
    random.Random(args.seed).shuffle(order)

    started = _dt.datetime.now()
    out = args.out or Path("results") / f"bench-{started.strftime('%Y%m%d-%H%M%S')}.json"
    repo = Path(__file__).resolve().parent.parent
    doc: dict[str, Any] = {
        "started": started.isoformat(timespec="seconds"), "argv": sys.argv,
        "bindir": str(args.bindir.resolve()), "seed": args.seed, "reps": args.reps,
        "workers": args.worker_list, "git": git_commit(repo), "machine": machine(),
        "env": {k: v for k, v in os.environ.items() if k.startswith("HERD_")}, "runs": []}

    t_start = time.monotonic()
    for done, (k, rep) in enumerate(order, 1):
        cfg = rows[k].config
        run = run_once(args.bindir, cfg, args.timeout)
        rows[k].runs.append(run)
        doc["runs"].append({"kernel": cfg.kernel, "config": cfg.label, "rep": rep,
                            "cmd": [cfg.binary, *cfg.args, "--reps", "1"], "rc": run.rc,
                            "ok": run.ok, "error": run.error or None, "wall_s": round(run.wall, 6),
                            "json": run.raw or None,
                            "stderr_tail": run.stderr_tail if not run.ok else None})
        elapsed = time.monotonic() - t_start
        eta = elapsed / done * (len(order) - done)
        status = f"{run.seconds:.4f} s" if run.ok else f"FAILED ({run.error})"
        print(f"[run {done}/{len(order)}] {cfg.kernel} {cfg.label}: {status}  "
              f"(eta {eta:.0f} s)", file=sys.stderr, flush=True)

    doc["finished"] = _dt.datetime.now().isoformat(timespec="seconds")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1) + "\n")

    m = doc["machine"]
    print(f"herd benchmarks: {m['cpu']} ({m['affinity']} PUs), commit "
          f"{(doc['git']['commit'] or 'unknown')[:12]}{' (dirty)' if doc['git']['dirty'] else ''}, "
          f"{args.reps} run(s) per configuration, shuffled (seed {args.seed})\n")
    print_table(rows, args.worker_list)
    print_targets(rows)
    idle = measure_idle(args.bindir, max(args.worker_list))
    doc["idle"] = idle
    out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"\nraw results: {out}")

    failed = [r for r in rows if r.failed]
    if failed:
        print(f"\n{len(failed)} configuration(s) FAILED: "
              + ", ".join(f"{r.config.kernel} {r.config.label}" for r in failed), file=sys.stderr)
        for r in failed:
            bad = r.failed[0]
            tail = bad.stderr_tail.strip().splitlines()[-3:]
            print(f"  {r.config.kernel} {r.config.label}: {bad.error}"
                  + ("".join(f"\n    | {ln}" for ln in tail)), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
