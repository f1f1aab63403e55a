"""The MPI suite: the distributed task pool's benchmarks (bench/dist: UTS, BPC,
MADNESS) swept over ranks x lock scheme x split scheme, and paper 001's
Figures 5-7 drawn from the result lines.

    python3 -m herd_bench mpi run  [--build-dir build/release] [--ranks 1,2,4,8]
                                   [--reps 3] [--kernels uts-T3,uts-T1,bpc,madness]
                                   [--hybrid-workers W]
                                   [--out results/mpi-<timestamp>] [--seed N]
    python3 -m herd_bench mpi plot RESULTS... [--out DIR]

`run` starts every run as its own `mpirun` (oversubscribed when there are more
ranks than cores: the results say so), all runs of all configurations in one
shuffled order, and keeps a run only when it exits 0 with a result line that
says verified=yes; anything else is recorded as FAILED and makes the exit
status 1. It writes DIR/mpi.json (every run: the command, the settings, the
exit status, the parsed line, the load average before and after; plus the
commit, the machine and the HERD_* environment) and then what `plot` writes.

--hybrid-workers W adds, for the UTS kernels (the ones with a hybrid mode),
the same configurations in hybrid mode with W herd workers per rank
(HERD_POOL_HYBRID=1 HERD_WORKERS=W); they show as kernel `uts-T3/wW`.

`plot` reads mpi.json files or the raw output of bench/dist/run_figures.sh
(one `kernel=... key=value ...` line per run) and writes DIR/mpi-table.txt
(medians per configuration) and, with matplotlib, three figures:
  mpi-fig5-split.png  UTS throughput and efficiency vs ranks, per split scheme
                      (paper 001 Figure 5: steal-half vs steal-1 vs steal-2)
  mpi-fig6-locks.png  throughput and efficiency vs ranks, per lock scheme, for
                      each kernel (Figure 6)
  mpi-fig7-steals.png failed and aborted steals vs ranks, per lock scheme, for
                      each kernel (Figure 7)
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Optional

REPO = Path(__file__).resolve().parent.parent.parent

# kernel name -> (binary, arguments); the instances of bench/dist/run_figures.sh.
KERNELS: dict[str, tuple[str, tuple[str, ...]]] = {
    "uts-T3": ("bench_pool_uts", ("--tree", "T3")),
    "uts-T1": ("bench_pool_uts", ("--tree", "T1")),
    "bpc": ("bench_pool_bpc", ("--n", "32", "--depth", "64", "--work-us", "200")),
    "madness": ("bench_pool_madness", ("--gaussians", "32", "--tol", "1e-9")),
}
# (lock, split): every lock with steal-half, every split with the aborting lock.
COMBOS: tuple[tuple[str, str], ...] = (
    ("ticket", "half"), ("spin", "half"), ("aborting", "half"), ("aborting", "one"),
    ("aborting", "two"))
LOCKS = ("ticket", "spin", "aborting")
SPLITS = ("half", "one", "two")
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
           "OMPI_MCA_rmaps_base_oversubscribe": "1"}


def parse_line(line: str) -> Optional[dict[str, Any]]:
    """One result line of pool_bench.h (`kernel=uts tree=T3 ... verified=yes`)
    as a dict, numbers as numbers; None for any other line. UTS lines get
    kernel `uts-<tree>`, so that trees are kept apart."""
    line = line.strip()
    if not line.startswith("kernel="):
        return None
    d: dict[str, Any] = {}
    for tok in line.split():
        if "=" not in tok:
            continue
        k, v = tok.split("=", 1)
        try:
            d[k] = int(v)
        except ValueError:
            try:
                d[k] = float(v)
            except ValueError:
                d[k] = v
    if d.get("kernel") == "uts" and "tree" in d:
        d["kernel"] = f"uts-{d['tree']}"
    if int(d.get("workers", 1)) > 1:  # hybrid mode: ranks x workers, kept apart
        d["kernel"] = f"{d['kernel']}/w{d['workers']}"
    need = ("kernel", "ranks", "lock", "steal", "mtasks_per_s", "efficiency", "verified")
    return d if all(k in d for k in need) else None


def load_rows(paths: Iterable[Path]) -> list[dict[str, Any]]:
    """Verified result rows from mpi.json files and raw run_figures.sh output."""
    rows: list[dict[str, Any]] = []
    for p in paths:
        text = p.read_text()
        if p.suffix == ".json":
            doc = json.loads(text)
            rows += [r["result"] for r in doc.get("runs", [])
                     if r.get("ok") and r.get("result")]
        else:
            rows += [d for d in map(parse_line, text.splitlines()) if d]
    return [r for r in rows if r.get("verified") == "yes"]


@dataclass
class Cell:
    """The runs of one configuration."""
    kernel: str
    ranks: int
    lock: str
    steal: str
    rows: list[dict[str, Any]] = field(default_factory=list)

    def median(self, key: str) -> float:
        return statistics.median(float(r.get(key, 0)) for r in self.rows)


def cells(rows: list[dict[str, Any]]) -> dict[tuple[str, int, str, str], Cell]:
    out: dict[tuple[str, int, str, str], Cell] = {}
    for r in rows:
        k = (str(r["kernel"]), int(r["ranks"]), str(r["lock"]), str(r["steal"]))
        out.setdefault(k, Cell(*k)).rows.append(r)
    return out


def table(cs: dict[tuple[str, int, str, str], Cell]) -> str:
    head = (f"{'kernel':<10} {'ranks':>5} {'lock':<9} {'steal':<5} {'n':>3} {'Mtask/s':>10} "
            f"{'sec':>8} {'eff':>6} {'steals':>8} {'failed':>7} {'aborted':>8}")
    lines = [head]
    for k in sorted(cs):
        c = cs[k]
        lines.append(f"{c.kernel:<10} {c.ranks:>5} {c.lock:<9} {c.steal:<5} {len(c.rows):>3} "
                     f"{c.median('mtasks_per_s'):>10.4f} {c.median('seconds'):>8.3f} "
                     f"{c.median('efficiency'):>6.3f} {c.median('steals'):>8.0f} "
                     f"{c.median('failed'):>7.0f} {c.median('aborted'):>8.0f}")
    return "\n".join(lines) + "\n"


def _series(cs: dict[tuple[str, int, str, str], Cell], kernel: str, lock: str, steal: str,
            key: str) -> tuple[list[int], list[float]]:
    pts = sorted((c.ranks, c.median(key)) for c in cs.values()
                 if c.kernel == kernel and c.lock == lock and c.steal == steal)
    return [p[0] for p in pts], [p[1] for p in pts]


def plot(cs: dict[tuple[str, int, str, str], Cell], outdir: Path, note: str = "") -> list[Path]:
    """Figures 5-7 as PNGs in outdir; [] (and a message) without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("mpi suite: matplotlib not installed: no figures", file=sys.stderr)
        return []
    kernels = sorted({c.kernel for c in cs.values()})
    written: list[Path] = []

    def finish(fig: Any, name: str, title: str) -> None:
        ticks = sorted({c.ranks for c in cs.values()})
        for a in fig.axes:
            a.set_xscale("log", base=2)
            a.set_xticks(ticks, [str(t) for t in ticks])
            a.grid(alpha=0.3)
        fig.suptitle(title + (f"\n{note}" if note else ""), fontsize=9)
        fig.tight_layout()
        p = outdir / name
        fig.savefig(p, dpi=110)
        plt.close(fig)
        written.append(p)

    def figure(ks: list[str], lines: list[tuple[str, str, str]], keys: tuple[str, str],
               ylabels: tuple[str, str], what: str, name: str, title: str) -> None:
        """One column per kernel, one row per key; lines: (label, lock, split)."""
        fig, ax = plt.subplots(2, len(ks), figsize=(3.9 * len(ks), 6), squeeze=False)
        for j, k in enumerate(ks):
            for label, lock, split in lines:
                for i, key in enumerate(keys):
                    x, y = _series(cs, k, lock, split, key)
                    if x:
                        ax[i][j].plot(x, y, marker="o", label=label)
            ax[0][j].set_title(f"{k} ({what})", fontsize=9)
            ax[0][j].set_ylabel(ylabels[0])
            ax[1][j].set_ylabel(ylabels[1])
            ax[1][j].set_xlabel("ranks")
            ax[0][j].legend(fontsize=8)
        finish(fig, name, title)

    uts = [k for k in kernels if k.startswith("uts")]
    rate = ("mtasks_per_s", "efficiency")
    rate_labels = ("Mtasks/s", "efficiency (active/total)")
    by_lock = [(lock, lock, "half") for lock in LOCKS]
    if uts:  # Figure 5: split schemes on UTS, aborting lock.
        figure(uts, [(f"steal-{s}", "aborting", s) for s in SPLITS], rate, rate_labels,
               "aborting lock", "mpi-fig5-split.png", "Split schemes (paper 001 Fig. 5)")
    if kernels:  # Figure 6: lock schemes, steal-half; Figure 7: their failed and aborted steals.
        figure(kernels, by_lock, rate, rate_labels, "steal-half", "mpi-fig6-locks.png",
               "Lock schemes (paper 001 Fig. 6)")
        figure(kernels, by_lock, ("failed", "aborted"), ("failed steals", "aborted steals"),
               "steal-half", "mpi-fig7-steals.png",
               "Failed and aborted steals (paper 001 Fig. 7)")
    return written


