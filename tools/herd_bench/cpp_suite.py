"""`python3 -m herd_bench cpp`: the C++ layer (include/herd/herd.hpp) against
herd's C API and oneTBB, in one run.

Benchmarks (bench/cpp, bench/tbb, bench/sort.c), each row its own binary:

  fib(N)     herd C herd_spawn/herd_wait; herd C++ task_group; herd C futures
             (herd_future_*, on full/empty words); herd C++ futures
             (herd::spawn); oneTBB task_group. Every call a task.
  sort(N)    herd C (bench_sort: cilksort, its own quicksort leaves); herd C++
             task_group and oneTBB task_group (the same code, std::sort leaves)
  reduce(N)  the wrapping sum of a hash of i: herd_loop_reduce, herd C++
             parallel_reduce (per-range form), tbb::parallel_reduce
  for(N)     out[i] = hash(i): herd_loop, herd C++ parallel_for (per index),
             tbb::parallel_for
herd's loops use --kinds (default split) with the same grain in C and C++
(n / (8 * workers)); oneTBB its auto_partitioner.

Every run is its own process (`--reps 1`); all runs of all rows and worker
counts go in one shuffled order; a row's figure is the median of its runs.
A run counts only if it exits 0 with a last stdout line that is a JSON object
with "verified": true and the requested worker count; anything else is
FAILED (shown, and the exit status is 1). The targets of issue 17 are
printed with met/missed: the C++ task_group fib within 1.2x of the C API's,
and at least 5x faster than oneTBB's task_group, at every worker count.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import random
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from .runner import git_commit, loadavg, machine

REPO = Path(__file__).resolve().parent.parent.parent


@dataclass(frozen=True)
class Row:
    bench: str  # fib(35), sort(4194304), ...
    impl: str  # what the table calls it
    binary: str  # under the bench folder
    args: tuple[str, ...]
    baseline: bool = False  # the herd C API row of its benchmark
    role: str = ""  # "cpp-group", "tbb-group" for the targets


def rows(fib_n: int, sort_n: int, loop_n: int, for_n: int, kinds: list[str],
         c_future: bool) -> list[Row]:
    fib = f"fib({fib_n})"
    out = [Row(fib, "herd C herd_spawn", "cpp/bench_cpp_fib", ("--n", str(fib_n), "--api", "c"),
               baseline=True),
           Row(fib, "herd C++ task_group", "cpp/bench_cpp_fib",
               ("--n", str(fib_n), "--api", "group"), role="cpp-group"),
           Row(fib, "herd C++ future", "cpp/bench_cpp_fib", ("--n", str(fib_n), "--api", "future"))]
    if c_future:
        out.append(Row(fib, "herd C herd_future", "cpp/bench_cpp_fib",
                       ("--n", str(fib_n), "--api", "c-future")))
    out.append(Row(fib, "oneTBB task_group", "tbb/tbb_fib", ("--n", str(fib_n)), role="tbb-group"))
    srt = f"sort({sort_n})"
    out += [Row(srt, "herd C (bench_sort)", "bench_sort", ("--n", str(sort_n)), baseline=True),
            Row(srt, "herd C++ task_group", "cpp/bench_cpp_sort", ("--n", str(sort_n))),
            Row(srt, "oneTBB task_group", "tbb/tbb_sort", ("--n", str(sort_n)))]
    for op, n in (("reduce", loop_n), ("for", for_n)):
        b = f"{op}({n})"
        for i, k in enumerate(kinds):
            args = ("--op", op, "--n", str(n), "--kind", k)
            out.append(Row(b, f"herd C herd_loop{'_reduce' if op == 'reduce' else ''} {k}",
                           "cpp/bench_cpp_loops", args + ("--api", "c"), baseline=i == 0))
            out.append(Row(b, f"herd C++ parallel_{op} {k}", "cpp/bench_cpp_loops",
                           args + ("--api", "cpp")))
        out.append(Row(b, f"oneTBB parallel_{op}", "cpp/tbb_loops",
                       ("--op", op, "--n", str(n))))
    return out


def run_one(bindir: Path, row: Row, workers: int, timeout: float) -> dict[str, Any]:
    cmd = [str(bindir / row.binary), *row.args, "--workers", str(workers), "--reps", "1"]
    rec: dict[str, Any] = {"bench": row.bench, "impl": row.impl, "workers": workers,
                           "argv": cmd}
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        rec["error"] = f"timeout after {timeout:g} s"
        return rec
    except OSError as e:
        rec["error"] = f"cannot run: {e}"
        return rec
    rec["wall"] = time.monotonic() - t0
    lines = [ln for ln in p.stdout.splitlines() if ln.strip()]
    res = None
    if lines:
        try:
            res = json.loads(lines[-1])
        except json.JSONDecodeError:
            res = None
    if p.returncode != 0:
        rec["error"] = f"exit {p.returncode}: {p.stderr.strip()[-300:]}"
    elif not isinstance(res, dict):
        rec["error"] = "no JSON result line"
    elif res.get("verified") is not True:
        rec["error"] = "verification failed"
    elif res.get("workers") != workers:
        rec["error"] = f"ran on {res.get('workers')} workers, asked for {workers}"
    else:
        rec["seconds"] = float(res["seconds"])
    return rec


def summarise(records: list[dict[str, Any]], table_rows: list[Row],
              workers: list[int]) -> tuple[list[dict[str, Any]], list[str]]:
    """Medians per (row, workers), ratios to the benchmark's C baseline, and
    the printed table and target lines."""
    summary: list[dict[str, Any]] = []
    med: dict[tuple[str, str, int], Optional[float]] = {}
    for r in table_rows:
        for w in workers:
            runs = [x for x in records if x["bench"] == r.bench and x["impl"] == r.impl
                    and x["workers"] == w]
            ok = [x["seconds"] for x in runs if "seconds" in x]
            failed = [x.get("error", "") for x in runs if "seconds" not in x]
            m = statistics.median(ok) if ok and not failed else None
            med[(r.bench, r.impl, w)] = m
            summary.append({"bench": r.bench, "impl": r.impl, "workers": w, "median": m,
                            "min": min(ok) if ok else None, "max": max(ok) if ok else None,
                            "runs": len(runs), "failed": failed})
    base = {(r.bench, w): med[(r.bench, r.impl, w)] for r in table_rows if r.baseline
            for w in workers}
    lines = [f"{'benchmark':<18} {'implementation':<34} " +
             " ".join(f"{'w=' + str(w) + ' median':>14} {'x C':>6}" for w in workers)]
    last = None
    for r in table_rows:
        if r.bench != last and last is not None:
            lines.append("")
        last = r.bench
        cells = []
        for w in workers:
            m = med[(r.bench, r.impl, w)]
            b = base.get((r.bench, w))
            if m is None:
                cells.append(f"{'FAILED':>14} {'':>6}")
            else:
                ratio = f"{m / b:6.2f}" if b else f"{'':>6}"
                cells.append(f"{m:13.4f}s {ratio}")
        lines.append(f"{r.bench:<18} {r.impl:<34} " + " ".join(cells))
    lines.append("")
    lines.append("targets (issue 17), medians of this run:")
    group = next((r for r in table_rows if r.role == "cpp-group"), None)
    tbb = next((r for r in table_rows if r.role == "tbb-group"), None)
    capi = next((r for r in table_rows if r.baseline and group and r.bench == group.bench), None)
    if not (group and tbb and capi):
        lines.append("  not measured: the fib rows are not in this run (--only)")
        return summary, lines
    for w in workers:
        g = med.get((group.bench, group.impl, w)) if group else None
        c = med.get((capi.bench, capi.impl, w)) if capi else None
        t = med.get((tbb.bench, tbb.impl, w)) if tbb else None
        if g and c:
            word = "met" if g / c <= 1.2 else "missed"
            lines.append(f"  w={w}: C++ task_group fib / C API fib = {g / c:.3f} "
                         f"(target <= 1.2)  {word}")
        else:
            lines.append(f"  w={w}: C++ task_group vs C API: no figure (a row FAILED)")
        if g and t:
            word = "met" if t / g >= 5 else "missed"
            lines.append(f"  w={w}: oneTBB task_group fib / C++ task_group fib = {t / g:.2f}x "
                         f"(target >= 5x)  {word}")
        else:
            lines.append(f"  w={w}: oneTBB vs C++ task_group: no figure (a row FAILED)")
    return summary, lines


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m herd_bench cpp", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bindir", type=Path, default=REPO / "build" / "release" / "bench",
                    help="the release build's bench folder (default build/release/bench)")
    ap.add_argument("--reps", type=int, default=5, help="processes per row and worker count")
    ap.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    ap.add_argument("--fib-n", type=int, default=35)
    ap.add_argument("--sort-n", type=int, default=4 << 20)
    ap.add_argument("--reduce-n", type=int, default=1 << 26)
    ap.add_argument("--for-n", type=int, default=1 << 25)
    ap.add_argument("--kinds", default="split",
                    help="herd loop kinds for reduce and for: split, chunks, shepherds")
    ap.add_argument("--only", default="fib,sort,reduce,for",
                    help="comma-separated subset of fib, sort, reduce, for (default all)")
    ap.add_argument("--no-c-future", action="store_true",
                    help="leave out the C futures row (full/empty words: slow)")
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds per process")
    ap.add_argument("--seed", type=int, default=None, help="seed of the run order")
    ap.add_argument("--out", type=Path, default=None,
                    help="results file (default results/cpp-<timestamp>.json)")
    args = ap.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    for k in kinds:
        if k not in ("split", "chunks", "shepherds"):
            ap.error(f"--kinds: {k!r} is not split, chunks or shepherds")
    try:
        workers = [int(w) for w in args.workers.split(",") if w]
    except ValueError:
        ap.error(f"--workers {args.workers!r}: comma-separated integers")
    if args.reps < 1 or not workers or min(workers) < 1:
        ap.error("--reps and every --workers entry must be at least 1")
    only = [b for b in args.only.split(",") if b]
    for b in only:
        if b not in ("fib", "sort", "reduce", "for"):
            ap.error(f"--only: {b!r} is not fib, sort, reduce or for")
    table_rows = [r for r in rows(args.fib_n, args.sort_n, args.reduce_n, args.for_n, kinds,
                                  not args.no_c_future) if r.bench.split("(")[0] in only]
    missing = sorted({r.binary for r in table_rows if not (args.bindir / r.binary).exists()})
    if missing:
        print(f"herd_bench cpp: not built in {args.bindir}: {', '.join(missing)} (build the "
              f"release preset with a C++ compiler and oneTBB: scripts/deps.sh)", file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 31)
    order = [(r, w) for r in table_rows for w in workers for _ in range(args.reps)]
    random.Random(seed).shuffle(order)
    started = _dt.datetime.now()
    load_before = loadavg()
    print(f"herd_bench cpp: {len(order)} runs ({len(table_rows)} rows x {len(workers)} worker "
          f"counts x {args.reps}), shuffled (seed {seed}); load average {load_before}",
          file=sys.stderr)
    records = []
    for i, (r, w) in enumerate(order):
        rec = run_one(args.bindir, r, w, args.timeout)
        records.append(rec)
        what = f"{rec['seconds']:.4f} s" if "seconds" in rec else "FAILED: " + rec["error"]
        print(f"  [{i + 1}/{len(order)}] {r.bench} {r.impl} w={w}: {what}", file=sys.stderr)
    summary, lines = summarise(records, table_rows, workers)
    load_after = loadavg()
    lines.append(f"load average before {load_before}, after {load_after} "
                 f"({len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else '?'} "
                 f"CPUs usable)")
    print("\n".join(lines))
    out = args.out or REPO / "results" / f"cpp-{started.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    doc = {"suite": "cpp", "started": started.isoformat(timespec="seconds"), "seed": seed,
           "reps": args.reps, "workers": workers, "machine": machine(),
           "load_before": load_before, "load_after": load_after, **git_commit(REPO),
           "summary": summary, "runs": records, "table": lines}
    out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"results: {out}")
    failed = sum(1 for x in records if "seconds" not in x)
    if failed:
        print(f"herd_bench cpp: {failed} run(s) FAILED", file=sys.stderr)
    return 1 if failed else 0
