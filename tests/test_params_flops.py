"""The classic parameter and FLOP formulas against published figures and PyTorch's own counters."""

import pytest
import sympy as sp
import torch
import transformers
from torch.utils.flop_counter import FlopCounterMode

from llm_formulas.derivations.reports.catalogue import derivation_of
from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.vocabulary.examples import example
from llm_formulas.formulas.vocabulary.symbols import V, b, h, l, s
from helpers import value


def gpt2(n_layer=2, n_embd=64, n_head=4, vocab=101, positions=32):
    config = transformers.GPT2Config(n_layer=n_layer, n_embd=n_embd, n_head=n_head, vocab_size=vocab, n_positions=positions)
    return config


@pytest.mark.parametrize("shape", [dict(n_layer=12, n_embd=768, n_head=12, vocab=50257, positions=1024),
                                   dict(n_layer=3, n_embd=96, n_head=6, vocab=1000, positions=77)])
def test_params_total_equals_transformers_gpt2_on_meta_device(shape):
    config = gpt2(**shape)
    with torch.device("meta"):
        model = transformers.GPT2LMHeadModel(config)
    counted = sum(p.numel() for p in model.parameters())
    assert value("params.total", l=shape["n_layer"], h=shape["n_embd"], V=shape["vocab"], s=shape["positions"]) == counted


@pytest.mark.parametrize("batch, seq", [(1, 8), (3, 17)])
def test_forward_and_backward_flops_equal_the_flop_counter(batch, seq):
    torch.manual_seed(0)
    config = gpt2()
    model = transformers.GPT2LMHeadModel(config).float()
    model.config._attn_implementation = "eager"
    tokens = torch.randint(0, config.vocab_size, (batch, seq))
    with FlopCounterMode(display=False) as forward_counter:
        output = model(tokens, use_cache=False)
    with FlopCounterMode(display=False) as backward_counter:
        output.logits.sum().backward()
    expected = value("flops.forward", b=batch, s=seq, l=config.n_layer, h=config.n_embd, V=config.vocab_size)
    assert forward_counter.get_total_flops() == expected
    assert backward_counter.get_total_flops() == value(
        "flops.backward", b=batch, s=seq, l=config.n_layer, h=config.n_embd, V=config.vocab_size
    )


def test_s9_recompute_from_scratch():
    # 001: "第 1 层算 1 层 ... 第 80 层算 80 层，一共算了 3240 层 ... 翻了 40 倍" (SOURCES.md S9: 3240, 40.5×).
    case = example("S9")
    assert case.formula_id == "flops.recompute.from_scratch" and case.claimed == 3240
    assert case.exact() == 3240
    assert case.exact() / 80 == sp.Rational(81, 2)  # the article rounds 40.5× to "40×"


def test_s10_one_layer_step():
    # 001: 8 × 4096 × 6 × 1B = "196 Tflops", "0.6 秒" on a 4090 at 330 TFLOPS (SOURCES.md S10: 196.6 TFLOP, 0.596 s).
    case = example("S10")
    assert case.formula_id == "flops.training.approx"
    assert case.exact() == 8 * 4096 * 6 * 10**9
    assert abs(case.scaled() - 196) < 1  # article: 196
    assert case.scaled() == pytest.approx(196.608)  # exact: 196.6
    seconds = case.exact() / (330 * 10**12)
    assert float(seconds) == pytest.approx(0.596, abs=5e-4)  # article: 0.6 s


def test_s19_bloom_iteration():
    # 004 slides: 34.8 PFLOP per iteration; SOURCES.md S19: 6PD gives 34.65, with attention and logits 35.46.
    case = example("S19")
    assert case.formula_id == "flops.training"
    assert case.claimed_text.startswith("34.8")
    B_, s_, l_, h_, V_ = 16, 2048, 70, 14336, 250880  # 3 × (24Bsh²l + 4Bs²hl + 2BshV), written out
    assert case.exact() == 3 * (24 * B_ * s_ * h_**2 * l_ + 4 * B_ * s_**2 * h_ * l_ + 2 * B_ * s_ * h_ * V_)
    assert case.scaled() == pytest.approx(35.46, abs=5e-3)  # SOURCES.md S19: with attention and logits, 35.46
    bloom_params = 176_247_271_424  # BLOOM-176B as Hugging Face counts it
    six_pd = value("flops.training.approx", P=bloom_params, D=16 * 2048) / 10**15
    assert float(six_pd) == pytest.approx(34.6516, rel=1e-5)
    assert abs(float(six_pd) - 34.8) / 34.8 < 0.005  # the slides' figure is 6ΨD, rounded


def test_bloom_param_count_from_the_classic_layer():
    # BLOOM-176B: 70 layers of the classic block, token embeddings, an embedding LayerNorm and a final one, no position table.
    classic_layers = value("params.layer", h=14336) * 70
    assert classic_layers + 250880 * 14336 + 4 * 14336 == 176_247_271_424


def test_megatron_is_four_layers_plus_three_logits():
    steps = derivation_of("flops.megatron").check()
    assert len(steps) == 3 and all(o.ok for o in steps)
    # GPT-3 175B shape, batch 1536: 4 × 96 layers × (24Bsh² + 4Bs²h) + 3 × 2BshV, written out by hand
    B_, s_, l_, h_, V_ = 1536, 2048, 96, 12288, 51200
    by_hand = 4 * l_ * (24 * B_ * s_ * h_**2 + 4 * B_ * s_**2 * h_) + 3 * 2 * B_ * s_ * h_ * V_
    assert value("flops.megatron", B=B_, s=s_, l=l_, h=h_, V=V_) == by_hand


def test_inference_misprint_is_refuted():
    refutations = [o for o in derivation_of("flops.inference.per_token").check() if o.claim == "refutes"]
    assert len(refutations) == 1 and refutations[0].ok
    assert (refutations[0].lhs, refutations[0].rhs) == ("6*P", "2*P")  # 000 printed 6Ψ per token; a forward pass is 2Ψ
    assert refutations[0].detail.endswith("claimed/correct = 3")


def test_factored_forward_equals_its_parts():
    forward = get("flops.forward").expr
    parts = l * get("flops.layer.forward").expr + get("flops.logits").expr
    assert sp.expand(forward - parts) == 0
    assert sp.expand(forward - (24 * b * s * l * h**2 + 4 * b * s**2 * l * h + 2 * b * s * h * V)) == 0