def _loadavg() -> list[float]:
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return []


def _commit() -> str:
    try:
        return subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def command(build: Path, kernel: str, ranks: int, mpirun: str = "mpirun") -> list[str]:
    binary, args = KERNELS[kernel]
    return [mpirun, "-np", str(ranks), "--oversubscribe", str(build / "bench" / "dist" / binary),
            *args]


def run_one(build: Path, kernel: str, ranks: int, lock: str, steal: str,
            timeout: float, workers: int = 0) -> dict[str, Any]:
    cmd = command(build, kernel, ranks)
    env = {**os.environ, **MPI_ENV, "HERD_POOL_LOCK": lock, "HERD_POOL_STEAL": steal}
    if workers:
        env.update({"HERD_POOL_HYBRID": "1", "HERD_WORKERS": str(workers), "HERD_BIND": "none"})
        cmd[3:3] = ["--bind-to", "none"]
    rec: dict[str, Any] = {"kernel": kernel, "ranks": ranks, "lock": lock, "steal": steal,
                           "workers": workers, "cmd": cmd, "load_before": _loadavg()}
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        rec["rc"], out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rec["rc"], out, err = "timeout", str(e.stdout or ""), str(e.stderr or "")
    rec["wall"] = time.monotonic() - t0
    rec["load_after"] = _loadavg()
    results = [d for d in map(parse_line, out.splitlines()) if d]
    rec["result"] = results[-1] if results else None
    rec["ok"] = rec["rc"] == 0 and bool(results) and results[-1].get("verified") == "yes"
    if not rec["ok"]:
        rec["stderr_tail"] = err[-2000:]
    return rec


