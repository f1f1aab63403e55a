#!/usr/bin/env bash
# Install what herd needs to build, test and benchmark, and nothing else.
#
# Idempotent: each requirement is probed first (a command, a pkg-config
# module, a Python import); apt-get runs only for what is missing, with one
# `apt-get update` before the first install. Runs apt as root, or through sudo
# when not root and sudo exists.
#
# usage: scripts/deps.sh [--py MODULE[=APT_PACKAGE]]...
#   --py pytest            also make `python3 -c "import pytest"` work
#                          (installs python3-pytest unless another package is named)
#   --py matplotlib        the benchmark figure (scripts/bench asks for it)
# Python modules go where `python3` looks: Debian's python3-* packages for the
# system interpreter, pip for another one first on PATH (pyenv, a venv),
# which cannot see Debian's packages.
set -euo pipefail

say() { printf 'deps: %s\n' "$*"; }
die() { printf 'deps: error: %s\n' "$*" >&2; exit 1; }

have() { command -v "$1" >/dev/null 2>&1; }

# probe_<requirement>: succeeds when the requirement is already met.
probe() {
    case "$1" in
    build-essential) have gcc && have g++ && have make ;;
    cmake) have cmake ;;
    ninja-build) have ninja ;;
    pkg-config) have pkg-config ;;
    libhwloc-dev) have pkg-config && pkg-config --exists hwloc ;;
    hwloc) have lstopo-no-graphics || have hwloc-ls ;;
    libssl-dev) have pkg-config && pkg-config --exists openssl ;;
    python3) have python3 ;;
    gcc-aarch64-linux-gnu) have aarch64-linux-gnu-gcc ;;
    # Only a Recommends of gcc-aarch64-linux-gnu: an install without
    # recommends has no AArch64 libc headers, and the test cannot compile.
    libc6-dev-arm64-cross) [ -e /usr/aarch64-linux-gnu/include/stdio.h ] ;;
    qemu-user) have qemu-aarch64 ;;
    libomp-dev) compgen -G '/usr/lib/llvm-*/lib/libomp.so.5' >/dev/null ||
        compgen -G '/usr/lib/*/libomp.so.5' >/dev/null ;;
    libtbb-dev) [ -e /usr/include/oneapi/tbb.h ] || [ -e /usr/include/tbb/tbb.h ] ;;
    # The MPI task pool (libherd-pool) and its tests: Open MPI's launcher and headers.
    openmpi-bin) have mpirun && have mpicc ;;
    libopenmpi-dev) [ -e /usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h ] ||
        [ -n "$(find /usr/lib -path '*openmpi*' -name mpi.h -print -quit 2>/dev/null)" ] ;;
    gfortran) have gfortran ;;
    clang) have clang ;;
    llvm-14-tools) [ -x /usr/lib/llvm-14/bin/FileCheck ] ;;
    clang-format-14) have clang-format-14 ;;
    flang-19) have flang-new-19 ;;
    *) return 1 ;;
    esac
}

# The python3 on PATH is the system one when its base prefix is /usr.
system_python() {
    have python3 && [ "$(python3 -c 'import sys; print(sys.base_prefix)' 2>/dev/null)" = /usr ]
}

py_modules=()
while [ $# -gt 0 ]; do
    case "$1" in
    --py) [ $# -ge 2 ] || die "--py needs a module name"; py_modules+=("$2"); shift 2 ;;
    --py=*) py_modules+=("${1#--py=}"); shift ;;
    -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
    esac
done

