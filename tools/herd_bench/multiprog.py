"""Multiprogramming scenarios of paper 003, section 3, scaled to this machine.

    herd bench multiprog [--bench-dir BUILD/bench] [--reps 3] [--out DIR]
                         [--scenarios 1,2,3,4] [--policies none,static,bll,xll]
                         [--dry-run]
    (also python3 -m herd_bench multiprog ..., python3 -m herd_bench.multiprog ...)

Each scenario starts several herd benchmark programs (native kernels of
build/release/bench) at given arrival times, under one HERD_BIND policy at a
time, and measures each program's turnaround time (submission to exit, the
paper's metric). Every repetition of every (scenario, policy) runs in a fresh
private registry (HERD_REGISTRY in a temporary directory), so runs do not see
each other and the user's real registry is never touched; the order of
(policy, repetition) pairs is shuffled. While the programs run, the CPU each
worker thread last ran on is sampled from /proc every 20 ms, to show which
cores each program occupied.

Scaling (the paper ran on 63 usable cores; P below is this machine's PUs):
  1. three fib programs with one, P/2 workers each (the paper's 32 of 63):
     large (fib 40) at 0 s, small (fib 34) at 1 s, large at 2 s: the small
     one ends before the second large one arrives even on a loaded 2-core
     machine, and the first large one still runs then (about 3.5 s on a quiet
     2-core VM), so the second must find the core the small one freed (the
     paper: 6 s apart).
  2. four kernels started together with different widths: sort with P/4
     workers (the paper's 16 of 63), uts T1 with P/2 (32 of 63), and the
     OpenMP Strassen (medium: 2048) and NQueens (medium, with cut-off) with P
     threads (63 of 63), unmodified gcc binaries on herd's libgomp.so.1, whose
     workers map themselves through the same registry.
  3. ten sort instances (n = 8M: about 0.8 s on one worker of a quiet 2-core
     VM, so that several overlap) arriving 0.3 s apart, at full width (P) and
     at limited width (P/4, the paper's 16 of 63); Figure 4 shows none and
     xll, herd runs every policy asked for.
  4. not in the paper, its claim made measurable: load that is not a herd
     worker. A CPU hog (a busy loop, no herd) pinned to each of the first P/2
     PUs; a short herd program at 0 s (its look gives XLL a baseline, as
     earlier programs do on a shared machine); fib 38 with P/2 workers at
     0.5 s. BLL counts herd workers only and puts it on the hogs' PUs; XLL
     sees their user time grow.
Widths are at least 1. On 2 PUs: 1 worker per program in scenario 1.

Results (default folder: results/multiprog-<timestamp>, like herd bench's
results/bench-<timestamp>): <out>/multiprog.json (every run: programs, arrival, turnaround,
exit status, sampled CPUs), a table on stdout (medians over the
repetitions), and figures <out>/scenario{1,2,3,4}.png when matplotlib is
available. A run counts only if every program exits 0 with a verified
result; anything else is reported FAILED and makes the exit status 1.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

POLICIES = ("none", "static", "bll", "xll")


@dataclass
class Program:
    name: str
    argv: list[str]
    arrival: float  # seconds after the scenario starts
    workers: int
    env: dict[str, str] = field(default_factory=dict)  # added to the scenario's environment
    omp: bool = False  # an OpenMP program: its main thread is worker 0
    background: bool = False  # load, not measured: killed once the measured programs end


@dataclass
class Result:
    name: str
    arrival: float
    turnaround: float
    rc: int
    verified: bool
    cpus: dict[int, int] = field(default_factory=dict)  # cpu -> samples of worker threads


def pus() -> int:
    return len(os.sched_getaffinity(0))


def scenarios(bench: Path, p: int) -> dict[str, list[tuple[str, list[Program]]]]:
    """Scenario -> variants (label, programs). Widths scale with p."""
    half, quarter = max(1, p // 2), max(1, p // 4)
    fib, sort, uts = str(bench / "bench_fib"), str(bench / "bench_sort"), str(bench / "bench_uts")

    def prog(name: str, argv: list[str], arrival: float, w: int) -> Program:
        return Program(name, argv + ["--workers", str(w), "--reps", "1"], arrival, w)

    def omp(name: str, kernel: str, args: list[str], arrival: float, w: int) -> Program:
        return Program(name, [str(bench / "omp" / f"omp_{kernel}"), *args, "--reps", "1"],
                       arrival, w, omp=True,
                       env={"OMP_NUM_THREADS": str(w),
                            "LD_LIBRARY_PATH": str(bench.parent / "lib" / "herd")})

    s1 = [prog("large-1", [fib, "--n", "40"], 0.0, half),
          prog("small", [fib, "--n", "34"], 1.0, half),
          prog("large-2", [fib, "--n", "40"], 2.0, half)]
    s2 = [prog("sort", [sort, "--n", "4000000"], 0.0, quarter),
          prog("uts-T1", [uts, "--tree", "T1"], 0.0, half),
          omp("strassen", "strassen", ["--input", "medium"], 0.0, p),
          omp("nqueens", "nqueens", ["--input", "medium", "--variant", "cutoff"], 0.0, p)]

    def s3(w: int) -> list[Program]:
        return [prog(f"sort-{k}", [sort, "--n", "8000000"], 0.3 * k, w) for k in range(10)]

    cpus = sorted(os.sched_getaffinity(0))[:half]
    hogs = [Program(f"hog-{c}", [sys.executable, "-c",
                                 f"import os\nos.sched_setaffinity(0, {{{c}}})\nwhile True: pass"],
                    0.0, 0, background=True) for c in cpus]
    s4 = hogs + [prog("first-look", [fib, "--n", "20"], 0.0, half),
                 prog("fib-38", [fib, "--n", "38"], 0.5, half)]

    return {"1": [("", s1)], "2": [("", s2)],
            "3": [(f"width {p}", s3(p)), (f"width {quarter}", s3(quarter))],
            "4": [("", s4)]}


def worker_cpus(pid: int, main_is_worker: bool) -> list[int]:
    """CPU each worker thread last ran on: every thread but the main one, or
    all of them where the main thread is worker 0 (OpenMP programs)."""
    out = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        if int(tid) == pid and not main_is_worker:
            continue
        try:
            stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        out.append(int(fields[36]))  # field 39: processor
    return out


def run_once(programs: list[Program], policy: str, registry: str,
             timeout: float) -> list[Result]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERD_")}
    env.update(HERD_BIND=policy, HERD_REGISTRY=registry)
    pending = sorted(programs, key=lambda q: q.arrival)
    running: dict[int, tuple[Program, subprocess.Popen, float]] = {}
    background: list[subprocess.Popen] = []
    results: dict[str, Result] = {}
    t0 = time.monotonic()
    while pending or running:
        now = time.monotonic() - t0
        while pending and pending[0].arrival <= now:
            q = pending.pop(0)
            if q.background:
                background.append(subprocess.Popen(q.argv, env=env | q.env,
                                                   stdout=subprocess.DEVNULL,
                                                   stderr=subprocess.DEVNULL))
                continue
            proc = subprocess.Popen(q.argv, env=env | q.env, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
            running[proc.pid] = (q, proc, time.monotonic())
            results[q.name] = Result(q.name, q.arrival, float("nan"), -1, False)
        for pid, (q, proc, start) in list(running.items()):
            for cpu in worker_cpus(pid, q.omp):
                results[q.name].cpus[cpu] = results[q.name].cpus.get(cpu, 0) + 1
            if proc.poll() is not None:
                end = time.monotonic()
                out, err = proc.communicate()
                r = results[q.name]
                r.turnaround, r.rc = end - start, proc.returncode
                lines = out.strip().splitlines()
                try:
                    r.verified = bool(json.loads(lines[-1]).get("verified")) if lines else False
                except ValueError:
                    r.verified = False
                if proc.returncode or not r.verified:
                    sys.stderr.write(f"multiprog: {q.name} ({policy}) failed: rc "
                                     f"{proc.returncode}: {err.strip()[-400:]}\n")
                del running[pid]
            elif time.monotonic() - t0 > timeout:
                proc.kill()
        time.sleep(0.02)
    for b in background:
        b.kill()
        b.wait()
    return [results[q.name] for q in programs if not q.background]


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def parser(bench_dir: Path, out: Path) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="herd bench multiprog", formatter_class=argparse.RawDescriptionHelpFormatter,
        description=__doc__.split("\n")[0] + "\n\n" + __doc__.split("\n\n", 2)[2].strip())
    ap.add_argument("--bench-dir", default=bench_dir, type=Path,
                    help="folder holding bench_fib, bench_sort, bench_uts (default %(default)s)")
    ap.add_argument("--reps", type=int, default=3,
                    help="repetitions of each (scenario, policy) (default 3)")
    ap.add_argument("--out", default=out, type=Path,
                    help="results folder (default %(default)s)")
    ap.add_argument("--scenarios", default="1,2,3,4", help="some of 1,2,3,4 (default all)")
    ap.add_argument("--policies", default=",".join(POLICIES),
                    help="HERD_BIND policies to compare (default %(default)s)")
    ap.add_argument("--timeout", type=float, default=120.0, help="per scenario run, seconds")
    ap.add_argument("--seed", type=int, default=1, help="seed of the run order")
    ap.add_argument("--dry-run", action="store_true",
                    help="print each scenario's programs (arrival, workers, command) and the "
                         "number of runs; run nothing")
    return ap


def main(argv: list[str] | None = None, bench_dir: Path = Path("build/release/bench"),
         out: Path | None = None) -> int:
    """bench_dir, out: the defaults of --bench-dir and --out (herd bench passes
    its build's bench/ and the checkout's results/)."""
    if out is None:
        out = Path("results") / f"multiprog-{time.strftime('%Y%m%d-%H%M%S')}"
    ap = parser(bench_dir, out)
    a = ap.parse_args(argv)
    if a.reps < 1:
        ap.error("--reps must be at least 1")
    policies = [x for x in a.policies.split(",") if x]
    if not policies:
        ap.error("--policies needs at least one policy")
    for x in policies:
        if x not in POLICIES:
            ap.error(f"--policies: unknown policy {x!r}; accepted: {', '.join(POLICIES)}")
    p = pus()
    table = scenarios(a.bench_dir.resolve(), p)
    wanted = [s for s in a.scenarios.split(",") if s]
    for s in wanted:
        if s not in table:
            ap.error(f"--scenarios: unknown scenario {s!r}; accepted: 1, 2, 3, 4")
    jobs = [(s, label, pol, rep) for s in wanted for label, _ in table[s] for pol in policies
            for rep in range(a.reps)]
    if a.dry_run:
        print(describe(table, wanted, p))
        print(f"{len(jobs)} scenario runs ({len(policies)} policies x {a.reps} reps per "
              f"variant); results would go to {a.out}")
        return 0
    if not (a.bench_dir / "bench_fib").exists():
        ap.error(f"--bench-dir {a.bench_dir}: no bench_fib there (build the release preset)")
    for s in wanted:
        for _, programs in table[s]:
            for q in programs:
                if q.omp and not Path(q.argv[0]).exists():
                    ap.error(f"scenario {s}: {q.argv[0]} is not built (the OpenMP benchmarks "
                             "need gcc's -fopenmp; build the release preset)")
                lib = q.env.get("LD_LIBRARY_PATH")
                if q.omp and not (Path(lib) / "libgomp.so.1").exists():
                    ap.error(f"scenario {s}: {lib}/libgomp.so.1 (herd's OpenMP library) is "
                             "not built")
    random.Random(a.seed).shuffle(jobs)
    a.out.mkdir(parents=True, exist_ok=True)
    runs, failed = [], 0
    for i, (s, label, pol, rep) in enumerate(jobs):
        programs = dict(table[s])[label]
        with tempfile.TemporaryDirectory(prefix="herd-multiprog-") as d:
            res = run_once(programs, pol, str(Path(d) / "registry"), a.timeout)
        ok = all(r.rc == 0 and r.verified for r in res)
        failed += not ok
        runs.append({"scenario": s, "variant": label, "policy": pol, "rep": rep, "ok": ok,
                     "programs": [vars(r) | {"workers": q.workers, "argv": q.argv}
                                  for r, q in zip(res, [q for q in programs
                                                        if not q.background])]})
        print(f"[{i + 1}/{len(jobs)}] scenario {s} {label} {pol} rep {rep}: "
              + " ".join(f"{r.name}={r.turnaround:.2f}s" for r in res)
              + ("" if ok else "  FAILED"), flush=True)
    meta = {"pus": p, "load": os.getloadavg(), "reps": a.reps, "time": time.time(),
            "commit": subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True,
                                     text=True, cwd=Path(__file__).resolve().parent
                                     ).stdout.strip()}
    (a.out / "multiprog.json").write_text(json.dumps({"meta": meta, "runs": runs}, indent=1))
    report(runs, policies, a.out)
    print(f"multiprog: results in {a.out / 'multiprog.json'}")
    if failed:
        print(f"multiprog: {failed} scenario run(s) FAILED", file=sys.stderr)
    return 1 if failed else 0


def describe(table: dict[str, list[tuple[str, list[Program]]]], wanted: list[str],
             p: int) -> str:
    """The scenarios as they would run on p PUs: one line per program."""
    lines = [f"multiprog scenarios on {p} PUs:"]
    for s in wanted:
        for label, programs in table[s]:
            lines.append(f"scenario {s}{' ' + label if label else ''}:")
            for q in programs:
                if q.background:
                    lines.append(f"  {q.name:<10} at {q.arrival:4.1f} s, load (not herd, not "
                                 "measured): a busy loop on one PU")
                    continue
                lines.append(f"  {q.name:<10} at {q.arrival:4.1f} s, {q.workers} worker"
                             f"{'' if q.workers == 1 else 's'}: "
                             + " ".join(Path(q.argv[0]).name if i == 0 else x
                                        for i, x in enumerate(q.argv)))
    return "\n".join(lines)


def summarise(runs: list[dict]) -> dict:
    """(scenario, variant, policy, program) -> (median turnaround, top cpus)."""
    acc: dict[tuple, list] = {}
    for run in runs:
        if not run["ok"]:
            continue
        for prog in run["programs"]:
            key = (run["scenario"], run["variant"], run["policy"], prog["name"])
            acc.setdefault(key, []).append(prog)
    out = {}
    for key, progs in acc.items():
        cpus: dict[int, int] = {}
        for pr in progs:
            for c, n in pr["cpus"].items():
                cpus[int(c)] = cpus.get(int(c), 0) + n
        total = sum(cpus.values()) or 1
        share = {c: n / total for c, n in sorted(cpus.items())}
        out[key] = (median([pr["turnaround"] for pr in progs]), len(progs), share)
    return out


def report(runs: list[dict], policies: list[str], out: Path) -> None:
    s = summarise(runs)
    keys = sorted({k[:2] for k in s})
    for scen, variant in keys:
        names = []
        for k in s:
            if k[:2] == (scen, variant) and k[3] not in names:
                names.append(k[3])
        print(f"\nscenario {scen} {variant}: median turnaround (s), runs, CPU share of workers")
        print(f"{'program':<10}" + "".join(f"{p:>26}" for p in policies))
        for n in names:
            cells = []
            for p in policies:
                v = s.get((scen, variant, p, n))
                if v is None:
                    cells.append(f"{'-':>26}")
                    continue
                share = " ".join(f"{c}:{f:.0%}" for c, f in v[2].items())
                cells.append(f"{v[0]:>7.2f} ({v[1]}) {share:>14}")
            print(f"{n:<10}" + "".join(cells))
    plot(s, policies, keys, out)


def plot(s: dict, policies: list[str], keys: list[tuple], out: Path) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("multiprog: matplotlib not installed: no figures", file=sys.stderr)
        return
    for scen in sorted({k[0] for k in keys}):
        variants = [v for sc, v in keys if sc == scen]
        fig, axes = plt.subplots(1, len(variants), figsize=(6 * len(variants), 4), squeeze=False)
        for ax, variant in zip(axes[0], variants):
            names = []
            for k in s:
                if k[:2] == (scen, variant) and k[3] not in names:
                    names.append(k[3])
            width = 0.8 / max(1, len(policies))
            for j, pol in enumerate(policies):
                ys = [s.get((scen, variant, pol, n), (float("nan"),))[0] for n in names]
                ax.bar([i + j * width for i in range(len(names))], ys, width, label=pol)
            ax.set_xticks([i + width * (len(policies) - 1) / 2 for i in range(len(names))])
            ax.set_xticklabels(names, rotation=45 if len(names) > 4 else 0, ha="right"
                               if len(names) > 4 else "center")
            ax.set_ylabel("turnaround time (s), median")
            ax.set_title(f"scenario {scen} {variant}".strip())
            ax.legend()
        fig.tight_layout()
        fig.savefig(out / f"scenario{scen}.png", dpi=110)
        plt.close(fig)
        print(f"multiprog: wrote {out / f'scenario{scen}.png'}")


if __name__ == "__main__":
    sys.exit(main())
