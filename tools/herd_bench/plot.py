"""The figure: median time per scheduler variant per kernel, grouped bars.

matplotlib is optional: without it, plot() returns a message saying so and
draws nothing (scripts/deps.sh installs it, so the quick start gets the
figure). One panel for this machine at its largest worker count, and one for
the synthetic topology when there is one. A short black line over each group
marks the sequential twin's median; a failed configuration gets no bar but a
red "x" on the axis, so that it is not mistaken for a missing one.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from .model import Row, Sched
from .report import _grid, _seq_rows


def _panels(rows: list[Row], topologies: list[Optional[str]], workers: int,
            topo_workers: int) -> list[tuple[Optional[str], int]]:
    return [(t, workers if t is None else topo_workers) for t in topologies]


def plot(rows: list[Row], scheds: list[Sched], path: Path, *, workers: int,
         topology: Optional[str] = None, topo_workers: int = 8, title: str = "") -> str:
    """Draw the figure into path (PNG); returns a line to print."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch
    except ImportError:
        return ("figure: skipped, matplotlib is not installed "
                "(scripts/deps.sh --py matplotlib installs it)")

    panels = _panels(rows, [None] + ([topology] if topology is not None else []), workers,
                     topo_workers)
    seq_of = _seq_rows(rows)
    twin_of = {r.config.variant: r.config.twin for r in rows if r.config.sched is not None}
    fig, axes = plt.subplots(len(panels), 1, figsize=(max(8.0, 1.6 + 1.3 * len(scheds) * 1.2),
                                                      4.2 * len(panels)), squeeze=False)
    cmap = plt.get_cmap("tab10")
    width = 0.8 / max(1, len(scheds))
    for ax, (topo, w) in zip(axes[:, 0], panels):
        keys, cells = _grid(rows, topo)
        keys = [k for k in keys if k[2] == w]
        handles: list = []
        for j, s in enumerate(scheds):
            xs, hs, fails = [], [], []
            for i, (_, variant, _) in enumerate(keys):
                x = i - 0.4 + width * (j + 0.5)
                row = cells.get((variant, w, s.name))
                if row is None or not row.runs:
                    continue
                if row.failed or row.median is None:
                    fails.append(x)
                else:
                    xs.append(x)
                    hs.append(row.median)
            color = cmap(j % 10)
            ax.bar(xs, hs, width * 0.95, color=color)
            if fails:
                ax.plot(fails, [0] * len(fails), "x", color="red", markersize=7, clip_on=False)
            handles.append(Patch(color=color, label=s.name + ("" if xs or not fails
                                                               else " (all FAILED)")))
        for i, (_, variant, _) in enumerate(keys):
            seq = seq_of.get(twin_of.get(variant, ""))
            if seq is not None and seq.median is not None:
                ax.hlines(seq.median, i - 0.45, i + 0.45, colors="black", linewidths=1.5)
        handles.append(Line2D([], [], color="black", linewidth=1.5, label="sequential twin"))
        ax.set_ylim(0, ax.get_ylim()[1] * 1.2)  # room for the legend above the bars
        ax.set_xticks(range(len(keys)), [k[0] for k in keys])
        ax.set_ylabel("median time (s)")
        where = "this machine" if topo is None else (
            f"synthetic topology \"{topo}\" (oversubscribed, not pinned)")
        ax.set_title(f"{where}, {w} workers; red x: FAILED", fontsize=10)
        ax.legend(handles=handles, fontsize=8, ncol=min(5, len(handles)), loc="upper left")
        ax.grid(axis="y", alpha=0.3)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return f"figure: {path}"
