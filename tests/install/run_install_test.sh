#!/usr/bin/env bash
# Install test (ctest: install.consumer). Installs the build tree into a fresh
# prefix and checks the package from a user's point of view:
#   1. layout: bin/herd, include/herd/*.h (every public header, nothing else),
#      lib/libherd.so + libherd.a, lib/cmake/herd/, lib/pkgconfig/herd.pc
#   2. libherd.so exports every HERD_API function of herd.h and only herd_* names
#   3. `<prefix>/bin/herd version` runs and prints the package version
#   4. the consumer builds with find_package(herd) + herd::herd and runs
#   5. the consumer builds with find_package(herd) + herd::herd_static and runs
#   6. the consumer builds with `pkg-config --cflags --libs herd` and runs
#   4-6 each for the C consumer (consumer.c) and the C++ one (consumer.cpp,
#   herd.hpp, C++17)
#   7. both consumers build with clang and clang++ through pkg-config, with
#      -Wall -Wextra -Werror, and run: the inline paths of herd.h are
#      compiled by the user's compiler, not ours
# usage: run_install_test.sh BUILD_DIR TEST_SOURCE_DIR CMAKE GENERATOR CC [SANITIZE_FLAGS [CXX]]
# Set HERD_KEEP_INSTALL_TMP=1 to keep the temporary prefix for inspection.
set -uo pipefail

build=$1 here=$2 cmake=$3 generator=$4 cc=$5 sanflags=${6:-} cxx=${7:-c++}
src_include=$(cd "$here/../../include" && pwd)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/herd-install.XXXXXX")
if [ "${HERD_KEEP_INSTALL_TMP:-0}" = 1 ]; then
    echo "install test: keeping $tmp"
else
    trap 'rm -rf "$tmp"' EXIT
fi
prefix=$tmp/prefix
failures=0

pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# run_logged LOG CMD...: run quietly; on failure show the log.
run_logged() {
    local log=$1
    shift
    if "$@" >"$log" 2>&1; then return 0; fi
    echo "---- $* ----"
    cat "$log"
    echo "----"
    return 1
}

# ------------------------------------------------------------------ install
if ! run_logged "$tmp/install.log" "$cmake" --install "$build" --prefix "$prefix"; then
    echo "FAIL: cmake --install $build --prefix $prefix"
    exit 1
fi
pass "cmake --install into $prefix"

pc=$(find "$prefix" -name herd.pc -path '*/pkgconfig/*' | head -n 1)
if [ -z "$pc" ]; then
    echo "FAIL: no pkgconfig/herd.pc installed"
    find "$prefix" -type f | sed "s|^$prefix/|  |"
    exit 1
fi
libdir=$(dirname "$(dirname "$pc")")
version=$(sed -nE 's/.*PACKAGE_VERSION "([^"]*)".*/\1/p' \
    "$libdir/cmake/herd/herdConfigVersion.cmake" 2>/dev/null | head -n 1)

# ------------------------------------------------------------------- layout
layout_ok=1
for f in bin/herd include/herd/herd.h include/herd/herd.hpp; do
    [ -e "$prefix/$f" ] || { fail "missing $f"; layout_ok=0; }
done
for f in libherd.so libherd.a cmake/herd/herdConfig.cmake cmake/herd/herdConfigVersion.cmake \
    cmake/herd/herdTargets.cmake pkgconfig/herd.pc; do
    [ -e "$libdir/$f" ] || { fail "missing ${libdir#"$prefix"/}/$f"; layout_ok=0; }
done
[ -n "$version" ] || { fail "no PACKAGE_VERSION in herdConfigVersion.cmake"; layout_ok=0; }
[ "$layout_ok" = 1 ] && pass "layout (libdir ${libdir#"$prefix"/}, version $version)"

