"""Calibrate the A100's performance constants on Megatron-LM 2021 Table 1, then validate without refitting.

    python -m llm_formulas.render.numeric.calibrate            # refit, print the errors, rewrite formulas/data/published/a100_constants.json
    python -m llm_formulas.render.numeric.calibrate --check    # the stored constants: Table 1 and the validation runs, no refit

The fit: a grid over (η_gemm, η_mem, τ_k, η_link), each point evaluated on all ten Table 1 rows at
once (the constants are arrays through the generated NumPy code), minimising the sum of
squared log errors of the per-GPU TFLOP/s; then two finer grids around the best point.
Each Table 1 row is predicted as the authors' script ran it (formulas/data/published/
megatron2021_table1.json: its micro-batch b, its interleaving degree v, and its DDP, which
picks the framework megatron-lm-2021 or megatron-lm-2021-torch). Validation runs (formulas/data/published/validation_runs.json) are predicted
with the stored constants only, each in its own framework; so are the per-layer times of
Korthikanti et al. 2022 Table 4.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np
import sympy as sp

from llm_formulas.formulas.data.calibration import PUBLISHED, Efficiency, a100, layer_timings, table1, validation_runs
from llm_formulas.formulas.reports.estimate import RECOMPUTE_MODES, Inputs, Layout, estimate, model_values
from llm_formulas.formulas.data.frameworks import Framework, framework
from llm_formulas.formulas.data.gpus import NODE_SIZE, gpu
from llm_formulas.formulas.data.hf_config import read_config
from llm_formulas.formulas.data.layouts import balanced_stages
from llm_formulas.formulas.reports.prediction import model_values as perf_values
from llm_formulas.formulas.data.presets import preset
from llm_formulas.render.numeric.evaluator import NUMPY_OPS, numeric, numeric_inputs

GRID = {"eta_gemm": (0.5, 1.0), "eta_mem": (0.2, 1.0), "tau_k": (0.0, 6e-5), "eta_link": (0.3, 1.0)}
FIGURES = ("megatron_tflops", "mfu", "step_seconds")


@dataclass(frozen=True)
class Run:
    """One published measurement: its layout as published, its inputs and the figure the publication prints."""

    name: str
    source: str
    model: dict[str, int]
    layout: Layout
    gpu_key: str
    network: float
    figure: str  # one of FIGURES
    published: float
    framework: Framework
    flash: bool = False
    note: str = ""  # why the model misses, where the data file says


def gpt(a: int, h: int, l: int, s: int = 2048, V: int = 51200) -> dict[str, int]:  # noqa: E741 - the paper's name
    """A Megatron GPT (GPT-2 architecture, learned positions, tied embeddings) by its sizes."""
    config = {"model_type": "gpt2", "n_embd": h, "n_head": a, "n_layer": l, "n_positions": s, "vocab_size": V,
              "tie_word_embeddings": True}
    return model_values(read_config(config).values)


def _layout(n: int, t: int, p: int, B: int, b: int, v: int, s: int, zero: int, recompute: str, sp_: bool) -> Layout:
    d = n // (t * p)
    return Layout(n=n, t=t, p=p, d=d, b=b, m=B // (b * d), s=s, v=v, zero=zero, recompute=recompute, sequence_parallel=sp_)


DDP_FRAMEWORK = {"local": "megatron-lm-2021", "torch": "megatron-lm-2021-torch"}  # --DDP-impl → formulas/data/frameworks.py


def calibration_runs() -> list[Run]:
    """Megatron-LM 2021 Table 1, one Run per row, as the authors' script ran it (b, v and DDP per row)."""
    document = json.loads((PUBLISHED / "megatron2021_table1.json").read_text(encoding="utf-8"))
    common = document["common"]
    runs = []
    for params, a, h, l, t, p, n, B, tflops, _, _, b, v, ddp in table1():  # noqa: E741
        model = gpt(a, h, l, common["s"], common["V"])
        layout = _layout(n, t, p, B, b, v, common["s"], common["zero"], common["recompute"], common["sequence_parallel"])
        runs.append(Run(f"Megatron-LM 2021 Table 1, {params}B", document["source"], model, layout, common["gpu"],
                        common["network_gb_per_second"] * 1e9, "megatron_tflops", tflops, framework(DDP_FRAMEWORK[ddp]),
                        common["flash"]))
    return runs


def _model(run: dict) -> dict[str, int]:
    if "model" in run:
        return model_values(preset(run["model"]).architecture.values)
    if "config" in run:
        return model_values(read_config(run["config"]).values)
    return gpt(run["a"], run["h"], run["l"])


PARTITIONS = {"type:transformer|embedding"}  # Megatron-DeepSpeed's --pp-partition-method (formulas/data/layouts.py)


def other_runs() -> list[Run]:
    """The validation runs, each at its published layout (and stage partition) and in its framework."""
    runs = []
    for run in validation_runs():
        model = _model(run)
        layout = _layout(run["n"], run["t"], run["p"], run["B"], run["b"], run["v"], run.get("s", 2048), run["zero"],
                         run["recompute"], run["sequence_parallel"])
        if "stages" in run:  # the blocks and the two embeddings split as items, each embedding on an end stage
            assert run["stages"] in PARTITIONS, run["stages"]
            layout = replace(layout, stages=balanced_stages(model["l"], run["p"]), embedding_stages=(0, run["p"] - 1))
        runs.append(Run(run["name"], run["source"], model, layout, run.get("gpu", "a100-80gb"),
                        run["network_gb_per_second"] * 1e9, run["figure"], run["published"], framework(run["framework"]),
                        run.get("flash", False), run.get("note", "")))
    return runs


