#!/bin/sh
# herd's libomp.so.5 exports libomp's __kmpc_atomic_* entry points exactly:
# every one that LIBOMP (the libomp clang links against) defines, with the
# same name, and none that it does not (a name libomp lacks is one no
# binary built for libomp calls: round 20 found herd's _rev_cpt where
# libomp says _cpt_rev). Usage: kmp_atomic_exports.sh LIBOMP HERD_LIBOMP
set -eu
names() {
    nm -D --defined-only "$1" | awk '{print $3}' | sed 's/@.*//' | grep '^__kmpc_atomic_' | sort -u
}
ref=$(mktemp) ours=$(mktemp)
trap 'rm -f "$ref" "$ours"' EXIT
names "$1" >"$ref"
names "$2" >"$ours"
missing=$(comm -23 "$ref" "$ours")
extra=$(comm -13 "$ref" "$ours")
[ -z "$missing" ] || { echo "FAIL: $2 lacks:"; echo "$missing"; }
[ -z "$extra" ] || { echo "FAIL: $2 has, and $1 does not:"; echo "$extra"; }
[ -z "$missing$extra" ] || exit 1
echo "kmp_atomic exports: ok ($(wc -l <"$ref") names, as $1's)"
