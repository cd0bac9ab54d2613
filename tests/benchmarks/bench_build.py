"""The whole build, notebook execution excluded, as one process, beside ``import sympy`` timed in the same session (issue 6).

    python tests/benchmarks/bench_build.py [--runs 3]

Target (issue 6): under 60 s on a 2-core machine. The suite builds once per run while other tests share the cores, so
its build's clock measures the load, not the build: the target is checked here, on a machine left to the build.
Prints the median wall time, the CPU time of the build and its children, and the ratio to importing SymPy;
exits 1 if the target is missed. Processes run with Python's bytecode cache, as in bench_startup.py.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from bench_startup import BASELINES, CLI, USER_ENV, median_seconds

TARGET_SECONDS = 60


def build_seconds(runs: int) -> tuple[float, float]:
    """Median wall seconds and median CPU seconds (user + system of the build process and what it ran)."""
    walls, cpus = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as out:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            subprocess.run(CLI + ["build", "--out", out, "--no-execute"], stdout=subprocess.DEVNULL, check=True, env=USER_ENV)
            walls.append(time.perf_counter() - started)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    sympy = median_seconds(BASELINES["import sympy"], 5)
    wall, cpu = build_seconds(runs)
    verdict = "ok" if wall < TARGET_SECONDS else "MISSED"
    print(f"import sympy  {sympy:6.2f} s")
    print(f"build         {wall:6.1f} s wall ({wall / sympy:.1f}× import sympy), {cpu:.1f} s CPU  target < {TARGET_SECONDS} s  {verdict}")
    return 0 if verdict == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
