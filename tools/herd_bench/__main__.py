"""`python3 -m herd_bench bench|report|table|multiprog ...`: the harness's commands, which
`herd bench` and `herd report` forward to.

  bench   run a suite (quick, full) or a selection by flags; write
          results/bench-<timestamp>/results.{json,csv}, then the report there
  bench multiprog, or multiprog
          paper 003's multiprogramming scenarios (herd_bench.multiprog):
          turnaround times under each HERD_BIND policy, in
          results/multiprog-<timestamp>/
  bench epcc, or epcc
          EPCC construct overheads (bench/omp/epcc.c) for both OpenMP ABIs
          in one interleaved run: gcc on libgomp, libomp and herd-omp, clang
          on libomp and herd-omp; medians and herd's ratio to the best of its
          ABI (herd_bench.epcc; bench/omp/epcc_figure.sh runs it)
  report  RESULTS: the tables, the speedup figures and report.md from a
          results folder or file; --trace FILE: a HERD_TRACE timeline PNG
  table   the scheduler comparison of herd's native kernels (bench_table.py)
  check-inputs BENCH_DIR
          whether the sizes of suite.py (what the native and oneTBB peers are
          told) agree with what BENCH_DIR/omp/omp_* --list-inputs print
  mpi     the MPI pool's suite: run | plot (herd_bench/mpi_suite.py)
  cpp     the C++ layer (herd.hpp) against herd's C API and oneTBB: fib,
          sort, reduce, for (herd_bench/cpp_suite.py)
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path
from typing import Optional

from . import cli as table_cli
from .matrix import results_doc, run_matrix, write_results
from .model import sched_env
from .paper import load, write_report
from .runner import machine
from .suite import (INPUTS, KERNELS, RUNTIME_KINDS, Selection, add_runtime_paths, expand,
                    find_paths, input_mismatches, parse_kernels, suite)

REPO = Path(__file__).resolve().parent.parent.parent


def _nproc() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
        os.cpu_count() or 1)


def locate(herd_exe: Optional[Path], build_dir: Optional[Path]) -> tuple[Path, Optional[Path]]:
    """The build folder (holding bench/) and the herd executable, from
    --build-dir, else the herd executable's folder (a build tree), else the
    checkout's build/release."""
    if build_dir is None and herd_exe is not None and (herd_exe.parent / "bench").is_dir():
        build_dir = herd_exe.parent
    if build_dir is None:
        build_dir = REPO / "build" / "release"
    if herd_exe is None and (build_dir / "herd").exists():
        herd_exe = build_dir / "herd"
    return build_dir.resolve(), herd_exe


