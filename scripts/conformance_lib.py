"""What herd's two conformance runs share (docs/conformance.md).

scripts/conformance runs GCC's libgomp testsuite against the system libgomp and
herd's libgomp.so.1; scripts/conformance-llvm runs LLVM's libomp testsuite against
the system libomp and herd's libomp.so.5. Both fetch their testsuite from a Debian
source package, build each test once into a cache, run every test under the
reference library and under herd at each thread count, and report the same way.
This module holds those common parts:

- the Debian source package download (`apt_source`);
- running a test: one binary on a pseudo-terminal (`run_pty`, as DejaGNU does) or
  a lit-style pipeline of processes (`run_pipeline`), each in a process group of
  its own, with a time limit and an output cap; `kill_alive` ends what is still
  running when the script is interrupted;
- the configurations (`Config`: REF@T or herd:SCHED@T), the parallel build and run
  loops, the known-failure file (`--expect`, `--write-expect`), the report (failure
  lines, the table by directory and configuration, the `N passed, M failed` line)
  and the JSON result file.

Each script names itself (`prog`) and its reference library (`ref`: "libgomp" or
"libomp"); the messages and report lines are otherwise the same. Standard library
only; no global state besides the table of running processes, which the interrupt
handler needs.
"""

import argparse
import concurrent.futures as cf
import fnmatch
import json
import os
import pathlib
import platform
import re
import select
import signal
import subprocess
import sys
import threading
import time

