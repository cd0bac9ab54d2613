"""Calibrate the A100's performance constants on Megatron-LM 2021 Table 1, then validate without refitting.

    python -m render.numeric.calibrate            # refit, print the errors, rewrite formulas/published/a100_constants.json
    python -m render.numeric.calibrate --check    # the stored constants: Table 1 and the validation runs, no refit

The fit: a grid over (η_gemm, η_mem, τ_k, η_link), each point evaluated on all ten Table 1 rows at
once (the constants are arrays through the generated NumPy code), minimising the sum of
squared log errors of the per-GPU TFLOP/s; then two finer grids around the best point.
Validation runs (formulas/published/validation_runs.json) are predicted with the stored
constants only.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import sympy as sp

from formulas.calibration import PUBLISHED, Efficiency, a100, table1, validation_runs
from formulas.estimate import Inputs, Layout, estimate, model_values
from formulas.gpus import NODE_SIZE, gpu
from formulas.hf_config import read_config
from formulas.presets import preset
from render.numeric.evaluator import NUMPY_OPS, numeric, numeric_inputs

GRID = {"eta_gemm": (0.5, 1.0), "eta_mem": (0.2, 1.0), "tau_k": (0.0, 6e-5), "eta_link": (0.3, 1.0)}


@dataclass(frozen=True)
class Run:
    """One published measurement: the layout, its inputs and the figure the publication prints."""

    name: str
    source: str
    model: dict[str, int]
    layout: Layout
    gpu_key: str
    network: float
    figure: str  # "megatron_tflops" or "mfu"
    published: float
    flash: bool = False


def gpt(a: int, h: int, l: int, s: int = 2048, V: int = 51200) -> dict[str, int]:  # noqa: E741 - the paper's name
    """A Megatron GPT (GPT-2 architecture, learned positions, tied embeddings) by its sizes."""
    config = {"model_type": "gpt2", "n_embd": h, "n_head": a, "n_layer": l, "n_positions": s, "vocab_size": V,
              "tie_word_embeddings": True}
    return model_values(read_config(config).values)


def _layout(n: int, t: int, p: int, B: int, b: int, v: int, s: int, zero: int, recompute: str, sp_: bool) -> Layout:
    d = n // (t * p)
    return Layout(n=n, t=t, p=p, d=d, b=b, m=B // (b * d), s=s, v=v, zero=zero, recompute=recompute, sequence_parallel=sp_)


def calibration_runs() -> list[Run]:
    """Megatron-LM 2021 Table 1, one Run per row (b = 1, v = 1 assumed as the data file says)."""
    document = json.loads((PUBLISHED / "megatron2021_table1.json").read_text(encoding="utf-8"))
    common = document["common"]
    runs = []
    for params, a, h, l, t, p, n, B, tflops, _, _ in table1():  # noqa: E741
        runs.append(Run(f"Megatron-LM 2021 Table 1, {params}B", document["source"], gpt(a, h, l, common["s"], common["V"]),
                        _layout(n, t, p, B, 1, 1, common["s"], 0, common["recompute"], False), common["gpu"],
                        common["network_gb_per_second"] * 1e9, "megatron_tflops", tflops))
    return runs


def other_runs() -> list[Run]:
    runs = []
    for run in validation_runs():
        if "model" in run:
            model = model_values(preset(run["model"]).architecture.values)
        elif "config" in run:
            model = model_values(read_config(run["config"]).values)
        else:
            model = gpt(run["a"], run["h"], run["l"])
        runs.append(Run(run["name"], run["source"], model,
                        _layout(run["n"], run["t"], run["p"], run["B"], run["b"], run["v"], run.get("s", 2048), run["zero"],
                                run["recompute"], run["sequence_parallel"]),
                        run.get("gpu", "a100-80gb"), run["network_gb_per_second"] * 1e9, run["figure"], run["published"],
                        run.get("flash", False)))
    return runs


def predicted(run: Run, efficiency: Efficiency) -> np.ndarray:
    """The run's published figure as the model predicts it (arrays when the constants are arrays)."""
    inputs = Inputs(model=run.model, gpu=gpu(run.gpu_key).inputs(), network=run.network, tokens=None, utilization=None,
                    overlap=Fraction(1, 2), efficiency=efficiency, node_size=NODE_SIZE[run.gpu_key], flash=run.flash)
    report = estimate(run.layout, numeric_inputs(inputs), numeric, NUMPY_OPS)
    time = report["time"]
    if run.figure == "mfu":
        return np.asarray(time["mfu"])
    model = numeric_inputs(inputs).model
    megatron = numeric("flops.megatron", B=run.layout.global_batch, s=run.layout.s, l=model["l"], h=model["h"], V=model["V"])
    return megatron / (run.layout.n * time["step_seconds"]) / 1e12


