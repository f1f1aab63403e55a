#!/usr/bin/env python3
"""Run herd's benchmarks and print the tables: the entry point of
./scripts/bench. The harness itself is the herd_bench package beside this
file; see `python3 tools/bench_table.py --help` and herd_bench/cli.py."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from herd_bench.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
