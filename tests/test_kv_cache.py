"""The KV cache: the formula against the cache tensors of a tiny GQA LLaMA, and 001's figures."""

import pytest
import sympy as sp
import torch
import transformers

from llm_formulas.derivations.reports.catalogue import derivation_of
from llm_formulas.formulas.vocabulary.examples import examples_for
from helpers import value

GIB = 2**30


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_cache_tensors_of_a_gqa_llama_equal_the_formula(dtype):
    l_, a_, g_, d_head_, s_, b_ = 2, 8, 2, 16, 11, 3
    config = transformers.LlamaConfig(vocab_size=64, hidden_size=a_ * d_head_, intermediate_size=96, num_hidden_layers=l_,
                                      num_attention_heads=a_, num_key_value_heads=g_, max_position_embeddings=64)
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config).to(dtype).eval()
    with torch.no_grad():
        out = model(input_ids=torch.randint(0, 64, (b_, s_)), use_cache=True)
    cache = out.cache if "cache" in out else out.past_key_values
    tensors = [tensor for layer in cache.layers for tensor in (layer.keys, layer.values)]
    measured = sum(tensor.numel() * tensor.element_size() for tensor in tensors)
    width = torch.tensor([], dtype=dtype).element_size()
    assert len(tensors) == 2 * l_
    assert measured == value("memory.kv_cache", l=l_, g=g_, d_head=d_head_, s=s_, b=b_, q=width)
    assert measured == b_ * s_ * value("memory.kv_cache.per_token", l=l_, g=g_, d_head=d_head_, q=width)


def test_s12_llama2_70b_without_gqa():
    # 001: "2 (K, V) * 80 * 8192 * 4096 * 8 * 2B = 80 GB" (SOURCES.md S12: 80.0 GiB, 85.9 GB)
    (case,) = examples_for("memory.kv_cache")
    assert case.case == "S12"
    assert case.exact() == 2 * 80 * 8192 * 4096 * 8 * 2
    assert case.scaled() == 80  # GiB: the article's "GB" are binary
    assert float(case.exact()) / 10**9 == pytest.approx(85.9, abs=0.05)


def test_5gb_per_prompt_is_refuted_and_the_real_70b_needs_1_25_gib():
    # 001: "每个 prompt 都要占据 5 GB 的 KV Cache"; its own figures give 80 GiB / 8 = 10 GiB
    per_prompt = value("memory.kv_cache.per_sequence", l=80, g=64, d_head=128, s=4096, q=2)
    assert per_prompt == 10 * GIB
    # the real LLaMA-2 70B: 8 KV heads (num_key_value_heads = 8 in its config): 1.25 GiB per 4096 tokens
    assert value("memory.kv_cache.per_sequence", l=80, g=8, d_head=128, s=4096, q=2) == sp.Rational(5, 4) * GIB
    outcomes = derivation_of("memory.kv_cache.per_sequence").check()
    assert all(o.ok for o in outcomes) and any(o.claim == "refutes" for o in outcomes)


def test_inference_footprint_of_001():
    # 001: 140 GB weights; current-layer activations "8 * 4096 * 8192 * 2B = 0.5 GB"
    total = value("memory.inference", P=70 * 10**9, l=80, g=64, d_head=128, s=4096, b=8, h=8192, q=2)
    assert total == 140 * 10**9 + 80 * GIB + GIB // 2
