"""herd_bench.multiprog: scenario scaling and one run against fake programs."""
import sys
from pathlib import Path

from herd_bench import multiprog


def test_scaling_two_and_sixteen_pus():
    two = multiprog.scenarios(Path("/b"), 2)
    assert [q.workers for q in two["1"][0][1]] == [1, 1, 1]
    assert [q.workers for q in two["2"][0][1]] == [1, 1, 2, 2]
    assert [label for label, _ in two["3"]] == ["width 2", "width 1"]
    sixteen = multiprog.scenarios(Path("/b"), 16)
    assert [q.workers for q in sixteen["1"][0][1]] == [8, 8, 8]
    assert [q.workers for q in sixteen["2"][0][1]] == [4, 8, 16, 16]
    assert len(sixteen["3"][0][1]) == 10
    assert [q.arrival for q in two["1"][0][1]] == [0.0, 1.0, 3.0]


def test_run_once_turnaround_and_failure(tmp_path):
    ok = multiprog.Program("ok", [sys.executable, "-c",
                                  "import os,time; assert os.environ['HERD_BIND']=='xll'; "
                                  "time.sleep(0.2); print('{\"verified\": true}')"], 0.0, 1)
    bad = multiprog.Program("bad", [sys.executable, "-c", "print('{\"verified\": false}')"],
                            0.1, 1)
    res = multiprog.run_once([ok, bad], "xll", str(tmp_path / "reg"), 30)
    assert res[0].rc == 0 and res[0].verified and res[0].turnaround >= 0.2  # it slept 0.2 s
    assert res[1].rc == 0 and not res[1].verified
