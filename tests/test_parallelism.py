"""Expert parallelism, context parallelism and the distributed optimizer, against hand arithmetic and published tables.

Every expected value is written out from the papers' rules, never read from the formulas under test:
- Mixtral 8x7B's shapes from mistralai/Mixtral-8x7B-v0.1 config.json (h 4096, d_ff 14336, 32 layers, 32 heads,
  8 KV heads, 8 experts, top-2, V 32000, untied head); Jiang et al. 2024 print 46.7B total, 12.9B active.
- GShard (Lepikhin et al. 2020) §3.2: one AllToAll dispatches the tokens to the experts, one combines them back;
  the backward pass runs the same two on the gradients. An all-to-all over e ranks keeps 1/e of the buffer local.
- Ring Attention (Liu et al. 2023) Algorithm 1: c−1 K/V hops forward; Megatron's context parallelism sends K/V
  and dK/dV in backward.
- Megatron Core's distributed-optimizer table: bf16 parameters with fp32 gradients, 18 bytes per parameter
  without it, 6 + 12/d with it.
"""

import json
from fractions import Fraction

import pytest

from helpers import cli_json, run, value

MIXTRAL = {"model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
           "num_attention_heads": 32, "num_key_value_heads": 8, "num_local_experts": 8, "num_experts_per_tok": 2,
           "vocab_size": 32000, "max_position_embeddings": 32768, "tie_word_embeddings": False}
H, D_FF, L, HEADS, KV, E, K, VOCAB = 4096, 14336, 32, 32, 8, 8, 2, 32000
EXPERTS = L * E * 3 * H * D_FF  # three h×d_ff matrices per SwiGLU expert
TOTAL = 46_702_792_704  # Mixtral-8x7B as transformers builds it (46.7B in Jiang et al. 2024)
H100 = dict(W_link=900 * 10**9, M_gpu=80 * 10**9)  # NVIDIA H100 SXM datasheet


@pytest.fixture
def mixtral(tmp_path):
    path = tmp_path / "mixtral.json"
    path.write_text(json.dumps(MIXTRAL))
    return str(path)


def report(capsys, config, *layout):
    return cli_json(capsys, "estimate", "--mfu", "0.5", "--hf-config", config, "--gpu", "h100-sxm", "--seq", "4096", *layout)


def test_expert_count_is_mixtrals(capsys, mixtral):
    assert EXPERTS == 45_097_156_608
    doc = report(capsys, mixtral, "--dp", "8", "--ep", "8", "--global-batch", "8")
    assert doc["params"]["total"] == TOTAL and doc["params"]["experts"] == EXPERTS
    # dense parameters whole on each GPU (t = p = 1), one expert of eight per layer
    assert doc["params"]["per_gpu"] == (TOTAL - EXPERTS) + EXPERTS // 8 == 7_242_780_672


@pytest.mark.parametrize("zero", [0, 1, 2, 3])
def test_zero_states_with_experts_over_e_ranks(capsys, mixtral, zero):
    t, d, e = 2, 8, 4
    doc = report(capsys, mixtral, "--tp", str(t), "--dp", str(d), "--ep", str(e), "--zero", str(zero),
                 "--global-batch", "8", "--sequence-parallel")
    # ZeRO (Rajbhandari et al. 2019) at Megatron Core's bytes: bf16 weights 2, fp32 main gradients 4, fp32 master and
    # Adam 12 per parameter; stage k partitions the last k of (weights, gradients, optimizer states) over the
    # replicas. Dense replicas: d; an expert's replicas: t·d/(t_E·e) = d/e (Megatron's expert data-parallel size,
    # theoretical_memory_usage.py L205-212). TP keeps each layer's two RMSNorm scales and the E×h router whole
    # (megatron/core/transformer/moe/router.py L62-88), and the final norm, on every rank
    def states(params, replicas):
        optimizer, grads, weights = 12 * params, 4 * params, 2 * params
        return (optimizer / (replicas if zero >= 1 else 1) + grads / (replicas if zero >= 2 else 1)
                + weights / (replicas if zero >= 3 else 1))
    replicated = L * (2 * H + 8 * H) + H
    dense = Fraction(TOTAL - EXPERTS - replicated, t) + replicated
    experts = Fraction(EXPERTS, t * e)
    expected = states(dense, d) + states(experts, Fraction(d, e))
    assert doc["memory"]["model_states"] == pytest.approx(float(expected), rel=1e-12)
    if zero == 3:  # fully partitioned: 18 bytes of each parameter a GPU holds spread over the d replicas, whatever e is
        assert doc["memory"]["model_states"] == pytest.approx(18 * float(dense + Fraction(EXPERTS, t)) / d, rel=1e-12)


