"""Start-up of ``plan`` and ``sweep`` on their NumPy path, against a bare interpreter that imports NumPy (issue 36 item 5).

    python tests/benchmarks/bench_numeric_startup.py [--runs 7]

Medians of whole processes' CPU time (user + system, as the shared machines' load leaves it nearly unchanged; the
wall-clock median beside it), each after one untimed run that fills the bytecode cache: ``python -c "import numpy"``
(the baseline), ``python -c "import sympy"`` (what the commands loaded before), the README's ``plan`` stopped just
before its search (``--top 0``: every input read, the preset, the GPU, the planner and the generated module loaded,
then refused), a sweep spec stopped the same way (``top = 0``), and the README's ``plan`` in full. Target: the two
start-ups within 1.2× the baseline. Prints the ratios; no assertion (tests/test_numeric_without_sympy.py checks
that no SymPy is imported).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PYTHON = sys.executable
CLI = [PYTHON, "-m", "llm_formulas"]
README_PLAN = ["plan", "--model", "megatron-1t", "--gpu", "a100-80gb", "--gpus", "3072", "--global-batch", "3072", "--seq",
               "2048", "--top", "5"]
SPEC = 'models = ["llama2-7b", "llama2-13b"]\ngpus = ["a100-80gb", "h100-sxm"]\nsizes = [64, 256]\nglobal_batch = 512\nseq = 4096\n'
USER_ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
TARGET = 1.2


def median_seconds(command: list[str], runs: int, cwd: str) -> tuple[float, float]:
    """The median CPU and wall-clock seconds of ``runs`` timed runs, after one untimed run that fills the bytecode cache."""
    cpu, wall = [], []
    for _ in range(runs + 1):
        before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=USER_ENV, cwd=cwd)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall.append(time.perf_counter() - started)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(cpu[1:]), statistics.median(wall[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "spec.toml").write_text(SPEC + "top = 0\n", encoding="utf-8")
        commands = {
            "import numpy (baseline)": [PYTHON, "-c", "import numpy"],
            "import sympy": [PYTHON, "-c", "import sympy"],
            "plan start-up (--top 0)": CLI + README_PLAN[:-1] + ["0"],
            "sweep start-up (top = 0)": CLI + ["sweep", "spec.toml", "--out", "table.csv"],
            "plan (README, whole)": CLI + README_PLAN,
        }
        seconds = {name: median_seconds(command, runs, folder) for name, command in commands.items()}
    base_cpu, base_wall = seconds["import numpy (baseline)"]
    for name, (cpu, wall) in seconds.items():
        target = f"   target ≤ {TARGET}×" if "start-up" in name else ""
        print(f"{name:<26} CPU {cpu * 1000:7.1f} ms {cpu / base_cpu:5.2f}×   wall {wall * 1000:7.1f} ms "
              f"{wall / base_wall:5.2f}×{target}")


if __name__ == "__main__":
    main()
