"""Quantized checkpoints as published: the parameter count unchanged, the bytes of the weights as stored.

Oracles. FP8: transformers 5.24's own pre-quantized layout, the model built on the meta device and converted by
its FP8 quantizer (AutoHfQuantizer.preprocess_model, what from_pretrained does before loading): the bytes of its
state dict. transformers keeps an FP8 linear's bias and DeepSeek-V3's router in fp32 in memory, where the
checkpoint stores them at its dtype: the test adds those bytes back. MXFP4: the checkpoint sizes the gpt-oss
model card publishes. bitsandbytes: a tiny Llama quantized on this machine's CPU by bitsandbytes 0.50.2 through
transformers and saved with save_pretrained (the command below), every tensor of model.safetensors summed.
GPTQ and AWQ: the tensors their libraries store, by hand. An unknown scheme is one line naming it.
"""

import json
from pathlib import Path

import pytest
import torch
import transformers
from family_oracle import hf_config, meta_count

from llm_formulas.formulas.data.hf_config import ConfigError, read_config
from llm_formulas.formulas.data.quantization import inventory, skipped

FIXTURES = Path(__file__).parent / "checkpoints"  # the published config.json files (tests/checkpoints_manifest.json)
FP8 = {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
TINY = dict(vocab_size=300, hidden_size=256, intermediate_size=384, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2)


def published(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def transformers_fp8_bytes(config: dict) -> int:
    from transformers.quantizers.auto import AutoHfQuantizer, AutoQuantizationConfig

    quantizer = AutoHfQuantizer.from_config(AutoQuantizationConfig.from_dict(dict(config["quantization_config"])), pre_quantized=True)
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(hf_config(config), dtype=torch.bfloat16)
    quantizer.preprocess_model(model, dtype=torch.bfloat16)
    tensors = {id(t): t for t in model.state_dict(keep_vars=True).values()}
    return sum(t.numel() * t.element_size() for t in tensors.values())


def in_memory_fp32(architecture) -> int:
    """What transformers holds in fp32 where the checkpoint holds bf16: FP8 linears' biases, DeepSeek-V3's router."""
    values = {symbol.name: value for symbol, value in architecture.values.items()}
    scheme = architecture.scheme
    biases = sum(m.count * m.d_out * m.bias for m in inventory(values) if m.role in scheme.roles and not skipped(m, scheme.skip))
    router = values["l_moe"] * values["h"] * values["E"] if architecture.model_type == "deepseek_v3" else 0
    return 2 * (biases + router)


@pytest.mark.parametrize("config", [
    dict(TINY, model_type="llama"),
    dict(TINY, model_type="llama", hidden_size=200, intermediate_size=300, attention_bias=True, tie_word_embeddings=True),  # partial blocks
    dict(TINY, model_type="qwen3_moe", moe_intermediate_size=192, num_experts=4, num_experts_per_tok=2, head_dim=64),
    dict(TINY, model_type="qwen2_moe", moe_intermediate_size=192, shared_expert_intermediate_size=256, num_experts=4, num_experts_per_tok=2),
    dict(TINY, model_type="deepseek_v3", num_hidden_layers=3, moe_intermediate_size=192, n_routed_experts=8, num_experts_per_tok=2,
         n_shared_experts=1, first_k_dense_replace=1, q_lora_rank=96, kv_lora_rank=64, qk_rope_head_dim=32, qk_nope_head_dim=64,
         v_head_dim=64, n_group=2, topk_group=1),
], ids=["llama", "llama-partial-blocks", "qwen3_moe", "qwen2_moe", "deepseek_v3"])
def test_fp8_block_scaled_bytes_equal_transformers_layout(config):
    config = {**config, "quantization_config": FP8}
    architecture = read_config(config)
    stored = architecture.stored_weight_bytes()
    assert stored["bytes"] + in_memory_fp32(architecture) == transformers_fp8_bytes(config)
    assert stored["parameters"] == meta_count(config)  # the count does not change


def test_published_deepseek_and_kimi_configs_are_read_with_their_fp8_blocks():
    for name in ("deepseek-ai--DeepSeek-V3", "deepseek-ai--DeepSeek-R1", "moonshotai--Kimi-K2-Instruct"):
        architecture = read_config(published(name))
        assert architecture.scheme.method == "fp8" and architecture.scheme.values == {"B_r": 128, "B_c": 128}
    v3 = read_config(published("deepseek-ai--DeepSeek-V3")).stored_weight_bytes()
    # hand arithmetic: the 58 MoE layers' 256 experts dominate, one byte a weight plus an fp32 scale per 128×128 block
    experts = 58 * 256 * (7168 * 4096 + 16 * 56 * 2 * 4 + 2048 * 7168 + 56 * 16 * 4)
    assert v3["by_role"]["experts"] == experts
    assert v3["quantized"]["parameters"] < v3["parameters"] and 0.99 < v3["bytes"] / v3["parameters"] < 1.01


@pytest.mark.parametrize("name, gib", [("openai--gpt-oss-120b", 60.8), ("openai--gpt-oss-20b", 12.8)])
def test_mxfp4_experts_give_the_published_checkpoint_sizes(name, gib):
    # gpt-oss model card (OpenAI 2025, arXiv 2508.10925), Table 1: checkpoint size 60.8 GiB and 12.8 GiB
    stored = read_config(published(name)).stored_weight_bytes()
    assert stored["scheme"] == "mxfp4" and set(stored["by_role"]) >= {"experts", "attention", "router"}
    assert abs(stored["bytes"] / 2**30 - gib) < 0.05
    # only the experts are converted (modules_to_not_convert: attention, router, embedding, head): 4.25 bits a weight
    assert stored["quantized"]["bytes"] * 32 == stored["quantized"]["parameters"] * 17


# bitsandbytes 0.50.2 on this machine's CPU (pip install --no-deps bitsandbytes==0.50.2, removed afterwards):
#   LlamaForCausalLM(LlamaConfig(vocab_size=300, hidden_size=256, intermediate_size=384, num_hidden_layers=2,
#   num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=False)).to(bfloat16).save_pretrained(dir);
#   AutoModelForCausalLM.from_pretrained(dir, quantization_config=BitsAndBytesConfig(...), device_map="cpu",
#   dtype=bfloat16).save_pretrained(out); Σ numel·element_size over model.safetensors. The JSON quantization state of
#   each of the 14 matrices (80 bytes; 170 with double quantization) and int8's one-byte weight_format are metadata.
BNB_MEASURED = [
    ({"load_in_4bit": True, "bnb_4bit_quant_type": "nf4"}, 864_736, 14 * 80),
    ({"load_in_4bit": True, "bnb_4bit_quant_type": "nf4", "bnb_4bit_use_double_quant": True}, 834_495, 2_383),
    ({"load_in_8bit": True}, 1_307_150, 14),
]


@pytest.mark.parametrize("options, measured, metadata", BNB_MEASURED, ids=["nf4", "nf4-double", "int8"])
def test_bitsandbytes_bytes_equal_a_saved_checkpoint(options, measured, metadata):
    config = dict(TINY, model_type="llama", tie_word_embeddings=False, torch_dtype="bfloat16",
                  quantization_config={"quant_method": "bitsandbytes", **options})
    assert read_config(config).stored_weight_bytes()["bytes"] == measured - metadata


def test_gptq_and_awq_store_their_tensors_by_group():
    # one 4096×4096 projection in 4 bits, groups of 128: qweight 4096·4096/2 bytes, qzeros (4096/128)·4096/2,
    # fp16 scales (4096/128)·4096·2, and GPTQ's int32 g_idx of 4096
    gptq = read_config(dict(TINY, model_type="llama", hidden_size=4096, num_attention_heads=32, num_key_value_heads=32, intermediate_size=4096,
                            num_hidden_layers=1, quantization_config={"quant_method": "gptq", "bits": 4, "group_size": 128}))
    awq = read_config(dict(TINY, model_type="llama", hidden_size=4096, num_attention_heads=32, num_key_value_heads=32, intermediate_size=4096,
                           num_hidden_layers=1, quantization_config={"quant_method": "awq", "bits": 4, "group_size": 128, "version": "gemm"}))
    per_matrix = 4096 * 4096 // 2 + 32 * 4096 // 2 + 32 * 4096 * 2
    assert gptq.stored_weight_bytes()["quantized"]["bytes"] == 7 * (per_matrix + 4 * 4096)
    assert awq.stored_weight_bytes()["quantized"]["bytes"] == 7 * per_matrix
    channel = read_config(dict(TINY, model_type="llama", num_hidden_layers=1,
                               quantization_config={"quant_method": "awq", "bits": 8, "group_size": -1}))
    q = channel.stored_weight_bytes()["quantized"]
    outputs = 256 + 128 + 128 + 256 + 384 + 384 + 256  # q, k, v, o, gate, up, down
    assert q["bytes"] == q["parameters"] + 3 * outputs  # 8 bits: a byte a weight; one group: a zero byte and an fp16 scale per output


@pytest.mark.parametrize("quantization, message", [
    ({"quant_method": "compressed-tensors"}, "'config_groups' must be an object of quantization groups"),
    ({"quant_method": "hqq"}, "quant_method 'hqq' is not modelled"),
    ({"quant_method": "fp8", "activation_scheme": "static"}, "'weight_block_size' must be two positive block sizes"),
    ({"quant_method": "gptq", "bits": 3}, "'bits' must be 4 or 8"),
    ({"quant_method": "awq", "version": "gemv"}, "'version' must be 'gemm'"),
    ({"quant_method": "bitsandbytes"}, "without load_in_4bit or load_in_8bit"),
    ("fp8", "'quantization_config' must be an object"),
])
def test_a_scheme_the_counts_do_not_model_is_one_line_naming_it(quantization, message):
    with pytest.raises(ConfigError, match=message):
        read_config(dict(TINY, model_type="llama", quantization_config=quantization))