def bench_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="herd bench", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run benchmark kernels x runtimes x thread counts x repetitions, in a "
                    "shuffled order, and write the results and the report.",
        epilog="runtimes: " + ", ".join(RUNTIME_KINDS) + "\nkernels: KERNEL[/VARIANT][@INPUT],"
               "... e.g. fib/nocutoff,sort@small,health\n\n"
               "herd bench multiprog [ARGS] runs paper 003's multiprogramming scenarios instead "
               "(see herd bench multiprog --help);\nherd bench epcc [ARGS] the EPCC overheads "
               "of both OpenMP ABIs (see herd bench epcc --help)")
    ap.add_argument("--suite", default=None, choices=("quick", "full"),
                    help="a named suite (default quick when no --kernels is given)")
    ap.add_argument("--kernels", default=None, help="kernels (default: the suite's)")
    ap.add_argument("--input", default="medium", choices=INPUTS,
                    help="input of --kernels entries without @INPUT (default medium)")
    ap.add_argument("--runtimes", default=None, help="comma-separated runtimes (default all)")
    ap.add_argument("--scheds", default=None,
                    help="scheduler variants for herd, herd-omp and clang-herd-omp: HERD_SCHED "
                         "values, each with optional settings SCHED:KEY=VALUE... as "
                         "tools/bench_table.py takes them (e.g. ws:spawn=work-first, "
                         "hier:steal=half; keys: spawn, steal, shepherd, idle, bind, stack) "
                         "(quick: auto,ws,mts; the first at every thread count, the others at "
                         "all PUs only, and clang-herd-omp under the first only unless --scheds "
                         "is given)")
    ap.add_argument("--threads", default=None,
                    help="comma-separated thread counts (quick: 1 and all PUs)")
    ap.add_argument("--reps", type=int, default=None, help="runs per cell (quick: 2, full: 5)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per run (default 120)")
    ap.add_argument("--seed", type=int, default=None, help="seed of the run order")
    ap.add_argument("--out", type=Path, default=None,
                    help="results folder (default results/bench-<timestamp>)")
    ap.add_argument("--build-dir", type=Path, default=None,
                    help="build folder holding bench/ (default: herd's own, or build/release)")
    add_runtime_paths(ap)
    ap.add_argument("--herd-exe", type=Path, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--dry-run", action="store_true", help="list the cells, run nothing")
    ap.add_argument("--no-report", action="store_true", help="results only, no report")
    return ap


def selection(args: argparse.Namespace, ap: argparse.ArgumentParser) -> tuple[str, Selection]:
    name = args.suite or ("custom" if args.kernels else "quick")
    base = suite("quick" if name == "custom" else name, _nproc())
    try:
        kernels = parse_kernels(args.kernels, args.input) if args.kernels else base.kernels
    except ValueError as e:
        ap.error(str(e))
    runtimes = base.runtimes
    if args.runtimes:
        runtimes = tuple(x for x in args.runtimes.split(",") if x)
        bad = [r for r in runtimes if r not in RUNTIME_KINDS]
        if bad or not runtimes:
            ap.error(f"--runtimes takes some of {','.join(RUNTIME_KINDS)}, not {args.runtimes!r}")
    scheds = tuple(x for x in (args.scheds or "").split(",") if x) or base.scheds
    for x in scheds:
        try:
            sched_env(x)
        except ValueError as e:
            ap.error(f"--scheds: {e}")
    threads = base.threads
    if args.threads:
        try:
            threads = tuple(sorted({int(x) for x in args.threads.split(",") if x}))
        except ValueError:
            ap.error(f"--threads takes comma-separated integers, not {args.threads!r}")
        if not threads or min(threads) < 1:
            ap.error("--threads counts must be at least 1")
    reps = args.reps if args.reps is not None else base.reps
    if reps < 1:
        ap.error("--reps must be at least 1")
    # The suite's side_threads hold unless the thread counts are chosen by hand,
    # and clang-herd-omp's first-scheduler-only unless the schedulers are.
    side = None if args.threads else base.side_threads
    if side is not None and not set(side) <= set(threads):
        side = None
    clang_first = base.clang_first_sched and not args.scheds
    return name, Selection(kernels, runtimes, scheds, threads, reps, side_threads=side,
                           clang_first_sched=clang_first)


def cmd_bench(argv: list[str]) -> int:
    sub = _subcommand(argv)
    if sub is not None:
        cmd, exe, rest = sub
        return cmd_multiprog(exe, rest) if cmd == "multiprog" else cmd_epcc(exe, rest)
    ap = bench_parser()
    args = ap.parse_args(argv)
    name, sel = selection(args, ap)
    build, herd_exe = locate(args.herd_exe, args.build_dir)
    for what, p in (("--herd-omp", args.herd_omp), ("--libomp", args.libomp)):
        if p is not None and not p.exists():
            ap.error(f"{what} {p}: no such file")
    paths = find_paths(build, args.herd_omp, args.libomp)
    if not (paths.bench / "omp").is_dir():
        print(f"herd bench: {paths.bench}/omp is missing: build the release preset first "
              f"(cmake --preset release && cmake --build build/release), or pass --build-dir",
              file=sys.stderr)
        return 2
    cells = expand(sel)
    if args.dry_run:
        for c in cells:
            ok, why = paths.available(c.runtime, c.kernel)
            print(c.key() + ("" if ok else f"  [{why}]"))
        print(f"{len(cells)} cells x {sel.reps} reps", file=sys.stderr)
        return 0
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 31)
    started = _dt.datetime.now()
    out = args.out or REPO / "results" / f"bench-{started.strftime('%Y%m%d-%H%M%S')}"
    print(f"herd bench: suite {name}, {len(cells)} cells x {sel.reps} runs, threads "
          f"{','.join(map(str, sel.threads))}, results in {out}", file=sys.stderr)
    # SIGTERM stops the matrix like ^C: the child is killed, what ran is kept.
    signal.signal(signal.SIGTERM, _raise_interrupt)
    machine_start = machine()
    records = run_matrix(cells, sel.reps, paths, timeout=args.timeout, seed=seed)
    doc = results_doc(cells, records, suite=name, reps=sel.reps, seed=seed, paths=paths,
                      herd_exe=herd_exe, started=started, argv=["herd", "bench", *argv],
                      repo=REPO, machine_start=machine_start)
    write_results(doc, out)
    print(f"results: {out / 'results.json'}, {out / 'results.csv'}")
    failed = sum(1 for r in records if r.get("status") in ("failed", "not run"))
    if not args.no_report:
        _, text = write_report(doc, out)
        print(text)
    if failed:
        print(f"herd bench: {failed} run(s) FAILED (see the report's Failures)", file=sys.stderr)
    return 1 if failed else 0


