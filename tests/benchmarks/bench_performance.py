"""The performance model against published runs: ``python tests/benchmarks/bench_performance.py [--refit]``.

1. Calibration: Megatron-LM 2021 Table 1 (Narayanan et al. 2021), the ten per-GPU TFLOP/s the A100's
   constants are fitted on (``--refit`` refits them first; by default the stored constants).
2. Validation, never fitted: Korthikanti et al. 2022 (MFU of 22B-1T with selective recompute and sequence
   parallelism, the full-recompute iteration times of Table 5, 530B at 8-way DP, the 22B layer of Table 4),
   Smith et al. 2022 (MT-NLG 530B on 2240-3360 GPUs), BigScience 2022 and its tr11 logs (BLOOM-176B), each in
   its framework (formulas/data/frameworks.py).
Each row: the run, its source, what the figure counts, published, predicted, error; then the median and
maximum |error| of each group against issue 16's targets (Table 1: ≤ 5 % / ≤ 10 %; others: ≤ 10 % / ≤ 20 %).

Outside the default test run (pyproject's addopts ignores tests/benchmarks); tests/test_performance.py asserts
the same errors.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from llm_formulas.formulas.data.calibration import a100  # noqa: E402
from llm_formulas.render.numeric.calibrate import calibration_runs, fit, layer_summary, other_runs, summary  # noqa: E402

TARGETS = {"calibration": (0.05, 0.10), "validation": (0.10, 0.20)}


def report(title: str, rows: list[dict], targets: tuple[float, float]) -> None:
    print(f"\n{title}")
    for row in rows:
        print(f"  {row['run']:<36} {row['figure']:<16} {row['framework']:<22} published {row['published']:>7}  "
              f"predicted {row['predicted']:>9.4g}  error {row['error']:+6.1%}   {row['source'][:90]}")
    error = np.abs([row["error"] for row in rows])
    median, worst = float(np.median(error)), float(error.max())
    print(f"  median |error| {median:.1%} (target ≤ {targets[0]:.0%}: {'met' if median <= targets[0] else 'NOT met'}), "
          f"max {worst:.1%} (target ≤ {targets[1]:.0%}: {'met' if worst <= targets[1] else 'NOT met'})")


def main() -> None:
    started = time.perf_counter()
    constants = fit() if "--refit" in sys.argv else a100()
    fitted = time.perf_counter() - started
    print("A100 constants:", {name: float(getattr(constants, name)) for name in ("eta_gemm", "eta_mem", "tau_k", "eta_link")},
          f"({'refitted in' if '--refit' in sys.argv else 'stored; loaded in'} {fitted:.2f} s)")
    report("calibration: Megatron-LM 2021 Table 1", summary(calibration_runs(), constants), TARGETS["calibration"])
    report("validation (not fitted)", summary(other_runs(), constants), TARGETS["validation"])
    report("validation, one 22B layer (Korthikanti et al. 2022 Table 4)", layer_summary(constants), TARGETS["validation"])
    print(f"\n{time.perf_counter() - started:.2f} s in all")


if __name__ == "__main__":
    main()
