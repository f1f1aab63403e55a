#!/bin/sh
# OpenMP overheads by the EPCC method (bench/omp/epcc.c): the same gcc -O1
# -fopenmp binary under the system libgomp, LLVM libomp (preloaded) and
# herd's libgomp.so.1, on 1 and 2 threads (the nested case: that many outer
# threads x 2 inner), in one run. Each figure is the mean over `outer`
# repetitions of a test sized to 1000 us, minus its reference, with its 95%
# interval (epcc.c's header). bench/omp/epcc_agree.py compares these with the
# public suite's syncbench.
# Usage: bench/omp/epcc_figure.sh <herd build dir> [outer]
set -eu
build=${1:?usage: epcc_figure.sh BUILD_DIR [outer]}
outer=${2:-20}
src=$(dirname "$0")/epcc.c
bin=$(mktemp /tmp/epcc.XXXXXX)
trap 'rm -f "$bin"' EXIT
gcc -O1 -fopenmp "$src" -o "$bin" -lm
libomp=/usr/lib/llvm-14/lib/libomp.so.5
echo "# load: $(uptime)"
for t in 1 2; do
  for rt in libgomp libomp herd-omp; do
    echo "## $rt, OMP_NUM_THREADS=$t"
    case $rt in
      libgomp) OMP_NUM_THREADS=$t "$bin" --outer "$outer" ;;
      libomp) OMP_NUM_THREADS=$t LD_PRELOAD=$libomp "$bin" --outer "$outer" ;;
      herd-omp) OMP_NUM_THREADS=$t LD_LIBRARY_PATH=$build/lib/herd "$bin" --outer "$outer" ;;
    esac
  done
done
