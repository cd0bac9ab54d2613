"""The four miscounts of issue 28, each against transformers 5.24 itself.

1. Falcon with new_decoder_architecture: FalconAttention broadcasts K and V to every query head before it writes
   the cache (modeling_falcon.py, _split_heads), so DynamicCache holds a heads of keys and values, not g.
2. Qwen2/Qwen3 (and the MoE variants) with use_sliding_window: the layers from max_window_layers on keep W − 1
   tokens (Qwen2-MoE: its even layers below max_window_layers; Qwen3-MoE: every layer).
3. num_nextn_predict_layers = 0 (Kimi-K2- and Moonlight-shaped DeepSeek-V3 configs) is valid: no MTP module.
4. GPT-2 with add_cross_attention builds a cross-attention block and its norm in every layer.
Oracles: the cache tensors of a real forward (use_cache=True) of tiny models, and sum(p.numel()) on the meta device.
"""

import pytest
import torch
import transformers

from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.data.hf_config import read_config


def cached_bytes(config: dict, batch: int, seq: int) -> list[int]:
    settings = {key: value for key, value in config.items() if key != "model_type"}
    hf = transformers.AutoConfig.for_model(config["model_type"], **settings)
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(hf, attn_implementation="eager", experts_implementation="eager").eval()
    tokens = torch.randint(0, config["vocab_size"], (batch, seq), generator=torch.Generator().manual_seed(seq))
    with torch.no_grad():
        cache = model(tokens, use_cache=True).past_key_values
    return [sum(t.numel() * t.element_size() for t in (layer.keys, layer.values)) for layer in cache.layers]


def kv_bytes(config: dict, **shape) -> int:
    return read_config(config).evaluate(get("memory.kv_cache.decoder").dimensioned, **shape)


def meta_count(config: dict) -> int:
    settings = {key: value for key, value in config.items() if key != "model_type"}
    hf = transformers.AutoConfig.for_model(config["model_type"], **settings)
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(hf)
    return sum(p.numel() for p in model.parameters())


FALCON_NEW = {"model_type": "falcon", "num_hidden_layers": 2, "hidden_size": 48, "num_attention_heads": 6, "num_kv_heads": 2,
              "vocab_size": 97, "new_decoder_architecture": True}


@pytest.mark.parametrize("config", [FALCON_NEW, {**FALCON_NEW, "num_ln_in_parallel_attn": 1, "num_kv_heads": 3},
                                    {**FALCON_NEW, "new_decoder_architecture": False, "multi_query": True}])
def test_falcon_cache_holds_what_dynamic_cache_holds(config):
    measured = cached_bytes(config, 2, 7)  # float32
    assert sum(measured) == kv_bytes(config, b=2, s=7, q=4)


def test_falcon_40b_cache_is_every_query_heads_keys_and_values():
    # tiiuae/falcon-40b's shape (h 8192, 128 heads of 64, 8 KV heads, 60 layers); at b = 1, s = 7 in bf16 the
    # DynamicCache holds 60·7·2·128·64·2 = 13,762,560 bytes (the measurement), 16× the 860,160 of g = 8 heads
    config = {"model_type": "falcon", "hidden_size": 8192, "num_attention_heads": 128, "num_kv_heads": 8, "num_hidden_layers": 60,
              "vocab_size": 65024, "new_decoder_architecture": True, "parallel_attn": True, "bias": False}
    assert kv_bytes(config, b=1, s=7, q=2) == 13_762_560 == 16 * 860_160


QWEN_WINDOWED = dict(num_hidden_layers=4, hidden_size=32, num_attention_heads=4, num_key_value_heads=2, intermediate_size=40,
                     vocab_size=50, use_sliding_window=True, sliding_window=4, max_window_layers=2, head_dim=8)
QWEN_EXPERTS = dict(moe_intermediate_size=16, num_experts=4, num_experts_per_tok=2, shared_expert_intermediate_size=16)


@pytest.mark.parametrize("family, kinds", [
    ("qwen2", ("full", "full", "window", "window")),  # layers i ≥ max_window_layers slide
    ("qwen3", ("full", "full", "window", "window")),
    ("qwen2_moe", ("window", "full", "full", "full")),  # even layers below max_window_layers
    ("qwen3_moe", ("window",) * 4),  # every layer
])
def test_qwen_sliding_windows_as_the_cache_holds_them(family, kinds):
    config = {"model_type": family, **QWEN_WINDOWED, **(QWEN_EXPERTS if family.endswith("_moe") else {})}  # dense: no expert keys
    architecture = read_config(config)
    assert architecture.layer_kinds == kinds
    for seq in (3, 7):  # below the window every layer holds s tokens; past it the sliding ones W − 1 = 3
        measured = cached_bytes(config, 1, seq)
        expected = {kind: architecture.evaluate(get(f"memory.kv_cache.layer.{kind}").dimensioned, b=1, s=seq, q=4)
                    for kind in ("full", "window")}
        assert measured == [expected[kind] for kind in kinds]
    assert cached_bytes({**config, "use_sliding_window": False}, 1, 7) == [2 * 2 * 8 * 7 * 4] * 4  # switched off: all full
    assert read_config({**config, "use_sliding_window": False}).layer_kinds == ("full",) * 4


@pytest.mark.parametrize("mtp", [0, 1])
def test_num_nextn_predict_layers_zero_is_no_mtp_module(mtp):
    config = {"model_type": "deepseek_v3", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 96,
              "moe_intermediate_size": 32, "vocab_size": 101, "n_routed_experts": 8, "num_experts_per_tok": 2, "n_shared_experts": 1,
              "first_k_dense_replace": 1, "q_lora_rank": 24, "kv_lora_rank": 16, "qk_rope_head_dim": 8, "qk_nope_head_dim": 12,
              "v_head_dim": 10, "n_group": 2, "topk_group": 1, "num_nextn_predict_layers": mtp}
    architecture = read_config(config)
    assert architecture.evaluate(get("params.decoder.total").dimensioned) == meta_count(config)
    assert (architecture.evaluate(get("params.decoder.mtp").dimensioned) == 0) == (mtp == 0)


def test_gpt2_with_cross_attention_counts_its_blocks():
    small = {"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257, "n_positions": 1024}
    crossed = {**small, "add_cross_attention": True}
    assert read_config(small).evaluate(get("params.decoder.total").dimensioned) == meta_count(small) == 124_439_808
    assert read_config(crossed).evaluate(get("params.decoder.total").dimensioned) == meta_count(crossed) == 152_806_656
