"""params.decoder.* against transformers: the count equals sum(p.numel()) of the real model on the meta device.

The oracle is transformers 5.24 itself, building each family's model from a config
made in code; the readers (formulas.data.hf_config) get the same dict a config.json holds.
"""

import pytest
import torch
from architecture_configs import CASES, CONFIGS, build, config_json, hf_config

from llm_formulas.derivations.topics.architecture import DERIVATIONS
from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.data.hf_config import ConfigError, read_config
from llm_formulas.formulas.vocabulary.symbols import E, a, d_head, g, h, k


def count(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())  # tied weights are one Parameter, counted once


def total(config: dict) -> int:
    return read_config(config).evaluate(get("params.decoder.total").dimensioned)


@pytest.mark.parametrize("family, index", CASES)
def test_total_equals_transformers_on_the_meta_device(family, index):
    assert total(config_json(family, index)) == count(build(family, index, "meta"))


@pytest.mark.parametrize("family, index", [("llama", 2), ("falcon", 1), ("opt", 1), ("gemma", 1)])
def test_a_full_config_json_reads_the_same_as_a_sparse_one(family, index):
    # config.to_dict() is what save_pretrained writes: every key spelled out
    assert total(hf_config(family, index).to_dict()) == total(config_json(family, index))


def test_the_configs_cover_the_switches():
    # the cases above only prove something if they exercise g ≠ a, d_head ≠ h/a, tied and untied, MoE
    seen = [read_config(config_json(f, i)).values for f, i in CASES]
    assert any(v[g] == 1 for v in seen) and any(1 < v[g] < v[a] for v in seen)
    assert any(v[d_head] * v[a] != v[h] for v in seen)
    assert {v[E] for v in seen} >= {1, 4, 8}
    assert len(CONFIGS) == 24


@pytest.mark.parametrize("index", [0, 1])
def test_active_parameters_of_mixtral(index):
    # oracle: everything outside the experts, plus k/E of the experts' parameters (every expert is the same size)
    config = config_json("mixtral", index)
    model = build("mixtral", index, "meta")
    experts = sum(p.numel() for name, p in model.named_parameters() if ".experts." in name)
    rest = count(model) - experts
    expected = rest + experts * config["num_experts_per_tok"] // config["num_local_experts"]
    assert read_config(config).evaluate(get("params.decoder.active").dimensioned) == expected


def test_dense_models_have_every_parameter_active():
    architecture = read_config(config_json("llama", 1))
    assert architecture.values[E] == architecture.values[k] == 1
    assert architecture.evaluate(get("params.decoder.active").dimensioned) == architecture.evaluate(get("params.decoder.total").dimensioned)