OUT_CAP = 1 << 20
SRC_LIST = "/etc/apt/sources.list.d/herd-src.sources"
SRC_ENTRY = """Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""
SIGNAMES = {s.value: s.name for s in signal.Signals}
# Process groups of the runs in flight, so that an interrupt can end them.
ALIVE = set()
ALIVE_LOCK = threading.Lock()


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def run_root(cmd):
    """Run a command as root (directly, or through sudo)."""
    if os.geteuid() != 0:
        cmd = ["sudo"] + cmd
    return subprocess.run(cmd, check=True)


def apt_source(prog, pkg, src, cache):
    """The orig tarballs of Debian source package PKG in folder SRC, downloaded
    with `apt-get source --download-only` when none is there yet (writing the
    deb-src entry SRC_LIST and running apt-get update first when it is missing).
    Returns them sorted; exits with a message when the download brings none."""
    src.mkdir(parents=True, exist_ok=True)
    orig = sorted(src.glob(f"{pkg}_*.orig.tar.*"))
    if orig:
        return orig
    if not pathlib.Path(SRC_LIST).exists():
        log(f"{prog}: writing {SRC_LIST} (deb-src for bookworm) and running apt-get update")
        tmp = cache / "herd-src.sources"
        tmp.write_text(SRC_ENTRY)
        run_root(["install", "-m", "0644", str(tmp), SRC_LIST])
        run_root(["apt-get", "update", "-q"])
    log(f"{prog}: apt-get source --download-only {pkg} into {src}")
    subprocess.run(["apt-get", "source", "--download-only", pkg], cwd=src, check=True)
    orig = sorted(src.glob(f"{pkg}_*.orig.tar.*"))
    if not orig:
        sys.exit(f"{prog}: no {pkg}_*.orig.tar.* in {src} after apt-get source")
    return orig


# ---------------------------------------------------------------- running

def scrubbed_env():
    """This process's environment without the settings that would change how a
    test or its OpenMP library behaves."""
    return {k: v for k, v in os.environ.items()
            if not re.match(r"(OMP_|GOMP_|HERD_|KMP_|LIBOMP_|LD_PRELOAD$|LD_LIBRARY_PATH$|"
                            r"GFORTRAN_|ASAN_|UBSAN_|LSAN_|TSAN_)", k)}


# --sanitizer: the runtime a sanitizer build of herd needs first in every herd
# run (the tests are built without it, as users build them), and its options.
# ASan's leak check stays off: GCC's tests leak on purpose (target-implicit-map-2.c
# never frees its array); herd's own leaks are the asan stage's omp-san runs'. A
# TSan run sees only herd's side of a program's synchronisation (the program is
# not instrumented), so a test that orders its threads through its own atomics
# can report a race that is not one (GCC's task-detach-13.c).
SANITIZERS = {
    "asan": ("libasan.so", {"ASAN_OPTIONS": "detect_leaks=0 abort_on_error=0",
                            "UBSAN_OPTIONS": "halt_on_error=1 print_stacktrace=1"}),
    "tsan": ("libtsan.so", {"TSAN_OPTIONS": "halt_on_error=1 second_deadlock_stack=1"}),
}
_sanitizer_env = {}


def set_sanitizer(prog, kind):
    """Make every herd run preload KIND's runtime (gcc -print-file-name) with
    its options; exits with a message when gcc does not name the runtime."""
    _sanitizer_env.clear()
    if not kind:
        return
    name, opts = SANITIZERS[kind]
    rt = subprocess.run(["gcc", f"-print-file-name={name}"], capture_output=True,
                        text=True).stdout.strip()
    if not os.path.isabs(rt) or not os.path.exists(rt):
        sys.exit(f"{prog}: --sanitizer {kind}: gcc does not name {name} (got '{rt}')")
    _sanitizer_env.update(opts)
    _sanitizer_env["LD_PRELOAD"] = rt


def herd_env(env, herd_lib, sched):
    """ENV for a run under herd's library in HERD_LIB with HERD_SCHED=SCHED, and
    the --sanitizer runtime first when there is one."""
    env["LD_LIBRARY_PATH"] = str(herd_lib)
    env["HERD_SCHED"] = sched
    env.update(_sanitizer_env)


def _collect(fd, procs, timeout):
    """Read FD until every writer has closed it, at most OUT_CAP bytes kept, until
    TIMEOUT seconds have passed; then wait for PROCS (the first one leads their
    process group). Returns (statuses, output, timed_out); a timed-out run has
    its whole process group killed."""
    pgid = procs[0].pid
    chunks, size = [], 0
    deadline = time.monotonic() + timeout
    timed_out = False
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            r, _, _ = select.select([fd], [], [], min(left, 0.5))
            if r:
                try:
                    b = os.read(fd, 65536)
                except OSError:
                    b = b""
                if not b:
                    break
                if size < OUT_CAP:
                    chunks.append(b)
                    size += len(b)
            elif all(p.poll() is not None for p in procs):
                # exited; a grandchild may still hold the output: drain what is there
                r, _, _ = select.select([fd], [], [], 0.2)
                if not r:
                    break
        if timed_out:
            try:
                os.killpg(pgid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        statuses = []
        for p in procs:
            try:
                statuses.append(p.wait(timeout=max(1.0, deadline - time.monotonic() + 5)))
            except subprocess.TimeoutExpired:
                os.killpg(pgid, signal.SIGKILL)
                statuses.append(p.wait())
                timed_out = True
        # leftover processes of the group (forked children) go too
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    finally:
        os.close(fd)
        with ALIVE_LOCK:
            ALIVE.discard(pgid)
    return statuses, b"".join(chunks).decode(errors="replace"), timed_out


def run_pty(argv, env, timeout, cwd):
    """Run ARGV on a pseudo-terminal (as DejaGNU does: line-buffered stdout, both
    streams on one channel). Return (status, output); status is an exit code, -SIG,
    or None for a timeout."""
    master, slave = os.openpty()
    try:
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave,
                             env=env, cwd=cwd, start_new_session=True)
    except BaseException:
        os.close(master)
        raise
    finally:
        os.close(slave)
    with ALIVE_LOCK:
        ALIVE.add(p.pid)
    statuses, out, timed_out = _collect(master, [p], timeout)
    return (None if timed_out else statuses[0]), out


class Stage:
    """One process of a pipeline: argv, the environment settings it adds, and
    where its stdout and stderr go: "pipe" (the next stage's stdin, or for the last
    stage the captured output), "capture" (the captured output), or a file path."""

    def __init__(self, argv, env=None, stdout="pipe", stderr="capture"):
        self.argv, self.env = argv, dict(env or {})
        self.stdout, self.stderr = stdout, stderr


def run_pipeline(stages, env, timeout, cwd):
    """Run STAGES as a shell pipeline (stdin of the first from /dev/null), in one
    process group, all with ENV plus each stage's own settings. Every stage's
    stderr and the last stage's stdout are captured together, as lit captures a
    RUN line's output. Return (statuses, output); statuses has one exit code or
    -SIG per stage, or is None for a timeout."""
    rfd, wfd = os.pipe()
    procs, to_close = [], [wfd]
    prev_read = None

    def target(where, pipe_out):
        if where == "pipe":
            return pipe_out
        if where == "capture":
            return wfd
        fd = os.open(os.path.join(cwd, where), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        to_close.append(fd)
        return fd

    try:
        for k, st in enumerate(stages):
            next_read, pipe_out = None, wfd
            if k < len(stages) - 1:
                next_read, pipe_out = os.pipe()
                to_close.append(pipe_out)
            out, err = target(st.stdout, pipe_out), target(st.stderr, pipe_out)
            e = dict(env)
            e.update(st.env)
            # one process group (in this session: a process cannot join a group of
            # another session), led by the first stage; it stays a member until reaped
            group = {"process_group": procs[0].pid if procs else 0}
            procs.append(subprocess.Popen(st.argv, stdin=prev_read if prev_read is not None
                                          else subprocess.DEVNULL, stdout=out, stderr=err,
                                          env=e, cwd=cwd, **group))
            if k == 0:
                with ALIVE_LOCK:
                    ALIVE.add(procs[0].pid)
            if prev_read is not None:
                os.close(prev_read)
            prev_read = next_read
    except BaseException:
        for p in procs:
            p.kill()
            p.wait()
        if procs:
            with ALIVE_LOCK:
                ALIVE.discard(procs[0].pid)
        os.close(rfd)
        raise
    finally:
        # the children hold their own copies; the parent keeps only the read end
        for fd in to_close:
            os.close(fd)
        if prev_read is not None:
            os.close(prev_read)
    statuses, out, timed_out = _collect(rfd, procs, timeout)
    return (None if timed_out else statuses), out


def kill_alive():
    """Kill the process group of every run in flight (on an interrupt)."""
    with ALIVE_LOCK:
        for pid in list(ALIVE):
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def first_line(out, extra=None):
    """The output that best names a failure: herd's own messages (each distinct one,
    joined by " | ": a warning may come before the fatal message), else the first line
    naming an error (or matching the regex EXTRA), else the first line; directories
    dropped."""
    lines = [re.sub(r"/\S*/", "", l.strip()) for l in out.replace("\r", "").splitlines() if l.strip()]
    herd = list(dict.fromkeys(re.sub(r"; called from .*", "", l) for l in lines
                              if re.search(r"herd-omp:|herd:", l)))
    if herd:
        return " | ".join(herd)[:300]
    pat = (r"libgomp:|symbol lookup error|[Aa]ssertion|\berror\b|[Ss]egmentation fault|"
           r"\babort|not supported|cannot|undefined")
    if extra:
        pat += "|" + extra
    for l in lines:
        if re.search(pat, l):
            return l[:200]
    return lines[0][:200] if lines else "(no output)"


class Config:
    """One configuration: the reference library REF (libgomp, libomp) at T threads,
    or herd under HERD_SCHED=SCHED at T threads."""

    def __init__(self, lib, threads, sched=None):
        self.lib, self.threads, self.sched = lib, threads, sched
        self.name = f"herd:{sched}@{threads}" if lib == "herd" else f"{lib}@{threads}"


def configs_for(ref, threads, scheds, ref_only=False):
    """REF@T then herd:SCHED@T for each SCHED, for each T."""
    configs = []
    for n in threads:
        configs.append(Config(ref, n))
        if not ref_only:
            configs += [Config("herd", n, s) for s in scheds]
    return configs


def check_herd_loaded(prog, exe, herd_lib, soname):
    """Exit unless EXE, run with LD_LIBRARY_PATH=HERD_LIB, loads SONAME from there."""
    env = scrubbed_env()
    env["LD_LIBRARY_PATH"] = str(herd_lib)
    env["LD_TRACE_LOADED_OBJECTS"] = "1"
    out = subprocess.run([str(exe)], env=env, capture_output=True, text=True).stdout
    m = re.search(re.escape(soname) + r" => (\S+)", out)
    if not m or pathlib.Path(m.group(1)).parent.resolve() != pathlib.Path(herd_lib).resolve():
        sys.exit(f"{prog}: with LD_LIBRARY_PATH={herd_lib} the tests do not load herd's "
                 f"{soname} (ldd says: {m.group(1) if m else 'no ' + soname})")


def find_herd_lib(prog, a, soname, root, hint=None):
    """The folder with herd's SONAME: --herd-lib, else lib/herd of --build, else of
    ROOT/build/release or ROOT/build/dev. Exits with a message when it is missing;
    HINT, when given, replaces the message's advice to build herd."""
    if a.herd_lib:
        lib = pathlib.Path(a.herd_lib)
    else:
        builds = [pathlib.Path(a.build)] if a.build else [root / "build" / "release",
                                                          root / "build" / "dev"]
        lib = None
        for b in builds:
            if (b / "lib" / "herd" / soname).exists():
                lib = b / "lib" / "herd"
                break
        if lib is None:
            sys.exit(f"{prog}: no lib/herd/{soname} under {', '.join(map(str, builds))}; " +
                     (hint or "build herd first (cmake --preset release && "
                      "cmake --build --preset release)"))
    if not (lib / soname).exists():
        sys.exit(f"{prog}: {lib}/{soname} does not exist" + (f"; {hint}" if hint else ""))
    return lib.resolve()


