#!/bin/sh
# fib(30), one task per call, no cut-off: the same gcc -fopenmp binary under
# the system libgomp, LLVM libomp (preloaded) and herd's libgomp.so.1, on 1
# and 2 threads; median of 5 runs each, serial time measured in the same
# process. Last row, abi-floor: abi_floor.c preloaded over libgomp on one
# thread (tasks run at once with no runtime work at all), the least a task
# can cost through the libgomp ABI. Usage: bench/omp/fib_figure.sh <herd
# build dir> [n]
set -eu
build=${1:?usage: fib_figure.sh BUILD_DIR [n]}
n=${2:-30}
src=$(dirname "$0")/fib_tasks.c
bin=$(mktemp /tmp/fib_tasks.XXXXXX)
floor=$(mktemp /tmp/abi_floor.XXXXXX.so)
trap 'rm -f "$bin" "$floor"' EXIT
gcc -O2 -fopenmp "$src" -o "$bin"
gcc -O2 -shared -fPIC "$(dirname "$0")/abi_floor.c" -o "$floor"
libomp=/usr/lib/llvm-14/lib/libomp.so.5
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '%-9s %7s %10s %10s %8s\n' runtime threads serial_s tasks_s x_serial
for rt in libgomp libomp herd-omp abi-floor; do
  for t in 1 2; do
    [ $rt = abi-floor ] && [ $t = 2 ] && continue
    case $rt in
      libgomp) out=$(OMP_NUM_THREADS=$t "$bin" "$n" 5) ;;
      libomp) out=$(OMP_NUM_THREADS=$t LD_PRELOAD=$libomp "$bin" "$n" 5) ;;
      herd-omp) out=$(OMP_NUM_THREADS=$t LD_LIBRARY_PATH=$build/lib/herd "$bin" "$n" 5) ;;
      abi-floor) out=$(OMP_NUM_THREADS=1 LD_PRELOAD=$floor "$bin" "$n" 5) ;;
    esac
    s=$(echo "$out" | awk '{print $6}' | median)
    p=$(echo "$out" | awk '{print $8}' | median)
    printf '%-9s %7d %10.6f %10.6f %8.1f\n' "$rt" "$t" "$s" "$p" "$(echo "$p $s" | awk '{print $1/$2}')"
  done
done
