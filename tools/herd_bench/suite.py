"""The benchmark matrix of `herd bench`: kernels x runtimes x thread counts x
repetitions.

A *kernel* here is one kernel variant at one input, e.g. `fib/cutoff` at
`medium`. A *runtime* is how a kernel runs:

  serial       the OpenMP kernel's sequential twin (`--seq`; no runtime at all)
  libgomp      the OpenMP kernel on GCC's libgomp (what it was linked with)
  libomp       the same binary on LLVM's libomp: a folder whose libgomp.so.1
               is a link to libomp.so.5, put first on LD_LIBRARY_PATH (libomp
               exports the GOMP_* entry points gcc emits; the kernel reports
               the file that provides omp_get_num_threads, and a run that did
               not get libomp is a failure, never a silent libgomp run)
  herd-omp:S   the same binary on herd's lib/herd/libgomp.so.1 under HERD_SCHED=S
  clang-libomp the kernel's clang twin (omp_<kernel>_clang: clang -fopenmp,
               LLVM's __kmpc_* ABI) on libomp.so.5 itself, the runtime clang
               users get by default; the same libomp file as the libomp row
               (a folder whose libomp.so.5 links to it goes first on
               LD_LIBRARY_PATH), so the two libomp rows differ by ABI only
  clang-herd-omp:S
               the clang twin on herd's lib/herd/libomp.so.5 under HERD_SCHED=S
  herd:S       herd's native kernel (bench/*.c) under HERD_SCHED=S
  tbb          the oneTBB peer (bench/tbb), for fib and sort

Every OpenMP run must report the library it was meant to run on (the kernel
prints the file that provides omp_get_num_threads); another one is a failed
run. A runtime the build or the machine lacks (libomp.so.5 absent, herd-omp,
the clang twins or tbb not built, no native version of a kernel) is a *not
built* cell: shown in every table, never silently missing.

Everything here is a pure function of its arguments, so the tests expand
matrices without running anything.
"""
from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from .model import sched_env

INPUTS = ("small", "medium", "large")

# kernel -> its variants (the first is the default), as bench/omp/<kernel>.c has them.
VARIANTS: dict[str, tuple[str, ...]] = {
    "fib": ("cutoff", "nocutoff"),
    "nqueens": ("cutoff", "nocutoff"),
    "sort": ("mergesort",),
    "health": ("tree",),
    "sparselu": ("single", "for"),
    "strassen": ("tasks",),
    "alignment": ("single", "for"),
    "fft": ("recursive",),
    "floorplan": ("bnb",),
    "uts": ("tasks",),
}
KERNELS = tuple(VARIANTS)

# The sizes bench/omp/*.c give each input, where a native herd or oneTBB peer
# must be told the same problem explicitly (small, medium, large). The
# kernels publish theirs (`omp_<kernel> --list-inputs`); published_inputs()
# is what they must print, and `python3 -m herd_bench check-inputs BENCH`
# (CTest harness.inputs_agree) compares the two.
FIB_N = {"cutoff": (30, 40, 50), "nocutoff": (22, 28, 35)}
FIB_CUTOFF = 12
NQUEENS_N = {"cutoff": (10, 13, 14), "nocutoff": (9, 12, 14)}
NQUEENS_CUTOFF = 3
SORT_N = (1 << 20, 16 << 20, 128 << 20)
SORT_CUTOFF = 32768  # bench_sort's default --cutoff as well
UTS_TREE = ("T1", "T3", "T1L")

RUNTIME_KINDS = ("serial", "libgomp", "libomp", "herd-omp", "clang-libomp", "clang-herd-omp",
                 "herd", "tbb")
SCHED_KINDS = ("herd-omp", "clang-herd-omp", "herd")  # the runtimes that take HERD_SCHED
CLANG_KINDS = ("clang-libomp", "clang-herd-omp")  # run the clang twins (omp_<kernel>_clang)
DEFAULT_SCHEDS = ("auto", "ws", "mts")


