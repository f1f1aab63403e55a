#!/bin/sh
# usage: bench/dist/run_figures.sh BUILD_DIR [REPS] > results.txt
# Sweeps the pool benchmarks: ranks 1 2 4 8 x (every lock with steal-half,
# every split with the aborting lock), REPS runs each (default 3), one
# result line per run (bench/dist/pool_bench.h). UTS T1L (102,181,082 nodes,
# ~30 s at 2 ranks here) is left out for time: bench_pool_uts --tree T1L.
# Oversubscribes when there are fewer cores than ranks: say so when you quote
# the figures. The same sweep, shuffled, with figures (paper 001 Fig. 5-7):
#   python3 -m herd_bench mpi run --build-dir BUILD_DIR   (run from tools/)
#   python3 -m herd_bench mpi plot results.txt            (this script's output)
b=${1:?usage: run_figures.sh BUILD_DIR [REPS]}
reps=${2:-3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    OMPI_MCA_btl_vader_single_copy_mechanism=none
for np in 1 2 4 8; do
    for combo in ticket:half spin:half aborting:half aborting:one aborting:two; do
        lock=${combo%:*} steal=${combo#*:}
        for r in $(seq "$reps"); do
            for k in "uts --tree T3" "uts --tree T1" "bpc --n 32 --depth 64 --work-us 200" \
                "madness --gaussians 32 --tol 1e-9"; do
                set -- $k
                kern=$1
                shift
                HERD_POOL_LOCK=$lock HERD_POOL_STEAL=$steal timeout 300 mpirun -np "$np" \
                    --oversubscribe "$b/bench/dist/bench_pool_$kern" "$@" || echo "FAILED $k np=$np $combo"
            done
        done
    done
done