def cmd_run(a: argparse.Namespace) -> int:
    build = (a.build_dir or REPO / "build" / "release").resolve()
    kernels = [k for k in a.kernels.split(",") if k]
    bad = [k for k in kernels if k not in KERNELS]
    if bad:
        print(f"mpi suite: unknown kernel(s) {bad}; known: {','.join(KERNELS)}", file=sys.stderr)
        return 2
    ranks = sorted({int(x) for x in a.ranks.split(",") if x})
    modes = [0] + ([a.hybrid_workers] if a.hybrid_workers else [])
    plan = [(k, n, lock, steal, w) for k in kernels for n in ranks for lock, steal in COMBOS
            for w in modes if not w or k.startswith("uts") for _ in range(a.reps)]
    seed = a.seed if a.seed is not None else int(time.time())
    random.Random(seed).shuffle(plan)
    out = a.out or REPO / "results" / f"mpi-{_dt.datetime.now():%Y%m%d-%H%M%S}"
    out.mkdir(parents=True, exist_ok=True)
    ncpu = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    meta = {"commit": _commit(), "date": _dt.datetime.now().isoformat(timespec="seconds"),
            "cpus": ncpu, "seed": seed, "reps": a.reps, "load_start": _loadavg(),
            "env": {k: v for k, v in os.environ.items() if k.startswith("HERD_")},
            "note": "ranks above `cpus` are oversubscribed (mpirun --oversubscribe)"}
    runs = []
    for i, (k, n, lock, steal, w) in enumerate(plan, 1):
        rec = run_one(build, k, n, lock, steal, a.timeout, w)
        runs.append(rec)
        status = "ok" if rec["ok"] else "FAILED"
        mode = f" x{w} workers" if w else ""
        print(f"[{i}/{len(plan)}] {k} np={n}{mode} {lock}/{steal}: {status} "
              f"({rec['wall']:.1f} s)", file=sys.stderr)
    meta["load_end"] = _loadavg()
    (out / "mpi.json").write_text(json.dumps({"meta": meta, "runs": runs}, indent=1))
    failed = sum(not r["ok"] for r in runs)
    report(load_rows([out / "mpi.json"]), out,
           f"{ncpu} CPUs, load {meta['load_start'][:1]} -> {meta['load_end'][:1]}; "
           f"more ranks than CPUs are oversubscribed")
    if failed:
        print(f"mpi suite: {failed} run(s) FAILED (see {out / 'mpi.json'})", file=sys.stderr)
    return 1 if failed else 0


def report(rows: list[dict[str, Any]], out: Path, note: str = "") -> None:
    cs = cells(rows)
    text = table(cs)
    (out / "mpi-table.txt").write_text(text)
    print(text, end="")
    for p in plot(cs, out, note):
        print(f"mpi suite: wrote {p}")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="herd bench mpi", description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="sweep the pool benchmarks under mpirun")
    r.add_argument("--build-dir", type=Path, default=None)
    r.add_argument("--ranks", default="1,2,4,8")
    r.add_argument("--reps", type=int, default=3)
    r.add_argument("--kernels", default="uts-T3,uts-T1,bpc,madness")
    r.add_argument("--timeout", type=float, default=300.0)
    r.add_argument("--seed", type=int, default=None)
    r.add_argument("--hybrid-workers", type=int, default=0,
                   help="also run UTS in hybrid mode with this many herd workers per rank")
    r.add_argument("--out", type=Path, default=None)
    p = sub.add_parser("plot", help="table and figures from mpi.json or run_figures.sh output")
    p.add_argument("results", nargs="+", type=Path)
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--note", default="", help="a line under the figures' titles (load, cores)")
    a = ap.parse_args(argv)
    if a.cmd == "run":
        return cmd_run(a)
    rows = load_rows(a.results)
    if not rows:
        print("mpi suite: no verified result lines in the input", file=sys.stderr)
        return 1
    out = a.out or a.results[0].parent
    out.mkdir(parents=True, exist_ok=True)
    report(rows, out, a.note)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
