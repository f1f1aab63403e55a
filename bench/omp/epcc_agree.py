#!/usr/bin/env python3
"""Check that herd's EPCC-method benchmark (bench/omp/epcc.c) agrees with the
public EPCC OpenMP microbenchmarks' syncbench on this machine.

Both are built the same way (gcc -O1 -fopenmp) and run interleaved, RUNS
times each, under the system libgomp, LLVM libomp (preloaded, through its
libgomp compatibility) and herd-omp (herd's libgomp.so.1). For each
construct and runtime it prints both medians of the overhead in
microseconds, their ratio, and whether they agree: the difference is within
the larger of the two spreads (the public suite's own 95% interval, the
max-min range of the medians' runs) or within 0.02 us, the suite's printed
resolution at these sizes.

The public suite is not part of herd: pass a checkout of
EPCCed/epcc-openmp-microbenchmarks (its openmpbench_C_v31 folder is used).

usage: bench/omp/epcc_agree.py HERD_BUILD_DIR EPCC_CHECKOUT [--runs N] [--threads T]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

# syncbench's names -> herd's epcc names
NAMES = {
    "PARALLEL": "parallel",
    "FOR": "for",
    "PARALLEL FOR": "parallel_for",
    "BARRIER": "barrier",
    "SINGLE": "single",
    "CRITICAL": "critical",
    "LOCK/UNLOCK": "lock",
    "ORDERED": "ordered",
    "ATOMIC": "atomic",
    "REDUCTION": "reduction",
}
LIBOMP = "/usr/lib/llvm-14/lib/libomp.so.5"
OVERHEAD = re.compile(r"^(.*) overhead = +(-?[0-9.]+) microseconds \+/- ([0-9.]+)")


def build(out_dir, suite, epcc_src):
    pub = os.path.join(out_dir, "syncbench")
    ours = os.path.join(out_dir, "epcc")
    subprocess.run(["gcc", "-O1", "-fopenmp", "-DOMPVER2", "-DOMPVER3", "-o", pub,
                    os.path.join(suite, "syncbench.c"), os.path.join(suite, "common.c"), "-lm"],
                   check=True)
    subprocess.run(["gcc", "-O1", "-fopenmp", "-o", ours, epcc_src, "-lm"], check=True)
    return pub, ours


def env_for(runtime, herd_build, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    if runtime == "libomp":
        env["LD_PRELOAD"] = LIBOMP
    elif runtime == "herd-omp":
        env["LD_LIBRARY_PATH"] = os.path.join(herd_build, "lib", "herd")
    return env


def run_public(binary, env):
    out = subprocess.run([binary], env=env, check=True, capture_output=True, text=True).stdout
    got = {}
    for line in out.splitlines():
        m = OVERHEAD.match(line.strip())
        if m and m.group(1) in NAMES:
            got[NAMES[m.group(1)]] = (float(m.group(2)), float(m.group(3)))
    return got


def run_ours(binary, env):
    env = dict(env, EPCC_JSON="1")
    only = ",".join(NAMES.values())
    out = subprocess.run([binary, "--only", only], env=env, check=True, capture_output=True,
                         text=True).stdout
    got = {}
    for line in out.splitlines():
        r = json.loads(line)
        got[r["construct"]] = (r["overhead_us"], r["ci95_us"])
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("herd_build")
    ap.add_argument("epcc_checkout")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runtimes", default="libgomp,libomp,herd-omp")
    a = ap.parse_args()
    suite = os.path.join(a.epcc_checkout, "openmpbench_C_v31")
    if not os.path.isfile(os.path.join(suite, "syncbench.c")):
        sys.exit(f"epcc_agree: no openmpbench_C_v31/syncbench.c under {a.epcc_checkout}")
    here = os.path.dirname(os.path.abspath(__file__))
    runtimes = a.runtimes.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        pub, ours = build(tmp, suite, os.path.join(here, "epcc.c"))
        res = {(rt, who): [] for rt in runtimes for who in ("public", "herd")}
        for run in range(a.runs):  # interleaved: every runtime and binary each round
            for rt in runtimes:
                env = env_for(rt, a.herd_build, a.threads)
                res[(rt, "public")].append(run_public(pub, env))
                res[(rt, "herd")].append(run_ours(ours, env))
    print(f"# {a.threads} threads, {a.runs} runs each, interleaved; overhead in us, medians")
    print(f"{'construct':<13} {'runtime':<9} {'public':>8} {'herd':>8} {'ratio':>6}  agree")
    disagree = 0
    for name in NAMES.values():
        for rt in runtimes:
            p = [r[name][0] for r in res[(rt, "public")] if name in r]
            h = [r[name][0] for r in res[(rt, "herd")] if name in r]
            if not p or not h:
                print(f"{name:<13} {rt:<9} missing")
                disagree += 1
                continue
            pm, hm = statistics.median(p), statistics.median(h)
            ci = statistics.median(r[name][1] for r in res[(rt, "public")] if name in r)
            spread = max(ci, max(p) - min(p), max(h) - min(h), 0.02)
            ok = abs(pm - hm) <= spread
            disagree += not ok
            ratio = f"{hm / pm:6.2f}" if pm > 0 else "     -"
            print(f"{name:<13} {rt:<9} {pm:8.3f} {hm:8.3f} {ratio}  {'yes' if ok else 'NO'}"
                  f" (spread {spread:.3f})")
    print(f"{disagree} rows disagree")


if __name__ == "__main__":
    main()
