#!/bin/sh
# usage: expect_abort.sh SECONDS COMMAND...
# Passes when COMMAND fails (a rank died or aborted and the job ended with an
# error) within SECONDS; fails when it succeeds or has to be killed (a hang).
# mpirun reports a rank killed by signal N as 128+N, so a status alone cannot
# tell a hang killed by timeout from a dead rank: the clock does.
limit=$1
shift
start=$(date +%s)
timeout -k 5 "$limit" "$@"
rc=$?
elapsed=$(($(date +%s) - start))
if [ "$elapsed" -ge "$limit" ]; then
    echo "expect_abort: the job did not end within ${limit}s (status $rc): a hang"
    exit 1
fi
if [ "$rc" -eq 0 ]; then
    echo "expect_abort: the job succeeded, but it should have failed"
    exit 1
fi
echo "expect_abort: the job ended with status $rc after ${elapsed}s, as expected"
exit 0