# ---------------------------------------------------------------- options

def common_args(cache_default, usage, timeout_default=30.0):
    """The options both scripts take; the caller adds its own and parses."""
    ap = argparse.ArgumentParser(add_help=False, usage=usage)
    ap.add_argument("-h", "--help", action="store_true")
    ap.add_argument("--build")
    ap.add_argument("--herd-lib")
    ap.add_argument("--cache", default=str(cache_default))
    ap.add_argument("--threads")
    ap.add_argument("--sched")
    ap.add_argument("--filter")
    ap.add_argument("--slice", choices=["ci"])
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=timeout_default)
    ap.add_argument("--expect")
    ap.add_argument("--json")
    ap.add_argument("--write-expect")
    ap.add_argument("--list-skipped", action="store_true")
    ap.add_argument("--sanitizer", choices=sorted(SANITIZERS))
    return ap


def finish_args(ap, a, doc):
    """--help, and the thread and scheduler lists (defaults 1,2,4 and
    auto,ws,mts,hier) as lists."""
    if a.help:
        print(doc)
        sys.exit(0)
    try:
        a.threads = [int(x) for x in (a.threads or "1,2,4").split(",")]
    except ValueError:
        ap.error(f"--threads: '{a.threads}' is not a comma list of numbers")
    if any(n < 1 for n in a.threads):
        ap.error("--threads: thread counts start at 1")
    a.sched = (a.sched or "auto,ws,mts,hier").split(",")
    if a.j < 1:
        ap.error("-j: at least 1")
    set_sanitizer(ap.prog, a.sanitizer)
    return a


