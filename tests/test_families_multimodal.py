"""Multimodal checkpoints: the text decoder and the vision tower with its projector, each against transformers.

Oracle: the ...ForConditionalGeneration model transformers 5.24 builds on the meta device; its parameters under
language_model (and lm_head) are the text decoder's, the rest the vision tower's and the projector's. Each
config exercises the tower's options (SigLIP's pooling head, Pixtral's feature layers and projector biases, the
Qwen mergers' merge size, Qwen3-VL's DeepStack mergers, Llama-4's adapter, Kimi-K2.5's MoonViT with its 2-D position table,
a merge kernel of 2×3 and a projector pre-norm of projection_hidden_size) and the class's rule for a tied head.
"""

import pytest
import torch
import transformers
from family_oracle import hf_config

from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.data.hf_config import ConfigError, read_config

TEXT = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, intermediate_size=64, vocab_size=1000)
SIGLIP = dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4, image_size=28, patch_size=14)
PIXTRAL = dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4, head_dim=8, patch_size=14, image_size=56)
QWEN25 = dict(hidden_size=32, intermediate_size=48, depth=2, num_heads=4, patch_size=14, out_hidden_size=64)
QWEN3 = dict(hidden_size=32, intermediate_size=48, depth=3, num_heads=4, patch_size=16, out_hidden_size=64, num_position_embeddings=16,
             deepstack_visual_indexes=[0, 1])
LLAMA4 = dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4, image_size=28, patch_size=14,
              vision_output_dim=40, projector_input_dim=24, projector_output_dim=24)
KIMI_TEXT = dict(TEXT, model_type="kimi_k2", num_key_value_heads=4, moe_intermediate_size=16, n_routed_experts=4, n_shared_experts=1,
                 num_experts_per_tok=2, first_k_dense_replace=1, q_lora_rank=16, kv_lora_rank=16, qk_rope_head_dim=8,
                 qk_nope_head_dim=8, v_head_dim=8, n_group=1, topk_group=1)
MOONVIT = dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4, patch_size=14, pos_emb_height=5,
               pos_emb_width=6, merge_kernel_size=[2, 3])
CASES = [
    {"model_type": "gemma3", "text_config": dict(TEXT, head_dim=16), "vision_config": dict(SIGLIP, vision_use_head=False)},
    {"model_type": "gemma3", "text_config": dict(TEXT, head_dim=16), "vision_config": SIGLIP, "tie_word_embeddings": False},
    {"model_type": "mistral3", "text_config": dict(TEXT, model_type="mistral"), "vision_config": PIXTRAL},
    {"model_type": "mistral3", "multimodal_projector_bias": True, "vision_feature_layer": [-1, -2], "spatial_merge_size": 3,
     "text_config": dict(TEXT, model_type="mistral"), "vision_config": PIXTRAL},
    {"model_type": "qwen2_5_vl", "text_config": dict(TEXT), "vision_config": QWEN25},
    {"model_type": "qwen2_5_vl", "tie_word_embeddings": False, "text_config": dict(TEXT, tie_word_embeddings=True),
     "vision_config": dict(QWEN25, spatial_merge_size=3)},
    {"model_type": "qwen3_vl", "text_config": dict(TEXT, head_dim=16), "vision_config": QWEN3},
    {"model_type": "qwen3_vl_moe", "text_config": dict(TEXT, head_dim=16, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=24),
     "vision_config": QWEN3},
    {"model_type": "llama4", "text_config": dict(TEXT, head_dim=16, intermediate_size_mlp=80, num_local_experts=4), "vision_config": LLAMA4},
    {"model_type": "kimi_k25", "text_config": KIMI_TEXT, "vision_config": MOONVIT},  # tied by default; pre-norm of 1152
    {"model_type": "kimi_k25", "text_config": KIMI_TEXT, "vision_config": MOONVIT, "tie_word_embeddings": False, "projection_hidden_size": 32},
]


def split_counts(config: dict) -> tuple[int, int]:
    with torch.device("meta"):
        model = transformers.AutoModelForImageTextToText.from_config(hf_config(config))
    text = sum(p.numel() for n, p in model.named_parameters() if "language_model" in n or n.startswith("lm_head"))
    return text, sum(p.numel() for p in model.parameters()) - text


@pytest.mark.parametrize("config", CASES, ids=[f"{c['model_type']}-{i}" for i, c in enumerate(CASES)])
def test_text_decoder_and_towers_equal_transformers(config):
    architecture = read_config(config)
    text, towers = split_counts(config)
    assert architecture.evaluate(get("params.decoder.total").dimensioned) == text
    counts = architecture.tower_parameters()
    assert set(counts) == {"vision_tower", "projector"} and sum(counts.values()) == towers


def test_the_text_decoders_flops_and_cache_are_the_text_models():
    config = CASES[0]
    text_only = read_config({"model_type": "gemma3_text", **config["text_config"], "tie_word_embeddings": True})
    architecture = read_config(config)
    for formula in ("flops.decoder.forward", "memory.kv_cache.decoder"):
        assert architecture.evaluate(get(formula).dimensioned, b=2, s=9, q=2) == text_only.evaluate(get(formula).dimensioned, b=2, s=9, q=2)


@pytest.mark.parametrize("config, message", [
    ({"model_type": "qwen3_vl", "vision_config": QWEN3}, "'text_config' must be an object"),
    ({"model_type": "gemma3", "text_config": dict(TEXT, model_type="t5"), "vision_config": SIGLIP}, "'t5' is not a known text family"),
    ({"model_type": "gemma3", "text_config": TEXT, "vision_config": SIGLIP, "audio_config": {}}, "'audio_config' is not counted"),
    ({"model_type": "llama", **TEXT, "vision_config": SIGLIP}, "'vision_config' is not counted"),
])
def test_configs_the_towers_cannot_read_name_the_key(config, message):
    with pytest.raises(ConfigError, match=message):
        read_config(config)