@dataclass(frozen=True)
class Cell:
    """One point of the matrix (repetitions aside)."""

    kernel: str
    variant: str
    input: str
    runtime: str  # one of RUNTIME_KINDS
    sched: Optional[str]  # HERD_SCHED for herd-omp, clang-herd-omp and herd
    threads: int  # 0 for serial

    @property
    def bench(self) -> str:
        """What the tables call the kernel: `fib/cutoff`, or `sort` alone."""
        return self.kernel if len(VARIANTS.get(self.kernel, ())) < 2 else \
            f"{self.kernel}/{self.variant}"

    @property
    def rt(self) -> str:
        """The runtime's column name: `libgomp`, `herd-omp:ws`, `herd:auto`."""
        return f"{self.runtime}:{self.sched}" if self.sched else self.runtime

    def key(self) -> str:
        return f"{self.bench} {self.input} {self.rt} t={self.threads}"

    def to_json(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "variant": self.variant, "input": self.input,
                "runtime": self.runtime, "sched": self.sched, "threads": self.threads}

    @staticmethod
    def from_json(d: dict[str, Any]) -> "Cell":
        return Cell(d["kernel"], d["variant"], d["input"], d["runtime"], d.get("sched"),
                    int(d["threads"]))


@dataclass
class Paths:
    """Where the binaries and libraries are; None: not there."""

    bench: Path  # the build's bench/ folder
    herd_omp: Optional[Path] = None  # lib/herd/libgomp.so.1 (the libgomp ABI)
    libomp: Optional[Path] = None  # libomp.so.5
    herd_kmp: Optional[Path] = None  # lib/herd/libomp.so.5 (the __kmpc_* ABI)

    def available(self, runtime: str, kernel: Optional[str] = None) -> tuple[bool, str]:
        """Whether a runtime can run at all (for kernel: that kernel), and if
        not, why (for its row)."""
        if runtime in ("libomp", "clang-libomp") and self.libomp is None:
            return False, "not found: no libomp.so.5 (Debian: libomp-dev), or pass --libomp"
        if runtime == "herd-omp" and self.herd_omp is None:
            return False, "not built: no lib/herd/libgomp.so.1 in this build"
        if runtime == "clang-herd-omp" and self.herd_kmp is None:
            return False, "not built: no lib/herd/libomp.so.5 in this build"
        if runtime in CLANG_KINDS and not self.clang_twin(kernel):
            return False, ("not built: no clang twins (bench/omp/omp_<kernel>_clang) in this "
                           "build: configure found no clang that builds OpenMP programs "
                           "(clang, libomp-dev), or HERD_BENCH_CLANG=OFF")
        if runtime == "tbb" and not (self.bench / "tbb" / "tbb_fib").exists():
            return False, "not built: oneTBB was not found at configure time (libtbb-dev)"
        return True, ""

    def clang_twin(self, kernel: Optional[str]) -> bool:
        """Whether the clang twin of kernel (None: of any kernel) is built."""
        if kernel is not None:
            return (self.bench / "omp" / f"omp_{kernel}_clang").exists()
        return any((self.bench / "omp").glob("omp_*_clang"))


def find_paths(build: Path, herd_omp: Optional[Path] = None,
               libomp: Optional[Path] = None) -> Paths:
    """A build's runtimes: herd's two drop-ins (herd_omp, default
    BUILD/lib/herd/libgomp.so.1, and libomp.so.5 beside it) and LLVM's
    libomp.so.5 (default find_libomp()); None where a file is absent."""
    gomp = herd_omp or build / "lib" / "herd" / "libgomp.so.1"
    kmp = gomp.parent / "libomp.so.5"
    lo = libomp or find_libomp()
    return Paths(build / "bench", gomp if gomp.exists() else None,
                 lo if lo and lo.exists() else None, kmp if kmp.exists() else None)


def add_runtime_paths(ap: Any) -> None:
    """The options that point a command at other runtime files than the
    build's and the system's (find_paths' herd_omp and libomp)."""
    ap.add_argument("--herd-omp", type=Path, default=None,
                    help="herd's libgomp.so.1 (default BUILD/lib/herd/libgomp.so.1); its "
                         "folder's libomp.so.5 serves clang-herd-omp")
    ap.add_argument("--libomp", type=Path, default=None,
                    help="LLVM's libomp.so.5 (default: searched under /usr/lib)")


