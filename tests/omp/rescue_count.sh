#!/bin/sh
# The rescue is counted: PROG (test_guest_tasks, whose tasks spin without a
# scheduling point until a queued child has started: 20 rounds of five
# cases in teams of 2 and 4) runs with HERD_STATS=<a file>, and the file's
# total "rescues" must be at least 1. Each spinning case that a thief's
# poke resolves counts one; a case resolved otherwise (the creator
# published before it spun because a thief had asked already) counts none,
# and across the 200 cases at least one is a poke's (180 in a run of 2026-11-27).
# Usage: rescue_count.sh PROG
set -eu
stats=$(mktemp)
trap 'rm -f "$stats"' EXIT
HERD_STATS=$stats "$1"
total=$(sed -n 's/.*"total": {\(.*\)}.*/\1/p' "$stats")
n=$(printf '%s\n' "$total" | sed -n 's/.*"rescues": \([0-9][0-9]*\).*/\1/p')
[ -n "$n" ] || { echo "FAIL: no total rescues in $(cat "$stats")"; exit 1; }
[ "$n" -ge 1 ] || { echo "FAIL: total rescues $n: no poke answered"; exit 1; }
echo "rescues: $n"
