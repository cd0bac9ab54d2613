"""The serving model against published measurements: its constants fitted on one source, the others predicted.

formulas/data/published/serving_measurements.json holds the rows (source, model, GPU, layout, batch, prompt and output
tokens, dtypes, what was measured and its value), each used or excluded with the reason. Each metric is the report's
(formulas/reports/serving_report.py) figure of the setup the source describes:

- TensorRT-LLM's Peak Throughput (``output_throughput_per_gpu``): a static batch, b·s_out tokens over the prefill and
  s_out − 1 steps, per GPU; its Low Latency ``first_token_latency`` at batch 1, read as the context phase and one
  generation step (the end to end of a two-token output);
- FasterTransformer's ``end_to_end_latency``: a static batch's prefill and s_out − 1 steps, stages in series;
- LMDeploy's ``per_token_latency_p50``: one decoding step at the batch and the mean context; its ``first_token_latency_min``:
  the prefill of one prompt; a row whose batch the model's memory cannot hold beside the weights at s_in + s_out tokens
  is excluded (the engine then ran fewer at once);
- gpt-fast's ``decode_throughput_per_user``: 200 tokens (generate.py's default) after a 5-token prompt over their time;
- NIM's ``itl_mean`` at a concurrency c: a step of continuous batching in steady state, c sequences at the mean
  context and c/s_out prompts' prefill FLOPs riding on it (``serving.batching.continuous.step``); its ``ttft_mean`` at
  c = 1: the prefill of one prompt.

``fit()`` refits the constants on the calibration source's rows (coordinate descent on the mean squared log error,
deterministic) and ``write()`` stores them with the residuals; ``predictions()`` prices every used row with the stored
constants: reported with their errors by ``llm-formulas validate`` and tests/benchmarks/bench_serving.py.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from statistics import median

import numpy as np

from llm_formulas.formulas.data.serving_calibration import CONSTANTS_FILE, NAMES, PUBLISHED, ServingConstants, constants

DATA = PUBLISHED / "serving_measurements.json"
SCALE = {"ms": 1000, "s": 1, "out tok/s/GPU": 1, "tokens/s": 1}
PREDICTED_METRICS = ("output_throughput_per_gpu", "first_token_latency", "end_to_end_latency", "per_token_latency_p50",
                   "first_token_latency_min", "ttft_mean", "itl_mean", "decode_throughput_per_user")  # the metrics predict() prices
PRECISIONS = ("16", "8")
FITTED = ("eta_pf:16", "eta_pf:8", "eta_dec:16", "eta_dec:8", "eta_hbm", "tau_L", "tau_ar")
BOUNDS = {"eta": (0.05, 1.0), "tau": (1e-7, 1e-3)}


@cache
def data() -> dict:
    return json.loads(DATA.read_text(encoding="utf-8"))


@cache
def model(key: str) -> tuple[tuple[str, int], ...]:
    """A measured model's architecture values (a preset, or the config the data file gives)."""
    from llm_formulas.formulas.reports.estimate import model_values
    from llm_formulas.formulas.data.hf_config import read_config
    from llm_formulas.formulas.data.presets import preset

    entry = data()["models"][key]
    architecture = preset(key).architecture if entry["config"] is None else read_config(entry["config"])
    return tuple(model_values(architecture.values).items())


@dataclass(frozen=True)
class Row:
    id: str
    source: str
    role: str
    model: str
    gpu: str
    tp: int
    pp: int
    batch: int
    input: int
    output: int
    weights: str
    kv: str
    metric: str
    value: float
    unit: str
    excluded: str = ""

    @property
    def setup(self) -> str:
        layout = f"TP{self.tp}" + (f"×PP{self.pp}" if self.pp > 1 else "")
        return f"{self.model} {self.gpu} {layout} b={self.batch} {self.input}/{self.output} {self.weights}"


def rows() -> list[Row]:
    fields = Row.__dataclass_fields__
    return [Row(**{name: entry.get(name, "") for name in fields if name in entry or name == "excluded"})
            for entry in data()["rows"]]


