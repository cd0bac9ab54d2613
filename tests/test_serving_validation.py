"""The serving model against published serving measurements (formulas/data/published/serving_measurements.json).

The constants are fitted on one source only, the TensorRT-LLM 0.8.0 tables; the others are predictions. The targets
(issue 24): median |error| ≤ 15 % and none above 35 % on at least three other sources. Met by gpt-fast (batch-1
decoding, TP 1-8), NVIDIA NIM 1.8 (ITL at concurrency 1-50 and TTFT) and LMDeploy's decoding steps; LMDeploy's
prefills and FasterTransformer are reported by ``validate`` with their errors and miss the targets (asserted below, so
that a change that fixes or worsens them is seen).
"""

import json
import math

import pytest
from helpers import run

from llm_formulas.formulas.data.serving_calibration import stored
from llm_formulas.render.numeric import serving_calibrate as calibration


@pytest.fixture(scope="module")
def priced():
    groups = calibration.predictions()
    return groups, calibration.summary(groups)


@pytest.mark.parametrize("source, metrics", [
    ("gpt-fast", ("decode_throughput_per_user",)),
    ("nim-1.8", ("itl_mean", "ttft_mean")),
    ("lmdeploy-0.1", ("per_token_latency_p50",)),
])
def test_three_sources_are_predicted_within_the_targets(priced, source, metrics):
    _, table = priced
    assert table[source]["role"] == "validation"
    errors = [error for metric in metrics for error in [table[source]["metrics"][metric]]]
    rows = sum(figures["rows"] for figures in errors)
    assert rows >= 5
    for figures in errors:
        assert figures["median_error"] <= 0.15 and figures["max_error"] <= 0.35, (source, figures)


def test_the_misses_are_reported_as_misses(priced):
    _, table = priced
    assert table["fastertransformer"]["median_error"] > 0.15  # 2021-22 kernels, top-p sampling: slower fixed costs
    assert table["lmdeploy-0.1"]["metrics"]["first_token_latency_min"]["max_error"] > 0.35  # TurboMind v0.1's prefill


def test_the_stored_fit_is_the_calibration_sources_residual():
    fit = stored()["fit"]
    rows = calibration.calibration_rows()
    assert fit["rows"] == len(rows) and all(row.source == "trtllm-0.8" for row in rows)
    assert math.sqrt(calibration._loss(rows, calibration.stored_constants())) == pytest.approx(fit["rms_log_error"], abs=1e-4)


def test_every_row_is_used_or_excluded_with_a_reason():
    data = calibration.data()
    for row in data["rows"]:
        assert row["source"] in data["sources"] and row["model"] in data["models"], row["id"]
        assert row.get("excluded") or (row["gpu"] and row["metric"] in calibration.PREDICTED_METRICS), row["id"]
    used = [row for row in data["rows"] if not row.get("excluded")]
    assert {row["source"] for row in used} == set(data["sources"])


def test_validate_prints_each_serving_row_with_its_error(capsys):
    code, out, _ = run(capsys, "validate", "--paper", "gpt-fast")
    assert code == 0
    lines = [line for line in out.splitlines() if "decode_throughput_per_user" in line and "error" in line]
    assert len(lines) == 8 and all("published" in line and "predicted" in line for line in lines)
    assert "serving, gpt-fast" in out and "median error" in out
    code, out, _ = run(capsys, "validate", "--paper", "nim-1.8", "--json")
    doc = json.loads(out)
    assert code == 0 and len(doc["serving"]["nim-1.8"]) == 7