# ---------------------------------------------------------------- build and run loops

def build_all(prog, todo, fn, jobs):
    """Call FN(test) for each test of TODO, JOBS at a time; FN returns "built" or
    "cached". Logs progress every 100 tests."""
    nbuilt = 0
    with cf.ThreadPoolExecutor(jobs) as ex:
        for k, r in enumerate(ex.map(fn, todo)):
            nbuilt += r == "built"
            if (k + 1) % 100 == 0:
                log(f"{prog}: built {k + 1}/{len(todo)} ({nbuilt} compiled, the rest cached)")


def run_all(prog, runs, fn, jobs, t0):
    """Call FN(test, config) for each (test, config) of RUNS, JOBS at a time.
    Returns {(test name, config name): FN's result}. On an interrupt every run in
    flight is killed."""
    results = {}
    try:
        with cf.ThreadPoolExecutor(jobs) as ex:
            futs = {ex.submit(fn, t, c): (t, c) for t, c in runs}
            for k, f in enumerate(cf.as_completed(futs)):
                t, c = futs[f]
                results[(t.name, c.name)] = f.result()
                if (k + 1) % 200 == 0:
                    log(f"{prog}: ran {k + 1}/{len(runs)} ({time.monotonic() - t0:.0f} s)")
    except KeyboardInterrupt:
        kill_alive()
        raise
    return results


# ---------------------------------------------------------------- known failures

def load_expect(prog, path):
    """(test, config) patterns, fnmatch-style: `libgomp.c/for-1.c herd:*@2`."""
    known = []
    for n, line in enumerate(open(path), 1):
        line = line.split("#", 1)[0].strip()
        if line:
            parts = line.split()
            if len(parts) != 2:
                sys.exit(f"{prog}: {path}:{n}: expected 'TEST CONFIG', got '{line}'")
            known.append((parts[0], parts[1]))
    return known


def is_known(known, test, cfg):
    return any(fnmatch.fnmatchcase(test, t) and fnmatch.fnmatchcase(cfg, c) for t, c in known)


# ---------------------------------------------------------------- report

class Report:
    """The counts of one run: each test x configuration classified."""

    def __init__(self):
        self.rows = {}
        self.fails, self.reffails, self.knowns, self.xpass = [], [], [], []
        self.npass = self.nfail = 0


