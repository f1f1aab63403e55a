"""`herd report --trace FILE`: a HERD_TRACE file (Chrome trace-event JSON,
docs/design/trace.md) drawn as a timeline PNG: one lane per worker, task
spans (`run`, `resume`) as bars, idle spans in light grey, steals as
markers on the thief's lane with a thin line from the victim's lane."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Lanes:
    names: dict[int, str] = field(default_factory=dict)  # tid -> "worker 0 (PU 0)"
    spans: dict[str, list[tuple[int, float, float]]] = field(default_factory=dict)  # cat -> (tid, ts, dur)
    steals: list[tuple[int, float, int]] = field(default_factory=list)  # (thief tid, ts, victim)
    dropped: int = 0

    @property
    def end(self) -> float:
        ends = [ts + d for v in self.spans.values() for _, ts, d in v] + \
               [ts for _, ts, _ in self.steals]
        return max(ends) if ends else 0.0


def parse(doc: dict[str, Any]) -> Lanes:
    """The lanes of a trace document; raises ValueError if it is not one."""
    events = doc.get("traceEvents") if isinstance(doc, dict) else None
    if not isinstance(events, list):
        raise ValueError("not a trace: no traceEvents list")
    lanes = Lanes()
    for e in events:
        if not isinstance(e, dict):
            continue
        ph, tid = e.get("ph"), e.get("tid")
        if not isinstance(tid, int):
            continue
        if ph == "M" and e.get("name") == "thread_name":
            lanes.names[tid] = str((e.get("args") or {}).get("name", f"tid {tid}"))
        elif ph == "X":
            lanes.names.setdefault(tid, f"tid {tid}")
            lanes.spans.setdefault(str(e.get("cat", "run")), []).append(
                (tid, float(e.get("ts", 0)), float(e.get("dur", 0))))
        elif ph == "i" and e.get("cat") == "steal":
            victim = (e.get("args") or {}).get("victim")
            lanes.steals.append((tid, float(e.get("ts", 0)),
                                 victim + 1 if isinstance(victim, int) else -1))
    other = doc.get("otherData") or {}
    if isinstance(other.get("events_dropped"), int):
        lanes.dropped = other["events_dropped"]
    return lanes


COLORS = {"run": "tab:blue", "resume": "tab:green", "idle": "0.85"}


def draw(trace: Path, out: Path) -> str:
    """Draw trace into out (PNG); returns a line to print."""
    lanes = parse(json.loads(trace.read_text()))
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise RuntimeError("matplotlib is not installed (scripts/deps.sh --py matplotlib)")
    tids = sorted(lanes.names)
    row = {tid: i for i, tid in enumerate(tids)}
    fig, ax = plt.subplots(figsize=(10, 1.0 + 0.45 * max(1, len(tids))))
    scale = 1e-3  # microseconds -> milliseconds
    for cat in ("idle", "run", "resume"):
        spans = lanes.spans.get(cat, [])
        by: dict[int, list[tuple[float, float]]] = {}
        for tid, ts, d in spans:
            by.setdefault(tid, []).append((ts * scale, max(d * scale, 1e-6)))
        for tid, bars in by.items():
            ax.broken_barh(bars, (row[tid] - 0.35, 0.7), facecolors=COLORS.get(cat, "tab:purple"),
                           label=cat if tid == next(iter(by)) else None)
    if lanes.steals:
        xs = [ts * scale for _, ts, _ in lanes.steals]
        ys = [row.get(tid, 0) for tid, _, _ in lanes.steals]
        ax.plot(xs, ys, "v", color="tab:red", markersize=4, label="steal", linestyle="none")
        for (tid, ts, victim) in lanes.steals[:2000]:
            if victim in row:
                ax.plot([ts * scale, ts * scale], [row[victim], row[tid]], color="tab:red",
                        linewidth=0.3, alpha=0.5)
    ax.set_yticks(range(len(tids)), [lanes.names[t] for t in tids])
    ax.set_xlabel("time since herd_start (ms)")
    ax.invert_yaxis()
    nspans = sum(len(v) for v in lanes.spans.values())
    title = f"{trace.name}: {nspans} spans, {len(lanes.steals)} steals"
    if lanes.dropped:
        title += f", {lanes.dropped} events DROPPED (incomplete)"
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, loc="upper right", ncol=4)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return f"timeline: {out} ({len(tids)} workers, {nspans} spans, {len(lanes.steals)} steals)"
