"""`herd bench epcc` (also `python3 -m herd_bench epcc` and
bench/omp/epcc_figure.sh): OpenMP construct overheads by the EPCC method for
both OpenMP ABIs in one run.

bench/omp/epcc.c measures the overhead of each EPCC syncbench construct
(parallel, for, parallel for, barrier, single, critical, lock, ordered,
atomic, reduction), taskbench's PARALLEL TASK and herd's extras (dynamic
and guided loops, a nested region), in microseconds: the mean of `outer`
timed repetitions minus its reference (epcc.c's header). The build has it
twice: omp_epcc (gcc -O1 -fopenmp, calling GOMP_*) and omp_epcc_clang
(clang -O1 -fopenmp, calling __kmpc_*). This runs them on five runtimes,
set up exactly as `herd bench` sets up its kernels (suite.omp_env):

  libgomp            the gcc binary on GCC's libgomp
  libomp             the gcc binary on LLVM's libomp (its GOMP_* compatibility)
  herd-omp:S         the gcc binary on herd's lib/herd/libgomp.so.1
  clang-libomp       the clang binary on LLVM's libomp (the same file)
  clang-herd-omp:S   the clang binary on herd's lib/herd/libomp.so.5

at each thread count, `runs` times each: every round runs every (runtime,
threads) pair once, in a shuffled order, so that a change in the machine's
load falls on all of them alike. The table gives, per construct and thread
count, each runtime's median overhead and herd's ratio to the best other
runtime of its ABI: herd-omp / min(libgomp, libomp) for the GOMP_* ABI,
clang-herd-omp / clang-libomp for the __kmpc_* ABI (below 1: herd is
faster). A ratio is `-` where the best overhead is under 0.01 us, where it
says nothing but noise.

A run counts only if it exits 0, prints a JSON line for every construct
asked for, with the thread count asked for, and names the library it was
meant to run on (epcc.c's "omp_lib"); anything else is FAILED for that
runtime and thread count, in the table, and makes the exit status 1. A
runtime the build lacks is a `not built` column, never a missing one.
Everything goes to results/epcc-<timestamp>/ (`--out`): epcc.json (every
run, the commit, the machine and its load) and epcc.txt (the table).
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
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from .report import render
from .runner import describe_rc, git_commit, loadavg, machine
from .suite import CLANG_KINDS, Paths, add_runtime_paths, find_paths, libomp_links, omp_env

# epcc.c's constructs, in its order; the first ten are syncbench's.
CONSTRUCTS = ("parallel", "for", "parallel_for", "barrier", "single", "critical", "lock",
              "ordered", "atomic", "reduction", "for_dynamic", "for_guided", "task", "nested")
# (runtime, ABI) in table order; the ratio columns compare within an ABI.
RUNTIMES = (("libgomp", "gcc"), ("libomp", "gcc"), ("herd-omp", "gcc"),
            ("clang-libomp", "clang"), ("clang-herd-omp", "clang"))
HERD = {"gcc": "herd-omp", "clang": "clang-herd-omp"}
RATIO_FLOOR_US = 0.01  # below this the best overhead is noise: no ratio


def column(runtime: str, sched: str) -> str:
    """The runtime's column name, as `herd bench` writes it: `herd-omp:auto`."""
    return f"{runtime}:{sched}" if "herd" in runtime else runtime


def binary(paths: Paths, runtime: str) -> Path:
    return paths.bench / "omp" / ("omp_epcc_clang" if runtime in CLANG_KINDS else "omp_epcc")


def available(paths: Paths, runtime: str) -> tuple[bool, str]:
    """suite.Paths.available, for the EPCC binary of the runtime's ABI."""
    ok, why = paths.available(runtime)
    if ok and not binary(paths, runtime).exists():
        return False, f"not built: no {binary(paths, runtime)} in this build"
    return ok, why


@dataclass
class Run:
    """One process: one runtime at one thread count."""

    runtime: str
    threads: int
    round: int
    ok: bool = False
    error: str = ""
    overhead: dict[str, float] = field(default_factory=dict)  # construct -> us
    records: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"runtime": self.runtime, "threads": self.threads, "round": self.round,
                "ok": self.ok, "error": self.error or None, "overhead_us": self.overhead,
                "records": self.records}