def tally(ref, tests, configs, results, known, group):
    """Classify every run. A herd run counts only where the test passes under REF at
    the same thread count; GROUP(test) is the table row the test belongs to."""
    rep = Report()
    for t in tests:
        for c in configs:
            row = rep.rows.setdefault((group(t), c.name), {"passed": 0, "failed": 0, "known": 0,
                                                           "ref-fails": 0, "skipped": 0})
            if t.skip is not None:
                row["skipped"] += 1
                continue
            cause, line, _ = results[(t.name, c.name)]
            if c.lib != "herd":
                if cause:
                    row["ref-fails"] += 1
                    rep.reffails.append((t.name, c.name, cause, line))
                else:
                    row["passed"] += 1
                continue
            if results[(t.name, f"{ref}@{c.threads}")][0]:
                row["ref-fails"] += 1
                continue
            k = is_known(known, t.name, c.name)
            if cause is None:
                row["passed"] += 1
                rep.npass += 1
                if k:
                    rep.xpass.append((t.name, c.name))
            elif k:
                row["known"] += 1
                rep.knowns.append((t.name, c.name, cause, line))
            else:
                row["failed"] += 1
                rep.nfail += 1
                rep.fails.append((t.name, c.name, cause, line))
    return rep


def print_report(ref, rep, skipped, reason_key, list_skipped, configs, groups, label, times, nruns,
                 jobs):
    """The report: skipped tests (each with --list-skipped, by reason always), the
    failures under REF, the known failures and those that now pass, the failures
    under herd, the table (rows in the order of GROUPS, LABEL(group) names them)
    and the times of each phase."""
    if list_skipped:
        print("== skipped")
        for t in skipped:
            print(f"SKIP {t.name}: {t.skip}")
    reasons = {}
    for t in skipped:
        r = reason_key(t.skip)
        reasons[r] = reasons.get(r, 0) + 1
    print("== skipped by reason (--list-skipped lists them): " +
          ", ".join(f"{v} {k}" for k, v in sorted(reasons.items())))
    if rep.reffails:
        print(f"== failing under the system {ref} too (not counted)")
        for n, c, cause, line in sorted(rep.reffails):
            print(f"{ref.upper()}-FAIL {n} [{c}]: {cause}: {line}")
    if rep.knowns:
        print("== known failures (--expect)")
        for n, c, cause, line in sorted(rep.knowns):
            print(f"KNOWN {n} [{c}]: {cause}: {line}")
    if rep.xpass:
        print("== known failures that now pass (remove them from the --expect file)")
        for n, c in sorted(rep.xpass):
            print(f"NOW-PASSES {n} [{c}]")
    print("== failures under herd-omp")
    for n, c, cause, line in sorted(rep.fails):
        print(f"FAIL {n} [{c}]: {cause}: {line}")
    print(f"== by directory and configuration (herd rows count only tests {ref} passes at that T)")
    print(f"{'directory':<28} {'config':<16} {'passed':>7} {'failed':>7} {'known':>6} "
          f"{ref + '-fails':>13} {'skipped':>8}")
    names = [x.name for x in configs]
    for (d, c), r in sorted(rep.rows.items(), key=lambda kv: (groups.index(kv[0][0]),
                                                              names.index(kv[0][1]))):
        print(f"{label(d):<28} {c:<16} {r['passed']:>7} {r['failed']:>7} {r['known']:>6} "
              f"{r['ref-fails']:>13} {r['skipped']:>8}")
    print(f"== times: testsuite+parse {times['fetch']:.0f} s, build {times['build']:.0f} s, "
          f"runs {times['run']:.0f} s (-j{jobs}, {nruns} runs)")


def write_expect(prog, path, rep):
    """This run's failures, known ones included, as an --expect file."""
    with open(path, "w") as f:
        f.write(f"# {prog} --expect list: TEST CONFIG  # cause: first line of output\n")
        for n, c, cause, line in sorted(rep.fails + rep.knowns):
            f.write(f"{n} {c}  # {cause}: {re.sub(r'/[^ ]*/', '', line)}\n")


def write_json(path, head, herd_lib, configs, times, skipped, runnable, results, rep):
    """The whole run as JSON: HEAD (the script's own fields: tool versions), the
    configurations, times, skipped tests with reasons, and every test x
    configuration with pass, cause, line and seconds."""
    doc = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "host": platform.node(), "cpus": os.cpu_count(), **head,
        "herd_lib": str(herd_lib), "args": sys.argv[1:],
        "configs": [c.name for c in configs],
        "times_s": {k: round(v, 1) for k, v in times.items()},
        "skipped": {t.name: t.skip for t in skipped},
        "results": {t.name: {c.name: {"pass": results[(t.name, c.name)][0] is None,
                                      "cause": results[(t.name, c.name)][0],
                                      "line": results[(t.name, c.name)][1],
                                      "secs": results[(t.name, c.name)][2]} for c in configs}
                    for t in runnable},
        "passed": rep.npass, "failed": rep.nfail,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1) + "\n")
