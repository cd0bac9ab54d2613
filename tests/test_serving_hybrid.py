"""serving.* on the general decoder: recurrent mixers (Mamba, Mamba-2, RG-LRU, the gated delta-net), hybrid stacks and
layers without a mixer, against real tiny transformers models on the CPU and against published shapes.

Oracles: FlopCounterMode around a prefill (logits_to_keep = 1) and two decoding steps with the model's own cache
(transformers 5.24's reference CPU paths: causal_conv1d_update, the one-token state updates); the bytes the cache holds
after each call (keys, values, conv_states, recurrent_states, RecurrentGemma's module states: tests/family_oracle.py).
The serve command's KV bytes for Qwen3-Next are hand arithmetic from its published config.
"""

from __future__ import annotations

import pytest
import torch
import transformers
from family_cases import config_json
from family_oracle import _module_states, _returned_cache, _tensors, tiny
from helpers import cli_json
from torch.utils.flop_counter import FlopCounterMode

from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.data.hf_config import read_config
from llm_formulas.formulas.vocabulary.symbols import constant_values, quantity

FAMILIES = [("mamba", 0), ("falcon_mamba", 0), ("mamba2", 0), ("jamba", 0), ("nemotron_h", 0), ("recurrent_gemma", 0),
            ("qwen3_next", 0)]
WINDOWED = {"recurrent_gemma"}  # attention_window_size = 4: its cache holds W − 1 tokens, serving's W
BATCH, PROMPT = 2, 5


def value(architecture, formula_id: str, **extra):
    expr = get(formula_id).dimensioned.xreplace(constant_values())
    result = expr.xreplace({**architecture.values, **{quantity(k).symbol: v for k, v in extra.items()}})
    assert not result.free_symbols, result.free_symbols
    return result


def _held(model, cache) -> int:
    states = _module_states(model)
    return sum(t.numel() * t.element_size() for index, layer in enumerate(cache.layers)
               for t in _tensors(layer) + (states[index] if index < len(states) else []))


@pytest.fixture(scope="module")
def measured():
    """Each family's tiny float32 model: a prefill of PROMPT tokens, then two decoding steps: FLOPs and cache bytes."""
    results = {}
    generator = torch.Generator().manual_seed(11)
    for family, index in FAMILIES:
        config = config_json(family, index)
        model = tiny(config)
        prompt = torch.randint(1, config["vocab_size"], (BATCH, PROMPT), generator=generator)
        cache = None if family != "recurrent_gemma" else transformers.DynamicCache(config=model.config.get_text_config())
        flops, held = [], []
        with torch.no_grad():
            with FlopCounterMode(display=False) as counter:
                output = model(prompt, use_cache=True, logits_to_keep=1, **({"cache": cache} if cache is not None else {}))
            cache = cache if cache is not None else _returned_cache(output)
            flops.append(counter.get_total_flops())
            held.append(_held(model, cache))
            for _ in range(2):
                token = torch.randint(1, config["vocab_size"], (BATCH, 1), generator=generator)
                with FlopCounterMode(display=False) as counter:
                    model(token, cache=cache, use_cache=True)
                flops.append(counter.get_total_flops())
                held.append(_held(model, cache))
        results[family] = (read_config(config), flops, held)
    return results


@pytest.mark.parametrize("family", [f for f, _ in FAMILIES])
def test_prefill_flops_on_hybrid_stacks(measured, family):
    architecture, flops, _ = measured[family]
    assert flops[0] == value(architecture, "serving.prefill.flops", b=BATCH, s_in=PROMPT)


@pytest.mark.parametrize("family", [f for f, _ in FAMILIES])
def test_decoding_step_flops_count_the_mixers_one_token_update(measured, family):
    architecture, flops, _ = measured[family]
    for step, context in ((1, PROMPT + 1), (2, PROMPT + 2)):
        assert flops[step] == value(architecture, "serving.decode.flops", b=BATCH, s_ctx=context)


def test_a_mixer_step_is_not_its_one_token_forward(measured):
    # guards the tests above: Mamba-2's lone token padded to a chunk costs more than the step; the step does not grow
    architecture, flops, _ = measured["mamba2"]
    assert flops[1] == flops[2]
    assert value(architecture, "flops.decoder.forward", b=BATCH, s=1) > flops[1]


@pytest.mark.parametrize("family", [f for f, _ in FAMILIES if f not in WINDOWED])
def test_memory_kv_is_what_the_hybrid_cache_holds(measured, family):
    # the states and the attention layers' positions, float32 (the recurrent states are fp32 whatever the dtype)
    architecture, _, held = measured[family]
    for tokens, bytes_held in zip((PROMPT, PROMPT + 1, PROMPT + 2), held):
        assert bytes_held == value(architecture, "serving.memory.kv", b=BATCH, s_ctx=tokens, q_kv=4, t=1, p=1)
        assert bytes_held == value(architecture, "serving.decode.kv_read", b=BATCH, s_ctx=tokens, q_kv=4)


def test_serve_prices_qwen3_next_recurrent_states(capsys):
    # Qwen3-Next-80B-A3B's config (Qwen Team 2025, model card / config.json): 48 layers, one in 4 full attention
    # (2 KV heads of 256), the others gated DeltaNets: 16 key heads of 128, 32 value heads of 128, conv kernel 4.
    # transformers' cache per sequence: K and V of the 12 attention layers in bf16, and per DeltaNet layer the
    # convolution's last 4 inputs of q, k, v (2·16·128 + 32·128 channels) in bf16 and a 128×128 fp32 state per value head
    context = 1024 + 64  # the longest context: prompt and output
    attention = 12 * 2 * 2 * 256 * 2 * context
    deltanet = 36 * ((2 * 16 * 128 + 32 * 128) * 4 * 2 + 32 * 128 * 128 * 4)
    doc = cli_json(capsys, "serve", "--model", "qwen3-next-80b-a3b", "--gpu", "h100-sxm", "--batch", "1", "--input", "1024",
                   "--output", "64")
    assert doc["memory"]["kv_cache_bytes"] == attention + deltanet  # 16 × 68 blocks: 1088 fills whole blocks
    kv = cli_json(capsys, "kv-cache", "--model", "qwen3-next-80b-a3b", "--seq", str(context), "--batch", "1")
    assert kv["bytes"] == attention + deltanet  # kv-cache's figure at the same context
    assert deltanet > attention  # the states are no rounding error: the test fails if they are left out
    mean = 1024 + 64 / 2  # serve reports the step at the mean context
    assert doc["kv_read_bytes"] == 12 * 2 * 2 * 256 * 2 * mean + deltanet  # the step reads the states too
