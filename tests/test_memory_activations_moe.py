"""Activation memory of mixture-of-experts and multi-head-latent-attention layers against what PyTorch saves.

The oracle is torch: tests/moe_block.py runs a top-k MoE layer (router, dispatched copies, k experts per token,
shared experts) and DeepSeek's latent attention in bf16 on the CPU, and tests/megatron_block.py's meter counts the
unique storages saved for backward, parameters excluded. The formulas drop the per-token statistics, written out
here by hand: each norm's mean and rstd (2 · 2 bytes per token), the router's fp32 sum (4 bytes per token) and
the shared gate's 16-bit value (2 bytes per token).
"""

import pytest
import sympy as sp

from llm_formulas.derivations.reports.catalogue import derivation_of
from llm_formulas.derivations.topics.memory import decoder_tensors, exact_bytes
from llm_formulas.derivations.vocabulary.proof import valued
from llm_formulas.formulas.vocabulary.symbols import quantity
from helpers import cli_json, value
from megatron_block import measure
from moe_block import MLALayer, MLAMoELayer, MoELayer

MODES = [("eager", "tp"), ("selective", "selective"), ("flash", "flash")]


def statistics(s, b, *, norms=2, router=False, shared_gate=False, shards=1):
    """Bytes of the per-token statistics on one rank (its s/shards tokens)."""
    tokens = s * b // shards
    return tokens * (norms * 2 * 2 + (4 if router else 0) + (2 if shared_gate else 0))


CLASSIC_RUN = dict(drop=1, glu_fused=0, moe_lat=0)  # the reference blocks' dropout (p = 0.1) and unfused SwiGLU, no latent MoE


def sizes(**named):
    return {quantity(name).symbol: number for name, number in named.items()}


# (s, b, h, a, g, d_head, E, k, d_moe, d_sh): GQA heads, experts narrower than h, k < E, a shared expert or none
MOE_SHAPES = [(16, 2, 64, 4, 2, 16, 4, 2, 48, 0), (24, 1, 64, 4, 4, 16, 8, 3, 32, 64), (12, 3, 96, 6, 2, 16, 6, 1, 64, 32)]


@pytest.mark.parametrize("s, b, h, a, g, d_head, E, k, d_moe, d_sh", MOE_SHAPES)
@pytest.mark.parametrize("mode, suffix", MODES)
@pytest.mark.parametrize("tp", [1, 2])
def test_moe_layer_equals_saved_bytes(s, b, h, a, g, d_head, E, k, d_moe, d_sh, mode, suffix, tp):
    if mode == "flash":
        g = a  # the reference's flash core runs without GQA
    measured = measure(s, b, h, a, block=MoELayer, mode=mode, tp=tp, g=g, d_head=d_head, E=E, k=k, d_moe=d_moe, d_sh=d_sh)
    named = dict(s=s, b=b, h=h, a=a, g=g, d_head=d_head, E=E, k=k, d_moe=d_moe, d_sh=d_sh, gated=1, sh_gate=0, mla=0, t=tp, t_e=tp, **CLASSIC_RUN)
    assert measured == value(f"memory.activations.layer.decoder.moe.{suffix}", **named) + statistics(s, b, router=True)
    tensors = decoder_tensors(mode, tp=sp.Integer(tp), mlp="moe")
    assert measured == valued(exact_bytes(tensors)).subs(sizes(**named))


@pytest.mark.parametrize("mode, suffix", MODES[:2])
def test_moe_layer_with_sequence_parallelism(mode, suffix):
    s, b, h, a, g, d_head, E, k, d_moe, d_sh = MOE_SHAPES[1]
    tp = 2
    measured = measure(s, b, h, a, block=MoELayer, mode=mode, tp=tp, g=g, d_head=d_head, E=E, k=k, d_moe=d_moe, d_sh=d_sh,
                       sequence_parallel=True)
    named = dict(s=s, b=b, h=h, a=a, g=g, d_head=d_head, E=E, k=k, d_moe=d_moe, d_sh=d_sh, gated=1, sh_gate=0, mla=0, t=tp, t_e=tp, **CLASSIC_RUN)
    assert measured == value(f"memory.activations.layer.decoder.moe.{suffix}_sp", **named) \
        + statistics(s, b, router=True, shards=tp)


