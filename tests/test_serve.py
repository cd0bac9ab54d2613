"""``llm-formulas serve`` and estimate's inference section: the contract, the Done-when figures, the KV wall, the SLO
search and the rejected inputs. Expected values are hand arithmetic from the models' published shapes and the GPUs'
datasheets, or the paper's own figures (cited beside each)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import cli_json, run

LLAMA2_70B_PARAMS = 68_976_648_192  # 80 layers of 855,654,400 + embedding and head 2 × 32000 × 8192 + norm 8192
H100_BANDWIDTH = 3.35e12  # NVIDIA H100 SXM datasheet, 3.35 TB/s


def test_the_json_contract(capsys):
    doc = cli_json(capsys, "serve", "--model", "llama2-7b", "--gpu", "a100-80gb", "--batch", "8", "--input", "512",
                   "--output", "64")
    for key in ("ttft_seconds", "tpot_seconds", "e2e_seconds", "output_tokens_per_second", "decode_bytes_per_step"):
        assert isinstance(doc[key], (int, float)) and doc[key] > 0, key
    assert {"per_gpu_bytes", "fits", "max_batch"} <= set(doc["memory"])
    assert doc["memory"]["fits"] is True and isinstance(doc["memory"]["max_batch"], int)
    # the batch's last token: the prefill and 63 steps of at least the mean step each (contexts grow)
    assert doc["e2e_seconds"] == pytest.approx(doc["ttft_seconds"] + 63 * doc["tpot_seconds"], rel=1e-12)
    assert doc["output_tokens_per_second"] == pytest.approx(8 * 64 / doc["e2e_seconds"], rel=1e-12)
    assert doc["output_tokens_per_second_per_user"] == pytest.approx(1 / doc["tpot_seconds"], rel=1e-12)


def test_tpot_counts_the_cache_llama2_70b_on_8_h100(capsys):
    # Done when: batch 64 at a 4096-token context, TPOT at least 1.5 × the weights-only figure 2Ψ/(8 · 3.35 TB/s)
    weights_only = 2 * LLAMA2_70B_PARAMS / (8 * H100_BANDWIDTH)
    assert weights_only == pytest.approx(5.15e-3, rel=1e-3)  # the 5.15 ms estimate printed before (issue 24)
    doc = cli_json(capsys, "serve", "--model", "llama2-70b", "--gpu", "h100-sxm", "--tp", "8", "--batch", "64",
                   "--input", "4032", "--output", "64")  # contexts 4033 … 4095, mean 4064
    assert doc["tpot_seconds"] >= 1.5 * weights_only
    # a step reads the weights (the embedding at 64 rows) and 64 caches of 2 × 80 × 8 × 128 × 2 bytes per token
    kv_per_token = 2 * 80 * 8 * 128 * 2
    assert doc["kv_read_bytes"] == 64 * 4064 * kv_per_token
    assert doc["weights_read_bytes"] == 2 * (LLAMA2_70B_PARAMS - 32000 * 8192 + 64 * 8192)
    assert doc["decode_bytes_per_step"] == doc["weights_read_bytes"] + doc["kv_read_bytes"]


def test_deepseek_v3_at_batch_1_reads_about_its_active_parameters(capsys):
    # Done when: within 10 % of the active parameters' bytes (DeepSeek-V3 Technical Report: 37B activated per token)
    doc = cli_json(capsys, "serve", "--model", "deepseek-v3", "--gpu", "h100-sxm", "--tp", "8", "--batch", "1",
                   "--input", "1024", "--output", "64", "--weights", "fp8", "--kv", "fp8")
    assert doc["experts_touched"]["decode"] == 8  # one token: its 8 routed experts
    active_bytes = 37e9 * 1  # FP8: a byte per parameter
    assert abs(doc["decode_bytes_per_step"] / active_bytes - 1) <= 0.10
    assert doc["experts_touched"]["prefill"] > 255  # 1024 prompt tokens reach nearly all 256 experts


def test_the_kv_wall_of_the_4090_box(capsys):
    # issue 24: on 8 × 24 GB only about 40 sequences of 4k tokens fit beside Llama-2-70B's weights
    doc = cli_json(capsys, "serve", "--model", "llama2-70b", "--gpu", "rtx4090", "--tp", "8", "--batch", "1", "--input", "4000",
                   "--output", "96")
    memory = doc["memory"]
    weights = (2 * (LLAMA2_70B_PARAMS - 2 * 32000 * 8192) + 2 * 2 * 32000 * 8192) / 8  # every matrix 16-bit, over 8 GPUs
    assert memory["weights_bytes"] == weights
    per_sequence = 4096 * 2 * 80 * 8 * 128 * 2 / 8  # 4096 tokens, the 8 KV heads one per GPU
    workspace = 4000 * 2 * (2 * 8192 + ((64 + 16) * 128 + 2 * 28672) / 8)  # one prefill's transients, 16-bit
    assert memory["workspace_bytes"] == workspace
    # the wall's own batch prefills 8192 tokens at a time (3 or more prompts of 4000 fill the workspace; issue 37 item 11)
    workspace_at_wall = 8192 * 2 * (2 * 8192 + ((64 + 16) * 128 + 2 * 28672) / 8)
    assert memory["max_batch"] == math.floor((24e9 - weights - workspace_at_wall) / per_sequence) == 37
    assert memory["max_batch"] < 164  # far below the balance batch the inference lesson drew


def test_a_batch_that_does_not_fit_is_a_verdict(capsys):
    code, out, err = run(capsys, "serve", "--model", "llama2-70b", "--gpu", "h100-sxm", "--batch", "512", "--input", "3000",
                         "--output", "1000")
    assert code == 0 and err == "" and "DOES NOT FIT" in out and "missing per GPU" in out
    doc = cli_json(capsys, "serve", "--model", "llama2-70b", "--gpu", "h100-sxm", "--batch", "512", "--input", "3000",
                   "--output", "1000")
    assert doc["memory"]["fits"] is False and doc["memory"]["missing_bytes"] == doc["memory"]["per_gpu_bytes"] - 80e9


@pytest.mark.parametrize("argv, message", [
    (["--model", "llama2-70b", "--gpu", "a100-80gb", "--weights", "fp8"], "no FP8 tensor cores"),
    (["--model", "llama2-70b", "--gpu", "a100-80gb", "--kv", "fp8"], "no FP8 tensor cores"),
    (["--model", "llama2-70b", "--gpu", "h100-sxm", "--input", "4000", "--output", "200"], "context window of 4096"),
    (["--model", "llama2-70b", "--gpu", "h100-sxm", "--ep", "2", "--tp", "2"], "is dense"),
    (["--model", "mixtral-8x7b", "--gpu", "h100-sxm", "--ep", "3", "--tp", "2"], "must divide"),
    (["--model", "llama2-70b", "--gpu", "h100-sxm", "--tp", "3"], "not a multiple of 3"),
    (["--model", "llama2-70b", "--gpu", "h100-sxm", "--output", "1"], "at least 2"),
    (["--model", "llama2-70b", "--gpu", "h100-sxm", "--weights", "int3"], "invalid choice"),
    (["--model", "llama2-70b", "--gpu", "h100-sxm", "--slo", "ttft=1s", "--rate", "1"], "give both"),
    (["--model", "llama2-70b", "--gpu", "h100-sxm", "--slo", "ttft=1s,tpot=-5ms", "--rate", "1"], "must be positive"),
    (["--model", "llama2-70b", "--gpu", "h100-sxm", "--slo", "ttft=1s,tpot=5ms"], "needs --rate"),
])
def test_bad_input_is_one_line_exit_2(capsys, argv, message):
    base = {"--batch": "1", "--input": "100", "--output": "10"}
    given = [item for item in argv]
    for option, default in base.items():
        if option not in given and not (option == "--batch" and "--slo" in given):
            given += [option, default]
    code, out, err = run(capsys, "serve", *given)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1, err


def test_int4_weights_with_group_scales(capsys):
    # GPTQ's layout: half a byte a weight and 4 bytes of scale and zero point per 128: 0.53125 bytes; 16-bit tables
    bf16 = cli_json(capsys, "serve", "--model", "llama2-7b", "--gpu", "a100-80gb", "--batch", "1", "--input", "8", "--output", "8")
    int4 = cli_json(capsys, "serve", "--model", "llama2-7b", "--gpu", "a100-80gb", "--batch", "1", "--input", "8", "--output", "8",
                    "--weights", "int4")
    tables = 2 * 32000 * 4096 * 2
    matrices = (bf16["memory"]["weights_bytes"] - tables) / 2  # parameters outside the embedding and head
    assert int4["memory"]["weights_bytes"] == matrices * (0.5 + 4 / 128) + tables
    assert int4["tpot_seconds"] < bf16["tpot_seconds"] / 2.5  # batch 1 reads about a third of the bytes


def test_pipeline_stages_run_in_series(capsys):
    # a token crosses the stages one after another: PP does not shorten TPOT, it keeps p batches in flight
    one = cli_json(capsys, "serve", "--model", "llama2-13b", "--gpu", "a100-80gb", "--tp", "2", "--batch", "4", "--input", "256", "--output", "32")
    two = cli_json(capsys, "serve", "--model", "llama2-13b", "--gpu", "a100-80gb", "--tp", "2", "--pp", "2", "--batch", "4", "--input", "256", "--output", "32")
    assert two["tpot_seconds"] >= one["tpot_seconds"]
    assert two["output_tokens_per_second"] == pytest.approx(2 * 4 * 32 / two["e2e_seconds"], rel=1e-12)


def test_estimate_uses_the_serving_model_and_names_both_latencies(capsys):
    argv = ("estimate", "--model", "mixtral-8x7b", "--gpu", "h100-sxm", "--tp", "2", "--pp", "4", "--micro-batch", "1",
            "--global-batch", "4", "--seq", "4096", "--mfu", "0.4")
    doc = cli_json(capsys, *argv)["inference"]
    assert doc["experts_touched"] == 2  # batch 1: the token's 2 experts of each layer's 8, not all of them
    assert doc["token_latency"] > 4 * doc["stage_latency"]  # four stages in series, and their hops
    code, out, _ = run(capsys, *argv)
    assert code == 0 and "a stage" in out and "a token" in out and "4 stages in series" in out


def test_slo_search_finds_the_fewest_gpus(capsys):
    doc = cli_json(capsys, "serve", "--model", "llama2-70b", "--gpu", "h100-sxm", "--slo", "ttft=2s,tpot=50ms", "--rate", "4",
                   "--input", "1024", "--output", "256")
    best = doc["best"]
    assert doc["meets"] and best["ttft_seconds"] <= 2 and best["tpot_seconds"] <= 0.05 and best["fits"]
    # the winner, priced exactly by the single-layout report, meets the SLO and serves the rate (Little's law)
    exact = cli_json(capsys, "serve", "--model", "llama2-70b", "--gpu", "h100-sxm", "--tp", str(best["tp"]), "--pp", str(best["pp"]),
                     "--batch", str(best["batch"]), "--input", "1024", "--output", "256")
    assert exact["tpot_seconds"] == pytest.approx(best["tpot_seconds"], rel=1e-9)
    assert exact["ttft_seconds"] == pytest.approx(best["ttft_seconds"], rel=1e-9)
    assert best["replicas"] == math.ceil(4 * exact["e2e_seconds"] / (best["pp"] * best["batch"]))
    # no layout of fewer GPUs meets it: every one is checked
    from llm_formulas.formulas.reports.estimate import model_values
    from llm_formulas.formulas.data.gpus import gpu
    from llm_formulas.formulas.data.presets import preset
    from llm_formulas.formulas.reports.serving_report import ServeInputs
    from llm_formulas.render.numeric.serving_plan import search

    found = search(ServeInputs(model_values(preset("llama2-70b").architecture.values), gpu("h100-sxm")),
                   {"ttft": 2, "tpot": 0.05}, 4, 1024, 256)
    assert not np.any(found["meets"] & (found["gpus"] < best["gpus"]))


def test_an_slo_no_layout_meets_is_a_verdict(capsys):
    code, out, err = run(capsys, "serve", "--model", "llama2-70b", "--gpu", "h100-sxm", "--slo", "ttft=5ms,tpot=1ms", "--rate", "1",
                         "--input", "1024", "--output", "256")
    assert code == 0 and err == "" and "NO LAYOUT MEETS THE SLO" in out and "closest" in out


def test_the_vectorised_report_equals_the_exact_one():
    from llm_formulas.formulas.reports.estimate import model_values
    from llm_formulas.formulas.data.gpus import gpu
    from llm_formulas.formulas.data.presets import preset
    from llm_formulas.formulas.reports.serving_report import ServeInputs, report
    from llm_formulas.render.numeric.evaluator import NUMPY_OPS, numeric
    from llm_formulas.render.numeric.serving_plan import _floats

    inputs = ServeInputs(model_values(preset("mixtral-8x7b").architecture.values), gpu("h100-sxm"), "fp8", "fp8")
    t, p, b = np.array([1.0, 2, 8]), np.array([1.0, 2, 1]), np.array([1.0, 16, 256])
    vector = report(t, p, 1, 1, b, 700, 300, _floats(inputs), numeric, NUMPY_OPS)
    for i in range(3):
        one = report(int(t[i]), int(p[i]), 1, 1, int(b[i]), 700, 300, inputs)
        for key in ("ttft_seconds", "tpot_seconds", "e2e_seconds", "decode_bytes_per_step"):
            assert vector[key][i] == pytest.approx(float(one[key]), rel=1e-9), key
        assert vector["memory"]["max_batch"][i] == int(one["memory"]["max_batch"])