def find_libomp() -> Optional[Path]:
    """LLVM's OpenMP runtime, newest LLVM first."""
    pats = ["/usr/lib/llvm-*/lib/libomp.so.5", "/usr/lib/*/libomp.so.5", "/usr/lib/libomp.so.5",
            "/usr/local/lib/libomp.so.5"]
    for pat in pats:
        hits = sorted(glob.glob(pat), key=_version_key, reverse=True)
        if hits:
            return Path(hits[0])
    return None


def _version_key(p: str) -> tuple[int, ...]:
    digits = [int(x) for x in p.replace("-", "/").split("/") if x.isdigit()]
    return tuple(digits) or (0,)


def published_inputs() -> dict[str, Any]:
    """kernel -> what `omp_<kernel> --list-inputs` must print as "inputs"
    (None where the harness keeps no copy of the kernel's sizes)."""
    def cut_nocut(n: dict[str, tuple[int, ...]], cutoff: int) -> dict[str, Any]:
        return {"cutoff": {"n": list(n["cutoff"]), "cutoff": cutoff},
                "nocutoff": {"n": list(n["nocutoff"])}}
    copies: dict[str, Any] = {
        "fib": cut_nocut(FIB_N, FIB_CUTOFF),
        "nqueens": cut_nocut(NQUEENS_N, NQUEENS_CUTOFF),
        "sort": {"mergesort": {"n": list(SORT_N), "cutoff": SORT_CUTOFF}},
        "uts": {"tasks": {"tree": list(UTS_TREE)}},
    }
    return {k: copies.get(k) for k in KERNELS}


def input_mismatches(listed: dict[str, Any]) -> list[str]:
    """Differences between the kernels' --list-inputs lines (kernel -> the
    parsed line, or None when it could not be had) and this file's tables."""
    out: list[str] = []
    want = published_inputs()
    for k in KERNELS:
        got = listed.get(k)
        if got is None:
            out.append(f"{k}: omp_{k} --list-inputs gave no JSON line")
            continue
        if tuple(got.get("variants") or ()) != VARIANTS[k]:
            out.append(f"{k}: variants {got.get('variants')} in the kernel, "
                       f"{list(VARIANTS[k])} in suite.py")
        if got.get("inputs") != want[k]:
            out.append(f"{k}: inputs {got.get('inputs')} in the kernel, {want[k]} in suite.py")
    return out


def native_args(kernel: str, variant: str, inp: int) -> Optional[tuple[str, tuple[str, ...]]]:
    """herd's native version: (binary under bench/, args), or None if there is none."""
    if kernel == "fib":
        # The OpenMP kernel's shape: spawn both children; above the cut-off only.
        cut = ("--cutoff", str(FIB_CUTOFF)) if variant == "cutoff" else ()
        return "bench_fib", ("--n", str(FIB_N[variant][inp]), "--shape", "both") + cut
    if kernel == "nqueens":
        n = NQUEENS_N[variant][inp]
        cut = NQUEENS_CUTOFF if variant == "cutoff" else n
        return "bench_nqueens", ("--n", str(n), "--cutoff", str(cut))
    if kernel == "sort":
        return "bench_sort", ("--n", str(SORT_N[inp]))
    if kernel == "uts":
        return "bench_uts", ("--tree", UTS_TREE[inp])
    return None


def tbb_args(kernel: str, variant: str, inp: int) -> Optional[tuple[str, tuple[str, ...]]]:
    if kernel == "fib":
        n = FIB_N[variant][inp]
        return "tbb/tbb_fib", ("--n", str(n)) + (("--cutoff", str(FIB_CUTOFF))
                                                 if variant == "cutoff" else ())
    if kernel == "sort":
        return "tbb/tbb_sort", ("--n", str(SORT_N[inp]))
    return None


