"""Issue 35 item 4: compressed-tensors and NVIDIA ModelOpt checkpoints counted as published, stored bytes exact.

Oracles (neither library is installed here, and transformers 5.24 has no ModelOpt loader): the tensors the
checkpoints themselves list. Kimi-K2.5 (compressed-tensors pack-quantized, int4 in groups of 32): a published
report of its safetensors, per routed expert matrix weight_packed int32 [d_out, d_in/8], weight_scale bf16
[d_out, d_in/32] and weight_shape int32 [2], all tensors 554.27 GiB. nvidia/Qwen3-30B-A3B-NVFP4 (ModelOpt NVFP4,
groups of 16): a published safetensors-header listing, per matrix weight uint8 [d_out, d_in/2], weight_scale
float8_e4m3fn [d_out, d_in/16], weight_scale_2 and input_scale fp32 scalars, the experts' gate_proj and up_proj
stored apart. Expected values are that arithmetic by hand.
"""

import json
from pathlib import Path

import pytest

from llm_formulas.formulas.data.hf_config import ConfigError, read_config

FIXTURES = Path(__file__).parent / "checkpoints"
TINY = dict(vocab_size=300, hidden_size=256, intermediate_size=384, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2)
INT4 = {"quant_method": "compressed-tensors", "format": "pack-quantized", "quantization_status": "compressed",
        "config_groups": {"group_0": {"targets": ["Linear"], "input_activations": None,
                                      "weights": {"num_bits": 4, "type": "int", "symmetric": True, "strategy": "group", "group_size": 32}}},
        "ignore": ["lm_head"]}


def published(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def test_kimi_k25_int4_experts_equal_its_safetensors():
    stored = read_config(published("moonshotai--Kimi-K2.5")).stored_weight_bytes()
    # per expert and layer, from the checkpoint's listing: gate_proj and up_proj weight_packed [2048, 896] int32,
    # weight_scale [2048, 224] bf16; down_proj [7168, 256] and [7168, 64]; each a weight_shape of two int32
    gate = 2048 * 896 * 4 + 2048 * 224 * 2 + 8
    down = 7168 * 256 * 4 + 7168 * 64 * 2 + 8
    assert stored["scheme"] == "int4-pack"
    assert stored["by_role"]["experts"] == 60 * 384 * (2 * gate + down) == 570_761_441_280
    # ignored: lm_head, self_attn, shared_experts and the dense MLP (the "re:" patterns): bf16, as the listing has them
    assert stored["by_role"]["shared"] == 60 * 3 * 2048 * 7168 * 2 and stored["by_role"]["attention"] % 2 == 0
    assert stored["quantized"]["parameters"] == 60 * 384 * 3 * 2048 * 7168
    assert abs(stored["bytes"] / 2**30 - 554.27) < 0.005  # the listing's total of every tensor, 554.27 GiB


QWEN3_NVFP4 = {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16, "kv_cache_quant_algo": "FP8",
               "ignore": ["lm_head", *(f"model.layers.{i}.mlp.gate" for i in range(48))]}


def test_modelopt_nvfp4_equals_the_published_qwen3_30b_layout():
    config = {**published("Qwen--Qwen3-30B-A3B"), "quantization_config": QWEN3_NVFP4}
    stored = read_config(config).stored_weight_bytes()
    nvfp4 = lambda d_out, d_in: d_out * d_in // 2 + d_out * d_in // 16 + 8  # noqa: E731 - the listing's four tensors
    assert nvfp4(512, 2048) == 512 * 1024 + 512 * 128 + 8  # k_proj as listed: [512, 1024] U8, [512, 128] F8_E4M3, two F32
    assert nvfp4(768, 2048) == 768 * 1024 + 768 * 128 + 8 and nvfp4(2048, 768) == 2048 * 384 + 2048 * 48 + 8  # gate_proj, down_proj
    assert stored["by_role"]["experts"] == 48 * 128 * (2 * nvfp4(768, 2048) + nvfp4(2048, 768))
    assert stored["by_role"]["attention"] == 48 * (nvfp4(4096, 2048) + 2 * nvfp4(512, 2048) + nvfp4(2048, 4096))
    assert stored["by_role"]["router"] == 48 * 2048 * 128 * 2  # excluded layer by layer: bf16
    assert stored["by_role"]["buffers"] == 48 * 2 * 4  # the FP8 cache's k_scale and v_scale per attention layer


def test_modelopt_fp8_is_a_byte_a_weight_and_two_scalars():
    config = dict(TINY, model_type="llama", num_hidden_layers=1, quantization_config={"quant_method": "modelopt", "quant_algo": "FP8",
                                                                                        "ignore": ["lm_head"]})
    q = read_config(config).stored_weight_bytes()["quantized"]
    assert q["bytes"] == q["parameters"] + 7 * 8  # q, k, v, o, gate, up, down: each an fp32 weight_scale and input_scale


def test_compressed_tensors_targets_and_ignore_by_pattern():
    # targets only the MLP by pattern: the attention stays bf16; channel strategy: one bf16 scale per output row
    channel = {**INT4, "config_groups": {"group_0": {"targets": ["re:.*mlp.*"], "weights": {"num_bits": 8, "type": "int",
                                                                                           "symmetric": True, "strategy": "channel"}}}}
    stored = read_config(dict(TINY, model_type="llama", num_hidden_layers=1, quantization_config=channel)).stored_weight_bytes()
    # gate, up: 384×256 each; down: 256×384; a byte a weight, a 2-byte scale a row, 8 bytes of shape
    assert stored["by_role"]["mlp"] == 2 * (384 * 256 + 384 * 2 + 8) + (256 * 384 + 256 * 2 + 8)
    assert stored["by_role"]["attention"] == 2 * (256 * 256 * 2 + 2 * 256 * 128)  # q, o 256×256; k, v 256×128: bf16


@pytest.mark.parametrize("quantization, message", [
    ({**INT4, "format": "float-quantized"}, "'format' must be one of pack-quantized, nvfp4-pack-quantized"),
    ({**INT4, "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int", "symmetric": False,
                                                                        "strategy": "group", "group_size": 32}}}}, "'symmetric' must be true"),
    ({**INT4, "ignore": ["model.layers.1.self_attn"]}, "one layer of model.layers.*.self_attn.q_proj"),
    ({**INT4, "quantization_status": "frozen"}, "'quantization_status' must be 'compressed'"),
    ({"quant_method": "modelopt", "quant_algo": "W4A16_NVFP4"}, "'quant_algo' must be 'NVFP4' or 'FP8'"),
    ({"quant_method": "modelopt", "quant_algo": "NVFP4", "kv_cache_quant_algo": "NVFP4"}, "'kv_cache_quant_algo' must be null or 'FP8'"),
])
def test_a_layout_the_formulas_do_not_state_is_one_line_naming_it(quantization, message):
    with pytest.raises(ConfigError, match=message):
        read_config(dict(TINY, model_type="llama", quantization_config=quantization)).stored_weight_bytes()
