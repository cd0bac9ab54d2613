"""Full-size presets of today's families: exact against transformers on the meta device, and near the published figures.

Oracle 1: transformers 5.24 builds each preset's config on the meta device; sum(p.numel()) must equal
params.decoder.total exactly. Oracle 2: the figures each model's authors publish (cited per row), which
are rounded; the row says which rounding.
"""

import pytest
import torch
import transformers

from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.data.hf_config import ConfigError, read_config
from llm_formulas.formulas.data.presets import preset

NEW_PRESETS = ["deepseek-v3", "qwen3-235b-a22b", "qwen3-32b", "llama3.1-405b", "gpt-oss-120b", "gemma3-27b", "mixtral-8x22b",
               "mixtral-8x7b"]


def meta_model(config: dict) -> torch.nn.Module:
    settings = {key: value for key, value in config.items() if key != "model_type"}
    hf = transformers.AutoConfig.for_model(config["model_type"], **settings)
    with torch.device("meta"):
        return transformers.AutoModelForCausalLM.from_config(hf)


def evaluate(config: dict, formula_id: str, **extra) -> int:
    return read_config(config).evaluate(get(formula_id).dimensioned, **extra)


@pytest.mark.parametrize("name", NEW_PRESETS)
def test_preset_total_equals_transformers_on_the_meta_device(name):
    config = preset(name).config
    model = meta_model(config)
    assert evaluate(config, "params.decoder.total") == sum(p.numel() for p in model.parameters())
    if evaluate(config, "params.decoder.active") != evaluate(config, "params.decoder.total"):
        # active: everything but the routed experts, plus k/E of them (every expert the same size)
        experts = sum(p.numel() for n, p in model.named_parameters() if ".experts." in n)
        k = config["num_experts_per_tok"]
        E = config.get("num_local_experts") or config.get("num_experts") or config.get("n_routed_experts")
        rest = sum(p.numel() for p in model.parameters()) - experts
        assert evaluate(config, "params.decoder.active") == rest + experts * k // E


# (preset, published total, published active, rounding unit, source)
PUBLISHED = [
    ("deepseek-v3", 671e9, 37e9, 1e9, "DeepSeek-V3 Technical Report, abstract: 671B total, 37B activated per token"),
    ("qwen3-235b-a22b", 235e9, 22e9, 1e9, "Qwen3 Technical Report, Table 2: 235B total, 22B activated"),
    ("qwen3-32b", 32.8e9, 32.8e9, 0.1e9, "Qwen/Qwen3-32B model card: 32.8B parameters"),
    ("llama3.1-405b", 405e9, 405e9, 1e9, "The Llama 3 Herd of Models: 405B (the 405.85B counted rounds down in the name)"),
    ("gpt-oss-120b", 116.83e9, 5.13e9 + 201088 * 2880, 0.01e9,
     "gpt-oss model card, Table 1: 116.83B total, 5.13B active excluding the 0.58B (un)embedding, added back here"),
    ("gemma3-27b", 27e9, 27e9, 0.1e9, "Gemma 3 Technical Report, Table 1: 27B (text weights; the 0.4B vision encoder apart)"),
    ("mixtral-8x22b", 141e9, 39e9, 1e9, "Mistral AI, Mixtral 8x22B: 141B parameters, 39B active"),
    ("mixtral-8x7b", 47e9, 13e9, 1e9, "Jiang et al. 2024, Mixtral of Experts §1: 47B parameters, 13B active per token"),
]


@pytest.mark.parametrize("name, total, active, unit, source", PUBLISHED, ids=[row[0] for row in PUBLISHED])
def test_preset_counts_round_to_the_published_figures(name, total, active, unit, source):
    config = preset(name).config
    assert abs(evaluate(config, "params.decoder.total") - total) <= unit
    assert abs(evaluate(config, "params.decoder.active") - active) <= unit


