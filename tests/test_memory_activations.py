"""Activation memory: the derived per-layer bytes against what PyTorch autograd actually saves.

The oracle is torch: tests/megatron_block.py runs a Megatron-style layer in bf16 and
counts the unique storages saved for backward (parameters excluded). The formulas'
LayerNorm statistics, one 16-bit mean and rstd per row for each of the two norms, are
written out here as 2 · 2 · 2 · s · b bytes.
"""

import pytest
import sympy as sp
import torch
import transformers

from llm_formulas.derivations.reports.catalogue import derivation_of
from llm_formulas.derivations.topics.memory import exact_bytes, general_tensors, stored_tensors
from llm_formulas.derivations.vocabulary.proof import valued
from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.vocabulary.examples import examples_for
from llm_formulas.formulas.vocabulary.symbols import quantity
from megatron_block import measure, saved_bytes
from helpers import value

SHAPES = [(16, 2, 64, 4), (32, 3, 96, 6), (24, 1, 128, 8)]  # (s, b, h, a)


def norm_statistics(s, b):
    return 2 * 2 * 2 * s * b  # two LayerNorms × (mean, rstd) × s·b rows × 2 bytes (bf16 on the CPU)


@pytest.mark.parametrize("s, b, h, a", SHAPES)
def test_layer_exact_equals_saved_bytes(s, b, h, a):
    measured = measure(s, b, h, a)
    assert measured == value("memory.activations.layer.exact", s=s, b=b, h=h, a=a)
    assert measured == value("memory.activations.layer", s=s, b=b, h=h, a=a) + norm_statistics(s, b)
    # Korthikanti's 34sbh + 5as²b written out by hand
    assert measured == 34 * s * b * h + 5 * a * s * s * b + norm_statistics(s, b)


@pytest.mark.parametrize("s, b, h, a", SHAPES)
@pytest.mark.parametrize("mode, formula_id", [("eager", "memory.activations.layer.tp"),
                                              ("selective", "memory.activations.layer.selective"),
                                              ("flash", "memory.activations.layer.flash")])
@pytest.mark.parametrize("tp", [1, 2])
def test_variants_equal_saved_bytes(s, b, h, a, mode, formula_id, tp):
    measured = measure(s, b, h, a, mode=mode, tp=tp)
    assert measured == value(formula_id, s=s, b=b, h=h, a=a, t=tp) + norm_statistics(s, b)
    assert measured == valued(exact_bytes(stored_tensors(mode, tp=sp.Integer(tp)))).subs(
        {quantity("s").symbol: s, quantity("b").symbol: b, quantity("h").symbol: h, quantity("a").symbol: a})


@pytest.mark.parametrize("s, b, h, a", SHAPES)
def test_full_recompute_keeps_only_the_input(s, b, h, a):
    assert measure(s, b, h, a, mode="full") == value("memory.activations.layer.full_recompute", s=s, b=b, h=h)


