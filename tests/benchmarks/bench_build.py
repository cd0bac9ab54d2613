"""The whole build, notebook execution excluded, as one process, beside ``import sympy`` timed in the same session (issue 6).

    python tests/benchmarks/bench_build.py [--runs 3] [--lessons]

Target (issue 6): under 60 s on a 2-core machine. The suite builds once per run while other tests share the cores, so
its build's clock measures the load, not the build: the target is checked here, on a machine left to the build.
Prints the median wall time, the CPU time of the build and its children, and the ratio to importing SymPy, then the
seconds of each stage of the last run (the lines a piped build prints); ``--lessons`` also times executing every
lesson (``build --only notebooks``: two kernels at a time; 70 s alone on 2 cores, 289 s under the suite's load);
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


def build_seconds(runs: int, *options: str) -> tuple[float, float, list[str]]:
    """Median wall seconds, median CPU seconds (user + system of the build process and what it ran) and the last run's
    line per stage."""
    walls, cpus = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as out:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            run = subprocess.run(CLI + ["build", "--out", out, *options], stdout=subprocess.PIPE, text=True, check=True,
                                 env=USER_ENV)
            walls.append(time.perf_counter() - started)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    stages = [line for line in run.stdout.splitlines() if line.endswith(" s") and ": " in line and " files to " not in line]
    return statistics.median(walls), statistics.median(cpus), stages


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--lessons", action="store_true", help="also time executing every lesson")
    arguments = parser.parse_args()
    sympy = median_seconds(BASELINES["import sympy"], 5)
    wall, cpu, stages = build_seconds(arguments.runs, "--no-execute")
    verdict = "ok" if wall < TARGET_SECONDS else "MISSED"
    print(f"import sympy  {sympy:6.2f} s")
    print(f"build         {wall:6.1f} s wall ({wall / sympy:.1f}× import sympy), {cpu:.1f} s CPU  target < {TARGET_SECONDS} s  {verdict}")
    for line in stages:
        print(f"  {line}")
    if arguments.lessons:
        lessons, _, _ = build_seconds(1, "--only", "notebooks")
        print(f"lessons run   {lessons:6.1f} s wall ({lessons / sympy:.1f}× import sympy)")
    return 0 if verdict == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