def test_deepseek_v3_with_its_mtp_module_is_the_685b_checkpoint():
    # DeepSeek-V3 model card: "685B ... 671B of the Main Model weights and 14B of the Multi-Token Prediction (MTP) Module".
    # The checkpoint stores the MTP module with its own embedding and head copies (2·V·h); the Hub lists its safetensors
    # as 684.5B, which also holds FP8 block scales (one per 128×128 block, ≈ 0.04B): 671.03 + 13.46 = 684.49B, "685B".
    config = preset("deepseek-v3").config
    mtp = evaluate(config, "params.decoder.mtp")
    copies = 2 * 129280 * 7168
    assert 13e9 < mtp + copies < 14e9
    assert abs(evaluate(config, "params.decoder.total") + mtp + copies - 684.5e9) < 0.1e9


# KV cache per token of context, bf16, as DynamicCache holds it (hand arithmetic from the published shapes)
KV_PER_TOKEN = [
    ("deepseek-v3", 61 * (512 + 64) * 2),  # the latent and the rope key: 70,272 B, not 61·2·128·192·2
    ("qwen3-235b-a22b", 94 * 2 * 4 * 128 * 2),
    ("llama3.1-405b", 126 * 2 * 8 * 128 * 2),
    ("mixtral-8x22b", 56 * 2 * 8 * 128 * 2),
]


@pytest.mark.parametrize("name, expected", KV_PER_TOKEN)
def test_kv_bytes_per_token(name, expected):
    assert evaluate(preset(name).config, "memory.kv_cache.decoder", b=1, s=1, q=2) == expected


def test_gemma3_27b_long_context_cache_keeps_1023_tokens_in_52_layers():
    # Gemma 3 report: 5 local (window 1024) to 1 global layer; 62 layers → 52 local, 10 global
    config = preset("gemma3-27b").config
    per_token = 2 * 16 * 128 * 2
    assert read_config(config).layer_kinds.count("window") == 52
    assert evaluate(config, "memory.kv_cache.decoder", b=1, s=32768, q=2) == per_token * (10 * 32768 + 52 * 1023)


def test_gpt_oss_keeps_127_tokens_in_half_its_layers():
    config = preset("gpt-oss-120b").config
    per_token = 2 * 8 * 64 * 2
    assert evaluate(config, "memory.kv_cache.decoder", b=1, s=4096, q=2) == per_token * (18 * 4096 + 18 * 127)