# Order matters only for probes: pkg-config first so the module probes work.
# gcc-aarch64-linux-gnu and qemu-user: the AArch64 context switch is tested under qemu-user.
# libomp-dev and libtbb-dev: the LLVM OpenMP and oneTBB peers of the benchmarks;
# gfortran: the OpenMP Fortran test (tests/omp); clang (with libomp-dev): the
# clang builds of the OpenMP tests (tests/omp, LLVM's OpenMP ABI); llvm-14-tools:
# FileCheck, which the RUN lines of LLVM's libomp testsuite pipe into
# (scripts/conformance-llvm); clang-format-14: the layout check (format.check);
# flang-19: the flang build of the OpenMP Fortran test (LLVM's ABI from Fortran;
# Debian 12's flang, linked against libomp-dev's libomp 14, not libomp-19-dev,
# which would replace the system libomp.so.5 the clang builds are compared with).
required=(build-essential cmake ninja-build pkg-config libhwloc-dev hwloc libssl-dev python3
    gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user libomp-dev libtbb-dev gfortran clang
    llvm-14-tools clang-format-14 flang-19)
# openmpi-bin, libopenmpi-dev: the MPI task pool (libherd-pool) and its mpi tests.
required+=(openmpi-bin libopenmpi-dev)

missing=()
for p in "${required[@]}"; do
    probe "$p" || missing+=("$p")
done
pip_missing=()
for spec in "${py_modules[@]+"${py_modules[@]}"}"; do
    mod=${spec%%=*}
    pkg=python3-$mod
    [ "$spec" != "$mod" ] && pkg=${spec#*=}
    if ! { have python3 && python3 -c "import $mod" >/dev/null 2>&1; }; then
        if ! have python3 || system_python; then
            missing+=("$pkg")
        else
            pip_missing+=("$mod")
        fi
    fi
done

# A python3 that is not the system one (pyenv, a venv): its own pip.
if [ ${#pip_missing[@]} -gt 0 ]; then
    say "python3 ($(command -v python3)) is not the system interpreter; pip install ${pip_missing[*]}"
    pip_log=$(mktemp)
    if ! python3 -m pip install -q "${pip_missing[@]}" >"$pip_log" 2>&1; then
        cat "$pip_log" >&2
        rm -f "$pip_log"
        die "pip install ${pip_missing[*]} failed"
    fi
    rm -f "$pip_log"
fi

if [ ${#missing[@]} -eq 0 ]; then
    still=()
    for mod in "${pip_missing[@]+"${pip_missing[@]}"}"; do
        python3 -c "import $mod" >/dev/null 2>&1 || still+=("python:$mod")
    done
    [ ${#still[@]} -eq 0 ] || die "still missing after install: ${still[*]}"
    [ ${#pip_missing[@]} -gt 0 ] && say "installed: ${pip_missing[*]}" || say "all requirements present"
    exit 0
fi

say "missing: ${missing[*]}"
have apt-get || die "apt-get is not available; install these packages by hand: ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
    as_root=()
elif have sudo; then
    as_root=(sudo)
else
    die "not root and sudo is not available; as root run: apt-get install ${missing[*]}"
fi

export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
trap 'rm -f "$log"' EXIT
say "apt-get update"
if ! "${as_root[@]}" apt-get update -qq >"$log" 2>&1; then
    cat "$log" >&2
    die "apt-get update failed"
fi
say "apt-get install ${missing[*]}"
if ! "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$log" 2>&1; then
    cat "$log" >&2
    die "apt-get install failed"
fi

# Check again: a probe that still fails means the package did not provide it
# (for Python modules: a python3 that is not the system one, e.g. pyenv).
still=()
for p in "${required[@]}"; do
    probe "$p" || still+=("$p")
done
for spec in "${py_modules[@]+"${py_modules[@]}"}"; do
    mod=${spec%%=*}
    if ! python3 -c "import $mod" >/dev/null 2>&1; then
        # A python3 outside the system one does not see Debian's python3-*
        # packages; fall back to pip for that interpreter.
        say "python3 ($(command -v python3)) cannot import $mod; trying pip"
        python3 -m pip install -q "$mod" >"$log" 2>&1 || true
        python3 -c "import $mod" >/dev/null 2>&1 || still+=("python:$mod")
    fi
done
[ ${#still[@]} -eq 0 ] || die "still missing after install: ${still[*]}"
say "installed: ${missing[*]}"
