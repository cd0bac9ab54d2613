"""``serve`` at the bounds of its inputs (issue 37, item 10): ``python tests/benchmarks/bench_serve_bounds.py``.

Each case runs ``llm-formulas serve`` in process, the largest batch (formulas/vocabulary/bounds.py's MAX_SEQUENCES) and the
longest prompt or output (MAX_TOKENS) on MoE models, whose experts touched, E(1 − (1 − k/E)^(b·s_in)), once took
minutes as an exact power; prints each case's seconds and its ratio to the 5 s target. Outside the default test run.
"""

from __future__ import annotations

import contextlib
import io
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from llm_formulas.formulas.vocabulary.bounds import MAX_SEQUENCES, MAX_TOKENS  # noqa: E402
from llm_formulas.render.cli.main import main  # noqa: E402

TARGET_SECONDS = 5
CASES = [
    ("deepseek-v3", "8", "64", "8192", "2"),  # the case
    ("deepseek-v3", "8", str(MAX_SEQUENCES), str(MAX_TOKENS), "2"),
    ("deepseek-v3", "8", str(MAX_SEQUENCES), "1", str(MAX_TOKENS)),
    ("mixtral-8x7b", "8", str(MAX_SEQUENCES), str(MAX_TOKENS), str(MAX_TOKENS)),
    ("mixtral-8x7b", "1", "64", "4000", "2"),
    ("llama2-70b", "8", str(MAX_SEQUENCES), "2048", "2048"),  # its 4096-token window
]


def main_bench() -> None:
    worst = 0.0
    for model, tp, batch, prompt, output in CASES:
        argv = ["serve", "--model", model, "--gpu", "h200", "--tp", tp, "--batch", batch, "--input", prompt,
                "--output", output, "--json"]
        started = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = main(argv)
        seconds = time.perf_counter() - started
        worst = max(worst, seconds)
        print(f"{model:14} TP {tp} batch {batch:>10} × {prompt:>10} + {output:>10}: exit {code}, {seconds:6.2f} s "
              f"({seconds / TARGET_SECONDS:.2f} of {TARGET_SECONDS} s)")
    print(f"slowest {worst:.2f} s: {worst / TARGET_SECONDS:.2f} of the {TARGET_SECONDS} s target")


if __name__ == "__main__":
    main_bench()