def test_all_to_all_bytes_per_iteration(capsys, mixtral):
    t, d, e, m, s = 1, 8, 8, 4, 4096
    doc = report(capsys, mixtral, "--dp", str(d), "--ep", str(e), "--micro-batches", str(m))
    routed = 1 * s * K * H * 2  # one sequence of 4096 tokens, two expert copies each, h bf16 values
    per_layer = 4 * Fraction(e - 1, e) * routed  # dispatch + combine forward, both again backward
    assert doc["comms"]["bytes"]["ep"] == pytest.approx(float(per_layer * L * m), rel=1e-12)
    assert per_layer * L * m == 7 * 4096 * 2 * 4096 * 2 * 32 * 4 // 2  # 30,064,771,072 bytes: 30.1 GB
    # t·c·e = 8 GPUs: one NVLink node, half the bidirectional 900 GB/s each way
    assert doc["comms"]["link_bandwidth"]["ep"] == H100["W_link"] / 2


def test_all_to_all_with_sequence_parallelism_splits_the_tokens(capsys, mixtral):
    plain = report(capsys, mixtral, "--tp", "2", "--dp", "4", "--ep", "4", "--micro-batches", "1")
    split = report(capsys, mixtral, "--tp", "2", "--dp", "4", "--ep", "4", "--micro-batches", "1", "--sequence-parallel")
    assert plain["comms"]["bytes"]["ep"] == 4 * Fraction(3, 4) * 4096 * K * H * 2 * L  # every TP rank dispatches all 4096 tokens
    assert split["comms"]["bytes"]["ep"] * 2 == plain["comms"]["bytes"]["ep"]  # each of t = 2 ranks its 2048


def test_dense_and_expert_gradients_reduce_over_their_own_replicas(capsys, mixtral):
    d, e = 8, 4
    doc = report(capsys, mixtral, "--dp", str(d), "--ep", str(e), "--global-batch", "8")
    # ring all-reduce 2(n−1)/n of 2-byte gradients (000 Table 5): dense over d = 8, experts (Ψ_E/e each) over d/e = 2
    expected = Fraction(2 * 7, 8) * 2 * (TOTAL - EXPERTS) + Fraction(2 * 1, 2) * 2 * Fraction(EXPERTS, e)
    assert doc["comms"]["bytes"]["dp"] == pytest.approx(float(expected), rel=1e-12)


