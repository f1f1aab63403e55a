#!/bin/sh
# herd's libomp.so.5 against LIBOMP (the libomp clang links against), name
# by name, so that a binary built for libomp never stops with a symbol
# lookup error on herd:
#   kmp_exports.sh LIBOMP HERD_LIBOMP OMITTED
#     every name LIBOMP exports, herd's library exports at libomp's version
#     node VERSION (a version node's name: as a node), unless OMITTED lists
#     it (one name a line, # comments: tests/omp/kmp_exports_omitted.txt);
#     a name OMITTED lists that herd exports, or that LIBOMP lacks, fails;
#   kmp_exports.sh --exact PREFIX LIBOMP HERD_LIBOMP
#     the names that begin with PREFIX, exactly LIBOMP's: none missing and
#     none that LIBOMP lacks (round 20 found herd's __kmpc_atomic_*_rev_cpt
#     where libomp says _cpt_rev).
set -eu
exact=
if [ "$1" = --exact ]; then
    exact=$2
    shift 2
fi
ref=$(mktemp) ours=$(mktemp) omitted=$(mktemp)
trap 'rm -f "$ref" "$ours" "$omitted"' EXIT
# every defined dynamic name, its version cut off
nm -D --defined-only "$1" | awk '{print $3}' | sed 's/@.*//' | sort -u >"$ref"
# herd's names at VERSION, and its version nodes (type A)
nm -D --defined-only "$2" |
    awk '$2 == "A" {print $3; next} $3 ~ /@@?VERSION$/ {sub(/@.*/, "", $3); print $3}' |
    sort -u >"$ours"
if [ -n "$exact" ]; then
    grep "^$exact" "$ref" >"$ref.p" || true
    grep "^$exact" "$ours" >"$ours.p" || true
    mv "$ref.p" "$ref"
    mv "$ours.p" "$ours"
else
    sed 's/#.*//; s/[[:space:]]//g; /^$/d' "$3" | sort -u >"$omitted"
fi
fail=0
report() { # what, names
    [ -z "$2" ] && return 0
    echo "FAIL: $1:"
    echo "$2"
    fail=1
}
report "$2 lacks at VERSION (and the omissions do not list)" \
    "$(comm -23 "$ref" "$ours" | comm -23 - "$omitted")"
if [ -n "$exact" ]; then
    report "$2 has, and $1 does not" "$(comm -13 "$ref" "$ours")"
else
    report "listed as omitted, yet $2 exports" "$(comm -12 "$omitted" "$ours")"
    report "listed as omitted, yet $1 does not export" "$(comm -23 "$omitted" "$ref")"
fi
[ "$fail" = 0 ] || exit 1
if [ -n "$exact" ]; then
    echo "kmp exports: ok ($(wc -l <"$ref") names $exact*, exactly $1's)"
else
    echo "kmp exports: ok ($(wc -l <"$ref") names of $1: $(comm -12 "$ref" "$ours" | wc -l) exported, $(wc -l <"$omitted") omitted)"
fi
