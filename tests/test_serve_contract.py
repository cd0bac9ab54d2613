"""``serve``'s contract at its edges (issue 37, items 10, 11, 15, 16): it answers at any bound-respecting input, its
KV wall and its verdict agree, it refuses what is beyond the bounds or malformed with one line and exit 2, and
``sweep`` says which cases it dropped. Expected values are hand arithmetic or independent searches (cited beside each)."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from fractions import Fraction

import pytest
from helpers import cli_json, run
from llm_formulas.formulas.reports.estimate import model_values
from llm_formulas.formulas.data.gpus import NODE_SIZE, gpu
from llm_formulas.formulas.data.presets import preset
from llm_formulas.formulas.reports.serving_report import ServeInputs, experts_reached, report


@pytest.mark.parametrize("E, k, tokens", [(8, 2, 1), (8, 2, 7), (64, 6, 100), (256, 8, 1000), (160, 6, 4097),
                                          (256, 8, 37), (128, 1, 5000)])
def test_experts_reached_in_float_agrees_with_the_exact_power(E, k, tokens):
    # the exact value from Python's own Fractions, E(1 − (1 − k/E)^n), independent of SymPy and of the code under test
    exact = E * (1 - (1 - Fraction(k, E)) ** tokens)
    assert float(experts_reached(E, k, tokens)) == pytest.approx(float(exact), rel=1e-12)


def test_a_dense_models_one_expert_stays_exact():
    assert experts_reached(1, 1, 10**9) == 1 and experts_reached(1, 1, 10**9).is_Integer


def test_deepseek_v3_at_a_long_prefill_answers():
    # item 10: 64 × 8192 prompt tokens made (1 − 8/256)^524288 an exact Rational of megabits (no answer in 120 s);
    # run in a child so a regression is a hang guard's failure, not a hung suite
    argv = ["serve", "--model", "deepseek-v3", "--gpu", "h200", "--tp", "8", "--batch", "64", "--input", "8192",
            "--output", "2", "--json"]
    done = subprocess.run([sys.executable, "-m", "llm_formulas.render.cli.main", *argv], capture_output=True, text=True,
                          timeout=100)
    assert done.returncode == 0, done.stderr
    touched = json.loads(done.stdout)["experts_touched"]
    # 524,288 tokens each miss an expert with probability 31/32: all 256 are reached, to within 256·(31/32)^524288
    assert touched["prefill"] == pytest.approx(256, rel=1e-12)
    assert touched["decode"] == pytest.approx(float(256 * (1 - Fraction(31, 32) ** 64)), rel=1e-12)


# --- item 15: the GPU bound on --rate, and max_position_embeddings held to the config reader's rules ---------------

def test_a_rate_no_cluster_serves_is_refused_by_the_gpu_bound(capsys):
    # 1e100 requests/s: even at 1 ms per request that is 1e97 in flight, far beyond formulas/vocabulary/bounds.py's 10^7 GPUs
    code, out, err = run(capsys, "serve", "--model", "llama2-70b", "--gpu", "h100-sxm", "--slo", "ttft=2s,tpot=50ms",
                         "--rate", "1e100", "--input", "1024", "--output", "256")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "10,000,000 GPUs" in err


def test_a_rate_within_the_bound_still_answers(capsys):
    doc = cli_json(capsys, "serve", "--model", "llama2-70b", "--gpu", "h100-sxm", "--slo", "ttft=2s,tpot=50ms",
                   "--rate", "4", "--input", "1024", "--output", "256")
    assert doc["meets"] is True and 1 <= doc["best"]["gpus"] <= 10**7


@pytest.mark.parametrize("window", [-5, 0, 2.5, "4096", True, [4096]])
def test_a_malformed_context_window_is_refused(capsys, tmp_path, window):
    config = preset("llama2-7b").config | {"max_position_embeddings": window}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    code, out, err = run(capsys, "serve", "--hf-config", path, "--gpu", "h100-sxm", "--batch", "1", "--input", "1",
                         "--output", "2")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "'max_position_embeddings' must be a positive integer" in err


def test_a_well_formed_context_window_still_bounds_the_request(capsys, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(preset("llama2-7b").config | {"max_position_embeddings": 100}))
    code, _, err = run(capsys, "serve", "--hf-config", path, "--gpu", "h100-sxm", "--batch", "1", "--input", "99",
                       "--output", "2")  # 99 + 2 = 101 tokens > 100
    assert code == 2 and "context window of 100" in err
    assert cli_json(capsys, "serve", "--hf-config", path, "--gpu", "h100-sxm", "--batch", "1", "--input", "98",
                    "--output", "2")["input_tokens"] == 98


# --- item 16: a sweep case without a valid layout keeps a row, and the header is always written --------------------

SWEEP_SPEC = 'models = ["llama2-70b"]\ngpus = ["a100-80gb"]\nsizes = {sizes}\nglobal_batch = 64\nseq = 2048\n'


def _sweep(capsys, tmp_path, sizes: str) -> tuple[str, list[dict]]:
    spec = tmp_path / "spec.toml"
    spec.write_text(SWEEP_SPEC.format(sizes=sizes))
    out = tmp_path / "table.csv"
    code, said, err = run(capsys, "sweep", spec, "--out", out)
    assert code == 0, err
    text = out.read_text()
    return said, list(csv.DictReader(io.StringIO(text)))


def test_a_sweep_whose_only_case_has_no_layout_writes_its_header_and_reason(capsys, tmp_path):
    # Llama-2-70B's 69e9 weights at 2 bytes are 138 GB: no layout of one 80 GB A100 holds them
    said, rows = _sweep(capsys, tmp_path, "[1]")
    assert len(rows) == 1
    assert (rows[0]["model"], rows[0]["gpu"], rows[0]["n"], rows[0]["rank"]) == ("llama2-70b", "a100-80gb", "1", "")
    assert rows[0]["reason"].startswith("no valid layout")
    assert "llama2-70b on 1 × a100-80gb: no valid layout" in said


def test_a_dropped_case_keeps_its_place_beside_the_ranked_ones(capsys, tmp_path):
    # on 64 A100s (5.1 TB) the same model has layouts that fit; the case on 1 is reported, not dropped
    _, rows = _sweep(capsys, tmp_path, "[1, 64]")
    assert [(row["n"], row["rank"]) for row in rows] == [("1", ""), ("64", "1")]
    assert rows[0]["t"] == "" and rows[1]["t"] != "" and rows[1]["reason"] and not rows[1]["reason"].startswith("no valid")


# --- item 11: the KV wall is the verdict's own boundary -------------------------------------------------------------

def _fits(model: str, gpu_key: str, t: int, b: int, s_in: int, s_out: int) -> bool:
    """The verdict ``serve`` prints for one batch (its paged cache and its workspace at that batch)."""
    values = model_values(preset(model).architecture.values)
    inputs = ServeInputs(values, gpu(gpu_key), node_size=NODE_SIZE.get(gpu_key, 8))
    return bool(report(t, 1, 1, 1, b, s_in, s_out, inputs)["memory"]["fits"])


def _largest_fitting_batch(model: str, gpu_key: str, t: int, s_in: int, s_out: int) -> int:
    """An independent search: doubling, then bisection on the verdict alone (fits is monotone in the batch)."""
    if not _fits(model, gpu_key, t, 1, s_in, s_out):
        return 0
    low, high = 1, 2
    while _fits(model, gpu_key, t, high, s_in, s_out):
        low, high = high, 2 * high
    while high - low > 1:  # fits at low, not at high
        middle = (low + high) // 2
        low, high = (middle, high) if _fits(model, gpu_key, t, middle, s_in, s_out) else (low, middle)
    return low


@pytest.mark.parametrize("model, gpu_key, t, s_in, s_out", [
    ("llama2-7b", "h100-sxm", 1, 1, 2),  # the case: the wall said 41,867 where 7,900 did not fit
    ("llama2-7b", "h100-sxm", 1, 128, 64),  # the case: the wall said 660 where 660 did not fit
    ("llama2-7b", "a100-80gb", 1, 4000, 96),  # one sequence's prompt past the 8192-token workspace at b = 3
    ("mixtral-8x7b", "h100-sxm", 2, 1000, 24),  # MoE at TP 2
    ("gemma3-27b", "h100-sxm", 1, 3000, 100),  # sliding-window layers: their cache stops at the window
    ("qwen3-next-80b-a3b", "h200", 2, 500, 500),  # recurrent layers' fixed states beside the cache
])
def test_the_kv_wall_is_the_largest_batch_the_verdict_passes(capsys, model, gpu_key, t, s_in, s_out):
    wall = _largest_fitting_batch(model, gpu_key, t, s_in, s_out)
    doc = cli_json(capsys, "serve", "--model", model, "--gpu", gpu_key, "--tp", t, "--batch", 1, "--input", s_in,
                   "--output", s_out)
    assert doc["memory"]["max_batch"] == wall
    assert wall > 0 and _fits(model, gpu_key, t, wall, s_in, s_out) and not _fits(model, gpu_key, t, wall + 1, s_in, s_out)