@pytest.mark.parametrize("extra, message", [
    ({"vision_config": {"hidden_size": 1152}}, "'vision_config' is not counted"),
    ({"quantization_config": {"quant_method": "eetq"}}, "quant_method 'eetq' is not modelled"),
    ({"layer_types": ["linear_attention", "full_attention"]}, r"layer_types\[0\] = 'linear_attention' is not modelled"),
    ({"layer_types": ["full_attention", "banded"]}, r"layer_types\[1\] = 'banded' is not modelled"),
    ({"layer_types": ["full_attention"]}, "'layer_types' must list 2 layer types"),
])
def test_unmodelled_features_are_refused_naming_the_field(extra, message):
    config = {"model_type": "gpt_oss", "vocab_size": 100, "hidden_size": 64, "intermediate_size": 32, "num_hidden_layers": 2,
              "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "num_local_experts": 4, "num_experts_per_tok": 2}
    read_config(config)  # the config itself is fine
    with pytest.raises(ConfigError, match=message):
        read_config({**config, **extra})


@pytest.mark.parametrize("config, message", [
    ({"model_type": "deepseek_v3", "attention_bias": True}, "'attention_bias' = True is not modelled"),
    ({"model_type": "llama4_text", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2, "intermediate_size": 8,
      "vocab_size": 10, "moe_layers": [5]}, "'moe_layers' must be a list of layer indices below 2"),
])
def test_family_options_the_counts_do_not_model_are_refused(config, message):
    with pytest.raises(ConfigError, match=message):
        read_config(config)


# One real model of each remaining family, from its published config.json (the keys that matter), counted exactly
# against transformers on the meta device and compared with the figure its authors publish.
FAMILY_MODELS = [
    ("DeepSeek-V2", {"model_type": "deepseek_v2", "vocab_size": 102400, "hidden_size": 5120, "intermediate_size": 12288,
                     "moe_intermediate_size": 1536, "num_hidden_layers": 60, "num_attention_heads": 128, "num_key_value_heads": 128,
                     "n_shared_experts": 2, "n_routed_experts": 160, "num_experts_per_tok": 6, "first_k_dense_replace": 1,
                     "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128},
     236e9, 21e9, 1e9),  # DeepSeek-V2 paper, abstract: 236B total, 21B activated
    ("Qwen1.5-MoE-A2.7B", {"model_type": "qwen2_moe", "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 5632,
                           "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632, "num_hidden_layers": 24,
                           "num_attention_heads": 16, "num_key_value_heads": 16, "num_experts": 60, "num_experts_per_tok": 4},
     14.3e9, 2.7e9, 0.1e9),  # Qwen blog, Qwen1.5-MoE: 14.3B parameters, 2.7B activated
    ("gemma-2-27b", {"model_type": "gemma2", "vocab_size": 256000, "hidden_size": 4608, "intermediate_size": 36864,
                     "num_hidden_layers": 46, "num_attention_heads": 32, "num_key_value_heads": 16, "head_dim": 128,
                     "sliding_window": 4096},
     27.2e9, 27.2e9, 0.1e9),  # Gemma 2 report, Table 1 (27B), the Hub's google/gemma-2-27b: 27.2B
    ("OLMo-2-1124-7B", {"model_type": "olmo2", "vocab_size": 100352, "hidden_size": 4096, "intermediate_size": 11008,
                        "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32},
     7.3e9, 7.3e9, 0.1e9),  # allenai/OLMo-2-1124-7B: 7.3B parameters
    ("Phi-3.5-MoE", {"model_type": "phimoe", "vocab_size": 32064, "hidden_size": 4096, "intermediate_size": 6400,
                     "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "num_local_experts": 16,
                     "num_experts_per_tok": 2, "lm_head_bias": True, "attention_bias": True},
     41.9e9, 6.6e9, 0.1e9),  # microsoft/Phi-3.5-MoE-instruct model card: 41.9B total, 6.6B active
    ("Llama-4-Scout (text)", {"model_type": "llama4_text", "vocab_size": 202048, "hidden_size": 5120, "intermediate_size": 8192,
                              "intermediate_size_mlp": 16384, "num_hidden_layers": 48, "num_attention_heads": 40,
                              "num_key_value_heads": 8, "head_dim": 128, "num_local_experts": 16, "num_experts_per_tok": 1,
                              "interleave_moe_layer_step": 1, "attention_chunk_size": 8192},
     None, 17e9, 0.2e9),  # Meta, Llama 4 model card: 17B active (its 109B total includes the vision encoder, not built here)
    ("GLM-4.5", {"model_type": "glm4_moe", "vocab_size": 151552, "hidden_size": 5120, "intermediate_size": 12288,
                 "moe_intermediate_size": 1536, "num_hidden_layers": 92, "num_attention_heads": 96, "num_key_value_heads": 8,
                 "head_dim": 128, "n_routed_experts": 160, "n_shared_experts": 1, "num_experts_per_tok": 8,
                 "first_k_dense_replace": 3, "use_qk_norm": True, "attention_bias": True},
     None, None, None),  # exact against transformers only: the published 355B / 32B are not reproduced to the billion
]


@pytest.mark.parametrize("name, config, total, active, unit", FAMILY_MODELS, ids=[row[0] for row in FAMILY_MODELS])
def test_one_real_model_per_family(name, config, total, active, unit):
    model = meta_model(config)
    assert evaluate(config, "params.decoder.total") == sum(p.numel() for p in model.parameters())
    if total is not None:
        assert abs(evaluate(config, "params.decoder.total") - total) <= unit
    if active is not None:
        assert abs(evaluate(config, "params.decoder.active") - active) <= unit


def test_params_mtp_option_adds_deepseek_v3s_prediction_module(capsys):
    # oracle: the MTP module is 3 RMSNorms (h each), the 2h→h projection and one MoE block (DeepSeek-V3 report §2.2);
    # that block's size is taken from transformers' own layer 3 (the first MoE layer) on the meta device
    import json

    from llm_formulas.render.cli.main import main

    model = meta_model(preset("deepseek-v3").config)
    block = sum(p.numel() for p in model.model.layers[3].parameters())
    h = 7168
    assert main(["params", "--model", "deepseek-v3", "--mtp", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["mtp"] == 3 * h + 2 * h * h + block
    assert doc["total_with_mtp"] == doc["total"] + doc["mtp"]
