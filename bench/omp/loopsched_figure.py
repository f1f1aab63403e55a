#!/usr/bin/env python3
"""The cost of a worksharing loop's chunk (bench/omp/loopsched.c) under the
system libgomp, LLVM libomp (preloaded: its libgomp ABI) and herd-omp, the
same gcc binary, runs interleaved; per row the median over the runs of each
runtime's per-chunk cost, and herd's ratio to the better peer.

usage: bench/omp/loopsched_figure.py BUILD_DIR [--runs K] [--threads T] [-- LOOPSCHED_ARGS]
"""
import os
import statistics
import subprocess
import sys

LIBOMP = "/usr/lib/llvm-14/lib/libomp.so.5"


def run(binary, rt, build, threads, extra):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    if rt == "libomp":
        env["LD_PRELOAD"] = LIBOMP
    elif rt == "herd-omp":
        env["LD_LIBRARY_PATH"] = os.path.join(build, "lib", "herd")
    out = subprocess.run([binary] + extra, env=env, capture_output=True, text=True, check=True)
    rows = {}
    for line in out.stdout.splitlines():
        f = line.split()
        if len(f) == 6 and f[0] in ("static", "dynamic", "guided"):
            rows[(f[0], int(f[1]))] = (float(f[2]), float(f[5]))
    return rows


def main(argv):
    if not argv or argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    build, runs, threads, extra = argv[0], 3, 2, []
    rest = argv[1:]
    if "--" in rest:
        extra = rest[rest.index("--") + 1:]
        rest = rest[:rest.index("--")]
    for i in range(0, len(rest), 2):
        if rest[i] == "--runs":
            runs = int(rest[i + 1])
        elif rest[i] == "--threads":
            threads = int(rest[i + 1])
    binary = os.path.join(build, "bench", "omp", "omp_loopsched")
    rts = ["libgomp", "herd-omp"] + (["libomp"] if os.path.exists(LIBOMP) else [])
    got = {rt: [] for rt in rts}
    for _ in range(runs):
        for rt in rts:
            got[rt].append(run(binary, rt, build, threads, extra))
    keys = sorted(got[rts[0]][0], key=lambda k: (["static", "dynamic", "guided"].index(k[0]), k[1]))
    print(f"# per-chunk cost in ns, {threads} threads, median of {runs} interleaved runs "
          f"(each a median of loopsched's repetitions)")
    print(f"{'schedule':8s} {'chunk':>5s} {'chunks':>8s} " + " ".join(f"{rt:>9s}" for rt in rts)
          + f" {'herd/best':>9s}")
    for k in keys:
        med = {rt: statistics.median(r[k][1] for r in got[rt]) for rt in rts}
        peers = [med[rt] for rt in rts if rt != "herd-omp"]
        best = min(peers)
        ratio = f"{med['herd-omp'] / best:9.2f}" if best > 5.0 else f"{'-':>9s}"
        print(f"{k[0]:8s} {k[1]:5d} {got[rts[0]][0][k][0]:8.1f} "
              + " ".join(f"{med[rt]:9.1f}" for rt in rts) + " " + ratio)
    print("# herd/best: herd-omp's cost over the better peer's, where that is above 5 ns "
          "(below it the loop's code is the compiler's, not the runtime's)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
