"""How long `massgen --help` takes, beside a bare Python start, measured in one run.

Usage: python benchmarks/cli_startup.py [--runs N]
Prints the median wall time of each and their ratio. The target is `massgen --help` under 0.5 s.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time


def median_seconds(command: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, capture_output=True, check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    bare = median_seconds([sys.executable, "-c", "pass"], runs)
    help_time = median_seconds([sys.executable, "-m", "massgen_cli", "--help"], runs)
    print(f"python -c pass      : {bare * 1000:7.1f} ms (median of {runs})")
    print(f"massgen --help      : {help_time * 1000:7.1f} ms (median of {runs})")
    print(f"ratio help / python : {help_time / bare:7.2f}x")
    print(f"target < 500 ms     : {'met' if help_time < 0.5 else 'NOT met'}")


if __name__ == "__main__":
    main()
