"""`herd report`: the papers' tables and figures from a `herd bench` results
file (matrix.py), as text and as a markdown report with PNG figures.

  Table 2 analogue  serial and parallel times: per kernel, the serial twin's
                    median and each runtime's median at the largest thread
                    count, with its speedup over the serial twin
  speedup figures   one PNG per kernel: speedup over the serial twin against
                    threads, one line per runtime/scheduler (Figures 1-9)
  variability       per kernel and runtime at the largest thread count: the
                    standard deviation of the runs as % of the fastest run
                    (Table 3)
  steals            per kernel and herd scheduler at the largest thread count:
                    medians of steals, remote steals and failed steals, from
                    HERD_STATS (Table 4)
A cell that failed shows FAILED (and is listed with its reasons), one whose
runtime is not built shows `not built`, one with no version of the kernel
shows `n/a`: nothing is silently missing.
"""
from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from .counters import fmt_count
from .report import render
from .suite import RUNTIME_KINDS, Cell


@dataclass
class Point:
    """All runs of one cell."""

    cell: Cell
    runs: list[dict[str, Any]] = field(default_factory=list)

    @property
    def status(self) -> str:
        if any(r.get("status") == "not built" for r in self.runs):
            return "not built"
        if any(r.get("status") == "not run" for r in self.runs):
            return "not run"
        if any(not r.get("ok") for r in self.runs):
            return "FAILED"
        return "ok" if self.runs else "missing"

    @property
    def times(self) -> list[float]:
        return [float(r["seconds"]) for r in self.runs if r.get("ok") and r.get("seconds")]

    @property
    def median(self) -> Optional[float]:
        return statistics.median(self.times) if self.status == "ok" and self.times else None

    def counter(self, key: str) -> Optional[float]:
        vals = [r["counters"][key] for r in self.runs
                if r.get("ok") and r.get("counters") and r["counters"].get(key) is not None]
        return statistics.median(vals) if vals else None


