"""The `params` and `flops` commands: exact totals from a config.json or a preset, breakdowns, one-line errors."""

import json

import pytest
import torch
import transformers
from architecture_configs import build, config_json
from torch.utils.flop_counter import FlopCounterMode

from helpers import run

# Shaped like meta-llama/Llama-2-70b-hf/config.json (keys as published; no head_dim, no attention_bias)
LLAMA2_70B = {
    "architectures": ["LlamaForCausalLM"], "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu",
    "hidden_size": 8192, "initializer_range": 0.02, "intermediate_size": 28672, "max_position_embeddings": 4096,
    "model_type": "llama", "num_attention_heads": 64, "num_hidden_layers": 80, "num_key_value_heads": 8,
    "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_scaling": None, "tie_word_embeddings": False,
    "torch_dtype": "float16", "transformers_version": "4.32.0.dev0", "use_cache": True, "vocab_size": 32000,
}
# Shaped like mistralai/Mixtral-8x7B-v0.1/config.json
MIXTRAL_8X7B = {
    "architectures": ["MixtralForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 1, "eos_token_id": 2,
    "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 14336,
    "max_position_embeddings": 32768, "model_type": "mixtral", "num_attention_heads": 32, "num_experts_per_tok": 2,
    "num_hidden_layers": 32, "num_key_value_heads": 8, "num_local_experts": 8, "output_router_logits": False,
    "rms_norm_eps": 1e-05, "rope_theta": 1000000.0, "router_aux_loss_coef": 0.02, "sliding_window": None,
    "tie_word_embeddings": False, "torch_dtype": "bfloat16", "transformers_version": "4.36.0.dev0",
    "use_cache": True, "vocab_size": 32000,
}


def write(tmp_path, config, name="config.json"):
    path = tmp_path / name
    path.write_text(json.dumps(config))
    return path


def test_llama2_70b_total(tmp_path, capsys):
    # the issue's figure, and transformers' own count of LlamaForCausalLM with this config
    code, out, err = run(capsys, "params", "--hf-config", write(tmp_path, LLAMA2_70B))
    assert code == 0 and err == ""
    assert "68,976,648,192" in out
    code, out, _ = run(capsys, "params", "--hf-config", write(tmp_path, LLAMA2_70B), "--json")
    doc = json.loads(out)
    assert doc["total"] == doc["active"] == 68_976_648_192
    assert sum(doc["components"].values()) == doc["total"]


def test_mixtral_8x7b_total_and_active(tmp_path, capsys):
    code, out, err = run(capsys, "params", "--hf-config", write(tmp_path, MIXTRAL_8X7B))
    assert code == 0 and "46,702,792,704" in out
    doc = json.loads(run(capsys, "params", "--hf-config", write(tmp_path, MIXTRAL_8X7B), "--json")[1])
    assert doc["total"] == 46_702_792_704
    # Mistral AI: "12.9B active parameters per token"; written out: total less 6 unused experts of 3·4096·14336 per layer
    assert doc["active"] == 46_702_792_704 - 32 * 6 * 3 * 4096 * 14336 == 12_879_925_248
    assert set(doc["components"]) == {"embeddings", "attention", "experts", "router", "norms", "head"}
    assert doc["components"]["router"] == 32 * 4096 * 8
    assert sum(doc["components"].values()) == doc["total"]


@pytest.mark.parametrize("family, index", [("llama", 2), ("gpt2", 1), ("gptj", 1), ("bloom", 1), ("mixtral", 0), ("opt", 1)])
def test_components_match_the_model_s_own_parameters(tmp_path, capsys, family, index):
    # oracle: the meta-device model's named parameters, grouped by where they sit
    model = build(family, index, "meta")
    groups = {"embeddings": 0, "attention": 0, "mlp": 0, "experts": 0, "router": 0, "norms": 0, "head": 0}
    for name, p in model.named_parameters():
        if "lm_head" in name:
            key = "head"
        elif "experts" in name:
            key = "experts"
        elif name.endswith("mlp.gate.weight"):
            key = "router"
        elif any(part in name for part in ("ln", "norm", "layernorm")) and "embeddings_layernorm" not in name:
            key = "norms"
        elif any(part in name for part in ("attn", "attention")):
            key = "attention"
        elif any(part in name for part in ("mlp", "fc")):
            key = "mlp"
        else:
            key = "embeddings"  # token and position tables, OPT's project_in/out, BLOOM's embedding LayerNorm
        groups[key] += p.numel()
    doc = json.loads(run(capsys, "params", "--hf-config", write(tmp_path, config_json(family, index)), "--json")[1])
    assert {key: count for key, count in doc["components"].items() if count} == {key: count for key, count in groups.items() if count}
    assert sum(doc["components"].values()) == doc["total"] == sum(groups.values())


def test_flops_command_equals_the_flop_counter(tmp_path, capsys):
    config = config_json("qwen2", 2)
    torch.manual_seed(0)
    model = build("qwen2", 2, "cpu")
    tokens = torch.randint(0, config["vocab_size"], (2, 9))
    with FlopCounterMode(display=False) as forward_counter:
        output = model(tokens, use_cache=False)
    with FlopCounterMode(display=False) as backward_counter:
        output.logits.sum().backward()
    code, out, err = run(capsys, "flops", "--hf-config", write(tmp_path, config), "--batch", 2, "--seq", 9, "--json")
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert doc["forward"] == forward_counter.get_total_flops()
    assert doc["backward"] == backward_counter.get_total_flops()
    assert doc["training"] == doc["forward"] + doc["backward"]
    assert all(isinstance(doc[key], int) for key in ("forward", "backward", "training"))
    assert sum(doc["components"].values()) == doc["forward"]


def test_presets(capsys):
    def total(name):
        code, out, err = run(capsys, "params", "--model", name, "--json")
        assert code == 0, err
        return json.loads(out)["total"]

    assert total("llama2-70b") == 68_976_648_192  # as the config.json above
    assert total("llama-7b") == total("llama2-7b") == 6_738_415_616  # Hugging Face's count of LLaMA-7B
    assert total("bloom-176b") == 176_247_271_424  # Hugging Face's count of bigscience/bloom
    assert round(total("megatron-1t") / 1e9) == 1008  # Narayanan et al. 2021 Table 1: 1008 billion
    # GPT-3 175B as GPT-2's modules (Brown et al. 2020 §2.1), counted by hand: per layer c_attn h×3h + 3h,
    # c_proj h×h + h, c_fc h×4h + 4h, the MLP's c_proj 4h×h + h, two LayerNorms 2h each; then wte V×h, wpe 2048×h,
    # ln_f 2h, the head tied. Brown et al. Table 2.1 prints 175.0B.
    h, V = 12288, 50257
    gpt3 = 96 * (3 * h * h + 3 * h + h * h + h + 4 * h * h + 4 * h + 4 * h * h + h + 4 * h) + V * h + 2048 * h + 2 * h
    assert total("gpt3-175b") == gpt3 == 174_604_259_328  # 174.6B: the paper's "175.0B" is rounded
    # LLaMA (Touvron et al. 2023 Table 2, d_ff and V = 32000 from the released config.json), by hand: per layer
    # Q, K, V, O h×h each, the SwiGLU's three h×d_ff matrices, two RMSNorm scales; untied embedding and head, final norm
    def llama(h, l, d_ff, V=32000):
        return l * (4 * h * h + 3 * h * d_ff + 2 * h) + 2 * V * h + h

    assert total("llama-13b") == llama(5120, 40, 13824) == 13_015_864_320  # printed 13.0B
    assert total("llama-65b") == llama(8192, 80, 22016) == 65_285_660_672  # printed 65.2B
    # forward FLOPs of LLaMA-7B on one 2048-token sequence, 2 per multiply-add (FlopCounterMode's count): the
    # layer matmuls over s tokens, QKᵀ and scores·V over the s×s square for 32 heads of 128, and the logits
    h, l, d_ff, s = 4096, 32, 11008, 2048
    forward = l * (2 * s * (4 * h * h + 3 * h * d_ff) + 2 * 2 * 32 * s * s * 128) + 2 * s * h * 32000
    code, out, _ = run(capsys, "flops", "--model", "llama-7b", "--batch", 1, "--seq", 2048, "--json")
    assert code == 0 and json.loads(out)["forward"] == forward


def test_presets_match_transformers_on_the_meta_device(capsys):
    # oracle: transformers builds the preset's own config (a mid-sized one, fast on meta)
    from llm_formulas.formulas.data.presets import preset

    config = dict(preset("llama2-13b").config)
    model_type = config.pop("model_type")
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(transformers.AutoConfig.for_model(model_type, **config))
    doc = json.loads(run(capsys, "params", "--model", "llama2-13b", "--json")[1])
    assert doc["total"] == sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize(
    "argv, message",
    [
        (["params", "--hf-config", "{missing}"], "cannot read"),
        (["params", "--hf-config", "{bad}"], "not valid JSON"),
        (["params", "--hf-config", "{t5}"], "unknown model_type 't5'"),
        (["params", "--hf-config", "{nokey}"], "missing key 'num_hidden_layers'"),
        (["params", "--model", "gpt-5"], "unknown model 'gpt-5'"),
        (["params"], "one of the arguments"),
        (["params", "--model", "llama-7b", "--hf-config", "{t5}"], "not allowed with"),
        (["flops", "--model", "llama-7b", "--batch", "0", "--seq", "8"], "must be positive"),
        (["flops", "--model", "llama-7b", "--batch", "2.5", "--seq", "8"], "whole number"),
        (["flops", "--model", "llama-7b", "--batch", "x", "--seq", "8"], "not a number"),
        (["flops", "--model", "llama-7b", "--seq", "8"], "--batch"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, argv, message):
    files = {
        "missing": tmp_path / "absent.json",
        "bad": tmp_path / "bad.json",
        "t5": write(tmp_path, {"model_type": "t5"}, "t5.json"),
        "nokey": write(tmp_path, {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4}, "nokey.json"),
    }
    files["bad"].write_text('{"model_type": "llama",')
    argv = [part.format(**files) for part in argv]
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err, err