def _subcommand(argv: list[str]) -> Optional[tuple[str, Optional[Path], list[str]]]:
    """`[--herd-exe EXE] multiprog|epcc ARGS` -> (the command, EXE, ARGS);
    anything else: None."""
    exe: Optional[Path] = None
    rest = argv
    if len(rest) >= 2 and rest[0] == "--herd-exe":
        exe, rest = Path(rest[1]), rest[2:]
    if rest and rest[0] in ("multiprog", "epcc"):
        return rest[0], exe, rest[1:]
    return None


def cmd_multiprog(herd_exe: Optional[Path], argv: list[str]) -> int:
    """Paper 003's scenarios with this build's native kernels; results under
    the checkout's results/ like herd bench's."""
    from . import multiprog
    build, _ = locate(herd_exe, None)
    out = REPO / "results" / f"multiprog-{_dt.datetime.now().strftime('%Y%m%d-%H%M%S')}"
    return multiprog.main(argv, bench_dir=build / "bench", out=out)


def cmd_epcc(herd_exe: Optional[Path], argv: list[str]) -> int:
    """The EPCC overheads of both ABIs (herd_bench.epcc), from this build."""
    from . import epcc
    return epcc.main(argv, repo=REPO, nproc=_nproc(),
                     locate_build=lambda build_dir: locate(herd_exe, build_dir)[0])


def cmd_check_inputs(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python3 -m herd_bench check-inputs BENCH_DIR", file=sys.stderr)
        return 2
    listed: dict[str, object] = {}
    for k in KERNELS:
        exe = Path(argv[0]) / "omp" / f"omp_{k}"
        try:
            p = subprocess.run([str(exe), "--list-inputs"], capture_output=True, text=True,
                               timeout=30)
            listed[k] = json.loads(p.stdout.strip().splitlines()[-1]) if p.returncode == 0 \
                else None
        except (OSError, subprocess.SubprocessError, ValueError, IndexError):
            listed[k] = None
    bad = input_mismatches(listed)
    for line in bad:
        print(f"check-inputs: {line}", file=sys.stderr)
    if not bad:
        print(f"check-inputs: the {len(KERNELS)} kernels in {argv[0]}/omp agree with suite.py")
    return 1 if bad else 0


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def cmd_report(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        prog="herd report",
        description="Tables, speedup figures and a markdown report from `herd bench` results; "
                    "or, with --trace, a timeline PNG of a HERD_TRACE file.")
    ap.add_argument("results", nargs="?", type=Path,
                    help="a results folder (or its results.json); default: the newest under "
                         "results/")
    ap.add_argument("--trace", type=Path, default=None, help="a HERD_TRACE file to draw")
    ap.add_argument("--out", type=Path, default=None,
                    help="where to write (default: the results folder; for --trace, FILE.png)")
    ap.add_argument("--herd-exe", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.trace is not None:
        from .timeline import draw
        try:
            print(draw(args.trace, args.out or args.trace.with_suffix(".png")))
        except (OSError, ValueError, RuntimeError) as e:
            print(f"herd report --trace {args.trace}: {e}", file=sys.stderr)
            return 1
        return 0
    src = args.results
    if src is None:
        found = sorted((REPO / "results").glob("bench-*/results.json"))
        if not found:
            ap.error("no results given and none under results/ (run herd bench first)")
        src = found[-1].parent
    try:
        doc = load(src)
    except (OSError, ValueError) as e:
        print(f"herd report: {e}", file=sys.stderr)
        return 1
    outdir = args.out or (src if src.is_dir() else src.parent)
    _, text = write_report(doc, outdir)
    print(text)
    return 0


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    cmd, rest = argv[0], argv[1:]
    if cmd == "bench":
        return cmd_bench(rest)
    if cmd == "report":
        return cmd_report(rest)
    if cmd == "table":
        return table_cli.main(rest)
    if cmd == "multiprog":
        return cmd_multiprog(None, rest)
    if cmd == "epcc":
        return cmd_epcc(None, rest)
    if cmd == "check-inputs":
        return cmd_check_inputs(rest)
    if cmd == "mpi":
        from .mpi_suite import main as mpi_main
        return mpi_main(rest)
    if cmd == "cpp":
        from .cpp_suite import main as cpp_main
        return cpp_main(rest)
    print(f"herd_bench: unknown command {cmd!r} "
          "(bench, report, table, multiprog, epcc, check-inputs, mpi, cpp)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