def test_gpt2_small_published_count():
    # GPT-2 small: 124,439,808 parameters as Hugging Face counts them (tied head)
    config = {"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257, "n_positions": 1024}
    assert total(config) == 124_439_808


def test_every_architecture_derivation_is_proved():
    # includes the reductions: classic switches give params.total and flops.forward
    ids = []
    for make in DERIVATIONS:
        derivation = make()
        ids.append(derivation.id)
        failed = [o.describe() for o in derivation.check() if not o.ok]
        assert not failed, failed
    assert {"params.decoder.classic", "flops.decoder.classic"} <= set(ids)


def test_the_classic_reduction_would_catch_a_wrong_term(monkeypatch):
    # the reduction step is a real proof: a general formula with one wrong term fails it in the engine
    import dataclasses

    from llm_formulas.derivations.topics.architecture import classic_params
    from llm_formulas.formulas.vocabulary.catalogue import catalogue

    assert all(o.ok for o in classic_params().check())
    entries = catalogue()
    monkeypatch.setitem(entries, "params.decoder.total",
                        dataclasses.replace(entries["params.decoder.total"], dimensioned=entries["params.decoder.total"].dimensioned + h))
    failed = [o for o in classic_params().check() if not o.ok]
    assert failed and failed[0].method == "counterexample"


@pytest.mark.parametrize(
    "config, message",
    [
        ({"model_type": "t5"}, "unknown model_type 't5'"),
        ({"hidden_size": 8}, "missing key 'model_type'"),
        ({"model_type": "llama", "hidden_size": 32}, "missing key 'num_attention_heads'"),
        ({"model_type": "gpt2", "n_embd": 32, "n_head": 4, "n_layer": 2, "n_positions": 8}, "missing key 'vocab_size'"),
        ({"model_type": "llama", "hidden_size": "32"}, "'hidden_size' must be a positive integer"),
        ({**config_json("gpt_neox", 0), "attention_bias": "yes"}, "'attention_bias' must be true or false"),
        ({**config_json("mixtral", 0), "num_experts_per_tok": 5}, "more experts per token"),
        ({**config_json("llama", 1), "num_key_value_heads": 4}, "6 attention heads are not a multiple of 4"),
        ([1, 2], "must be a JSON object"),
    ],
)
def test_bad_configs_raise_a_config_error_naming_the_problem(config, message):
    with pytest.raises(ConfigError, match=message):
        read_config(config)
    assert issubclass(ConfigError, ValueError)


# Published parameter counts of real checkpoints (the Hugging Face Hub's safetensors totals of each repository),
# from config.json files written out here with the keys that matter.
PUBLISHED = [
    ({"model_type": "gptj", "n_embd": 4096, "n_head": 16, "n_layer": 28, "n_positions": 2048, "rotary_dim": 64,
      "vocab_size": 50400}, 6_050_882_784),  # EleutherAI/gpt-j-6b
    ({"model_type": "falcon", "hidden_size": 4544, "num_attention_heads": 71, "num_hidden_layers": 32,
      "vocab_size": 65024, "multi_query": True, "parallel_attn": True, "bias": False}, 6_921_720_704),  # tiiuae/falcon-7b
    ({"model_type": "gpt_neox", "hidden_size": 6144, "num_attention_heads": 64, "num_hidden_layers": 44,
      "intermediate_size": 24576, "vocab_size": 50432}, 20_554_567_680),  # EleutherAI/gpt-neox-20b
    ({"model_type": "bloom", "hidden_size": 1024, "n_head": 16, "n_layer": 24, "vocab_size": 250880}, 559_214_592),  # bigscience/bloom-560m
    ({"model_type": "opt", "hidden_size": 768, "num_attention_heads": 12, "num_hidden_layers": 12, "ffn_dim": 3072,
      "vocab_size": 50272, "max_position_embeddings": 2048, "word_embed_proj_dim": 768}, 125_239_296),  # facebook/opt-125m
    ({"model_type": "opt", "hidden_size": 1024, "num_attention_heads": 16, "num_hidden_layers": 24, "ffn_dim": 4096,
      "vocab_size": 50272, "max_position_embeddings": 2048, "word_embed_proj_dim": 512,
      "do_layer_norm_before": False}, 331_196_416),  # facebook/opt-350m
    ({"model_type": "mistral", "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
      "num_hidden_layers": 32, "intermediate_size": 14336, "vocab_size": 32000}, 7_241_732_096),  # Mistral-7B-v0.1
    ({"model_type": "qwen2", "hidden_size": 896, "num_attention_heads": 14, "num_key_value_heads": 2,
      "num_hidden_layers": 24, "intermediate_size": 4864, "vocab_size": 151936, "tie_word_embeddings": True},
     494_032_768),  # Qwen/Qwen2-0.5B
    ({"model_type": "gemma", "hidden_size": 3072, "num_attention_heads": 16, "num_key_value_heads": 16, "head_dim": 256,
      "num_hidden_layers": 28, "intermediate_size": 24576, "vocab_size": 256000}, 8_537_680_896),  # google/gemma-7b
    ({"model_type": "phi3", "hidden_size": 3072, "num_attention_heads": 32, "num_key_value_heads": 32,
      "num_hidden_layers": 32, "intermediate_size": 8192, "vocab_size": 32064}, 3_821_079_552),  # Phi-3-mini-4k
]


@pytest.mark.parametrize("config, published", PUBLISHED, ids=lambda x: x["model_type"] if isinstance(x, dict) else "")
def test_published_counts_of_real_checkpoints(config, published):
    assert total(config) == published


# Each family with its optional keys left out (head_dim, num_key_value_heads, biases, tying, norms, positions...):
# only what the readers require of a config.json (layers, width, heads, vocabulary, the MLP width where the family
# has no default rule for it) is given, so every other value is transformers' default, which the readers must know
# (Gemma's head_dim 256 and 16 KV heads, Mistral's and Mixtral's 8, Qwen2's 32, ...). 32 heads of width 2 keep every
# default KV-head count a divisor of the heads.
_SIZES = dict(vocab_size=90)
_MLP = dict(intermediate_size=40)
LAYER_KEYS = {
    "gpt2": dict(n_layer=1, n_embd=64, n_head=32, n_positions=40, **_SIZES),
    "gptj": dict(n_layer=1, n_embd=64, n_head=32, rotary_dim=2, **_SIZES),
    "gpt_neox": dict(num_hidden_layers=1, hidden_size=64, num_attention_heads=32, **_SIZES, **_MLP),
    "opt": dict(num_hidden_layers=1, hidden_size=64, num_attention_heads=32, ffn_dim=40, max_position_embeddings=40, **_SIZES),
    "bloom": dict(n_layer=1, hidden_size=64, n_head=32, **_SIZES),
    "falcon": dict(num_hidden_layers=1, hidden_size=64, num_attention_heads=32, **_SIZES),
    "llama": dict(num_hidden_layers=1, hidden_size=64, num_attention_heads=32, **_SIZES, **_MLP),
    "mistral": dict(num_hidden_layers=1, hidden_size=64, num_attention_heads=32, **_SIZES, **_MLP),
    "mixtral": dict(num_hidden_layers=1, hidden_size=64, num_attention_heads=32, num_local_experts=4, num_experts_per_tok=2, **_SIZES, **_MLP),
    "qwen2": dict(num_hidden_layers=1, hidden_size=64, num_attention_heads=32, **_SIZES, **_MLP),
    "gemma": dict(num_hidden_layers=1, hidden_size=64, num_attention_heads=32, **_SIZES, **_MLP),
    "phi3": dict(num_hidden_layers=1, hidden_size=64, num_attention_heads=32, pad_token_id=0, eos_token_id=1, **_SIZES, **_MLP),
    # the families of today: experts, expert widths, shared experts, windows, first dense layers and MTP all from the
    # config classes' defaults (Qwen3-MoE's 128 experts of 768, DeepSeek-V3's 256 of 2048 after 3 dense layers, ...)
    "qwen3": dict(num_hidden_layers=1, hidden_size=64, num_attention_heads=32, **_SIZES, **_MLP),
    "qwen3_moe": dict(num_hidden_layers=1, hidden_size=64, num_attention_heads=32, **_SIZES, **_MLP),
    "qwen2_moe": dict(num_hidden_layers=1, hidden_size=64, num_attention_heads=32, **_SIZES, **_MLP),
    "gemma2": dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=32, **_SIZES, **_MLP),
    "gemma3_text": dict(num_hidden_layers=6, hidden_size=64, num_attention_heads=32, **_SIZES, **_MLP),
    "olmo2": dict(num_hidden_layers=1, hidden_size=64, num_attention_heads=32, pad_token_id=0, eos_token_id=1, **_SIZES, **_MLP),
    "phimoe": dict(num_hidden_layers=1, hidden_size=64, num_attention_heads=32, **_SIZES, **_MLP),
    "glm4_moe": dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=32, **_SIZES, **_MLP),
    "gpt_oss": dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=32, **_SIZES, **_MLP),
    "llama4_text": dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=32, **_SIZES, **_MLP),
    # DeepseekV2Config leaves num_experts_per_tok None (a config.json must give it); 4 layers past V3's 3 dense ones
    "deepseek_v2": dict(num_hidden_layers=4, hidden_size=64, num_attention_heads=32, num_experts_per_tok=2, **_SIZES, **_MLP),
    "deepseek_v3": dict(num_hidden_layers=4, hidden_size=64, num_attention_heads=32, **_SIZES, **_MLP),
}


def test_minimal_configs_name_every_family():
    from llm_formulas.formulas.data.families import FAMILIES

    assert set(LAYER_KEYS) <= set(FAMILIES)


@pytest.mark.parametrize("family", sorted(LAYER_KEYS))
def test_a_minimal_config_takes_transformers_defaults(family):
    import transformers

    config = transformers.AutoConfig.for_model(family, **LAYER_KEYS[family])
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(config, attn_implementation="eager", experts_implementation="eager")
    assert total({"model_type": family, **LAYER_KEYS[family]}) == count(model)