def test_ring_attention_bytes_and_activations(capsys):
    # Llama-2-70B (h 8192, 64 heads of 128, 8 KV heads, d_ff 28672, 80 layers), t = 8, c = 4, s = 32768
    t, c, s, m, l, h, a, g, d_head, d_ff = 8, 4, 32768, 2, 80, 8192, 64, 8, 128, 28672
    doc = cli_json(capsys, "estimate", "--mfu", "0.5", "--model", "llama2-70b", "--gpu", "h100-sxm", "--tp", str(t), "--cp", str(c),
                   "--seq", str(s), "--micro-batches", str(m), "--recompute", "selective")
    chunk = 2 * (s // c) * (g // t) * d_head * 2  # K and V of 8192 tokens, one KV head per TP rank, bf16
    per_layer = (c - 1) * chunk + 2 * (c - 1) * chunk  # forward hops; backward hops of K/V and of dK/dV
    assert doc["comms"]["bytes"]["cp"] == per_layer * l * m
    # t·c = 32 GPUs span four nodes: the ring crosses the network (--network default 25 GB/s)
    assert doc["comms"]["link_bandwidth"]["cp"] == 25 * 10**9
    # activations per token of one rank (Korthikanti et al. 2022 §4 as tests/test_estimate.py writes it out, for
    # Megatron Core: no dropout, fused SwiGLU), plus the flash kernel's fp32 log-sum-exp per head of the rank's a/t
    # (Dao et al. 2022), for s/c tokens; one micro-batch in flight, with its token ids and the output layer and loss
    # (the final norm's and head's inputs, the fp32 softmax of V/t, the target mask and int64 targets)
    V = 32000
    per_token = 8 * h + Fraction(2 * (a * d_head + 2 * g * d_head + a * d_head) + 2 * 3 * d_ff, t) + Fraction(4 * a, t)
    outside = 8 + 4 * h + Fraction(4 * V, t) + 9
    assert doc["memory"]["activations"] == pytest.approx(float((per_token * l + outside) * (s // c)), rel=1e-12)
    assert doc["memory"]["activation_formula"] == "memory.activations.layer.decoder.flash at s/c"
    # TP all-reduces carry the rank's s/c tokens: 4 per layer of b·(s/c)·h bf16 values, ring factor 2(t−1)/t
    assert doc["comms"]["bytes"]["tp"] == pytest.approx(float(4 * (s // c) * h * 2 * l * Fraction(2 * 7, 8) * m), rel=1e-12)


def test_context_parallel_ranks_reduce_gradients_with_the_data_parallel_ones(capsys):
    doc = cli_json(capsys, "estimate", "--mfu", "0.5", "--model", "llama2-7b", "--gpu", "h100-sxm", "--cp", "4", "--dp", "2", "--seq", "8192")
    params = doc["params"]["total"]
    assert doc["layout"]["n"] == 8
    assert doc["comms"]["bytes"]["dp"] == pytest.approx(2 * 7 / 8 * 2 * params, rel=1e-12)  # one ring of c·d = 8 GPUs


@pytest.mark.parametrize("d, bytes_per_parameter", [(1, 18), (8, Fraction(15, 2)), (64, Fraction(99, 16))])  # 6 + 12/64
def test_distributed_optimizer_is_megatrons_row(d, bytes_per_parameter):
    # Megatron Core, "Distributed Optimizer": bf16 parameters, fp32 gradients → 6 + 12/d (18 without sharding)
    assert value("memory.distributed_optimizer", P=1, t=1, p=1, d=d) == bytes_per_parameter
    # ZeRO stage 1 (4 + 12/d for 16-bit gradients) plus the 2 extra bytes of an fp32 gradient
    assert value("memory.zero.stage1", P=1, t=1, p=1, d=d) + 2 == bytes_per_parameter


@pytest.mark.parametrize("argv, message", [
    (["--dp", "8", "--ep", "3"], "must divide the 8 experts"),
    (["--dp", "2", "--ep", "4"], "must divide the data-parallel degree d = 2"),
    (["--cp", "3"], "must divide the sequence length s = 4096"),
])
def test_bad_layouts_are_one_line(capsys, mixtral, argv, message):
    code, out, err = run(capsys, "estimate", "--mfu", "0.5", "--hf-config", mixtral, "--gpu", "h100-sxm", "--seq", "4096", *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err


def test_dense_model_has_no_experts_to_spread(capsys):
    code, out, err = run(capsys, "estimate", "--mfu", "0.5", "--model", "llama2-7b", "--gpu", "h100-sxm", "--seq", "4096", "--dp", "2", "--ep", "2")
    assert code == 2 and "needs a mixture-of-experts model" in err


def test_plan_uses_expert_and_context_parallelism(capsys, mixtral):
    doc = cli_json(capsys, "plan", "--mfu", "0.5", "--hf-config", mixtral, "--gpu", "h100-sxm", "--gpus", "64", "--global-batch", "64",
                   "--seq", "32768", "--top", "3")
    layouts = [entry["layout"] for entry in doc["ranked"]]
    assert layouts, "a layout fits"
    for lay in layouts:
        assert lay["t"] * lay["p"] * lay["c"] * lay["d"] == 64 and lay["d"] % lay["e"] == 0 and 8 % lay["e"] == 0
    # 46.7B parameters at 16 bytes need more than 80 GB unless sharded: the best layouts use e > 1 or ZeRO, and
    # 32k-token sequences favour splitting them
    assert any(lay["e"] > 1 for lay in layouts) or any(lay["zero"] > 0 for lay in layouts)
    best = layouts[0]
    again = report_of(capsys, mixtral, best, 64, 32768)
    assert again["time"]["step_seconds"] == pytest.approx(doc["ranked"][0]["step_seconds"], rel=1e-12)


def report_of(capsys, config, lay, n, s):
    argv = ["estimate", "--mfu", "0.5", "--hf-config", config, "--gpu", "h100-sxm", "--gpus", str(n), "--seq", str(s),
            "--tp", str(lay["t"]), "--pp", str(lay["p"]), "--dp", str(lay["d"]), "--interleave", str(lay["v"]),
            "--micro-batch", str(lay["b"]), "--micro-batches", str(lay["m"]), "--zero", str(lay["zero"]),
            "--recompute", lay["recompute"], "--cp", str(lay["c"]), "--ep", str(lay["e"])]
    return cli_json(capsys, *argv, *(["--sequence-parallel"] if lay["sequence_parallel"] else []))

