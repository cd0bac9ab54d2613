"""Issue 35 item 2: the dense Nemotron family (model_type nemotron: Nemotron-4 15B/340B, Nemotron-3 8B/22B, Nemotron-Mini)
against transformers 5.24. The published shapes are counted in tests/test_checkpoints.py (tests/checkpoints/nvidia--*.json,
written from NeMo's Nemotron*Config classes, see the manifest); the shrunk copies' FLOPs and cache in test_families_new.py.
"""

import json
from pathlib import Path

import pytest
from family_oracle import meta_count

from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.data.hf_config import ConfigError, read_config

CHECKPOINTS = Path(__file__).parent / "checkpoints"


def test_nemotron_4_340b_by_hand():
    # Nemotron-4 340B (arXiv:2406.11704 Table 1; NeMo's Nemotron4Config340B): l = 96, h = 18432, 96 heads of 192,
    # 8 KV heads, d_ff = 73728, V = 256000, untied. Per layer: Q and O 2·18432·18432, K and V 2·18432·8·192, the
    # squared-ReLU MLP's two matrices 2·18432·73728, two LayerNorm1P (scale and shift) 2·2·18432; no biases.
    # Embedding and head 2·256000·18432, the final LayerNorm1P 2·18432.
    h, layer = 18432, 2 * 18432 * 18432 + 2 * 18432 * 8 * 192 + 2 * 18432 * 73728 + 4 * 18432
    expected = 96 * layer + 2 * 256000 * h + 2 * h
    config = json.loads((CHECKPOINTS / "nvidia--Nemotron-4-340B-Base.json").read_text())
    assert read_config(config).evaluate(get("params.decoder.total").dimensioned) == expected == 341_029_195_776


def test_kv_cache_of_nemotron_4_15b_by_hand():
    # 32 layers × K and V × 8 heads × 128 × 2 bytes = 131,072 bytes a token
    config = json.loads((CHECKPOINTS / "nvidia--Nemotron-4-15B-Base.json").read_text())
    per_token = read_config(config).evaluate(get("memory.kv_cache.decoder").dimensioned, b=1, s=1, q=2)
    assert per_token == 32 * 2 * 8 * 128 * 2


def test_a_config_without_kv_heads_is_refused_as_transformers_cannot_build_it():
    config = json.loads((CHECKPOINTS / "nvidia--nemotron-3-8b-base-4k.json").read_text())
    del config["num_key_value_heads"]
    with pytest.raises(ConfigError, match="num_key_value_heads"):
        read_config(config)
    with pytest.raises(TypeError):  # NemotronAttention: num_heads // None
        meta_count(config)


def test_biases_and_a_tied_head_count_as_transformers_builds_them():
    config = json.loads((CHECKPOINTS / "nvidia--Nemotron-Mini-4B-Instruct.json").read_text())
    config = {**config, "num_hidden_layers": 2, "attention_bias": True, "mlp_bias": True, "tie_word_embeddings": True}
    assert read_config(config).evaluate(get("params.decoder.total").dimensioned) == meta_count(config)
