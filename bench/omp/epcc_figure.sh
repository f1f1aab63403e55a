#!/bin/sh
# EPCC-style overheads (bench/omp/epcc.c): the same gcc -fopenmp binary under
# the system libgomp, LLVM libomp (preloaded) and herd's libgomp.so.1, on 1
# and 2 threads (the nested case: that many outer threads x 2 inner), in one
# run; each figure is the median of `outer` repetitions of `reps` constructs.
# Usage: bench/omp/epcc_figure.sh <herd build dir> [reps] [outer]
set -eu
build=${1:?usage: epcc_figure.sh BUILD_DIR [reps] [outer]}
reps=${2:-2000}
outer=${3:-5}
src=$(dirname "$0")/epcc.c
bin=$(mktemp /tmp/epcc.XXXXXX)
trap 'rm -f "$bin"' EXIT
gcc -O2 -fopenmp "$src" -o "$bin"
libomp=/usr/lib/llvm-14/lib/libomp.so.5
echo "# load: $(uptime)"
for t in 1 2; do
  for rt in libgomp libomp herd-omp; do
    echo "## $rt, OMP_NUM_THREADS=$t"
    case $rt in
      libgomp) OMP_NUM_THREADS=$t "$bin" "$reps" "$outer" ;;
      libomp) OMP_NUM_THREADS=$t LD_PRELOAD=$libomp "$bin" "$reps" "$outer" ;;
      herd-omp) OMP_NUM_THREADS=$t LD_LIBRARY_PATH=$build/lib/herd "$bin" "$reps" "$outer" ;;
    esac
  done
done
