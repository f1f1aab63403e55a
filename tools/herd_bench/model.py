"""What runs: scheduler variants, benchmark configurations, runs and rows.

A *scheduler variant* is a HERD_SCHED value with optional extra settings,
written `SCHED[:KEY=VALUE]...`, e.g. `ws`, `ws:spawn=work-first`,
`mts:steal=chunk:8`, `ws:steal=half:spawn=work-first`. A token after a colon
that has no `=` continues the previous value (so `steal=chunk:8` is one
setting). Each KEY is one HERD_* variable (see SETTING_VARS); the scheduler
names themselves are not checked here: the runtime judges them, and a
refused one shows as FAILED in the tables.

A *configuration* is one benchmark binary with its arguments, a worker count,
a scheduler variant (None for a sequential twin) and a topology (None for
this machine, otherwise a HERD_TOPOLOGY description).
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any, Optional

# KEY in a scheduler variant -> the HERD_* variable it sets.
SETTING_VARS: dict[str, str] = {
    "spawn": "HERD_SPAWN",
    "steal": "HERD_STEAL",
    "shepherd": "HERD_SHEPHERD",
    "idle": "HERD_IDLE",
    "bind": "HERD_BIND",
    "stack": "HERD_STACK",
}

# lifo is in since it deals its tasks on demand (round 24; before, fib(35)
# both took 24 s on 2 workers), fifo since it does too (round 25; before,
# every waiting parent held a stack and fib(35) ran for minutes).
DEFAULT_SCHEDS = ("ws", "ws:spawn=work-first", "ws:steal=half", "numa", "numa-random", "hier",
                  "mts", "central", "lifo", "fifo")
KERNELS = ("fib", "uts", "sort")
FIB_N = 35
SORT_N = 4_000_000  # the table's size; bench_sort's own default is 32M (--large adds it)
SORT_N_LARGE = 33_554_432


@dataclass(frozen=True)
class Sched:
    """A scheduler variant: its name as written and the variables it sets."""

    name: str
    env: tuple[tuple[str, str], ...]

    @property
    def base(self) -> str:
        return self.env[0][1]


def parse_sched(spec: str) -> Sched:
    """`ws:steal=chunk:8` -> Sched('ws:steal=chunk:8', HERD_SCHED=ws, HERD_STEAL=chunk:8)."""
    tokens = spec.split(":")
    name = tokens[0]
    if not name or "=" in name or any(ch.isspace() for ch in spec):
        raise ValueError(f"{spec!r}: a variant starts with a scheduler name and has no blanks")
    env: list[tuple[str, str]] = [("HERD_SCHED", name)]
    for tok in tokens[1:]:
        if "=" in tok:
            key, val = tok.split("=", 1)
            var = SETTING_VARS.get(key)
            if var is None:
                raise ValueError(f"{spec!r}: unknown setting {key!r}; known: "
                                 + ", ".join(SETTING_VARS))
            if not val:
                raise ValueError(f"{spec!r}: empty value for {key}")
            if any(v == var for v, _ in env):
                raise ValueError(f"{spec!r}: {key} given twice")
            env.append((var, val))
        elif len(env) > 1 and tok:
            var, val = env[-1]
            env[-1] = (var, f"{val}:{tok}")
        else:
            raise ValueError(f"{spec!r}: {tok!r} is not KEY=VALUE")
    return Sched(spec, tuple(env))


def sched_env(spec: Optional[str]) -> dict[str, str]:
    """The HERD_* variables a run under variant spec gets (HERD_SCHED=auto
    for none); raises ValueError as parse_sched does."""
    return dict(parse_sched(spec).env) if spec else {"HERD_SCHED": "auto"}


def expand_scheds(specs: list[str], spawns: list[str], steals: list[str]) -> list[Sched]:
    """Each variant of specs, crossed with each --spawn and --steal value."""
    out: list[Sched] = []
    for spec in specs:
        for sp in spawns or [""]:
            for st in steals or [""]:
                full = spec + (f":spawn={sp}" if sp else "") + (f":steal={st}" if st else "")
                s = parse_sched(full)
                if s.name not in (o.name for o in out):
                    out.append(s)
    return out


@dataclass(frozen=True)
class Config:
    """One benchmark configuration: a binary, its arguments and its settings."""

    kernel: str  # "fib", "uts" or "sort"
    problem: str  # what the scheduler tables call a row, e.g. "fib(35) one"
    label: str  # what the main table shows, e.g. "n=35 one w=2"
    binary: str  # file name in --bindir
    args: tuple[str, ...]
    workers: int  # 0 for a sequential twin
    twin: str  # key shared by a configuration and its sequential twin
    variant: str  # key shared by the same configuration at other worker counts
    sched: Optional[Sched] = None  # None: sequential twin (no runtime)
    topology: Optional[str] = None  # None: this machine
    extra_env: tuple[tuple[str, str], ...] = ()  # e.g. HERD_BIND for a synthetic topology

    @property
    def sched_name(self) -> str:
        return self.sched.name if self.sched else "seq"

    def env(self) -> dict[str, str]:
        """The HERD_* variables the harness sets for this configuration."""
        env: dict[str, str] = {}
        if self.topology is not None:
            env["HERD_TOPOLOGY"] = self.topology
        env.update(self.extra_env)
        if self.sched is not None:
            env.update(self.sched.env)
        return env

    def to_json(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "problem": self.problem, "label": self.label,
                "binary": self.binary, "args": list(self.args), "workers": self.workers,
                "twin": self.twin, "variant": self.variant,
                "sched": self.sched.name if self.sched else None,
                "topology": self.topology, "extra_env": dict(self.extra_env)}

    @staticmethod
    def from_json(d: dict[str, Any]) -> "Config":
        return Config(d["kernel"], d["problem"], d["label"], d["binary"], tuple(d["args"]),
                      int(d["workers"]), d["twin"], d["variant"],
                      parse_sched(d["sched"]) if d.get("sched") else None, d.get("topology"),
                      tuple(sorted((d.get("extra_env") or {}).items())))


@dataclass
class Run:
    """The outcome of one process."""

    config: Config
    rc: Optional[int] = None
    seconds: Optional[float] = None
    record: Optional[dict[str, Any]] = None  # the benchmark's JSON line
    stats: Optional[dict[str, Any]] = None  # the HERD_STATS file, when there is one
    stats_error: str = ""
    raw: str = ""
    error: str = ""
    stderr_tail: str = ""
    wall: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.error


@dataclass
class Row:
    """All the runs of one configuration."""

    config: Config
    runs: list[Run] = field(default_factory=list)

    @property
    def failed(self) -> list[Run]:
        return [r for r in self.runs if not r.ok]

    @property
    def median(self) -> Optional[float]:
        """Median seconds; None when a run failed (a row is whole or FAILED)."""
        if self.failed or not self.runs:
            return None
        return statistics.median(r.seconds for r in self.runs if r.seconds is not None)

    @property
    def mnodes(self) -> Optional[float]:
        m = self.median
        if m is None or m <= 0:
            return None
        rec = self.runs[0].record or {}
        nodes = rec.get("nodes")
        return nodes / m / 1e6 if nodes else None

    @property
    def reasons(self) -> str:
        return "; ".join(sorted({r.error for r in self.failed}))


def problems(large: bool, kernels: tuple[str, ...], sort_n: int
             ) -> list[tuple[str, str, str, tuple[str, ...], str, str]]:
    """The parallel problems: (kernel, problem, label stem, args, twin, variant)."""
    out = []
    if "fib" in kernels:
        for shape in ("one", "both"):
            out.append(("fib", f"fib({FIB_N}) {shape}", f"n={FIB_N} {shape}",
                        ("--n", str(FIB_N), "--shape", shape), f"fib{FIB_N}",
                        f"fib{FIB_N}-{shape}"))
    if "uts" in kernels:
        for tree in ("T1", "T3") + (("T1L",) if large else ()):
            out.append(("uts", f"UTS {tree}", tree, ("--tree", tree), f"uts-{tree}",
                        f"uts-{tree}"))
    if "sort" in kernels:
        for n in (sort_n,) + ((SORT_N_LARGE,) if large and sort_n != SORT_N_LARGE else ()):
            out.append(("sort", f"sort {size_name(n)}", f"n={size_name(n)}", ("--n", str(n)),
                        f"sort-{n}", f"sort-{n}"))
    return out


def size_name(n: int) -> str:
    """4000000 -> 4M, 33554432 -> 32Mi, 1000 -> 1K; anything else as digits."""
    for unit, word in ((1 << 20, "Mi"), (1_000_000, "M"), (1 << 10, "Ki"), (1000, "K")):
        if n >= unit and n % unit == 0:
            return f"{n // unit}{word}"
    return str(n)


BINARY = {"fib": "bench_fib", "uts": "bench_uts", "sort": "bench_sort"}


def seq_args(kernel: str, args: tuple[str, ...]) -> tuple[str, ...]:
    if kernel == "fib":
        return ("--n", args[1], "--shape", "seq")
    return args + ("--seq",)


def build_configs(workers: list[int], scheds: list[Sched], *, large: bool = False,
                  kernels: tuple[str, ...] = KERNELS, sort_n: int = SORT_N,
                  topology: Optional[str] = None, topology_workers: int = 8,
                  topology_bind: str = "scatter", timing: bool = True,
                  first_only: bool = False) -> list[Config]:
    """Every configuration to run, in table order.

    timing: this machine at every worker count with every scheduler, plus the
    sequential twins; without it (counters only) just the largest worker count.
    first_only (with timing): every worker count for the first scheduler only
    (the main table's), the largest for the others (their counters).
    topology: also every scheduler at topology_workers on that synthetic
    machine (never pinned; HERD_BIND=topology_bind decides the model's
    worker-to-shepherd mapping)."""
    configs: list[Config] = []
    seen_twins: set[str] = set()
    wlist = workers if timing else [max(workers)]
    for kernel, prob, stem, args, twin, variant in problems(large, kernels, sort_n):
        for s in scheds:
            for w in (wlist if not first_only or s == scheds[0] else [max(workers)]):
                configs.append(Config(kernel, prob, f"{stem} w={w}", BINARY[kernel],
                                      args + ("--workers", str(w)), w, twin, variant, s))
        if timing and twin not in seen_twins:
            seen_twins.add(twin)
            configs.append(Config(kernel, prob.replace(" one", ""), f"{stem.replace(' one', '')} seq",
                                  BINARY[kernel], seq_args(kernel, args), 0, twin, f"{twin}-seq"))
    if topology is not None:
        for kernel, prob, stem, args, twin, variant in problems(large, kernels, sort_n):
            for s in scheds:
                configs.append(Config(kernel, prob, f"{stem} w={topology_workers}", BINARY[kernel],
                                      args + ("--workers", str(topology_workers)),
                                      topology_workers, twin, variant, s, topology,
                                      (("HERD_BIND", topology_bind),)))
    return configs
