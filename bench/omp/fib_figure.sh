#!/bin/sh
# fib(30), one task per call, no cut-off: the same gcc -fopenmp binary under
# the system libgomp, LLVM libomp (preloaded) and herd's libgomp.so.1, on 1
# and 2 threads; median of 5 runs each, serial time measured in the same
# process. Usage: bench/omp/fib_figure.sh <herd build dir> [n]
set -eu
build=${1:?usage: fib_figure.sh BUILD_DIR [n]}
n=${2:-30}
src=$(dirname "$0")/fib_tasks.c
bin=$(mktemp /tmp/fib_tasks.XXXXXX)
trap 'rm -f "$bin"' EXIT
gcc -O2 -fopenmp "$src" -o "$bin"
libomp=/usr/lib/llvm-14/lib/libomp.so.5
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '%-9s %7s %10s %10s %8s\n' runtime threads serial_s tasks_s x_serial
for rt in libgomp libomp herd-omp; do
  for t in 1 2; do
    case $rt in
      libgomp) out=$(OMP_NUM_THREADS=$t "$bin" "$n" 5) ;;
      libomp) out=$(OMP_NUM_THREADS=$t LD_PRELOAD=$libomp "$bin" "$n" 5) ;;
      herd-omp) out=$(OMP_NUM_THREADS=$t LD_LIBRARY_PATH=$build/lib/herd "$bin" "$n" 5) ;;
    esac
    s=$(echo "$out" | awk '{print $6}' | median)
    p=$(echo "$out" | awk '{print $8}' | median)
    printf '%-9s %7d %10.6f %10.6f %8.1f\n' "$rt" "$t" "$s" "$p" "$(echo "$p $s" | awk '{print $1/$2}')"
  done
done