def judge(run: Run, rc: int, stdout: str, stderr: str, constructs: tuple[str, ...],
          expect_lib: Optional[Path]) -> None:
    """Fill run from what its process left: every construct's overhead, or
    the reason it does not count."""
    recs: list[dict[str, Any]] = []
    for ln in stdout.splitlines():
        try:
            obj = json.loads(ln)
        except ValueError:
            continue
        if isinstance(obj, dict) and "construct" in obj:
            recs.append(obj)
    run.records = recs
    if rc != 0:
        tail = stderr.strip().splitlines()[-1][:200] if stderr.strip() else ""
        run.error = describe_rc(rc) + (f": {tail}" if tail else "")
        return
    got = {r["construct"]: r for r in recs}
    missing = [c for c in constructs if c not in got]
    if missing:
        run.error = f"no result for {', '.join(missing)}"
        return
    for c in constructs:
        r = got[c]
        teams = str(r.get("threads", ""))  # "2", or "2x2" for nested: outer x inner
        if not (teams.startswith(f"{run.threads}x") if c == "nested"
                else teams == str(run.threads)):
            run.error = f"{c} ran on {teams} threads, asked for {run.threads}"
            return
        lib = str(r.get("omp_lib") or "")
        if expect_lib is not None and (
                not lib or os.path.realpath(lib) != os.path.realpath(expect_lib)):
            run.error = f"ran on {lib or 'an unknown library'}, not {expect_lib}"
            return
        try:
            run.overhead[c] = float(r["overhead_us"])
        except (KeyError, TypeError, ValueError):
            run.error = f"{c}: no overhead_us"
            return
    run.ok = True


def run_one(run: Run, paths: Paths, libomp_dir: Optional[Path], sched: str, outer: int,
            constructs: tuple[str, ...], timeout: float) -> None:
    env, expect_lib = omp_env(run.runtime, sched, run.threads, paths, libomp_dir)
    full = dict(os.environ)
    full.update(env)
    full["EPCC_JSON"] = "1"
    argv = [str(binary(paths, run.runtime)), "--outer", str(outer), "--only", ",".join(constructs)]
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=full)
    except subprocess.TimeoutExpired:
        run.error = f"timeout after {timeout:g} s"
        return
    except OSError as e:
        run.error = f"cannot run: {e}"
        return
    judge(run, p.returncode, p.stdout, p.stderr, constructs, expect_lib)


def plan(runtimes: tuple[str, ...], threads: tuple[int, ...], runs: int, seed: int
         ) -> list[Run]:
    """runs rounds, each every (runtime, threads) pair once, shuffled within
    the round."""
    rng = random.Random(seed)
    out: list[Run] = []
    for k in range(runs):
        rnd = [Run(rt, t, k) for t in threads for rt in runtimes]
        rng.shuffle(rnd)
        out += rnd
    return out


def median(runs: list[Run], runtime: str, threads: int, construct: str
           ) -> tuple[Optional[float], str]:
    """(the median overhead, "") or (None, why: FAILED, not built, not run)."""
    mine = [r for r in runs if r.runtime == runtime and r.threads == threads]
    if not mine:
        return None, "not run"
    if any(not r.ok for r in mine):
        return None, "FAILED"
    return statistics.median(r.overhead[construct] for r in mine), ""


def table(runs: list[Run], runtimes: tuple[str, ...], threads: int,
          constructs: tuple[str, ...], sched: str, absent: dict[str, str]
          ) -> list[tuple[str, ...]]:
    """Per construct: each runtime's median overhead (us) and herd's ratio to
    the best other runtime of its ABI."""
    abis = [abi for abi in ("gcc", "clang") if HERD[abi] in runtimes]
    head = ("construct", "threads") + tuple(column(rt, sched) for rt in runtimes) + tuple(
        f"herd/best {abi}" for abi in abis)
    rows: list[tuple[str, ...]] = [head]
    for c in constructs:
        vals: dict[str, Optional[float]] = {}
        line = [c, f"{threads}x2" if c == "nested" else str(threads)]
        for rt in runtimes:
            if rt in absent:
                vals[rt] = None
                line.append("not built")
                continue
            m, why = median(runs, rt, threads, c)
            vals[rt] = m
            line.append(why or f"{m:.3f}")
        for abi in abis:
            others = [vals[rt] for rt, a in RUNTIMES
                      if a == abi and rt != HERD[abi] and rt in runtimes]
            known = [v for v in others if v is not None]
            herd = vals[HERD[abi]]
            # Against the best of the ABI's other runtimes, all of them measured.
            if herd is None or not known or len(known) < len(others):
                line.append("-")
                continue
            best = min(known)
            line.append(f"{herd / best:.2f}" if best >= RATIO_FLOOR_US else "-")
        rows.append(tuple(line))
    return rows