def has_version(cell: Cell) -> bool:
    """Whether the kernel exists for the cell's runtime at all."""
    i = INPUTS.index(cell.input)
    if cell.runtime == "herd":
        return native_args(cell.kernel, cell.variant, i) is not None
    if cell.runtime == "tbb":
        return tbb_args(cell.kernel, cell.variant, i) is not None
    return True


@dataclass
class Command:
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    expect_lib: Optional[Path] = None  # the OpenMP library the run must report
    stats: bool = False  # give it HERD_STATS


def command(cell: Cell, paths: Paths, libomp_dir: Optional[Path]) -> Command:
    """The process that runs one repetition of cell."""
    i = INPUTS.index(cell.input)
    t = str(cell.threads)
    if cell.runtime == "herd":
        found = native_args(cell.kernel, cell.variant, i)
        assert found is not None
        binary, args = found
        return Command([str(paths.bench / binary), *args, "--workers", t, "--reps", "1"],
                       sched_env(cell.sched), stats=True)
    if cell.runtime == "tbb":
        found = tbb_args(cell.kernel, cell.variant, i)
        assert found is not None
        binary, args = found
        return Command([str(paths.bench / binary), *args, "--workers", t, "--reps", "1"])
    argv = [str(paths.bench / "omp" / f"omp_{cell.kernel}"), "--input", cell.input,
            "--variant", cell.variant, "--reps", "1"]
    if cell.runtime == "serial":
        return Command(argv + ["--seq"])
    env, expect_lib = omp_env(cell.runtime, cell.sched, cell.threads, paths, libomp_dir)
    if cell.runtime in CLANG_KINDS:
        argv[0] += "_clang"
    return Command(argv, env, expect_lib=expect_lib,
                   stats=cell.runtime in ("herd-omp", "clang-herd-omp"))


def omp_env(runtime: str, sched: Optional[str], threads: int, paths: Paths,
            libomp_dir: Optional[Path]) -> tuple[dict[str, str], Optional[Path]]:
    """How an OpenMP binary runs on runtime (libgomp, libomp and herd-omp for
    the gcc binaries, clang-libomp and clang-herd-omp for their clang twins):
    its environment and the library it must report (None: the binary's own).
    libomp_dir is libomp_links()'s folder. `herd bench` and `herd bench epcc`
    both run their OpenMP binaries through here."""
    # OMP_PROC_BIND stays unset: each runtime's own default placement is what we compare.
    env = {"OMP_NUM_THREADS": str(threads)}
    if runtime == "libgomp":
        return env, None
    if runtime in ("libomp", "clang-libomp"):
        assert libomp_dir is not None and paths.libomp is not None
        env["LD_LIBRARY_PATH"] = _prepend(str(libomp_dir))
        return env, paths.libomp
    lib = paths.herd_omp if runtime == "herd-omp" else paths.herd_kmp
    assert runtime in ("herd-omp", "clang-herd-omp") and lib is not None
    env["LD_LIBRARY_PATH"] = _prepend(str(lib.parent))
    env.update(sched_env(sched))
    return env, lib


def libomp_links(tmp: Path, paths: Paths) -> Optional[Path]:
    """A folder in tmp whose libgomp.so.1 (what gcc binaries load) and
    libomp.so.5 (what clang binaries load) both link to paths.libomp; first
    on LD_LIBRARY_PATH, it puts either binary on that libomp and nothing
    else. None without a libomp."""
    if paths.libomp is None:
        return None
    d = tmp / "libomp"
    d.mkdir(exist_ok=True)
    for name in ("libgomp.so.1", "libomp.so.5"):
        (d / name).unlink(missing_ok=True)
        (d / name).symlink_to(paths.libomp)
    return d


def _prepend(d: str) -> str:
    old = os.environ.get("LD_LIBRARY_PATH", "")
    return d + (":" + old if old else "")


