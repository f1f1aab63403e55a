#!/bin/sh
# OpenMP overheads by the EPCC method (bench/omp/epcc.c) for both OpenMP ABIs
# in one run: the build's omp_epcc (gcc -O1 -fopenmp, calling GOMP_*) under
# the system libgomp, LLVM libomp (its libgomp compatibility) and herd's
# lib/herd/libgomp.so.1, and its clang twin omp_epcc_clang (clang -O1
# -fopenmp, calling __kmpc_*) under libomp and herd's lib/herd/libomp.so.5;
# on 1 and all threads (the nested case: that many outer threads x 2 inner),
# in interleaved rounds, with the medians and herd's ratio to the best
# runtime of each ABI. Each figure is the mean over OUTER repetitions of a
# test sized to 1000 us, minus its reference (epcc.c's header). This is
# `herd bench epcc` (tools/herd_bench/epcc.py), which writes
# results/epcc-<timestamp>/; OPTIONS go to it (--runs N, --threads, --only,
# --runtimes, --sched; --help). bench/omp/epcc_agree.py compares epcc.c's
# figures with the public suite's syncbench.
# Usage: bench/omp/epcc_figure.sh BUILD_DIR [OUTER] [OPTIONS...]
set -eu
build=${1:?usage: epcc_figure.sh BUILD_DIR [OUTER] [OPTIONS...]}
shift
outer=20
case ${1:-} in [0-9]*) outer=$1; shift ;; esac
tools=$(cd "$(dirname "$0")/../../tools" && pwd)
echo "# load: $(uptime)"
PYTHONPATH=$tools${PYTHONPATH:+:$PYTHONPATH} exec python3 -m herd_bench epcc \
  --build-dir "$build" --outer "$outer" "$@"