@pytest.mark.parametrize("tp", [1, 2])
def test_moe_layer_ungated_with_a_gated_shared_expert(tp):
    s, b, h, a, g, d_head, E, k, d_moe, d_sh = MOE_SHAPES[1]
    measured = measure(s, b, h, a, block=MoELayer, tp=tp, g=g, d_head=d_head, E=E, k=k, d_moe=d_moe, d_sh=d_sh,
                       gated=False, sh_gate=True)
    named = dict(s=s, b=b, h=h, a=a, g=g, d_head=d_head, E=E, k=k, d_moe=d_moe, d_sh=d_sh, gated=0, sh_gate=1, mla=0, t=tp, t_e=tp, **CLASSIC_RUN)
    assert measured == value("memory.activations.layer.decoder.moe.tp", **named) + statistics(s, b, router=True, shared_gate=True)


def test_moe_layer_by_hand():
    # Korthikanti et al. 2022 §4's method, tensor by tensor, one rank of t = 2 (bytes), T = s·b tokens, C = T·k copies:
    # attention as the general block (norm inputs, QKV input, 1-byte mask: 5·T·h; Q 2T(a/t)d_head, K and V 2T(g/t)d_head,
    # the projection's input 2T(a/t)d_head; scores 5(a/t)s²b); the second norm's input, its output (the router's and the
    # shared expert's input) and the 1-byte mask: 5·T·h; the router: fp32 scores 4TE, int64 top-k indices, sort order and
    # token index 3·8·C, fp32 top-k values 4C and their sum 4T; the copies 2Ch and their fp32 weights 4C; per copy the
    # expert's gate-and-up output 2·2·d_moe/t, SiLU output, weighted-product input and down-projection input 2·d_moe/t
    # each; the shared expert 4 · 2T·d_sh/t; the two norms' mean and rstd 2 · 2 · 2T
    s, b, h, a, g, d_head, E, k, d_moe, d_sh = MOE_SHAPES[1]
    t_ = 2
    T, C = s * b, s * b * k
    attention = 5 * T * h + 2 * T * (a // t_) * d_head * 2 + 2 * T * (g // t_) * d_head * 2 + 5 * (a // t_) * s * s * b
    mlp = 5 * T * h + 4 * T * E + 3 * 8 * C + 4 * C + 4 * T + 2 * C * h + 4 * C + C * (4 + 2 + 2 + 2) * d_moe // t_ \
        + 4 * 2 * T * d_sh // t_
    assert measure(s, b, h, a, block=MoELayer, tp=t_, g=g, d_head=d_head, E=E, k=k, d_moe=d_moe, d_sh=d_sh) \
        == attention + mlp + 2 * 2 * 2 * T


def test_moe_layer_full_recompute_keeps_only_the_input():
    s, b, h, a, g, d_head, E, k, d_moe, d_sh = MOE_SHAPES[0]
    measured = measure(s, b, h, a, block=MoELayer, mode="full", g=g, d_head=d_head, E=E, k=k, d_moe=d_moe, d_sh=d_sh)
    assert measured == value("memory.activations.layer.full_recompute", s=s, b=b, h=h) == 2 * s * b * h


# (s, b, h, a, r_q, r_kv, d_rope, d_nope, d_v): with a query latent, and without one (DeepSeek-V2-Lite); d_v ≠ d_nope + d_rope
MLA_SHAPES = [(16, 2, 64, 4, 24, 32, 8, 16, 12), (12, 3, 96, 6, 0, 48, 16, 16, 24)]


def mla_named(s, b, h, a, r_q, r_kv, d_rope, d_nope, d_v, tp, **more):
    return dict(s=s, b=b, h=h, a=a, g=a, d_head=d_nope + d_rope, mla=1, q_lora=int(r_q > 0), r_q=r_q, r_kv=r_kv,
                d_rope=d_rope, d_nope=d_nope, d_v=d_v, t=tp, t_e=tp, **CLASSIC_RUN, **more)


@pytest.mark.parametrize("s, b, h, a, r_q, r_kv, d_rope, d_nope, d_v", MLA_SHAPES)
@pytest.mark.parametrize("mode, suffix", MODES[:2])
@pytest.mark.parametrize("tp", [1, 2])
def test_mla_layer_equals_saved_bytes(s, b, h, a, r_q, r_kv, d_rope, d_nope, d_v, mode, suffix, tp):
    d_ff = 3 * h
    measured = measure(s, b, h, a, block=MLALayer, mode=mode, tp=tp, d_ff=d_ff, r_q=r_q, r_kv=r_kv, d_rope=d_rope,
                       d_nope=d_nope, d_v=d_v)
    named = mla_named(s, b, h, a, r_q, r_kv, d_rope, d_nope, d_v, tp, d_ff=d_ff, gated=1)
    norms = 2 + 1 + (1 if r_q else 0)  # LN₁, LN₂, the kv latent's norm and the query latent's
    assert measured == value(f"memory.activations.layer.decoder.{suffix}", **named) + statistics(s, b, norms=norms)
    assert measured == valued(exact_bytes(decoder_tensors(mode, tp=sp.Integer(tp)))).subs(sizes(**named))


@pytest.mark.parametrize("tp", [1, 2])
def test_mla_layer_flash(tp):
    s, b, h, a, r_q, r_kv, d_rope, d_nope = 16, 2, 64, 4, 24, 32, 8, 16
    d_v = d_nope + d_rope  # PyTorch's CPU flash kernel takes one head width
    measured = measure(s, b, h, a, block=MLALayer, mode="flash", tp=tp, r_q=r_q, r_kv=r_kv, d_rope=d_rope, d_nope=d_nope, d_v=d_v)
    named = mla_named(s, b, h, a, r_q, r_kv, d_rope, d_nope, d_v, tp, d_ff=4 * h, gated=0)
    assert measured == value("memory.activations.layer.decoder.flash", **named) + statistics(s, b, norms=4)


@pytest.mark.parametrize("mode, suffix", MODES[:2])
def test_mla_layer_with_sequence_parallelism(mode, suffix):
    s, b, h, a, r_q, r_kv, d_rope, d_nope, d_v = MLA_SHAPES[0]
    tp = 2
    measured = measure(s, b, h, a, block=MLALayer, mode=mode, tp=tp, r_q=r_q, r_kv=r_kv, d_rope=d_rope, d_nope=d_nope,
                       d_v=d_v, sequence_parallel=True)
    named = mla_named(s, b, h, a, r_q, r_kv, d_rope, d_nope, d_v, tp, d_ff=4 * h, gated=0)
    assert measured == value(f"memory.activations.layer.decoder.{suffix}_sp", **named) + statistics(s, b, norms=4, shards=tp)


def test_mla_layer_by_hand():
    # one rank of t = 2, T = s·b tokens (bytes): LN₁'s input, its output and the 1-byte mask 5Th; the query latent before
    # and after its norm 2·2T·r_Q; the joint down projection's output 2T(r_KV + d_rope) (the latent norm reads a view of
    # it) and the normed latent 2T·r_KV; Q and K 2T(a/t)(d_nope + d_rope) each; V a view of the up projection's
    # 2T(a/t)(d_nope + d_v); scores 5(a/t)s²b; the projection's input 2T(a/t)d_v; the dense 4h GELU MLP with its norm
    # 5Th + 2·2T·4h/t; four norms' statistics 4·2·2T
    s, b, h, a, r_q, r_kv, d_rope, d_nope, d_v = MLA_SHAPES[0]
    t_, T, heads = 2, s * b, a // 2
    by_hand = 5 * T * h + 2 * 2 * T * r_q + 2 * T * (r_kv + d_rope) + 2 * T * r_kv + 2 * 2 * T * heads * (d_nope + d_rope) \
        + 2 * T * heads * (d_nope + d_v) + 5 * heads * s * s * b + 2 * T * heads * d_v + 5 * T * h + 2 * 2 * T * 4 * h // t_ \
        + 4 * 2 * 2 * T
    assert measure(s, b, h, a, block=MLALayer, tp=t_, r_q=r_q, r_kv=r_kv, d_rope=d_rope, d_nope=d_nope, d_v=d_v) == by_hand


@pytest.mark.parametrize("mode, suffix", MODES[:2])
@pytest.mark.parametrize("sequence_parallel", [False, True])
def test_deepseek_style_layer_equals_saved_bytes(mode, suffix, sequence_parallel):
    # latent attention and a MoE MLP with a shared expert, as DeepSeek-V3's layers 4–61
    s, b, h, a, r_q, r_kv, d_rope, d_nope, d_v = MLA_SHAPES[0]
    E, k, d_moe, d_sh, tp = 8, 3, 32, 32, 2
    measured = measure(s, b, h, a, block=MLAMoELayer, mode=mode, tp=tp, r_q=r_q, r_kv=r_kv, d_rope=d_rope, d_nope=d_nope,
                       d_v=d_v, E=E, k=k, d_moe=d_moe, d_sh=d_sh, sequence_parallel=sequence_parallel)
    named = mla_named(s, b, h, a, r_q, r_kv, d_rope, d_nope, d_v, tp, E=E, k=k, d_moe=d_moe, d_sh=d_sh, gated=1, sh_gate=0)
    formula_id = f"memory.activations.layer.decoder.moe.{suffix}" + ("_sp" if sequence_parallel else "")
    assert measured == value(formula_id, **named) + statistics(s, b, norms=4, router=True, shards=tp if sequence_parallel else 1)


def test_one_expert_is_the_dense_layer_plus_the_routing():
    # the measured MoE layer with E = k = 1 and d_moe = d_ff against the measured dense layer: the difference is the
    # routing (fp32 score 4, int64 index, order and token index 24, fp32 top-k value 4 and sum 4, the copy 2h and its
    # fp32 weight 4 bytes per token, and the weighted product 2·d_ff/t)
    s, b, h, a, d_ff, tp = 16, 2, 64, 4, 96, 2
    moe = measure(s, b, h, a, block=MoELayer, tp=tp, E=1, k=1, d_moe=d_ff)
    dense = measure(s, b, h, a, tp=tp, d_ff=d_ff)
    assert moe - dense == s * b * (4 + 24 + 4 + 4 + 2 * h + 4 + 2 * d_ff // tp)


def test_reductions_check():
    for mode in ("tp", "tp_sp", "selective", "selective_sp", "flash", "flash_sp"):
        for formula_id in (f"memory.activations.layer.decoder.{mode}", f"memory.activations.layer.decoder.moe.{mode}"):
            outcomes = derivation_of(formula_id).check()
            assert outcomes and all(o.ok for o in outcomes), formula_id
            checks = [o for o in outcomes if o.claim == "equals"]
            assert checks, formula_id  # the reduction to the dense form (mla = 0, or one expert)


MIXTRAL_LAYOUT = ["--gpu", "h100-sxm", "--tp", "2", "--pp", "4", "--dp", "8", "--ep", "8", "--seq", "4096",
                  "--global-batch", "256", "--sequence-parallel", "--recompute", "selective", "--mfu", "0.4"]
DEEPSEEK_LAYOUT = ["--gpu", "h800", "--tp", "8", "--dp", "32", "--ep", "32", "--seq", "4096", "--global-batch", "1024",
                   "--sequence-parallel", "--recompute", "selective", "--zero", "3", "--mfu", "0.4"]


def test_estimate_prices_mixtral_8x7b_as_moe_layers(capsys):
    # Mixtral 8x7B (Jiang et al. 2024, Table 1: h 4096, 32 layers, 32 heads of 128, 8 KV heads, 8 experts of 14336,
    # top 2), t = 2 with sequence parallelism, selective recompute, as Megatron Core runs it (no dropout, the experts'
    # SwiGLU fused: weighted_bias_swiglu_impl keeps fc1's output and the fp32 weight, moe/experts.py L963-971); bytes
    # per token on one rank:
    h, t_, s = 4096, 2, 4096
    split_along_s = (2 * h + 2 * h + 2 * h + 2 * h  # LN₁ in, QKV in; LN₂ in, router in (no dropout masks)
                     + 4 * 8 + 3 * 8 * 2 + 4 * 2)  # fp32 scores over 8 experts; int64 indices, order, token index; fp32 top-2
    heads = 2 * 32 * 128 + 2 * 8 * 128 + 2 * 8 * 128 + 2 * 32 * 128  # Q, K, V, the output projection's input
    experts = 2 * 2 * (2 * 14336 + 14336)  # per copy: gate-and-up output, fc2's weighted input
    copies = 2 * (2 * h + 4)  # the two dispatched copies (all-gathered over t) and their fp32 weights
    per_token = copies + (split_along_s + heads + experts) // t_
    # the first of 4 stages holds 32/4 layers of 4 micro-batches (1F1B, m = 256/8 = 32) and their int64 token ids;
    # the backward rebuilds one layer's core: the softmax output of a/t = 16 heads, s² values each
    expected = s * (per_token * (32 // 4) + 8) * 4 + 2 * 16 * s * s
    report = cli_json(capsys, "estimate", "--model", "mixtral-8x7b", *MIXTRAL_LAYOUT)
    assert report["memory"]["first_stage"]["activations"] == expected == 17_455_251_456
    assert report["memory"]["activation_formula"] == "memory.activations.layer.decoder.moe.selective_sp"


def test_estimate_prices_deepseek_v3_as_mla_and_moe_layers(capsys):
    # DeepSeek-V3 (DeepSeek-AI 2024, §2 and §4.2: h 7168, 61 layers, the first 3 dense (d_ff 18432), 128 heads, r_Q 1536,
    # r_KV 512, d_rope 64, d_nope 128, d_v 128; 256 routed experts of 2048, 8 per token, 1 shared; 1 MTP module),
    # t = 8 with sequence parallelism, selective recompute, one stage, as Megatron Core runs it (no dropout, SwiGLU
    # fused); bytes per token on one rank, every term split along s or over heads:
    h, s, V = 7168, 4096, 129280
    attention = (2 * h + 2 * h  # LN₁ in, its output
                 + 2 * 1536 + 2 * 1536  # the query latent before and after its norm
                 + 2 * (512 + 64) + 2 * 512  # the key/value latent with the rope key, and the normed latent
                 + 2 * 128 * 192 * 2 + 2 * 128 * (128 + 128) + 2 * 128 * 128)  # Q, K; V's up projection; proj input
    dense_mlp = 2 * h + 2 * h + 2 * 3 * 18432  # LN₂ in, fc1 in; gate-and-up, product
    moe_mlp = (2 * h + 2 * h + 4 * 256 + 3 * 8 * 8 + 4 * 8  # norm, router input; scores, indices, top-k values
               + 8 * 2 * 3 * 2048 + 2 * 3 * 2048)  # 8 copies through a 2048-wide expert; the shared expert
    copies = 8 * (2 * h + 4)  # whole on each rank: all-gathered over t
    moe_layer = (attention + moe_mlp) // 8 + copies
    per_token = 3 * (attention + dense_mlp) // 8 + 58 * moe_layer
    # outside the layers: the token ids; the output layer and loss (the final norm's and head's inputs on s/t tokens,
    # the fp32 softmax of V/t, the target mask and int64 targets, cross_entropy.py L181); the MTP module's MoE layer
    # and its own output layer and loss; and the core (softmax output, 16 heads of s²) of the layer being rebuilt
    head = 4 * h // 8 + 4 * V // 8 + 9
    expected = s * (per_token + 8 + head + moe_layer + head) + 2 * 16 * s * s
    report = cli_json(capsys, "estimate", "--model", "deepseek-v3", *DEEPSEEK_LAYOUT)
    assert report["memory"]["activations"] == expected == 40_693_456_896
    assert report["memory"]["activation_formula"] == ("memory.activations.layer.decoder.moe.selective_sp (58 MoE layers) + "
                                                      "memory.activations.layer.decoder.selective_sp (3 dense)")


def test_estimate_dense_models_use_the_decoder_forms(capsys):
    report = cli_json(capsys, "estimate", "--model", "llama2-70b", "--gpu", "a100-80gb", "--tp", "8", "--pp", "4", "--dp", "2",
                      "--global-batch", "32", "--seq", "4096")
    assert report["memory"]["activation_formula"] == "memory.activations.layer.decoder.selective"
    # 80/4 layers of 4 micro-batches, sb(8h + (4·128·(64 + 8) + 2·3·28672)/8) bytes each (h 8192, s 4096: no dropout,
    # SwiGLU fused), with their token ids, and one layer's rebuilt core (2·(64/8)·s²)
    per_token = 8 * 8192 + (4 * 128 * (64 + 8) + 2 * 3 * 28672) // 8
    assert report["memory"]["first_stage"]["activations"] == (4096 * per_token * 20 + 8 * 4096) * 4 + 2 * 8 * 4096**2