# Headers: exactly the public ones. Anything else is an internal header leaking.
headers_ok=1
while IFS= read -r h; do
    rel=${h#"$prefix"/}
    case "$rel" in
    include/herd/*)
        [ -e "$src_include/herd/${rel#include/herd/}" ] ||
            { fail "installed header $rel is not in include/herd/ of the source tree"; headers_ok=0; }
        ;;
    *) fail "internal or stray header installed: $rel"; headers_ok=0 ;;
    esac
done < <(find "$prefix" -type f \( -name '*.h' -o -name '*.hpp' -o -name '*.inc' \))
for h in "$src_include"/herd/*; do
    [ -e "$prefix/include/herd/$(basename "$h")" ] ||
        { fail "public header include/herd/$(basename "$h") is not installed"; headers_ok=0; }
done
[ "$headers_ok" = 1 ] && pass "headers: only and all of include/herd/*"

# ------------------------------------------------------------------ symbols
if [ -e "$libdir/libherd.so" ]; then
    nm -D --defined-only "$libdir/libherd.so" | awk '$2 ~ /^[TDBRVWiu]$/ {print $3}' |
        sed 's/@.*//' | sort -u >"$tmp/exported"
    sed -nE 's/.*HERD_API[^(]*[^a-zA-Z0-9_](herd_[a-zA-Z0-9_]+) *\(.*/\1/p' \
        "$prefix/include/herd/herd.h" | sort -u >"$tmp/declared"
    missing=$(comm -23 "$tmp/declared" "$tmp/exported")
    extra=$(grep -vE '^(herd_|_init$|_fini$)' "$tmp/exported")
    if [ -n "$missing" ]; then
        fail "libherd.so does not export these HERD_API functions of herd.h:" $missing
    fi
    if [ -n "$extra" ]; then
        fail "libherd.so exports non-herd symbols (hidden visibility?):" $(head -n 20 <<<"$extra")
    fi
    [ -z "$missing" ] && [ -z "$extra" ] &&
        pass "libherd.so exports the $(wc -l <"$tmp/declared") HERD_API functions and only herd_* names"
fi

# ---------------------------------------------------------------------- CLI
if [ -x "$prefix/bin/herd" ]; then
    if out=$(LD_LIBRARY_PATH="$libdir" "$prefix/bin/herd" version 2>&1); then
        if [ -n "$version" ] && ! grep -qF "$version" <<<"$out"; then
            fail "'herd version' printed '$out', which lacks the package version $version"
        else
            pass "herd version: $out"
        fi
    else
        fail "'$prefix/bin/herd version' exited non-zero: $out"
    fi
fi

# run_consumer NAME BINARY: run an installed-package consumer against the prefix.
run_consumer() {
    local name=$1 bin=$2 out
    if LD_LIBRARY_PATH="$libdir" ldd "$bin" 2>/dev/null | grep -E 'libherd\.so' | grep -qvF "$libdir/"; then
        LD_LIBRARY_PATH="$libdir" ldd "$bin" | grep libherd
        fail "$name: libherd.so does not resolve into $libdir"
        return
    fi
    if out=$(LD_LIBRARY_PATH="$libdir" timeout 60 "$bin" 2>&1); then
        pass "$name: $out"
    else
        fail "$name: consumer exited non-zero: $out"
    fi
}

# ------------------------------------------------- CMake: find_package(herd)
for variant in shared static; do
    bdir=$tmp/cmake-$variant
    static=OFF
    [ "$variant" = static ] && static=ON
    if ! run_logged "$tmp/cmake-$variant.log" "$cmake" -S "$here/consumer" -B "$bdir" \
        -G "$generator" -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
        -DCMAKE_C_FLAGS="$sanflags" -DCMAKE_CXX_FLAGS="$sanflags" -DCONSUMER_STATIC=$static; then
        fail "cmake ($variant): configuring the consumer with find_package(herd) failed"
        continue
    fi
    herd_dir=$(sed -n 's/^herd_DIR:PATH=//p' "$bdir/CMakeCache.txt")
    case "$herd_dir" in
    "$prefix"/*) ;;
    *) fail "cmake ($variant): find_package(herd) found $herd_dir, not the test prefix"; continue ;;
    esac
    if ! run_logged "$tmp/build-$variant.log" "$cmake" --build "$bdir"; then
        fail "cmake ($variant): building the consumer failed"
        continue
    fi
    if [ "$variant" = static ] && readelf -d "$bdir/consumer" | grep -q 'libherd\.so'; then
        fail "cmake (static): consumer linked with herd::herd_static still needs libherd.so"
        continue
    fi
    run_consumer "cmake ($variant, herd::herd$([ $variant = static ] && echo _static))" \
        "$bdir/consumer"
    run_consumer "cmake ($variant, herd::herd$([ $variant = static ] && echo _static), C++)" \
        "$bdir/consumer_cpp"
done

# ---------------------------------------------------------------- pkg-config
export PKG_CONFIG_PATH="$libdir/pkgconfig"
if ! pcver=$(pkg-config --modversion herd 2>&1); then
    fail "pkg-config --modversion herd: $pcver"
else
    cflags=$(pkg-config --cflags herd)
    libs=$(pkg-config --libs herd)
    pc_ok=1
    [ -n "$version" ] && [ "$pcver" != "$version" ] &&
        { fail "pkg-config: version $pcver, CMake package says $version"; pc_ok=0; }
    # The .pc file must describe where it was installed, not the configure-time prefix.
    inc=$(pkg-config --variable=includedir herd)
    lib=$(pkg-config --variable=libdir herd)
    [ "$(realpath -m "$inc")" = "$(realpath -m "$prefix/include")" ] ||
        { fail "pkg-config: includedir is $inc, expected $prefix/include"; pc_ok=0; }
    [ "$(realpath -m "$lib")" = "$(realpath -m "$libdir")" ] ||
        { fail "pkg-config: libdir is $lib, expected $libdir"; pc_ok=0; }
    if [ "$pc_ok" = 1 ]; then
        # shellcheck disable=SC2086 # flags are word lists
        if run_logged "$tmp/pc-build.log" "$cc" $sanflags -o "$tmp/consumer-pc" \
            "$here/consumer/consumer.c" $cflags $libs; then
            run_consumer "pkg-config (cflags: $cflags; libs: $libs)" "$tmp/consumer-pc"
        else
            fail "pkg-config: building the consumer with '$cflags $libs' failed"
        fi
        # shellcheck disable=SC2086 # flags are word lists
        if run_logged "$tmp/pc-build-cpp.log" "$cxx" -std=c++17 $sanflags -o "$tmp/consumer-pc-cpp" \
            "$here/consumer/consumer.cpp" $cflags $libs; then
            run_consumer "pkg-config, C++ (cflags: $cflags; libs: $libs)" "$tmp/consumer-pc-cpp"
        else
            fail "pkg-config: building the C++ consumer with '-std=c++17 $cflags $libs' failed"
        fi
    fi
fi

# -------------------------------------------------------------------- clang
# herd.h's inline spawn and wait compile in the user's program, so a
# compiler other than the one that built libherd must take them too.
# scripts/deps.sh installs clang; a machine without it fails this check.
clang_cc=$(command -v clang || command -v clang-14 || true)
clang_cxx=$(command -v clang++ || command -v clang++-14 || true)
if [ -z "$clang_cc" ] || [ -z "$clang_cxx" ]; then
    fail "clang: no clang/clang++ (or clang-14/clang++-14) on PATH; scripts/deps.sh installs it"
elif [ -n "${cflags+x}" ]; then
    strict="-O2 -Wall -Wextra -Werror"
    # shellcheck disable=SC2086 # flags are word lists
    if run_logged "$tmp/clang-build.log" "$clang_cc" -std=c11 $strict $sanflags \
        -o "$tmp/consumer-clang" "$here/consumer/consumer.c" $cflags $libs; then
        run_consumer "clang ($clang_cc -std=c11 $strict)" "$tmp/consumer-clang"
    else
        fail "clang: building the C consumer with $clang_cc failed"
    fi
    # shellcheck disable=SC2086 # flags are word lists
    if run_logged "$tmp/clang-build-cpp.log" "$clang_cxx" -std=c++17 $strict $sanflags \
        -o "$tmp/consumer-clang-cpp" "$here/consumer/consumer.cpp" $cflags $libs; then
        run_consumer "clang++ ($clang_cxx -std=c++17 $strict)" "$tmp/consumer-clang-cpp"
    else
        fail "clang: building the C++ consumer with $clang_cxx failed"
    fi
fi

if [ "$failures" -ne 0 ]; then
    echo "install test: $failures check(s) failed"
    exit 1
fi
echo "install test: all checks passed"