class Results:
    """A results file, grouped: (bench, input) -> runtime column -> threads -> Point."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc
        self.points: dict[tuple[str, str], dict[str, dict[int, Point]]] = {}
        self.kernel_order: list[tuple[str, str]] = []
        self.rt_order: list[str] = []
        for d in doc.get("cells", []):
            self._point(Cell.from_json(d))
        for r in doc.get("runs", []):
            self._point(Cell.from_json(r)).runs.append(r)
        kind = {k: i for i, k in enumerate(RUNTIME_KINDS)}
        seen = {rt: i for i, rt in enumerate(self.rt_order)}
        self.rt_order.sort(key=lambda rt: (kind.get(rt.split(":")[0], 99), seen[rt]))

    def _point(self, c: Cell) -> Point:
        kk = (c.bench, c.input)
        if kk not in self.points:
            self.points[kk] = {}
            self.kernel_order.append(kk)
        if c.rt not in self.rt_order:
            self.rt_order.append(c.rt)
        return self.points[kk].setdefault(c.rt, {}).setdefault(c.threads, Point(c))

    @property
    def max_threads(self) -> int:
        ts = [c["threads"] for c in self.doc.get("cells", [])] or [0]
        return max(ts)

    def serial(self, kk: tuple[str, str]) -> Optional[Point]:
        return self.points[kk].get("serial", {}).get(0)

    def parallel_rts(self) -> list[str]:
        return [rt for rt in self.rt_order if rt != "serial"]

    def failures(self) -> list[Point]:
        return [p for kk in self.kernel_order for byt in self.points[kk].values()
                for p in byt.values() if p.status == "FAILED"]


def _cell_text(p: Optional[Point], base: Optional[float], with_speedup: bool = True) -> str:
    if p is None:
        return "n/a"
    if p.status != "ok":
        return p.status
    m = p.median
    if m is None:
        return "-"
    if with_speedup and base:
        return f"{m:.3f} ({base / m:.2f}x)"
    return f"{m:.3f}"


def table2(res: Results, threads: Optional[int] = None) -> list[tuple[str, ...]]:
    """Serial median and, per runtime, the median at `threads` (default the
    largest) with the speedup over the serial twin in parentheses."""
    t = threads if threads is not None else res.max_threads
    rts = res.parallel_rts()
    rows: list[tuple[str, ...]] = [("kernel", "input", "serial s") + tuple(rts)]
    for kk in res.kernel_order:
        ser = res.serial(kk)
        base = ser.median if ser else None
        line = [kk[0], kk[1], _cell_text(ser, None, False)]
        for rt in rts:
            line.append(_cell_text(res.points[kk].get(rt, {}).get(t), base))
        rows.append(tuple(line))
    return rows


def variability(res: Results) -> list[tuple[str, ...]]:
    """Per kernel, per runtime at the largest thread count: the standard
    deviation of the runs as % of the fastest run (Table 3); `-` with fewer
    than two good runs."""
    t = res.max_threads
    rts = ["serial"] + res.parallel_rts()
    rows: list[tuple[str, ...]] = [("kernel", "input") + tuple(rts)]
    for kk in res.kernel_order:
        line = [kk[0], kk[1]]
        for rt in rts:
            p = res.points[kk].get(rt, {}).get(0 if rt == "serial" else t)
            if p is None:
                line.append("n/a")
            elif p.status != "ok":
                line.append(p.status)
            elif len(p.times) < 2:
                line.append("-")
            else:
                line.append(f"{statistics.stdev(p.times) / min(p.times) * 100:.1f}%")
        rows.append(tuple(line))
    return rows


def steals(res: Results) -> list[tuple[str, ...]]:
    """Per kernel and herd runtime/scheduler at the largest thread count:
    medians over the runs of steals, remote steals, failed steals (Table 4)."""
    t = res.max_threads
    rts = [rt for rt in res.parallel_rts()
           if rt.startswith(("herd:", "herd-omp:", "clang-herd-omp:"))]
    rows: list[tuple[str, ...]] = [("kernel", "input", "runtime", "steals", "remote", "failed")]
    for kk in res.kernel_order:
        for rt in rts:
            p = res.points[kk].get(rt, {}).get(t)
            if p is None or p.status == "not built":  # the header lists what is not built
                continue
            if p.status != "ok":
                rows.append((kk[0], kk[1], rt, p.status, "", ""))
                continue
            rows.append((kk[0], kk[1], rt) + tuple(
                fmt_count(p.counter(k), k) for k in ("steals", "steals_remote",
                                                     "failed_steals")))
    return rows


def markdown_table(rows: list[tuple[str, ...]]) -> str:
    out = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    out += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(out)


def speedup_figures(res: Results, outdir: Path) -> list[Path]:
    """One PNG per kernel: speedup over the serial twin against threads, a
    line per runtime column; a failed point is a red x on the axis. Returns
    the files written ([] without matplotlib)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    files = []
    for kk in res.kernel_order:
        ser = res.serial(kk)
        base = ser.median if ser else None
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        tmax = 1
        drew = False
        for j, rt in enumerate(res.parallel_rts()):
            byt = res.points[kk].get(rt, {})
            xs, ys, fails = [], [], []
            for t in sorted(byt):
                p = byt[t]
                tmax = max(tmax, t)
                if p.status == "FAILED":
                    fails.append(t)
                elif p.median and base:
                    xs.append(t)
                    ys.append(base / p.median)
            # herd's rows dashed, the clang twins' rows with square markers.
            style = "--" if "herd" in rt else "-"
            marker = "s" if rt.startswith("clang-") else "o"
            if xs:
                ax.plot(xs, ys, style, marker=marker, label=rt,
                        color=plt.get_cmap("tab20")(j % 20))
                drew = True
            if fails:
                ax.plot(fails, [0] * len(fails), "x", color="red", clip_on=False,
                        label=f"{rt} FAILED")
        ax.plot([1, tmax], [1, tmax], ":", color="grey", label="ideal")
        ax.set_xlabel("threads")
        ax.set_ylabel("speedup over the serial twin")
        ax.set_title(f"{kk[0]} ({kk[1]})" + ("" if base else ": serial twin FAILED/missing"),
                     fontsize=10)
        ax.set_xticks(sorted({t for rt in res.parallel_rts()
                              for t in res.points[kk].get(rt, {})}) or [1])
        ax.grid(alpha=0.3)
        if drew:
            ax.legend(fontsize=7, ncol=2)
        fig.tight_layout()
        path = outdir / f"speedup-{kk[0].replace('/', '-')}-{kk[1]}.png"
        fig.savefig(path, dpi=100)
        plt.close(fig)
        files.append(path)
    return files