def _inputs(row: Row, fitted: dict[str, float]):
    from llm_formulas.formulas.data.gpus import gpu
    from llm_formulas.formulas.reports.serving_report import ServeInputs, compute_precision
    from llm_formulas.render.numeric.evaluator import _complete

    precision = "8" if compute_precision(row.weights) == "fp8" else "16"
    values = ServingConstants(*(fitted.get(f"{name}:{precision}", fitted.get(name)) for name in NAMES))
    group = 32 if row.source == "gpt-fast" else 128  # gpt-fast's int4 groups of 32 (its README, "G=32")
    return ServeInputs({k: float(v) for k, v in _complete(dict(model(row.model))).items()}, gpu(row.gpu), row.weights, row.kv,
                       constants=values, int4_group=group)


def _shape(row: Row) -> tuple[int, int, int]:
    """(batch, prompt, output) as the metric's setup runs them."""
    if row.metric == "first_token_latency":
        return 1, row.input, 2  # the context phase and one generation step
    if row.metric in ("first_token_latency_min", "ttft_mean"):
        return 1, row.input, 2
    return row.batch, row.input, row.output


def predict(selected: list[Row], fitted: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """Each row's predicted value in its own unit, and whether its batch fits (vectorised per model and GPU)."""
    from llm_formulas.formulas.reports.serving_report import report
    from llm_formulas.render.numeric.evaluator import NUMPY_OPS, numeric

    predicted, fits = np.zeros(len(selected)), np.ones(len(selected), dtype=bool)
    groups: dict[tuple, list[int]] = {}
    for i, row in enumerate(selected):
        groups.setdefault((row.model, row.gpu, row.weights, row.kv, row.source), []).append(i)
    for indices in groups.values():
        first = selected[indices[0]]
        inputs = _inputs(first, fitted)
        shape = np.array([(selected[i].tp, selected[i].pp, *_shape(selected[i])) for i in indices], dtype=np.float64)
        t, p, b, s_in, s_out = shape.T
        doc = report(t, p, 1, 1, b, s_in, s_out, inputs, numeric, NUMPY_OPS)
        single = report(t, p, 1, 1, np.ones_like(b), s_in, s_out, inputs, numeric, NUMPY_OPS)  # one request's prefill FLOPs
        continuous = numeric("serving.batching.continuous.step", T_tok=doc["decode_step"]["seconds"], b=b, F_pf=single["flops"]["prefill"],
                             s_out=s_out, t=t, X=float(inputs.gpu.flops(_precision(inputs.weights))), eta_pf=inputs.fitted.eta_pf)
        figure = {"output_throughput_per_gpu": doc["output_tokens_per_second_per_gpu"], "first_token_latency": doc["e2e_seconds"],
                  "end_to_end_latency": doc["e2e_seconds"], "per_token_latency_p50": doc["decode_step"]["seconds"],
                  "first_token_latency_min": doc["ttft_seconds"], "ttft_mean": doc["ttft_seconds"], "itl_mean": continuous,
                  "decode_throughput_per_user": s_out / doc["e2e_seconds"]}
        for position, i in enumerate(indices):
            row = selected[i]
            predicted[i] = np.broadcast_to(figure[row.metric], t.shape)[position] * SCALE[row.unit]
            fits[i] = bool(np.broadcast_to(doc["memory"]["fits"], t.shape)[position])
    return predicted, fits


def _precision(weights: str) -> str:
    from llm_formulas.formulas.reports.serving_report import compute_precision

    return compute_precision(weights)


def stored_constants() -> dict[str, float]:
    """The stored fit under the flat names of FITTED."""
    fitted = {f"{name}:{precision}": float(getattr(constants(precision), name)) for name in ("eta_pf", "eta_dec")
              for precision in PRECISIONS}
    return fitted | {name: float(getattr(constants("16"), name)) for name in ("eta_hbm", "tau_L", "tau_ar")}


def calibration_rows() -> list[Row]:
    return [row for row in rows() if row.role == "calibration" and not row.excluded]


def _loss(selected: list[Row], fitted: dict[str, float]) -> float:
    predicted, _ = predict(selected, fitted)
    measured = np.array([row.value for row in selected])
    return float(np.mean(np.log(predicted / measured) ** 2))


def fit(iterations: int = 6) -> dict[str, float]:
    """Coordinate descent from the stored constants: each constant scaled by factors shrinking from ×1.5 to ×1.01,
    kept where the mean squared log error falls; deterministic."""
    selected = calibration_rows()
    fitted = stored_constants()
    best = _loss(selected, fitted)
    for step in np.geomspace(1.5, 1.01, iterations):
        improved = True
        while improved:
            improved = False
            for name in FITTED:
                low, high = BOUNDS[name[:3]]
                for factor in (step, 1 / step):
                    trial = dict(fitted, **{name: min(max(fitted[name] * factor, low), high)})
                    loss = _loss(selected, trial)
                    if loss < best - 1e-12:
                        fitted, best, improved = trial, loss, True
    return fitted


def write(fitted: dict[str, float]) -> None:
    """Store the constants (6 significant digits) and the fit's residuals."""
    rounded = {name: float(f"{value:.6g}") for name, value in fitted.items()}
    selected = calibration_rows()
    predicted, _ = predict(selected, rounded)
    errors = [p / row.value - 1 for p, row in zip(predicted, selected)]
    doc = {
        "source": "trtllm-0.8",
        "constants": {"shared": {name: f"{rounded[name]:.6g}" for name in ("eta_hbm", "tau_L", "tau_ar")},
                      **{precision: {name: f"{rounded[f'{name}:{precision}']:.6g}" for name in ("eta_pf", "eta_dec")}
                         for precision in PRECISIONS}},
        "fit": {"rows": len(selected), "loss": "mean squared log error", "rms_log_error": round(math.sqrt(_loss(selected, rounded)), 4),
                "median_error": round(median(abs(x) for x in errors), 4), "max_error": round(max(abs(x) for x in errors), 4),
                "command": "python -m llm_formulas.render.numeric.serving_calibrate"},
    }
    CONSTANTS_FILE.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    from llm_formulas.formulas.data import serving_calibration

    serving_calibration._stored.cache_clear()


def predictions() -> dict[str, list[dict]]:
    """Every used row priced with the stored constants, by source: setup, measured, predicted, error."""
    fitted = stored_constants()
    used = [row for row in rows() if not row.excluded]
    predicted, fits = predict(used, fitted)
    out: dict[str, list[dict]] = {}
    for row, value, fit_ in zip(used, predicted, fits):
        entry = {"id": row.id, "source": row.source, "role": row.role, "setup": row.setup, "metric": row.metric,
                 "unit": row.unit, "published": row.value, "predicted": float(value), "error": float(value / row.value - 1)}
        if row.source == "lmdeploy-0.1" and not fit_:
            entry["excluded"] = "the model's memory cannot hold this batch's cache at s_in + s_out beside the weights: the engine ran fewer at once"
        out.setdefault(row.source, []).append(entry)
    return out


def _figures(errors: list[float]) -> dict:
    return {"rows": len(errors), "median_error": median(errors) if errors else 0.0, "max_error": max(errors) if errors else 0.0}


def summary(groups: dict[str, list[dict]] | None = None) -> dict[str, dict]:
    """Per source: its role, rows predicted, median and largest |error|, and the same per metric."""
    groups = predictions() if groups is None else groups
    table = {}
    for source, entries in groups.items():
        kept = [e for e in entries if "excluded" not in e]
        metrics = {metric: _figures([abs(e["error"]) for e in kept if e["metric"] == metric])
                   for metric in dict.fromkeys(e["metric"] for e in kept)}
        table[source] = {"role": entries[0]["role"], **_figures([abs(e["error"]) for e in kept]), "metrics": metrics,
                         "excluded": len(entries) - len(kept)}
    return table


def excluded() -> dict[str, int]:
    """The data file's excluded rows, counted by reason."""
    counts: dict[str, int] = {}
    for row in rows():
        if row.excluded:
            reason = f"{row.source}: {row.excluded}"
            counts[reason] = counts.get(reason, 0) + 1
    return counts


if __name__ == "__main__":
    fitted = fit()
    write(fitted)
    print(json.dumps(json.loads(CONSTANTS_FILE.read_text(encoding="utf-8")), indent=1))
    for source, figures in summary().items():
        print(f"{source:18} {figures['role']:12} rows {figures['rows']:4}  median {figures['median_error']:.1%}  "
              f"max {figures['max_error']:.1%}  (excluded by memory: {figures['excluded']})")
        for metric, by_metric in figures["metrics"].items():
            print(f"    {metric:28} rows {by_metric['rows']:4}  median {by_metric['median_error']:.1%}  max {by_metric['max_error']:.1%}")
