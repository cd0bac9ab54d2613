"""``llm-formulas check`` as a user runs it, cold and warm (issue 36, item 2).

    python tests/benchmarks/bench_check.py

Whole processes, in a fresh cache directory (``XDG_CACHE_HOME``): the whole catalogue with no kept proofs (cold),
the same again (warm: every proof kept), ``check params.decoder.total`` warm, and ``check --no-cache`` (every step
proved, identical steps once within the run). Targets on two cores: cold ≤ 30 s, warm ≤ 5 s, one formula ≤ 2 s.
Prints the times and their ratios to ``import sympy``; exits 1 if a target is missed. On a machine shared with other
work the times grow with the load: compare the ratios.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

PYTHON = sys.executable
CLI = [PYTHON, "-m", "llm_formulas", "check"]
RUNS = {  # name: (arguments, target in seconds)
    "whole catalogue, cold": ([], 30.0),
    "whole catalogue, warm": ([], 5.0),
    "check params.decoder.total, warm": (["params.decoder.total"], 2.0),
    "whole catalogue, --no-cache": (["--no-cache"], 30.0),
}


def seconds(command: list[str], environment: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, env=environment, check=True, stdout=subprocess.DEVNULL, timeout=3600)
    return time.perf_counter() - start


def main() -> int:
    with tempfile.TemporaryDirectory() as cache:
        environment = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
        environment["XDG_CACHE_HOME"] = cache
        sympy = seconds([PYTHON, "-c", "import sympy"], environment)
        print(f"{'import sympy':<36} {sympy:7.2f} s")
        missed = 0
        for name, (arguments, target) in RUNS.items():
            taken = seconds(CLI + arguments, environment)
            verdict = "ok" if taken <= target else "MISSED"
            missed += taken > target
            print(f"{name:<36} {taken:7.2f} s  {taken / sympy:6.1f}× import sympy  target {target:g} s  {verdict}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