def errors(runs: list[Run], efficiency: Efficiency) -> np.ndarray:
    """Relative errors (predicted / published − 1), one row per run."""
    return np.stack([predicted(run, efficiency) / run.published - 1 for run in runs])


def _grid(bounds: dict[str, tuple[float, float]], points: int) -> dict[str, np.ndarray]:
    axes = [np.linspace(low, high, points) for low, high in bounds.values()]
    mesh = np.meshgrid(*axes, indexing="ij")
    return {name: column.ravel() for name, column in zip(bounds, mesh)}


def fit(points: int = 12, rounds: int = 3) -> Efficiency:
    """Least squares in log space over a grid, refined ``rounds`` times around the best point."""
    runs = calibration_runs()
    bounds = dict(GRID)
    best = None
    for _ in range(rounds):
        grid = _grid(bounds, points)
        trial = Efficiency(grid["eta_gemm"], grid["eta_mem"], grid["tau_k"], grid["eta_link"], "fit")
        loss = np.sum(np.log1p(errors(runs, trial)) ** 2, axis=0)
        index = int(np.argmin(loss))
        best = {name: float(grid[name][index]) for name in grid}
        bounds = {name: (max(GRID[name][0], best[name] - (high - low) / points),
                         min(GRID[name][1], best[name] + (high - low) / points)) for name, (low, high) in bounds.items()}
    return Efficiency(*(_rational(best[name]) for name in GRID), provenance="calibrated on Megatron-LM 2021 Table 1")


def _rational(value: float) -> sp.Rational:
    """Three significant digits, exactly (stored as that decimal)."""
    return sp.Rational(f"{value:.3g}")


def summary(runs: list[Run], efficiency: Efficiency) -> list[dict]:
    rows = []
    for run, error in zip(runs, errors(runs, efficiency)):
        value = float(predicted(run, efficiency))
        rows.append({"run": run.name, "source": run.source, "figure": run.figure, "published": run.published,
                     "predicted": round(value, 4), "error": round(float(error), 4)})
    return rows


def _print(title: str, rows: list[dict]) -> None:
    print(title)
    for row in rows:
        print(f"  {row['run']:<40} {row['figure']:<16} published {row['published']:<8} predicted {row['predicted']:<9.4g} "
              f"error {row['error']:+.1%}")
    errors_ = np.abs([row["error"] for row in rows])
    print(f"  median |error| {np.median(errors_):.1%}, max {errors_.max():.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="use the stored constants, do not refit")
    args = parser.parse_args()
    efficiency = a100() if args.check else fit()
    print("constants:", {name: float(getattr(efficiency, name)) for name in GRID})
    table = summary(calibration_runs(), efficiency)
    others = summary(other_runs(), efficiency)
    _print("calibration: Megatron-LM 2021 Table 1", table)
    _print("validation (not fitted)", others)
    if not args.check:
        document = {"source": "fitted by render/numeric/calibrate.py on formulas/published/megatron2021_table1.json only",
                    "constants": {name: f"{float(getattr(efficiency, name)):.3g}" for name in GRID},
                    "calibration_errors": table}
        (PUBLISHED / "a100_constants.json").write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