def parse_args(argv: list[str], nproc: int) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="herd bench epcc", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="EPCC construct overheads (bench/omp/epcc.c) of gcc and clang binaries on "
                    "libgomp, libomp and herd-omp, interleaved, medians, and herd's ratio to "
                    "the best runtime of each ABI.",
        epilog="runtimes: " + ", ".join(rt for rt, _ in RUNTIMES) + "\nconstructs: "
               + ", ".join(CONSTRUCTS))
    ap.add_argument("--build-dir", type=Path, default=None,
                    help="build folder holding bench/omp/omp_epcc{,_clang} and lib/herd "
                         "(default: herd's own, or build/release)")
    ap.add_argument("--runs", type=int, default=5,
                    help="processes per runtime and thread count, interleaved (default 5)")
    ap.add_argument("--threads", default=None,
                    help=f"comma-separated thread counts (default 1 and all PUs: 1,{nproc})")
    ap.add_argument("--outer", type=int, default=20,
                    help="epcc's timed repetitions per construct in each process (default 20)")
    ap.add_argument("--only", default=None,
                    help="comma-separated constructs (default all of epcc.c's)")
    ap.add_argument("--runtimes", default=None,
                    help="comma-separated subset of the five (default all)")
    ap.add_argument("--sched", default="auto",
                    help="HERD_SCHED for herd-omp and clang-herd-omp (default auto)")
    add_runtime_paths(ap)
    ap.add_argument("--timeout", type=float, default=300.0,
                    help="seconds per process (default 300)")
    ap.add_argument("--seed", type=int, default=None, help="seed of the order within rounds")
    ap.add_argument("--out", type=Path, default=None,
                    help="results folder (default results/epcc-<timestamp>)")
    ap.add_argument("--dry-run", action="store_true", help="list the runs, run nothing")
    a = ap.parse_args(argv)
    if a.runs < 1 or a.outer < 2:
        ap.error("--runs must be at least 1 and --outer at least 2")
    try:
        a.thread_list = tuple(sorted({int(x) for x in a.threads.split(",") if x})) \
            if a.threads else tuple(sorted({1, nproc}))
    except ValueError:
        ap.error(f"--threads takes comma-separated integers, not {a.threads!r}")
    if not a.thread_list or min(a.thread_list) < 1:
        ap.error("--threads counts must be at least 1")
    a.constructs = tuple(x for x in (a.only or ",".join(CONSTRUCTS)).split(",") if x)
    bad = [c for c in a.constructs if c not in CONSTRUCTS]
    if bad or not a.constructs:
        ap.error(f"--only takes some of {','.join(CONSTRUCTS)}, not {a.only!r}")
    names = [rt for rt, _ in RUNTIMES]
    a.runtime_list = tuple(x for x in (a.runtimes or ",".join(names)).split(",") if x)
    bad = [r for r in a.runtime_list if r not in names]
    if bad or not a.runtime_list:
        ap.error(f"--runtimes takes some of {','.join(names)}, not {a.runtimes!r}")
    a.runtime_list = tuple(r for r in names if r in a.runtime_list)  # table order
    for what, p in (("--herd-omp", a.herd_omp), ("--libomp", a.libomp)):
        if p is not None and not p.exists():
            ap.error(f"{what} {p}: no such file")
    return a