@dataclass(frozen=True)
class Selection:
    """What to run: the suite or the flags."""

    kernels: tuple[tuple[str, str, str], ...]  # (kernel, variant, input)
    runtimes: tuple[str, ...]
    scheds: tuple[str, ...]
    threads: tuple[int, ...]
    reps: int
    # Thread counts of every scheduler but the first (None: all of threads).
    # quick runs the first (auto) at every count and the others where the
    # comparison is read, at all PUs, so herd-omp's rows fit its budget.
    side_threads: Optional[tuple[int, ...]] = None
    # clang-herd-omp under the first scheduler only (quick: the ABI
    # comparison is read at auto; the scheduler comparison on the gcc rows).
    clang_first_sched: bool = False


def suite(name: str, nproc: int) -> Selection:
    """The named suites. quick: every kernel variant at `medium` (the README's
    main command; sized for well under 10 minutes on 2 cores with herd-omp),
    all runtimes, 1 and all threads, 2 repetitions (the least that gives a
    spread), herd and herd-omp under auto at 1 and all threads and under ws
    and mts (paper 000's pair) at all threads, clang-herd-omp under auto
    only. full: medium and large, 1, 2, 4, ... up to all threads, 5
    repetitions, every scheduler at every count, clang-herd-omp included."""
    kv = tuple((k, v) for k in KERNELS for v in VARIANTS[k])
    if name == "quick":
        return Selection(tuple((k, v, "medium") for k, v in kv), RUNTIME_KINDS, DEFAULT_SCHEDS,
                         tuple(sorted({1, nproc})), 2, side_threads=(nproc,),
                         clang_first_sched=True)
    if name == "full":
        ts = sorted({1, nproc} | {2 ** k for k in range(1, 12) if 2 ** k < nproc})
        return Selection(tuple((k, v, i) for k, v in kv for i in ("medium", "large")),
                         RUNTIME_KINDS, ("auto", "ws", "ws-nearest", "numa", "numa-random",
                                         "hier", "mts", "central", "lifo", "fifo"), tuple(ts),
                         5)
    raise ValueError(f"unknown suite {name!r}: quick or full")


def expand(sel: Selection) -> list[Cell]:
    """Every cell of a selection, in table order: per kernel, the serial twin,
    then each runtime (each scheduler) at each thread count. Cells whose
    runtime has no version of the kernel (herd native health, tbb health)
    are left out here: the tables show them as `n/a`, which is not a failure."""
    cells: list[Cell] = []
    for k, v, inp in sel.kernels:
        for rt in sel.runtimes:
            if rt == "serial":
                cells.append(Cell(k, v, inp, "serial", None, 0))
                continue
            scheds = sel.scheds if rt in SCHED_KINDS else (None,)
            if rt == "clang-herd-omp" and sel.clang_first_sched:
                scheds = scheds[:1]
            for s in scheds:
                side = s is not None and s != scheds[0] and sel.side_threads is not None
                for t in (sel.side_threads if side else sel.threads):
                    c = Cell(k, v, inp, rt, s, t)
                    if has_version(c):
                        cells.append(c)
    return cells


def parse_kernels(spec: str, default_input: str) -> tuple[tuple[str, str, str], ...]:
    """`fib,sort/mergesort@small,nqueens/nocutoff` -> (kernel, variant, input)s;
    a kernel without a variant means all its variants."""
    out: list[tuple[str, str, str]] = []
    for tok in [x for x in spec.split(",") if x]:
        inp = default_input
        if "@" in tok:
            tok, inp = tok.split("@", 1)
        if inp not in INPUTS:
            raise ValueError(f"{tok}@{inp}: the input is one of {', '.join(INPUTS)}")
        k, _, v = tok.partition("/")
        if k not in VARIANTS:
            raise ValueError(f"unknown kernel {k!r}; known: {', '.join(KERNELS)}")
        if v and v not in VARIANTS[k]:
            raise ValueError(f"{k} has variants {', '.join(VARIANTS[k])}, not {v!r}")
        for var in ([v] if v else list(VARIANTS[k])):
            if (k, var, inp) not in out:
                out.append((k, var, inp))
    if not out:
        raise ValueError("no kernels selected")
    return tuple(out)
