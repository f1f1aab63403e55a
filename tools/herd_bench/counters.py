"""Steal counters from HERD_STATS files.

A HERD_STATS JSON file (src/core/stats_report.c) holds `per_worker`: one
object per worker whose keys are the herd_worker_stats field names. Which
keys exist depends on the build: `steals`, `steal_attempts` and
`failed_steals` are there today; the scheduler family adds `steals_local`,
`steals_remote` (victim in the same / another shepherd), `stolen_tasks`
(tasks moved by steals) and `shepherd` (the worker's shepherd index). A
counter that some worker lacks is *not reported* (None, shown as a dash):
never read as zero.
"""
from __future__ import annotations

import statistics
from typing import Any, Iterable, Optional

# Summed over workers; the table's columns, in order.
SUMMED = ("steals", "steals_local", "steals_remote", "failed_steals", "steal_attempts",
          "stolen_tasks")
# Derived per run.
DERIVED = ("per_steal", "shepherds")
FIELDS = SUMMED + DERIVED


def run_counters(stats: Optional[dict[str, Any]]) -> dict[str, Optional[float]]:
    """One run's totals: each SUMMED key summed over workers, plus per_steal
    (stolen tasks per successful steal) and shepherds (distinct shepherd
    indices). None for whatever the file does not report."""
    out: dict[str, Optional[float]] = {k: None for k in FIELDS}
    per = stats.get("per_worker") if isinstance(stats, dict) else None
    if not isinstance(per, list) or not per or not all(isinstance(w, dict) for w in per):
        return out
    for key in SUMMED:
        vals = [w.get(key) for w in per]
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
            out[key] = float(sum(vals))  # type: ignore[arg-type]
    steals, stolen = out["steals"], out["stolen_tasks"]
    if steals is not None and stolen is not None and steals > 0:
        out["per_steal"] = stolen / steals
    sheps = [w.get("shepherd") for w in per]
    if all(isinstance(s, int) and not isinstance(s, bool) for s in sheps):
        out["shepherds"] = float(len(set(sheps)))
    return out


def median_counters(per_run: Iterable[dict[str, Optional[float]]]
                    ) -> dict[str, Optional[float]]:
    """Per counter, the median over the runs that report it (None if none do)."""
    runs = list(per_run)
    out: dict[str, Optional[float]] = {}
    for key in FIELDS:
        vals = [r[key] for r in runs if r.get(key) is not None]
        out[key] = statistics.median(vals) if vals else None  # type: ignore[type-var]
    return out


def fmt_count(x: Optional[float], key: str) -> str:
    """A dash for not reported; one decimal for ratios and half-integer medians."""
    if x is None:
        return "\u2014"
    if key == "per_steal":
        return f"{x:.2f}"
    if x != int(x):
        return f"{x:.1f}"
    return str(int(x))