def inputs_of(run: Run, efficiency: Efficiency) -> Inputs:
    """The estimate's inputs for a run: its model, GPU, network, attention kernel and framework, with these constants."""
    return numeric_inputs(Inputs(model=run.model, gpu=gpu(run.gpu_key).inputs(), network=run.network, tokens=None,
                                 utilization=None, overlap=Fraction(1, 2), efficiency=efficiency,
                                 node_size=NODE_SIZE[run.gpu_key], flash=run.flash, framework=run.framework))


def predicted(run: Run, efficiency: Efficiency) -> np.ndarray:
    """The run's published figure as the model predicts it (an array when the constants are arrays)."""
    inputs = inputs_of(run, efficiency)
    layout = run.layout
    time = estimate(layout, inputs, numeric, NUMPY_OPS)["time"]
    step = np.asarray(time["step_seconds"])
    if run.figure == "mfu":
        return np.asarray(time["mfu"])
    if run.figure == "step_seconds":
        return step
    model = inputs.model
    megatron = numeric("flops.megatron", B=layout.global_batch, s=layout.s, l=model["l"], h=model["h"], V=model["V"])
    return megatron / (layout.n * step) / 1e12


def errors(runs: list[Run], efficiency: Efficiency) -> np.ndarray:
    """Relative errors (predicted / published − 1), one row per run."""
    return np.stack([predicted(run, efficiency) / run.published - 1 for run in runs])


@dataclass(frozen=True)
class LayerRun:
    """One row of Korthikanti et al. 2022 Table 4: a transformer layer's forward + backward time, in milliseconds."""

    name: str
    source: str
    model: dict[str, int]
    layout: Layout
    framework: Framework
    published: float
    forward_ms: float
    backward_ms: float


def layer_runs() -> list[LayerRun]:
    shape, rows = layer_timings()
    model = gpt(shape["a"], shape["h"], shape["l"], shape["s"])
    return [LayerRun(row["name"], shape["source"], model,
                     Layout(n=shape["t"], t=shape["t"], p=1, d=1, b=shape["b"], m=1, s=shape["s"], recompute=row["recompute"],
                            sequence_parallel=row["sequence_parallel"]),
                     framework(shape["framework"]), row["published"], row["forward_ms"], row["backward_ms"]) for row in rows]


def layer_times(run: LayerRun, efficiency: Efficiency) -> tuple[float, float]:
    """The model's forward and backward time of one layer, in milliseconds (perf.layer.forward and perf.layer.backward)."""
    lay = run.layout
    a100_80 = {name: float(value) for name, value in gpu("a100-80gb").inputs().items()}
    base = {name: float(value) for name, value in run.model.items()} | a100_80 | {"s": lay.s, "t": lay.t, "p": lay.p, "v": lay.v}
    numbers = {"t": lay.t, "p": lay.p, "d": lay.d, "b": lay.b}
    settings = {"recompute": RECOMPUTE_MODES.index(lay.recompute), "sequence_parallel": lay.sequence_parallel, "zero": 0}
    values = perf_values(base, numbers, settings, efficiency, 25e9, NODE_SIZE["a100-80gb"], False, NUMPY_OPS, run.framework)
    forward, backward = (float(numeric(f"perf.layer.{kind}", **values)) * 1e3 for kind in ("forward", "backward"))
    return forward, backward


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
        row = {"run": run.name, "source": run.source, "figure": run.figure, "framework": run.framework.key,
               "published": run.published, "predicted": round(value, 4), "error": round(float(error), 4)}
        if run.note:
            row["note"] = run.note
        rows.append(row)
    return rows


def layer_summary(efficiency: Efficiency) -> list[dict]:
    rows = []
    for run in layer_runs():
        forward, backward = layer_times(run, efficiency)
        total = forward + backward
        rows.append({"run": run.name, "source": run.source, "figure": "layer_ms", "framework": run.framework.key,
                     "published": run.published, "predicted": round(total, 4), "error": round(total / run.published - 1, 4),
                     "forward": [run.forward_ms, round(forward, 3)], "backward": [run.backward_ms, round(backward, 3)]})
    return rows


def _print(title: str, rows: list[dict]) -> None:
    print(title)
    for row in rows:
        print(f"  {row['run']:<40} {row['figure']:<16} {row['framework']:<22} published {row['published']:<8} "
              f"predicted {row['predicted']:<9.4g} error {row['error']:+.1%}")
    errors_ = np.abs([row["error"] for row in rows])
    print(f"  median |error| {np.median(errors_):.1%}, max {errors_.max():.1%}")


def predictions(efficiency: Efficiency | None = None) -> dict[str, list[dict]]:
    """The model's figures beside the published ones: Table 1 (fitted), the other runs and Table 4's layers (not)."""
    efficiency = efficiency or a100()
    return {"calibration": summary(calibration_runs(), efficiency), "validation": summary(other_runs(), efficiency),
            "layers": layer_summary(efficiency)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="use the stored constants, do not refit")
    args = parser.parse_args()
    efficiency = a100() if args.check else fit()
    print("constants:", {name: float(getattr(efficiency, name)) for name in GRID})
    table = summary(calibration_runs(), efficiency)
    others = summary(other_runs(), efficiency)
    _print("calibration: Megatron-LM 2021 Table 1, as the authors' script ran it", table)
    _print("validation (not fitted)", others)
    _print("validation, one 22B layer (Korthikanti et al. 2022 Table 4, milliseconds)", layer_summary(efficiency))
    if not args.check:
        document = {"source": "fitted by render/numeric/calibrate.py on formulas/data/published/megatron2021_table1.json only",
                    "constants": {name: f"{float(getattr(efficiency, name)):.3g}" for name in GRID},
                    "calibration_errors": table}
        (PUBLISHED / "a100_constants.json").write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
