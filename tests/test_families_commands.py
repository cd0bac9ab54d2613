"""What params, flops and kv-cache say about a family: the declaration and keys read, the towers and the stored
weights apart, recurrent layers' fixed states; the components add up to the totals."""

import json

import pytest
from family_cases import config_json

from llm_formulas.render.cli.main import main


def run(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def write(tmp_path, config: dict) -> str:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    return str(path)


def test_params_names_the_family_and_the_keys_it_read(tmp_path, capsys):
    config = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2, "intermediate_size": 96,
              "vocab_size": 100}
    code, out, _ = run(capsys, "params", "--hf-config", write(tmp_path, config), "--json")
    doc = json.loads(out)
    assert code == 0 and doc["family"] == "llama" and "Llama" in doc["title"]
    assert doc["keys_read"] == {"hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2, "intermediate_size": 96,
                                "vocab_size": 100}
    assert doc["defaults"]["num_key_value_heads"] == 4 and doc["defaults"]["head_dim"] == 16  # = a, and h/a
    assert doc["defaults"]["tie_word_embeddings"] is False
    code, out, _ = run(capsys, "params", "--hf-config", write(tmp_path, config))
    assert "read by the llama declaration" in out and "transformers' defaults taken: " in out and "head_dim=16" in out


@pytest.mark.parametrize("family", ["jamba", "nemotron_h", "qwen3_next", "mamba2"])
def test_hybrid_components_add_up_to_the_totals(tmp_path, capsys, family):
    path = write(tmp_path, config_json(family, 0))
    doc = json.loads(run(capsys, "params", "--hf-config", path, "--json")[1])
    assert sum(doc["components"].values()) == doc["total"] and doc["components"]["recurrent_mixers"] > 0
    flops = json.loads(run(capsys, "flops", "--hf-config", path, "--batch", "2", "--seq", "9", "--json")[1])
    assert sum(flops["components"].values()) == flops["forward"]
    cache = json.loads(run(capsys, "kv-cache", "--hf-config", path, "--batch", "2", "--seq", "9", "--json")[1])
    assert sum(layer["bytes"] for layer in cache["layers"]) == cache["bytes"]
    longer = json.loads(run(capsys, "kv-cache", "--hf-config", path, "--batch", "2", "--seq", "90", "--json")[1])
    for kind in ("mamba", "mamba2", "gdn"):  # a recurrent layer's state does not grow with the context
        if kind in cache["kinds"]:
            assert longer["kinds"][kind]["bytes"] == cache["kinds"][kind]["bytes"] > 0


def test_kv_cache_text_says_what_a_recurrent_layer_holds(tmp_path, capsys):
    code, out, _ = run(capsys, "kv-cache", "--hf-config", write(tmp_path, config_json("qwen3_next", 0)), "--batch", "1", "--seq", "64")
    assert code == 0 and "gdn layers, gated delta-net states" in out and "fixed" in out and "full layers: 64 tokens each" in out


def test_params_shows_the_towers_apart_and_the_stored_weights(tmp_path, capsys):
    config = {"model_type": "gemma3", "text_config": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                                                      "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 64, "vocab_size": 1000},
              "vision_config": {"hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 2, "num_attention_heads": 4,
                                "image_size": 28, "patch_size": 14, "vision_use_head": False}}
    code, out, _ = run(capsys, "params", "--hf-config", write(tmp_path, config), "--json")
    doc = json.loads(out)
    assert code == 0 and doc["multimodal"] == "gemma3" and doc["family"] == "gemma3_text"
    assert set(doc["towers"]) == {"vision_tower", "projector"}
    assert doc["stored_weights"]["parameters"] == doc["total"] + sum(doc["towers"].values())
    assert doc["stored_weights"]["bytes"] == 2 * doc["stored_weights"]["parameters"]  # bf16, nothing quantized
    code, out, _ = run(capsys, "params", "--model", "gpt-oss-20b")
    assert code == 0 and "weights as stored (mxfp4): 13.8 GB (13,761,264,768 bytes)" in out


@pytest.mark.parametrize("config, message", [
    ({"model_type": "mamba", "vocab_size": 50, "hidden_size": 16, "num_hidden_layers": 2, "layer_types": ["mamba", "banded"]},
     "layer_types[1] = 'banded' is not modelled"),
    ({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2, "intermediate_size": 96,
      "vocab_size": 100, "quantization_config": {"quant_method": "quanto"}}, "quant_method 'quanto' is not modelled"),
    ({"model_type": "nemotron_h", "vocab_size": 50, "hidden_size": 16, "num_hidden_layers": 3, "num_attention_heads": 2,
      "intermediate_size": 24, "hybrid_override_pattern": "M*X"},
     "'hybrid_override_pattern' must be 3 characters"),
])
def test_a_config_the_counts_cannot_model_is_one_line_naming_the_key(tmp_path, capsys, config, message):
    code, out, err = run(capsys, "params", "--hf-config", write(tmp_path, config))
    assert code == 2 and out == "" and message in err and err.count("\n") == 1
