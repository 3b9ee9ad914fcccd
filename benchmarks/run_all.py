"""Run every benchmark in this folder, one after another, and print their reports.

Usage: ``python benchmarks/run_all.py [--quick]``. Needs ``pip install -e '.[bench]'``.
Each benchmark prints medians and ratios against the peers it measures in the same run.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    extra = sys.argv[1:]
    failed = []
    for script in sorted(HERE.glob("bench_*.py")):
        print(f"\n===== {script.name}", flush=True)
        if subprocess.call([sys.executable, str(script), *extra]) != 0:
            failed.append(script.name)
    if failed:
        print("failed: " + ", ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