def header(res: Results) -> list[str]:
    d = res.doc
    m = d.get("machine") or {}
    git = d.get("git") or {}
    la = m.get("loadavg")
    lines = [f"- commit `{(git.get('commit') or 'unknown')[:12]}`"
             f"{' (dirty tree)' if git.get('dirty') else ''}; suite `{d.get('suite')}`, "
             f"{d.get('reps')} run(s) per cell in one shuffled order (seed {d.get('seed')}); "
             f"started {d.get('started')}, finished {d.get('finished')}",
             f"- machine: {m.get('cpu')}, {m.get('affinity')} PUs usable, host {m.get('host')}, "
             f"load average at the start {la}, at the end {d.get('loadavg_finished')}"]
    if la and m.get("affinity") and la[0] > 1.5 * m["affinity"] + 1:
        lines.append(f"- **the machine was loaded** (load average {la[0]} on {m['affinity']} "
                     f"PUs): other work competed with the runs; compare ratios within this run, "
                     f"not absolute times")
    for rt, info in sorted((d.get("runtimes") or {}).items()):
        if not info.get("available"):
            lines.append(f"- runtime `{rt}`: {info.get('why')}")
    lines.append("- `serial` is each OpenMP kernel's sequential twin; `herd:S` is herd's native "
                 "version under HERD_SCHED=S; `libgomp`, `libomp` and `herd-omp:S` run the gcc "
                 "binary (GOMP_* ABI), `herd-omp:S` on herd's libgomp.so.1; `clang-libomp` and "
                 "`clang-herd-omp:S` run its clang twin (__kmpc_* ABI) on libomp.so.5 and on "
                 "herd's libomp.so.5; `n/a`: no version of that kernel for that runtime")
    return lines


def failure_lines(res: Results) -> list[str]:
    out = []
    for p in res.failures():
        reasons = sorted({str(r.get("error")) for r in p.runs if not r.get("ok")})
        bad = sum(1 for r in p.runs if not r.get("ok"))
        out.append(f"- {p.cell.key()}: {bad}/{len(p.runs)} run(s) failed: {'; '.join(reasons)}")
    return out


def write_report(doc: dict[str, Any], outdir: Path) -> tuple[Path, str]:
    """Write report.md and the figures into outdir; return the markdown path
    and the text tables (for the terminal)."""
    res = Results(doc)
    outdir.mkdir(parents=True, exist_ok=True)
    figs = speedup_figures(res, outdir)
    t = res.max_threads
    t2, t3, t4 = table2(res), variability(res), steals(res)
    md = ["# herd benchmark report", ""] + header(res) + ["", "## Machine topology", "", "```",
                                                          (doc.get("topology") or "").rstrip(),
                                                          "```", ""]
    md += [f"## Serial and parallel times ({t} threads; Table 2 analogue)", "",
           "Median seconds; in parentheses the speedup over the serial twin.", "",
           markdown_table(t2), "",
           f"## Variability ({t} threads; Table 3 analogue)", "",
           "Standard deviation of the runs as % of the fastest run.", "",
           markdown_table(t3), "",
           f"## Steals ({t} threads; Table 4 analogue)", "",
           "Medians over the runs of the totals over workers, from HERD_STATS; "
           "\u2014 = not reported by this build.", "",
           markdown_table(t4) if len(t4) > 1 else "(no herd runs)", ""]
    fails = failure_lines(res)
    md += ["## Failures", ""] + (fails or ["none"]) + [""]
    md += ["## Speedup figures", ""]
    md += [f"![{f.stem}]({f.name})" for f in figs] or [
        "(not drawn: matplotlib is not installed; scripts/deps.sh --py matplotlib)"]
    path = outdir / "report.md"
    path.write_text("\n".join(md) + "\n")
    text = "\n\n".join([
        "\n".join(header(res)),
        f"serial and parallel times, {t} threads: median s (speedup over serial)\n" + render(t2),
        f"variability, {t} threads: stddev as % of the fastest run\n" + render(t3),
        f"steals, {t} threads (HERD_STATS medians)\n" + (render(t4) if len(t4) > 1
                                                          else "(no herd runs)"),
        "failures:\n" + ("\n".join(fails) if fails else "none"),
        f"figures: {len(figs)} PNG(s) in {outdir}" if figs else "figures: none (no matplotlib)",
        f"report: {path}"])
    return path, text


def load(path: Path) -> dict[str, Any]:
    """A results file, or a results folder holding results.json."""
    if path.is_dir():
        path = path / "results.json"
    doc = json.loads(path.read_text())
    if not isinstance(doc, dict) or doc.get("format") != "herd-bench-matrix/1":
        raise ValueError(f"{path}: not a `herd bench` results file")
    return doc
