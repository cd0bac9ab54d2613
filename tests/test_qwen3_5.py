"""Issue 35 item 2: Qwen3.5 (model types qwen3_5 and qwen3_5_moe) against transformers 5.24 on the meta device.

Qwen3.5 is Qwen3-Next's text model (gated attention of 256-wide heads with q/k norms, gated delta-nets where layer_types
says linear_attention, in_proj split in four matrices of the same sizes) with a dense SwiGLU in every layer (qwen3_5) or
every layer a MoE of routed experts and a gated shared expert (qwen3_5_moe), and Qwen3-VL's ViT without its DeepStack
mergers. The shrunk text models' FLOPs and cache are in test_families_new.py (family_cases.py); the published shape
of Qwen3.5-35B-A3B in test_checkpoints.py.
"""

import pytest
from family_cases import config_json
from test_families_multimodal import QWEN3, TEXT, split_counts

from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.data.hf_config import read_config

VISION = {key: value for key, value in QWEN3.items() if key != "deepstack_visual_indexes"}
CASES = [
    {"model_type": "qwen3_5", "text_config": {k: v for k, v in config_json("qwen3_5_text", 0).items() if k != "model_type"},
     "vision_config": VISION},
    {"model_type": "qwen3_5_moe", "text_config": {k: v for k, v in config_json("qwen3_5_moe_text", 0).items() if k != "model_type"},
     "vision_config": dict(VISION, spatial_merge_size=3), "tie_word_embeddings": False},
]


@pytest.mark.parametrize("config", CASES, ids=[c["model_type"] for c in CASES])
def test_text_decoder_and_tower_equal_transformers(config):
    architecture = read_config(config)
    text, towers = split_counts(config)
    assert architecture.evaluate(get("params.decoder.total").dimensioned) == text
    assert sum(architecture.tower_parameters().values()) == towers


def test_the_tower_has_no_deepstack_mergers():
    # Qwen3-VL's tower with deepstack_visual_indexes [0, 1] against the same tower in Qwen3.5: the difference is two
    # mergers of (norm 2·M + fc1 M·M + M + fc2 M·64 + 64) with M = 32·2² = 128, by hand: 2·(256 + 16,512 + 8,256) = 50,048
    qwen3_vl = read_config({"model_type": "qwen3_vl", "text_config": dict(TEXT, head_dim=16), "vision_config": QWEN3})
    ours = read_config(CASES[0])
    assert sum(qwen3_vl.tower_parameters().values()) - sum(ours.tower_parameters().values()) == 50_048
