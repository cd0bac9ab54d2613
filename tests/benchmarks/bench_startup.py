"""Start-up of the command line, as whole processes, against baselines run in the same session (issue 15).

    python tests/benchmarks/bench_startup.py [--runs 7]

Medians of several runs of: the bare interpreter, ``python -c "import sympy"``, and
``llm-formulas --help``, an argument error, ``eval``, ``show`` and the README's ``plan``.
Targets: ``--help`` within 6× the bare interpreter; ``eval``, ``show`` and ``plan``
within 2× importing SymPy. Prints the ratios; exits 1 if a target is missed.

Every process runs as a user's would: with Python's bytecode cache, after one untimed warm-up
run that fills it. An environment that sets PYTHONDONTWRITEBYTECODE (as these sandboxes do)
would otherwise time the compilation of the 570 kB generated module at every start.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

PYTHON = sys.executable
CLI = [PYTHON, "-m", "llm_formulas"]
BASELINES = {"bare interpreter": [PYTHON, "-c", "pass"], "import sympy": [PYTHON, "-c", "import sympy"]}
COMMANDS = {
    "--help": (CLI + ["--help"], "bare interpreter", 6),
    "argument error": (CLI + ["estimate", "--tp"], "bare interpreter", 6),
    "eval": (CLI + ["eval", "params.total", "l=12", "h=768", "V=50257", "s=1024"], "import sympy", 2),
    "show": (CLI + ["show", "params.total"], "import sympy", 2),
    "plan (README)": (CLI + ["plan", "--model", "megatron-1t", "--gpu", "a100-80gb", "--gpus", "3072", "--global-batch",
                             "3072", "--seq", "2048", "--top", "5"], "import sympy", 2),
}


USER_ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def median_seconds(command: list[str], runs: int) -> float:
    """The median of ``runs`` timed runs, after one untimed run that fills the bytecode cache."""
    times = []
    for _ in range(runs + 1):
        started = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=USER_ENV)
        times.append(time.perf_counter() - started)
    return statistics.median(times[1:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    base = {name: median_seconds(command, runs) for name, command in BASELINES.items()}
    for name, seconds in base.items():
        print(f"{name:<18} {seconds * 1000:8.1f} ms")
    missed = 0
    for name, (command, against, target) in COMMANDS.items():
        seconds = median_seconds(command, runs)
        ratio = seconds / base[against]
        verdict = "ok" if ratio <= target else "MISSED"
        missed += verdict != "ok"
        print(f"{name:<18} {seconds * 1000:8.1f} ms  {ratio:5.2f}× {against} (target ≤ {target}×)  {verdict}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
