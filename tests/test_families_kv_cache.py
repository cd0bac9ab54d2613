"""memory.kv_cache.decoder and ``llm-formulas kv-cache`` against the tensors transformers' own DynamicCache holds.

Oracle: a real forward with use_cache=True of each new family's tiny model (tests/architecture_configs.py,
windows of 4 tokens), summing numel·element_size of every cached tensor, layer by layer. Below the window
(s = 3) every layer holds s tokens; past it (s = 7) a sliding or chunked layer holds W − 1 = 3.
"""

import json

import pytest
import torch
from architecture_configs import build, config_json

from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.data.hf_config import read_config
from llm_formulas.render.cli.main import main

WINDOWED = [("mistral", 2), ("gemma2", 0), ("gemma3_text", 0), ("gpt_oss", 0), ("llama4_text", 0)]
OTHERS = [("deepseek_v3", 0), ("deepseek_v2", 0), ("qwen3", 0), ("qwen3_moe", 0), ("qwen2_moe", 0), ("olmo2", 0),
          ("glm4_moe", 0), ("phimoe", 0)]


def cached_bytes(family: str, index: int, batch: int, seq: int, dtype: torch.dtype) -> list[int]:
    """Bytes of the cache tensors of each layer after one forward of ``seq`` tokens."""
    model = build(family, index, "cpu").to(dtype)
    tokens = torch.randint(0, config_json(family, index)["vocab_size"], (batch, seq), generator=torch.Generator().manual_seed(seq))
    with torch.no_grad():
        output = model(tokens, use_cache=True)
    cache = output.past_key_values
    return [sum(t.numel() * t.element_size() for t in (layer.keys, layer.values)) for layer in cache.layers]


@pytest.mark.parametrize("family, index", WINDOWED + OTHERS)
@pytest.mark.parametrize("seq", [3, 7])
def test_cache_bytes_equal_dynamic_cache_layer_by_layer(family, index, seq):
    architecture = read_config(config_json(family, index))
    measured = cached_bytes(family, index, 2, seq, torch.bfloat16)
    expected = {kind: architecture.evaluate(get(f"memory.kv_cache.layer.{kind}").dimensioned, b=2, s=seq, q=2) for kind in ("full", "window")}
    assert measured == [expected[kind] for kind in architecture.layer_kinds]
    assert sum(measured) == architecture.evaluate(get("memory.kv_cache.decoder").dimensioned, b=2, s=seq, q=2)


def test_the_windowed_cases_have_both_kinds_and_the_window_bites():
    # guards the test above: past the window, sliding layers really hold fewer tokens than full ones
    kinds = {f: read_config(config_json(f, i)).layer_kinds for f, i in WINDOWED}
    assert kinds["gemma3_text"] == ("window", "window", "full", "window")  # sliding_window_pattern 3
    assert kinds["gemma2"] == ("window", "full", "window") and kinds["gpt_oss"] == ("window", "full")
    assert kinds["llama4_text"] == ("window", "window", "window", "full")  # chunked where RoPE is used
    assert kinds["mistral"] == ("window", "window")
    per_layer = cached_bytes("gemma2", 0, 1, 7, torch.float32)
    assert per_layer[1] == per_layer[0] * 7 // 3  # full: 7 tokens, sliding: W − 1 = 3


def test_mla_caches_the_latent_not_per_head_keys():
    # DeepSeek-V3 tiny: r_KV = 16, d_rope = 8 → 24 values per token and layer, not 2·a·d_head
    measured = cached_bytes("deepseek_v3", 0, 1, 5, torch.float32)
    assert measured == [5 * (16 + 8) * 4] * 3


def run(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_command_prints_dynamic_cache_bytes(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config_json("gemma2", 0)))
    measured = cached_bytes("gemma2", 0, 2, 7, torch.float32)
    code, out, _ = run(capsys, "kv-cache", "--hf-config", str(path), "--batch", "2", "--seq", "7", "--dtype", "fp32", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["bytes"] == sum(measured)
    assert [layer["bytes"] for layer in doc["layers"]] == measured
    assert doc["kinds"]["window"]["tokens"] == 3 and doc["kinds"]["full"]["tokens"] == 7
    code, out, _ = run(capsys, "kv-cache", "--hf-config", str(path), "--batch", "2", "--seq", "7")
    assert code == 0 and "2 window layers" in out and "kB" in out


def test_paged_layout_rounds_up_to_blocks(tmp_path, capsys):
    # hand arithmetic: gemma2 tiny, g = 2, d_head = 16: 64 values per token and layer, fp16 2 bytes;
    # s = 7, blocks of 4: full layer 8 slots, window layers 3 → 4 slots; 2 window + 1 full layers
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config_json("gemma2", 0)))
    code, out, _ = run(capsys, "kv-cache", "--hf-config", str(path), "--batch", "1", "--seq", "7", "--dtype", "fp16",
                       "--layout", "paged:4", "--json")
    assert code == 0 and json.loads(out)["bytes"] == 64 * 2 * (8 + 2 * 4)


def test_mla_expanded_layout(tmp_path, capsys):
    # hand arithmetic: a = 4 heads of keys 12 + 8 and values 10: 120 values per token and layer vs the latent's 24
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config_json("deepseek_v3", 0)))
    code, out, _ = run(capsys, "kv-cache", "--hf-config", str(path), "--batch", "1", "--seq", "5", "--layout", "mla-expanded", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["bytes"] == 3 * 5 * 120 * 2 and doc["transformers_bytes"] == 3 * 5 * 24 * 2


@pytest.mark.parametrize("argv, message", [
    (["--layout", "ring"], "unknown layout 'ring'"),
    (["--layout", "paged:0"], "must be positive"),
    (["--layout", "mla-expanded"], "has no latent attention"),
    (["--dtype", "int3"], "invalid choice"),
    (["--seq", "0"], "must be positive"),
])
def test_bad_kv_cache_options_are_one_line_exit_2(tmp_path, capsys, argv, message):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config_json("gemma2", 0)))
    base = ["kv-cache", "--hf-config", str(path), "--batch", "1", "--seq", "4"]
    code, out, err = run(capsys, *(base + argv))
    assert code == 2 and out == "" and message in err and err.count("\n") == 1


def test_estimate_reports_the_same_cache_as_kv_cache(capsys):
    # hand arithmetic (Gemma 3 27B, s = 32768, bf16): 10 full layers of 32768 tokens and 52 sliding layers of
    # 1023 tokens, 2·16·128 values per token and layer, 2 bytes each
    expected = 2 * 16 * 128 * 2 * (10 * 32768 + 52 * 1023)
    code, out, _ = run(capsys, "kv-cache", "--model", "gemma3-27b", "--batch", "1", "--seq", "32768", "--json")
    assert code == 0 and json.loads(out)["bytes"] == expected
    code, out, _ = run(capsys, "estimate", "--model", "gemma3-27b", "--gpu", "h100-sxm", "--tp", "8", "--seq", "32768",
                       "--global-batch", "8", "--json")
    assert code == 0 and json.loads(out)["inference"]["kv_cache_per_sequence"] == expected
