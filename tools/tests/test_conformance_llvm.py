"""Tests of scripts/conformance-llvm's reading of lit tests and of the pipeline
runner it shares with scripts/conformance (scripts/conformance_lib.py): keyword
lines and continuations, REQUIRES/UNSUPPORTED expressions, RUN-line words and
redirections, the plan of compile and run steps, how a step is judged, and real
pipelines (exit statuses, 2>&1 >/dev/null, a time limit that kills the group).
No compiler, libomp or testsuite is needed."""
from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import time
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parent.parent.parent / "scripts"
sys.path.insert(0, str(SCRIPTS))

import conformance_lib as lib  # noqa: E402


def load_script():
    loader = importlib.machinery.SourceFileLoader("conformance_llvm",
                                                  str(SCRIPTS / "conformance-llvm"))
    spec = importlib.util.spec_from_loader("conformance_llvm", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


cl = load_script()


class FakeToolchain:
    cc, cxx = "/usr/bin/clang", "/usr/bin/clang++"
    version = "14.0.6"
    libomp = Path("/usr/lib/llvm-14/lib/libomp.so.5")
    features = {"clang", "clang-14", "clang-14.0", "clang-14.0.6", "linux", "affinity",
                "multicpu", "ompt"}
    libs = "-lm"


def plan(text, name="tasking/x.c"):
    root = Path("/src/test")
    t = cl.Test(root / name, name)
    t.parse(text, FakeToolchain(), root)
    return t


# ------------------------------------------------------------- lit keywords

def test_keywords_join_continued_run_lines():
    text = ("// RUN: %libomp-compile && env A=1 \\\n"
            "// RUN:   B=2 %libomp-run\n"
            "// CHECK-RUN: not a keyword\n"
            "// UNSUPPORTED: clang-11,\n"
            "// clang-12\n")
    assert cl.keywords(text) == [("RUN", "%libomp-compile && env A=1 B=2 %libomp-run"),
                                 ("UNSUPPORTED", "clang-11,")]


@pytest.mark.parametrize("expr,want", [
    ("linux", True), ("hwloc", False), ("!hwloc", True), ("linux && !ompt", False),
    ("hwloc || clang-14", True), ("(hwloc || linux) && clang", True), ("*", True),
    ("true", True), ("false", False),
])
def test_bool_expr(expr, want):
    assert cl.bool_expr(expr, FakeToolchain.features) is want


def test_bool_expr_malformed():
    with pytest.raises(cl.Unsupported):
        cl.bool_expr("linux &&", FakeToolchain.features)


# ------------------------------------------------------------- RUN lines

def test_redirections_follow_the_shell_order():
    toks = cl.sh_tokens("prog 2>&1 >/dev/null")
    st = cl.parse_stage(toks)
    assert (st.argv, st.stdout, st.stderr) == (["prog"], "/dev/null", "pipe")
    st = cl.parse_stage(cl.sh_tokens(">/dev/null 2>&1 prog"))
    assert (st.stdout, st.stderr) == ("/dev/null", "/dev/null")


def test_quotes_and_env_prefix():
    st = cl.parse_stage(cl.sh_tokens("env OMP_PLACES='{0,1},{2,3}' X=\"a b\" prog 7"))
    assert st.argv == ["prog", "7"]
    assert st.env == {"OMP_PLACES": "{0,1},{2,3}", "X": "a b"}


def test_plan_compile_and_run_with_filecheck():
    t = plan("// RUN: %libomp-compile-and-run 2>&1 | FileCheck %s\n")
    assert t.skip is None
    assert len(t.compiles) == 1
    argv = t.compiles[0]
    assert argv[0] == "/usr/bin/clang" and "-fopenmp" in argv and argv.count(cl.T_MARK) == 1
    (idx, stages), = t.runs
    assert idx == 0
    assert stages[0].argv == [cl.T_MARK] and stages[0].stderr == "pipe"
    assert stages[1].argv == [cl.FILECHECK, "/src/test/tasking/x.c"]


def test_plan_second_compile_rebinds_t():
    t = plan("// RUN: %libomp-compile\n"
             "// RUN: env K=0 %libomp-run\n"
             "// RUN: %libomp-cxx-compile -DMY=guided\n"
             "// RUN: %libomp-run 1 && %libomp-run 2\n")
    assert t.skip is None
    assert [c[0] for c in t.compiles] == ["/usr/bin/clang", "/usr/bin/clang++"]
    assert "-DMY=guided" in t.compiles[1]
    assert [(i, s[0].argv) for i, s in t.runs] == [(0, [cl.T_MARK]), (1, [cl.T_MARK, "1"]),
                                                   (1, [cl.T_MARK, "2"])]
    assert t.runs[0][1][0].env == {"K": "0"}


@pytest.mark.parametrize("text,why", [
    ("// RUN: %libomp-compile-and-run\n// REQUIRES: ompt\n", "OMPT"),
    ("// RUN: %libomp-compile-and-run\n// REQUIRES: hwloc\n", "REQUIRES"),
    ("// RUN: %libomp-compile-and-run\n// UNSUPPORTED: linux\n", "UNSUPPORTED"),
    ("// RUN: %libomp-compile-and-run\n// UNSUPPORTED: gcc, clang-10\n", None),
    ("// RUN: %libomp-compile-and-run\n// XFAIL: clang\n", "XFAIL"),
    ("// RUN: %libomp-compile-and-run || true\n", "cannot handle"),
    ("// RUN: %libomp-compile\n", "compile only"),
    ("int main() {}\n", "cannot handle"),
])
def test_skip_reasons(text, why):
    t = plan(text)
    assert (cl.skip_reason(t.skip) if t.skip else None) == why


def test_internals_are_skipped_with_their_reason():
    t = plan("// RUN: %libomp-compile && env KMP_AFFINITY=compact %libomp-run\n",
             name="affinity/bug-nested.c")
    assert t.skip.startswith("KMP_* affinity:")


# ------------------------------------------------------------- judging

def test_judge_step_prefers_the_binary():
    exe = "/b/a.out"
    stages = [lib.Stage([exe]), lib.Stage([cl.FILECHECK, "x.c"])]
    assert cl.judge_step(stages, [0, 0], exe) is None
    assert cl.judge_step(stages, [-6, 1], exe) == "signal SIGABRT"
    assert cl.judge_step(stages, [0, 1], exe) == "FileCheck mismatch"
    assert cl.judge_step(stages, None, exe) == "timeout"
    stages = [lib.Stage([exe]), lib.Stage([sys.executable, "/t/check.py", "-c", "CHECK"])]
    assert cl.judge_step(stages, [0, 1], exe) == "check.py mismatch"


# ------------------------------------------------------------- real pipelines

ENV = {"PATH": "/usr/bin:/bin"}


def test_pipeline_statuses_and_captured_output(tmp_path):
    stages = [lib.Stage(["/bin/sh", "-c", "echo out; echo err >&2; exit 3"]),
              lib.Stage(["cat"])]
    statuses, out = lib.run_pipeline(stages, ENV, 10, str(tmp_path))
    assert statuses == [3, 0]
    assert sorted(out.split()) == ["err", "out"]


def test_pipeline_stderr_to_pipe_stdout_to_null(tmp_path):
    stages = [lib.Stage(["/bin/sh", "-c", "echo a; echo b >&2"], stdout="/dev/null",
                        stderr="pipe"),
              lib.Stage(["/bin/sh", "-c", "read x; echo got:$x"])]
    statuses, out = lib.run_pipeline(stages, ENV, 10, str(tmp_path))
    assert statuses == [0, 0] and out.strip() == "got:b"


def test_pipeline_signal_and_stage_env(tmp_path):
    stages = [lib.Stage(["/bin/sh", "-c", 'echo "$V"; kill -SEGV $$'], env={"V": "set"})]
    statuses, out = lib.run_pipeline(stages, ENV, 10, str(tmp_path))
    assert statuses == [-11] and out.strip() == "set"


def test_pipeline_timeout_kills_the_group(tmp_path):
    start = time.monotonic()
    stages = [lib.Stage(["/bin/sh", "-c", "sleep 30 & sleep 30"]), lib.Stage(["cat"])]
    statuses, _ = lib.run_pipeline(stages, ENV, 1, str(tmp_path))
    assert statuses is None
    assert time.monotonic() - start < 10