def main(argv: list[str], *, repo: Path, nproc: int,
         locate_build: Callable[[Optional[Path]], Path]) -> int:
    """locate_build(--build-dir or None) -> the build folder (__main__.locate)."""
    a = parse_args(argv, nproc)
    build = locate_build(a.build_dir)
    paths = find_paths(build, a.herd_omp, a.libomp)
    absent: dict[str, str] = {}  # runtime -> why it cannot run
    for rt in a.runtime_list:
        ok, why = available(paths, rt)
        if not ok:
            absent[rt] = why
    if len(absent) == len(a.runtime_list):
        print(f"herd bench epcc: nothing to run in {build}: "
              + "; ".join(f"{rt}: {why}" for rt, why in absent.items()), file=sys.stderr)
        return 2
    todo_rts = tuple(rt for rt in a.runtime_list if rt not in absent)
    seed = a.seed if a.seed is not None else random.SystemRandom().randrange(1 << 31)
    runs = plan(todo_rts, a.thread_list, a.runs, seed)
    started = _dt.datetime.now()
    out = a.out or repo / "results" / f"epcc-{started.strftime('%Y%m%d-%H%M%S')}"
    if a.dry_run:
        for r in runs:
            print(f"round {r.round}: {column(r.runtime, a.sched)} t={r.threads}  "
                  f"{binary(paths, r.runtime).name}")
        for rt, why in absent.items():
            print(f"{rt}: {why}")
        print(f"{len(runs)} runs, results would go to {out}")
        return 0
    m0 = machine()
    print(f"herd bench epcc: {len(runs)} runs ({a.runs} rounds x {len(todo_rts)} runtimes x "
          f"threads {','.join(map(str, a.thread_list))}), outer {a.outer}, load average "
          f"{m0.get('loadavg')}, results in {out}", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="herd-epcc-") as tmp:
        libomp_dir = libomp_links(Path(tmp), paths)
        for n, r in enumerate(runs, 1):
            run_one(r, paths, libomp_dir, a.sched, a.outer, a.constructs, a.timeout)
            state = "ok" if r.ok else f"FAILED ({r.error})"
            print(f"[{n}/{len(runs)}] round {r.round} {column(r.runtime, a.sched)} "
                  f"t={r.threads}: {state}", file=sys.stderr, flush=True)
    git = git_commit(repo)
    text = report(runs, a, absent, m0, git)
    doc = {"format": "herd-bench-epcc/1", "argv": ["herd", "bench", "epcc", *argv],
           "started": started.isoformat(timespec="seconds"),
           "finished": _dt.datetime.now().isoformat(timespec="seconds"), "seed": seed,
           "runs_per_cell": a.runs, "outer": a.outer, "threads": list(a.thread_list),
           "sched": a.sched, "constructs": list(a.constructs),
           "runtimes": {rt: {"available": rt not in absent, "why": absent.get(rt, "")}
                        for rt in a.runtime_list},
           "paths": {"bench": str(paths.bench), "herd_omp": str(paths.herd_omp or ""),
                     "herd_kmp": str(paths.herd_kmp or ""), "libomp": str(paths.libomp or "")},
           "git": git, "machine": m0, "loadavg_finished": loadavg(),
           "runs": [r.to_json() for r in runs]}
    out.mkdir(parents=True, exist_ok=True)
    (out / "epcc.json").write_text(json.dumps(doc, indent=1) + "\n")
    (out / "epcc.txt").write_text(text + "\n")
    print(text)
    print(f"\nresults: {out / 'epcc.json'}, {out / 'epcc.txt'}")
    failed = [r for r in runs if not r.ok]
    if failed:
        print(f"herd bench epcc: {len(failed)} run(s) FAILED", file=sys.stderr)
    return 1 if failed else 0


def report(runs: list[Run], a: argparse.Namespace, absent: dict[str, str],
           m: dict[str, Any], git: dict[str, Any]) -> str:
    la = m.get("loadavg")
    lines = [f"EPCC overheads (bench/omp/epcc.c), us per construct, medians of {a.runs} "
             f"interleaved run(s), outer {a.outer}; commit {(git.get('commit') or '?')[:12]}"
             f"{' (dirty)' if git.get('dirty') else ''}; {m.get('cpu')}, {m.get('affinity')} "
             f"PUs, load average {la} at the start",
             "gcc binary: libgomp, libomp (its GOMP_* compatibility), herd-omp; clang binary: "
             "clang-libomp, clang-herd-omp; herd/best ABI = herd's overhead / the best other "
             "runtime's of that ABI (below 1: herd is faster; - where that is under "
             f"{RATIO_FLOOR_US} us)"]
    if la and m.get("affinity") and la[0] > 1.5 * m["affinity"] + 1:
        lines.append(f"NOTE: the machine was loaded (load average {la[0]} on {m['affinity']} "
                     f"PUs): compare within this run only")
    lines += [f"{rt}: {why}" for rt, why in absent.items()]
    for t in a.thread_list:
        lines += ["", render(table(runs, a.runtime_list, t, a.constructs, a.sched, absent))]
    fails = [r for r in runs if not r.ok]
    if fails:
        lines += ["", "failures:"] + [f"  round {r.round} {column(r.runtime, a.sched)} "
                                      f"t={r.threads}: {r.error}" for r in fails]
    return "\n".join(lines)