@pytest.mark.parametrize("s, b, h, a", SHAPES[:2])
def test_gated_mlp_equals_saved_bytes(s, b, h, a):
    d_ff = 3 * h  # a SwiGLU width that is not 4h, so the d_ff terms are really tested
    measured = measure(s, b, h, a, d_ff=d_ff)
    expected = value("memory.activations.layer.gated", s=s, b=b, h=h, a=a, g=a, d_head=h // a, d_ff=d_ff)
    assert measured == expected + norm_statistics(s, b)


# Llama-style shapes (s, b, h, a, g, d_head, d_ff): GQA (g < a), a gated MLP whose d_ff is not 4h, and in the last
# a head dimension that is not h/a (a·d_head = 96 ≠ h = 64)
GENERAL_SHAPES = [(16, 2, 64, 4, 2, 16, 192), (32, 3, 96, 6, 2, 16, 256), (24, 1, 64, 8, 4, 12, 160)]


@pytest.mark.parametrize("s, b, h, a, g, d_head, d_ff", GENERAL_SHAPES)
@pytest.mark.parametrize("mode, formula_id", [("eager", "memory.activations.layer.general.tp"),
                                              ("selective", "memory.activations.layer.general.selective")])
@pytest.mark.parametrize("tp", [1, 2])
def test_general_block_equals_saved_bytes(s, b, h, a, g, d_head, d_ff, mode, formula_id, tp):
    measured = measure(s, b, h, a, mode=mode, tp=tp, g=g, d_head=d_head, d_ff=d_ff)
    sizes = dict(s=s, b=b, h=h, a=a, g=g, d_head=d_head, d_ff=d_ff, gated=1, t=tp)
    assert measured == value(formula_id, **sizes) + norm_statistics(s, b)
    assert measured == valued(exact_bytes(general_tensors(mode, tp=sp.Integer(tp)))).subs(
        {quantity(name).symbol: number for name, number in sizes.items()})


@pytest.mark.parametrize("s, b, h, a, g, d_head", [(16, 2, 64, 4, 2, 16), (24, 1, 64, 8, 4, 12)])
def test_general_block_with_gqa_and_an_ungated_mlp(s, b, h, a, g, d_head):
    tp = 2  # the block's ungated MLP is 4h wide: gated = 0, d_ff = 4h
    measured = measure(s, b, h, a, tp=tp, g=g, d_head=d_head)
    assert measured == value("memory.activations.layer.general.tp", s=s, b=b, h=h, a=a, g=g, d_head=d_head, d_ff=4 * h,
                             gated=0, t=tp) + norm_statistics(s, b)


@pytest.mark.parametrize("mode, formula_id", [("eager", "memory.activations.layer.general.tp_sp"),
                                              ("selective", "memory.activations.layer.general.selective_sp")])
def test_general_block_with_sequence_parallelism(mode, formula_id):
    s, b, h, a, g, d_head, d_ff, tp = GENERAL_SHAPES[0] + (2,)
    measured = measure(s, b, h, a, mode=mode, tp=tp, g=g, d_head=d_head, d_ff=d_ff, sequence_parallel=True)
    assert measured == value(formula_id, s=s, b=b, h=h, a=a, g=g, d_head=d_head, d_ff=d_ff, gated=1, t=tp) + norm_statistics(s, b) // tp


def test_general_block_with_gqa_by_hand():
    # Korthikanti et al. 2022 §4's method, tensor by tensor, one rank of t = 2 (bytes): norms' inputs, the QKV input and
    # the two 1-byte masks whole, 5sbh; Q 2·s·b·(a/t)·d_head, K and V 2·s·b·(g/t)·d_head each, the output projection's
    # input 2·s·b·(a/t)·d_head; softmax 2, mask 1, dropped scores 2 bytes per (a/t)·s²·b; the gated MLP's gate input,
    # SiLU output, up projection and product 2·s·b·d_ff/t each; plus the two norms' statistics
    s, b, h, a, g, d_head, d_ff = GENERAL_SHAPES[2]
    t_ = 2
    by_hand = (2 + 2 + 1 + 2 + 2 + 1) * s * b * h + 2 * s * b * (a // t_) * d_head * 2 + 2 * s * b * (g // t_) * d_head * 2 \
        + 5 * (a // t_) * s * s * b + 4 * 2 * s * b * d_ff // t_ + norm_statistics(s, b)
    assert measure(s, b, h, a, tp=t_, g=g, d_head=d_head, d_ff=d_ff) == by_hand


def test_selective_is_the_flash_count_without_the_log_sum_exp():
    # both drop every s² tensor; flash keeps one fp32 statistic per head and token (4 bytes · a·s·b/t)
    s, b, h, a, tp = 16, 2, 64, 4, 2
    assert measure(s, b, h, a, mode="flash", tp=tp) - measure(s, b, h, a, mode="selective", tp=tp) == 4 * a * s * b // tp


def test_korthikanti_forms_are_approximations_that_check():
    for formula_id in ["memory.activations.layer", "memory.activations.layer.tp", "memory.activations.layer.tp_sp",
                       "memory.activations.layer.selective", "memory.activations.layer.selective_sp",
                       "memory.activations.layer.flash", "memory.activations.layer.gated",
                       "memory.activations.layer.general.tp", "memory.activations.layer.general.tp_sp",
                       "memory.activations.layer.general.selective", "memory.activations.layer.general.selective_sp",
                       "memory.activations.1f1b.interleaved", "memory.activations.selective_001"]:
        outcomes = derivation_of(formula_id).check()
        assert outcomes and all(o.ok for o in outcomes), formula_id
        assert any(o.claim == "concludes" for o in outcomes)


def test_001_formula_is_selective_with_tp():
    # 001: "token 长度 * batch size * hidden * 层数 * (10 + 24/张量并行度) 字节"
    for t_ in (1, 2, 8):
        whole_model = value("memory.activations.selective_001", s=4096, b=8, h=8192, l=80, t=t_)
        assert whole_model == 80 * value("memory.activations.layer.selective", s=4096, b=8, h=8192, t=t_)
        assert whole_model != 80 * value("memory.activations.layer.tp", s=4096, b=8, h=8192, a=64, t=t_)


def test_1f1b_first_stage_holds_l_layers():
    per_layer = value("memory.activations.layer.tp", s=2048, b=1, h=4096, a=32, t=4)
    assert value("memory.activations.1f1b", s=2048, b=1, h=4096, a=32, t=4, l=32, p=4) == 32 * per_layer
    # interleaved, p = 4, v = 2: (p − 1)·2 + (v − 1)·p + 1 = 11 chunks of l/(pv) = 4 layers in flight
    assert value("memory.activations.1f1b.interleaved", s=2048, b=1, h=4096, a=32, t=4, l=32, p=4, v=2) == 11 * 4 * per_layer


def test_s7_llama2_70b_selective():
    # 001: "4096 * 8 * 8192 * 80 * (10 + 24) byte = 730 GB" (SOURCES.md S7: 730.1 GB)
    (case,) = examples_for("memory.activations.selective_001")
    assert case.case == "S7" and case.claimed == 730 * 10**9
    assert case.exact() == 4096 * 8 * 8192 * 80 * 34
    assert case.scaled() == pytest.approx(730.144, abs=1e-3)


def test_s18_llama7b_formula_as_printed_and_refuted():
    # 002: "32 * (14*32*2048*4096 + 4*32*2048*11008 + 8*32*32*2048*4096 + 5*32*32*2048*2048) = 3.1e12"
    (case,) = examples_for("memory.activations.llama_002")
    assert case.case == "S18"
    assert case.exact() == 32 * (14 * 32 * 2048 * 4096 + 4 * 32 * 2048 * 11008 + 8 * 32 * 32 * 2048 * 4096 + 5 * 32 * 32 * 2048 * 2048)
    assert case.scaled() == pytest.approx(3.0988, abs=1e-4)  # SOURCES.md: 3.0988e12 as printed; article 3.1e12
    refutation = [o for o in derivation_of("memory.activations.llama_002").check() if o.claim == "refutes"]
    assert len(refutation) == 1 and refutation[0].ok


def gpt2_bytes(s, b, h, a, n_layer):
    config = transformers.GPT2Config(n_embd=h, n_head=a, n_layer=n_layer, n_positions=s, vocab_size=64,
                                     resid_pdrop=0.1, attn_pdrop=0.1, embd_pdrop=0.1, attn_implementation="eager")
    torch.manual_seed(0)
    model = transformers.GPT2Model(config).to(torch.bfloat16).train()
    ids = torch.randint(0, 64, (b, s))
    return saved_bytes(lambda: model(input_ids=ids, use_cache=False).last_hidden_state, model.parameters())


def test_hf_gpt2_block_saves_about_one_and_a_half_times_megatron():
    s, b, h, a = 96, 2, 64, 4  # as/h = 6, where the ratio is 3/2 exactly
    one_block = gpt2_bytes(s, b, h, a, 2) - gpt2_bytes(s, b, h, a, 1)
    megatron = value("memory.activations.layer", s=s, b=b, h=h, a=a)
    # where the bytes are (eager GPT-2, bf16, per layer): norms 4sbh + 8sb as Megatron; GEMM inputs c_attn 2sbh,
    # Q, K, V 6sbh (contiguous copies), c_proj 2sbh, c_fc 2sbh, mlp c_proj 8sbh; the two residual dropouts keep
    # 16-bit multipliers (2sbh each, Megatron: 1-byte masks); scores: softmax 2as²b, 16-bit mask 2as²b, dropped
    # 2as²b; gelu_new runs as pow/tanh/mul ops that save four [s, b, 4h] tensors (32sbh, Megatron's GELU: 8sbh).
    # 60sbh + 6as²b against 34sbh + 5as²b: the extra is 26sbh + as²b.
    assert one_block == (4 + 2 + 6 + 2 + 2 + 8 + 2 + 2 + 32) * s * b * h + 6 * a * s * s * b + 8 * s * b
    assert (one_block - 8 * s * b) / megatron == sp.Rational(3, 2)
    assert "GPT-2" in get("memory.activations.layer").notes


@pytest.mark.parametrize("s, b, h, a", SHAPES[:2])
@pytest.mark.parametrize("mode, formula_id", [("eager", "memory.activations.layer.tp_sp"),
                                              ("selective", "memory.activations.layer.selective_sp")])
def test_sequence_parallel_divides_everything_by_t(s, b, h, a, mode, formula_id):
    tp = 2
    measured = measure(s, b, h, a, mode=mode, tp=tp, sequence_parallel=True)
    assert measured == value(formula_id, s=s, b=b, h=h, a=a, t=tp) + norm_statistics(s, b) // tp
