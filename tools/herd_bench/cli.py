"""Command line of the benchmark harness (tools/bench_table.py).

Runs herd's benchmark kernels under each scheduler variant and prints:
  1. the main comparison for the first scheduler (per configuration: median,
     spread, time relative to the sequential twin, speedup over 1 worker,
     Mnodes/s for UTS) and the issue's targets;
  2. one column per scheduler variant: median seconds and speedup over the
     sequential twin, for every kernel configuration on this machine;
  3. the steal counters per kernel and scheduler (steals, local, remote,
     failed, attempts, stolen tasks, tasks per steal, shepherds), medians
     over the runs -- the analogue of the MTS paper's Table 4 -- on this
     machine and on a synthetic topology (default "pack:4 core:8 pu:1" with
     8 workers, oversubscribed on a small machine and never pinned);
  4. the idle cost of a started runtime, and a figure (matplotlib, optional).
--counters runs only what 3 needs; --summary (./scripts/bench) what 1 and 3
need: the first scheduler at every worker count, the sequential twins, and
the other schedulers at the largest worker count only.

Every run is its own process (`--reps 1`), all runs of all configurations
go in one shuffled order, and a run counts only if it exits 0 with a last
stdout line that is a JSON object with "verified": true and the requested
worker count. Anything else -- a crash, a timeout, a wrong result, a
configuration the runtime refuses (an unknown or unavailable HERD_SCHED) --
shows as FAILED and makes the exit status 1. Nothing is dropped silently. A
configuration whose run timed out is not started again: its remaining runs
are recorded as FAILED too, so a scheduler that hangs costs one timeout per
configuration, not one per run.

Each parallel run gets HERD_STATS=<temporary file>; its per-worker counters
are stored, raw, with the run in the results file, beside the commit, the
machine and the HERD_* environment.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

from . import lace, report
from .model import (BINARY, DEFAULT_SCHEDS, FIB_N, KERNELS, SORT_N, Row, Run, Sched,
                    build_configs, expand_scheds)
from .plot import plot
from .runner import git_commit, loadavg, machine, measure_idle, run_once

DEFAULT_TOPOLOGY = "pack:4 core:8 pu:1"


def _list(s: Optional[str]) -> list[str]:
    return [x for x in (s or "").split(",") if x]


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="bench_table.py", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run herd's benchmark kernels under each scheduler and print the tables.",
        epilog="scheduler variants: SCHED[:KEY=VALUE]..., KEY one of spawn, steal, shepherd, "
               "idle, bind, stack\n  e.g. --scheds ws,ws:spawn=work-first,mts:steal=chunk:8")
    ap.add_argument("--bindir", type=Path, default=None,
                    help="folder holding bench_fib, bench_uts and bench_sort")
    ap.add_argument("--reps", type=int, default=None,
                    help="processes per configuration (default 5, 1 with --quick)")
    ap.add_argument("--workers", default=None,
                    help="comma-separated worker counts (default 1 and all PUs)")
    ap.add_argument("--quick", action="store_true", help="one run per configuration")
    ap.add_argument("--large", action="store_true",
                    help="also UTS T1L (~100M nodes) and sort of 32Mi integers")
    ap.add_argument("--kernels", default=",".join(KERNELS),
                    help="comma-separated subset of fib,uts,sort (default all)")
    ap.add_argument("--sort-n", type=int, default=SORT_N,
                    help=f"integers sorted by the sort kernel (default {SORT_N})")
    ap.add_argument("--scheds", default=",".join(DEFAULT_SCHEDS),
                    help="comma-separated scheduler variants, one table column each; the first "
                         "is the main table's (default: %(default)s)")
    ap.add_argument("--spawn", default="",
                    help="comma-separated HERD_SPAWN values crossed with every --scheds entry")
    ap.add_argument("--steal", default="",
                    help="comma-separated HERD_STEAL values crossed with every --scheds entry")
    ap.add_argument("--topology", default=DEFAULT_TOPOLOGY,
                    help="synthetic topology for the second set of runs, or 'none' "
                         "(default: %(default)s)")
    ap.add_argument("--topology-workers", type=int, default=8,
                    help="workers on the synthetic topology (default 8)")
    ap.add_argument("--topology-bind", default="scatter",
                    help="HERD_BIND on the synthetic topology: which modelled PU, and so which "
                         "shepherd, each worker gets; nothing is pinned (default scatter: "
                         "workers spread over the packages)")
    ap.add_argument("--counters", action="store_true",
                    help="only the counter study: each scheduler at the largest worker count "
                         "and on the topology; no sequential twins, no main table")
    ap.add_argument("--summary", action="store_true",
                    help="the main table (the first scheduler at every worker count, the "
                         "sequential twins, the targets, the idle cost) and the counter study "
                         "(every scheduler at the largest worker count and on the topology); "
                         "what ./scripts/bench runs")
    ap.add_argument("--no-plot", action="store_true", help="do not draw the figure")
    ap.add_argument("--report", type=Path, default=None, metavar="RESULTS",
                    help="print the tables (and figure) of a saved results file; run nothing")
    ap.add_argument("--out", type=Path, default=None,
                    help="results file (default results/bench-<timestamp>.json)")
    ap.add_argument("--lace", type=Path, default=None, metavar="DIR",
                    help="a Lace build (trolando/lace; the folder, its benchmarks/ or its "
                         "fib-lace): run fib-lace beside herd's fib at each worker count, "
                         "interleaved, and print herd's spawn cost against it (issue 15)")
    ap.add_argument("--timeout", type=float, default=60.0,
                    help="seconds per process (default 60); after a timeout the configuration's "
                         "other runs are not started and count as FAILED")
    ap.add_argument("--seed", type=int, default=None, help="seed of the run order")
    args = ap.parse_args(argv)
    if args.report is None and args.bindir is None:
        ap.error("--bindir is required (or --report RESULTS)")
    if args.summary and args.counters:
        ap.error("--summary and --counters exclude each other (--summary includes the counters)")
    if args.lace is not None and args.counters:
        ap.error("--lace compares times; --counters runs none")
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
    args.kernel_list = tuple(_list(args.kernels))
    bad = [k for k in args.kernel_list if k not in KERNELS]
    if bad or not args.kernel_list:
        ap.error(f"--kernels takes a subset of {','.join(KERNELS)}, not {args.kernels!r}")
    try:
        args.sched_list = expand_scheds(_list(args.scheds), _list(args.spawn),
                                        _list(args.steal))
    except ValueError as e:
        ap.error(f"--scheds: {e}")
    if not args.sched_list:
        ap.error("--scheds needs at least one scheduler")
    if args.topology.strip().lower() in ("", "none", "off"):
        args.topology = None
    if args.topology_workers < 1:
        ap.error("--topology-workers must be at least 1")
    if args.sort_n < 1:
        ap.error("--sort-n must be at least 1")
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1 << 31)
    return args


def drop_refused(herd_cli: Path, scheds: list[Sched], asked: set[str]) -> list[Sched]:
    """The variants that --spawn/--steal made by crossing, less those the runtime
    refuses (work-first with steal=half, or with a queue scheduler): `herd topo`
    checks each one's settings as a run would, and one it refuses is left out
    with the runtime's own words. A variant written out in --scheds is kept
    either way (refused, its rows say FAILED)."""
    kept = []
    for s in scheds:
        if s.name in asked:
            kept.append(s)
            continue
        env = dict(os.environ, **dict(s.env))
        r = subprocess.run([str(herd_cli), "topo"], env=env, capture_output=True, text=True,
                           timeout=60)
        if r.returncode == 0:
            kept.append(s)
            continue
        why = next((ln for ln in r.stderr.splitlines() if ln.startswith("herd:")),
                   f"exit status {r.returncode}")
        print(f"--spawn/--steal: {s.name} left out, the runtime refuses it: {why}")
    return kept


def print_tables(rows: list[Row], scheds: list[Sched], doc: dict[str, Any],
                 counters_only: bool, idle_line: str = "") -> None:
    workers = doc["workers"]
    topo, topo_w = doc.get("topology"), doc.get("topology_workers", 8)
    m = doc["machine"]
    git = doc.get("git") or {}
    print(f"herd benchmarks: {m.get('cpu')} ({m.get('affinity')} PUs), commit "
          f"{(git.get('commit') or 'unknown')[:12]}{' (dirty)' if git.get('dirty') else ''}, "
          f"{doc['reps']} run(s) per configuration, shuffled (seed {doc['seed']})")
    busy = busy_note(m.get("loadavg"), m.get("affinity") or 1)
    if busy:
        print(busy)
    first = scheds[0]
    if not counters_only:
        print(f"\nmain comparison, scheduler {first.name} "
              f"({' '.join(f'{k}={v}' for k, v in first.env)}):\n")
        print(report.main_table(rows, first))
        print("\n" + report.targets(rows, first, FIB_N))
        if idle_line:
            print(idle_line)
        if doc.get("lace"):
            print(f"\nspawn cost against Lace ({doc['lace'].get('path')}): fib({FIB_N}) "
                  f"spawn-one, medians of the same run, seconds\n")
            print(lace.table(rows, first, doc["lace"], FIB_N))
    print("\nschedulers on this machine: median s and speedup over the sequential twin "
          "(seq s / median); FAILED = refused, crashed, timed out or wrong"
          + ("; - = not run (--summary: every worker count for the first scheduler only)"
             if doc.get("summary") else "") + "\n")
    print(report.sched_table(rows, scheds, None))
    print("\nscheduler targets (issue 15): median over ws's per kernel configuration; bound "
          "1.1x, 3x for central, fifo and lifo on kernels without a cut-off (fib, UTS)\n")
    print(report.sched_targets(rows, scheds, None))
    print(f"\nsteal counters on this machine, {max(workers)} workers: medians over runs of the "
          f"sums over workers; remote = victim in another shepherd; "
          f"per steal = stolen tasks / steals; \u2014 = not reported by this build\n")
    print(report.counter_table(rows, scheds, None, max(workers)))
    if topo is not None:
        pus = m.get("affinity") or m.get("nproc")
        print(f"\nsynthetic topology \"{topo}\", {topo_w} workers, HERD_BIND="
              f"{doc.get('topology_bind')}: OVERSUBSCRIBED ({topo_w} workers on {pus} PUs) "
              f"and never pinned, so times say little about the modelled machine; the "
              f"counters show how each scheduler crosses its shepherds\n")
        print(report.sched_table(rows, scheds, topo))
        print()
        print(report.sched_targets(rows, scheds, topo))
        print()
        print(report.counter_table(rows, scheds, topo, topo_w))


def busy_note(start: Optional[list[float]], pus: int) -> str:
    """A warning when the machine was already loaded when the runs began (the
    1-minute load average above 1.5 per PU, plus one): other work competing
    with the runs makes times noisy. Only the start counts: the runs' own
    workers load the machine afterwards. Both ends are in the results file."""
    if not start or start[0] <= pus * 1.5 + 1:
        return ""
    return (f"NOTE: the machine was busy when the runs began (load average {start[0]:.1f} on "
            f"{pus} PUs): other work competed with them, so times are noisy")


def results_doc(args: argparse.Namespace, configs: list, started: _dt.datetime
                ) -> dict[str, Any]:
    repo = Path(__file__).resolve().parent.parent.parent
    return {"started": started.isoformat(timespec="seconds"), "argv": sys.argv,
            "bindir": str(args.bindir.resolve()), "seed": args.seed, "reps": args.reps,
            "workers": args.worker_list, "scheds": [s.name for s in args.sched_list],
            "kernels": list(args.kernel_list), "sort_n": args.sort_n,
            "topology": args.topology, "topology_workers": args.topology_workers,
            "topology_bind": args.topology_bind, "counters_only": args.counters,
            "summary": args.summary,
            "git": git_commit(repo), "machine": machine(),
            "env": {k: v for k, v in os.environ.items() if k.startswith("HERD_")},
            "configs": [c.to_json() for c in configs], "runs": []}


def figure(rows: list[Row], scheds: list[Sched], doc: dict[str, Any], out: Path) -> None:
    m = doc["machine"]
    line = plot(rows, scheds, out.with_suffix(".png"), workers=max(doc["workers"]),
                topology=doc.get("topology"), topo_workers=doc.get("topology_workers", 8),
                title=f"herd {(doc.get('git') or {}).get('commit', '')[:12]} on {m.get('cpu')} "
                      f"({m.get('affinity')} PUs), {doc['reps']} run(s) each, medians")
    print(f"\n{line}")


def report_failures(rows: list[Row], doc: Optional[dict[str, Any]] = None) -> int:
    failed = [r for r in rows if r.failed]
    lace_failed = [r for r in ((doc or {}).get("lace") or {}).get("runs", [])
                   if r.get("seconds") is None]
    if failed:
        print(f"\n{len(failed)} configuration(s) FAILED:\n" + report.failures(rows),
              file=sys.stderr)
    for r in lace_failed:
        print(f"fib-lace w={r['workers']}: FAILED ({r.get('error')})", file=sys.stderr)
    return 1 if failed or lace_failed else 0


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if args.report is not None:
        doc = json.loads(args.report.read_text())
        rows = report.rows_from_doc(doc)
        scheds = [s for s in expand_scheds(doc.get("scheds") or ["ws"], [], [])]
        print_tables(rows, scheds, doc, bool(doc.get("counters_only")))
        if not args.no_plot:
            figure(rows, scheds, doc, args.out or args.report)
        return report_failures(rows, doc)

    binaries = sorted({BINARY[k] for k in args.kernel_list})
    for b in binaries:
        if not os.access(args.bindir / b, os.X_OK):
            print(f"error: {args.bindir / b} is missing or not executable "
                  f"(build the {', '.join(binaries)} targets first)", file=sys.stderr)
            return 2

    if args.spawn or args.steal:
        herd_cli = args.bindir.parent / "herd"
        if not os.access(herd_cli, os.X_OK):
            print(f"error: --spawn/--steal: {herd_cli} (herd's CLI, which checks each crossed "
                  "variant) is missing", file=sys.stderr)
            return 2
        args.sched_list = drop_refused(herd_cli, args.sched_list, set(_list(args.scheds)))
        if not args.sched_list:
            print("error: the runtime refuses every variant of the --spawn/--steal crossing",
                  file=sys.stderr)
            return 2

    configs = build_configs(args.worker_list, args.sched_list, large=args.large,
                            kernels=args.kernel_list, sort_n=args.sort_n,
                            topology=args.topology, topology_workers=args.topology_workers,
                            topology_bind=args.topology_bind, timing=not args.counters,
                            first_only=args.summary)
    rows = [Row(c) for c in configs]
    order = [(k, rep) for k in range(len(rows)) for rep in range(args.reps)]
    lace_exe = None
    if args.lace is not None:
        lace_exe = lace.find_fib(args.lace)
        if lace_exe is None or "fib" not in args.kernel_list:
            print(f"error: --lace {args.lace}: " + ("no executable fib-lace there, nor in its "
                  "benchmarks/ folder" if lace_exe is None else "the fib kernel is not run "
                  "(--kernels)"), file=sys.stderr)
            return 2
        # Lace's runs, one job per worker count, as negative indices.
        order += [(-1 - i, rep) for i in range(len(args.worker_list)) for rep in range(args.reps)]
    random.Random(args.seed).shuffle(order)

    started = _dt.datetime.now()
    out = args.out or Path("results") / f"bench-{started.strftime('%Y%m%d-%H%M%S')}.json"
    doc = results_doc(args, configs, started)
    if lace_exe is not None:
        doc["lace"] = {"path": str(lace_exe), "n": FIB_N, "runs": []}

    t_start = time.monotonic()
    timed_out: set[int] = set()
    with tempfile.TemporaryDirectory(prefix="herd-bench-") as tmp:
        stats_path = Path(tmp) / "stats.json"
        for done, (k, rep) in enumerate(order, 1):
            if k < 0:
                w = args.worker_list[-1 - k]
                lrun = lace.run_once(lace_exe, FIB_N, w, args.timeout)
                doc["lace"]["runs"].append(lrun.to_json())
                status = f"{lrun.seconds:.4f} s" if lrun.seconds is not None else \
                    f"FAILED ({lrun.error})"
                print(f"[run {done}/{len(order)}] fib-lace n={FIB_N} w={w}: {status}",
                      file=sys.stderr, flush=True)
                continue
            cfg = rows[k].config
            if k in timed_out:
                # Bounds the cost of a configuration that hangs: one timeout, not --reps.
                run = Run(cfg, error="not run: an earlier run of this configuration timed out")
            else:
                run = run_once(args.bindir, cfg, args.timeout, stats_path)
                if run.error.startswith("timeout"):
                    timed_out.add(k)
            rows[k].runs.append(run)
            doc["runs"].append(report.run_record(run, rep))
            elapsed = time.monotonic() - t_start
            eta = elapsed / done * (len(order) - done)
            status = f"{run.seconds:.4f} s" if run.ok else f"FAILED ({run.error})"
            where = " [topology]" if cfg.topology else ""
            print(f"[run {done}/{len(order)}] {cfg.kernel} {cfg.label} {cfg.sched_name}{where}: "
                  f"{status}  (eta {eta:.0f} s)", file=sys.stderr, flush=True)

    doc["finished"] = _dt.datetime.now().isoformat(timespec="seconds")
    doc["loadavg_finished"] = loadavg()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1) + "\n")

    idle_line = ""
    if not args.counters:
        doc["idle"], idle_line = measure_idle(args.bindir, max(args.worker_list))
        out.write_text(json.dumps(doc, indent=1) + "\n")
    print_tables(rows, args.sched_list, doc, args.counters, idle_line)
    if not args.no_plot:
        figure(rows, args.sched_list, doc, out)
    print(f"\nraw results: {out}")
    return report_failures(rows, doc)


def main_entry() -> int:
    """Console-script entry point (pyproject.toml)."""
    return main(sys.argv[1:])
