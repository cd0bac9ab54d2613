"""The families, each declared: the few lines of data that say how transformers 5.24 builds its decoder block.

A declaration (formulas/data/blocks.py :class:`Family`) names what differs from a Llama block (RMSNorm before
attention and MLP, a gated MLP, grouped-query attention, no biases, an untied head): its config keys and their
defaults (each family's configuration_*.py), the layers that slide or hold experts or a recurrent mixer, and the
options it refuses. ``FAMILIES`` maps a model_type to its declaration; the README's and the guide's family table
are generated from it, and ``check`` proves each declaration reduces to the classic form it names
(derivations/data/families.py).
"""

from __future__ import annotations

import dataclasses

from llm_formulas.formulas.data.blocks import (
    HEAD_DIM,
    Attention,
    Config,
    ConfigError,
    Count,
    Embedding,
    Experts,
    Family,
    Flag,
    Key,
    Kinds,
    Latent,
    Mixer,
    Mlp,
    Norms,
    Rule,
    short,
)
from llm_formulas.formulas.vocabulary.bounds import MAX_LAYERS

CHECKED_AGAINST = "5.24"  # the transformers release every family's counts are tested against (tests/checkpoint_counts.json)
FULL, SLIDING, CHUNKED = "full_attention", "sliding_attention", "chunked_attention"
ATTENTION_BIAS = Flag("attention_bias", False)
MLP_BIAS = Flag("mlp_bias", False)
FOUR_H = Rule("4h", lambda config, values: 4 * values["h"])


def tied(default: bool) -> Embedding:
    return Embedding(tied=Flag("tie_word_embeddings", default))


# --- layer types when a config.json leaves them out (each family's configuration_*.py) ------------------------


def every_layer_slides(default: int | None):
    """Mistral, Mixtral, Phi-3, PhiMoE: sliding_window set → every layer (cache_utils.get_layer_types_and_kwargs)."""

    def pattern(config: Config, layers: int) -> list[str]:
        return [SLIDING if config.setting("sliding_window", default) is not None else FULL] * layers

    return pattern


def alternate(config: Config, layers: int) -> list[str]:
    """Gemma-2, gpt-oss: the even layers slide."""
    return [SLIDING if (i + 1) % 2 else FULL for i in range(layers)]


def one_global_in(period_default: int, *keys: str):
    """Gemma-3 (6), Cohere-2 (4), OLMo-3 (4, no key): period − 1 sliding layers, then a global one."""

    def pattern(config: Config, layers: int) -> list[str]:
        period = config.size(*keys, default=period_default) if keys else period_default
        return [SLIDING if (i + 1) % period else FULL for i in range(layers)]

    return pattern


def exaone4_windows(config: Config, layers: int) -> list[str]:
    """EXAONE-4: every sliding_window_pattern-th layer global, the others sliding; no sliding_window, no windows
    (configuration_exaone4.py; a string pattern such as "LLLG" only with layer_types given, as transformers reads it)."""
    if config.setting("sliding_window", 4096) is None:
        return [FULL] * layers
    return one_global_in(4, "sliding_window_pattern")(config, layers)


def smollm3_windows(config: Config, layers: int) -> list[str]:
    """SmolLM3: under use_sliding_window, the layers without RoPE (no_rope_layers[i] = 0) slide."""
    interval = config.size("no_rope_layer_interval", default=4)
    no_rope = config.get("no_rope_layers") or [int((i + 1) % interval != 0) for i in range(layers)]
    on = config.flag("use_sliding_window", False) and config.get("sliding_window") is not None
    return [SLIDING if on and not rope else FULL for rope in no_rope]


def llama4_chunks(config: Config, layers: int) -> list[str]:
    """Llama-4: chunked where RoPE is used (no_rope_layers[i] = 1), if attention_chunk_size is set."""
    interval = config.size("no_rope_layer_interval", default=4)
    no_rope = config.get("no_rope_layers") or [int((i + 1) % interval != 0) for i in range(layers)]
    chunked = config.setting("attention_chunk_size", 8192) is not None
    return [CHUNKED if rope and chunked else FULL for rope in no_rope]


def _qwen_window(config: Config) -> bool:
    return bool(config.flag("use_sliding_window", False)) and config.setting("sliding_window", 4096) is not None


def qwen_from_max_window_layers(default: int = 28):
    """Qwen2, Qwen3 (max_window_layers 28), Qwen2.5-VL's text model (80): under use_sliding_window, the layers from
    max_window_layers on (configuration_qwen2.py, configuration_qwen2_5_vl.py)."""

    def pattern(config: Config, layers: int) -> list[str]:
        first = config.count("max_window_layers", default)
        return [SLIDING if _qwen_window(config) and i >= first else FULL for i in range(layers)]

    return pattern


def qwen2_moe_windows(config: Config, layers: int) -> list[str]:
    """Qwen2-MoE: under use_sliding_window, the even layers below max_window_layers (configuration_qwen2_moe.py)."""
    first = config.count("max_window_layers", 28)
    return [SLIDING if _qwen_window(config) and (i + 1) % 2 and i < first else FULL for i in range(layers)]


def qwen3_moe_windows(config: Config, layers: int) -> list[str]:
    """Qwen3-MoE keeps sliding_window only under use_sliding_window: then every layer slides."""
    return [SLIDING if _qwen_window(config) else FULL] * layers


def every_layer(kind: str):
    """Mamba, Mamba-2, Falcon-Mamba: every layer the same recurrent mixer."""
    return lambda config, layers: [kind] * layers


def jamba_layers(config: Config, layers: int) -> list[str]:
    """Jamba: attention where i % attn_layer_period = attn_layer_offset, Mamba elsewhere (layers_block_type)."""
    attention = interleaved("attn_layer_period", "attn_layer_offset", 8, 4)(config, layers)
    return [FULL if i in attention else "mamba" for i in range(layers)]


NEMOTRON_H_PATTERN = {"M": "linear_attention", "E": "moe", "*": "full_attention", "-": "mlp"}


def nemotron_h_layers(config: Config, layers: int) -> list[str]:
    """Nemotron-H: hybrid_override_pattern, one character a layer (M Mamba-2, * attention, - MLP, E experts)."""
    pattern = config.get("hybrid_override_pattern", "M" + "E" + "*" + "-")
    if not isinstance(pattern, str) or not set(pattern) <= set(NEMOTRON_H_PATTERN) or len(pattern) != layers:
        raise config.fail("hybrid_override_pattern", f"{layers} characters of M, E, * and -", pattern)
    return [NEMOTRON_H_PATTERN[c] for c in pattern]


def nemotron_h_depth(config: Config, values: dict) -> int:
    """Nemotron-H's depth: the length of layers_block_type where the config lists its layers (Nemotron-3-Ultra; transformers
    5.24 then ignores num_hidden_layers), else num_hidden_layers (with hybrid_override_pattern)."""
    listed = config.raw("layers_block_type")
    if listed is None:
        return config.size("num_hidden_layers")
    if not isinstance(listed, list) or not 0 < len(listed) <= MAX_LAYERS:
        raise config.fail("layers_block_type", f"a list of 1 to {MAX_LAYERS:,} layer types", listed)
    config.get("num_hidden_layers")  # deprecated beside the list: transformers uses the list's length
    return len(listed)


def recurrent_gemma_layers(config: Config, layers: int) -> list[str]:
    """RecurrentGemma: block_types repeated over the layers; its attention layers are local (sliding)."""
    blocks = config.get("block_types", ["recurrent", "recurrent", "attention"])
    if not isinstance(blocks, list) or not blocks or not set(blocks) <= {"recurrent", "attention"}:
        raise config.fail("block_types", "a list of 'recurrent' and 'attention'", blocks)
    return ["linear_attention" if blocks[i % len(blocks)] == "recurrent" else SLIDING for i in range(layers)]


def qwen3_next_layers(config: Config, layers: int) -> list[str]:
    """Qwen3-Next: a full-attention layer every full_attention_interval-th, gated delta-nets between."""
    interval = config.size("full_attention_interval", default=4)
    return ["linear_attention" if (i + 1) % interval else FULL for i in range(layers)]


def qwen3_next_attention(kv_heads: int) -> Attention:
    """Qwen3-Next's and Qwen3.5's attention: heads of 256, an output gate (q_proj doubled), q/k RMSNorms of d_head."""
    return Attention(kv_heads=Key("num_key_value_heads", default=kv_heads), head_dim=Key("head_dim", default=256),
                     qkv_bias=ATTENTION_BIAS, out_bias=ATTENTION_BIAS, qk_norm=1, gate=1)


# Qwen3-Next's gated delta-net; Qwen3.5's splits in_proj_qkvz and in_proj_ba into four matrices of the same sizes
QWEN3_NEXT_MIXER = Mixer("gdn", {"n_kh": Key("linear_num_key_heads", default=16), "n_vh": Key("linear_num_value_heads", default=32),
                                 "d_kh": Key("linear_key_head_dim", default=128), "d_vh": Key("linear_value_head_dim", default=128),
                                 "k_conv": Key("linear_conv_kernel_dim", default=4), "Q_gdn": 64})


# --- which layers hold experts -------------------------------------------------------------------------------


def every(config: Config, layers: int) -> set[int]:
    return set(range(layers))


def qwen_sparse_step(config: Config, layers: int) -> set[int]:
    """Qwen2/3-MoE: layer i is MoE unless in mlp_only_layers, when (i + 1) is a multiple of decoder_sparse_step."""
    step = config.size("decoder_sparse_step", default=1)
    dense = config.indices("mlp_only_layers", layers, [])
    return {i for i in range(layers) if i not in dense and (i + 1) % step == 0}


def after_first_dense(default: int):
    """DeepSeek-V2/V3, GLM-4.5: the first first_k_dense_replace layers dense, the rest MoE."""

    def layout(config: Config, layers: int) -> set[int]:
        dense = config.get("first_k_dense_replace", default)
        if isinstance(dense, bool) or not isinstance(dense, int) or not 0 <= dense <= layers:
            raise ConfigError(f"{config.model_type} config: 'first_k_dense_replace' must be a layer count, got {short(dense)}")
        return set(range(dense, layers))

    return layout


def llama4_moe_layers(config: Config, layers: int) -> set[int]:
    """Llama-4: moe_layers, by default every interleave_moe_layer_step-th layer."""
    step = config.size("interleave_moe_layer_step", default=1)
    return config.indices("moe_layers", layers, list(range(step - 1, layers, step)))


def interleaved(period_key: str, offset_key: str, period: int, offset: int):
    """Jamba: the layers i with i % period = offset (attn_layer_period/offset, expert_layer_period/offset)."""

    def layout(config: Config, layers: int) -> set[int]:
        every_, first = config.size(period_key, default=period), config.count(offset_key, offset)
        return {i for i in range(layers) if i % every_ == first}

    return layout


# --- family rules no single key states ------------------------------------------------------------------------


def nothing(config: Config, layers: int) -> set[int]:
    """Nemotron-H: its expert layers are its own layer type ("E"), not a layout over the others."""
    return set()


NO_ATTENTION = Attention(heads=1, kv_heads=1, head_dim=1)  # a pure state-space model: the attention terms count 0 layers
AUTO_DT_RANK = Rule("time_step_rank, 'auto': ⌈h/16⌉", lambda c, v: _dt_rank(c, "time_step_rank", v["h"]))


def _dt_rank(config: Config, key: str, h: int) -> int:
    value = config.get(key, "auto")
    return -(-h // 16) if value == "auto" else config.size(key)


def _mamba(model_type: str, title: str) -> Family:
    """Mamba and Falcon-Mamba (MambaConfig's defaults; Falcon-Mamba's B, C, Δ RMSNorms have no weights)."""
    return Family(
        model_type, title, attention=NO_ATTENTION, mlp=Mlp(width=0), norms=Norms(per_layer=1), embedding=tied(True),
        mixer=Mixer("mamba", {"d_ssm": Key("intermediate_size", default=Rule("expand·h", lambda c, v: c.size("expand", default=2) * v["h"])),
                              "N_ssm": Key("state_size", default=16), "r_dt": AUTO_DT_RANK, "k_conv": Key("conv_kernel", default=4),
                              "b_ssm": Flag("use_bias", False), "b_conv": Flag("use_conv_bias", True)}),
        kinds=Kinds(every_layer("mamba"), recurrent="mamba", single_block=True),
        reduces_to=None, why_not="no attention: a Mamba mixer in every layer",
    )


def _falcon_kv_heads(config: Config, values: dict) -> int:
    if config.flag("new_decoder_architecture", False):
        return config.size("num_kv_heads", default=values["a"])
    return 1 if config.flag("multi_query", True) else values["a"]


def _falcon_norms(config: Config, values: dict) -> int:
    new = config.flag("new_decoder_architecture", False)
    lns = config.size("num_ln_in_parallel_attn", default=2 if new else 1)
    return 2 if (not config.flag("parallel_attn", True) or lns == 2) else 1


def _opt_final(config: Config, values: dict) -> int:
    affine = config.flag("layer_norm_elementwise_affine", True)
    before, removed = config.flag("do_layer_norm_before", True), config.flag("_remove_final_layer_norm", False)  # both read
    return int(before and not removed) * affine


def _deepseek_shared(default: int) -> Rule:
    return Rule("n_shared_experts · moe_intermediate_size",
                lambda config, values: (config.optional_size("n_shared_experts", default=default) or 0) * values["d_moe"])


def _mla(config_defaults: bool = True) -> Latent:
    return Latent(q_rank=Key("q_lora_rank", default=1536), kv_rank=Key("kv_lora_rank", default=512), rope=Key("qk_rope_head_dim", default=64),
                  nope=Key("qk_nope_head_dim", default=128), v=Key("v_head_dim", default=128))


MLA_HEAD = Rule("qk_nope_head_dim + qk_rope_head_dim", lambda config, values: values["d_rope"] + values["d_nope"])


def _mlp_layer_types(first_dense: int):
    """DeepSeek-V3.2, GLM-5: the MoE layers are mlp_layer_types' "sparse" entries where the config lists them, else all
    but the first first_k_dense_replace (DeepseekV32Config.__post_init__)."""
    fallback = after_first_dense(first_dense)

    def layout(config: Config, layers: int) -> set[int]:
        listed = config.get("mlp_layer_types")
        if listed is None:
            return fallback(config, layers)
        if not isinstance(listed, list) or len(listed) != layers or not set(listed) <= {"dense", "sparse"}:
            raise config.fail("mlp_layer_types", f'a list of {layers} entries "dense" or "sparse"', listed)
        return {i for i, kind in enumerate(listed) if kind == "sparse"}

    return layout


def _every_layer_indexes(config: Config, values: dict) -> int:
    """GLM-5: each layer runs its own indexer ("full") or reuses the previous one's top-k ("shared"): indexer_types, else
    index_topk_pattern, else index_topk_freq and index_skip_topk_offset (GlmMoeDsaConfig.__post_init__). A layer without
    an indexer has no indexer weights nor indexer keys: one declaration per model cannot state it, so it is refused."""
    layers = values["l"]
    listed = config.get("indexer_types")
    if listed is None:
        pattern = config.get("index_topk_pattern")
        if pattern is not None:
            listed = [{"F": "full", "S": "shared"}.get(c, c) for c in pattern] if isinstance(pattern, str) else pattern
        else:
            freq, offset = max(config.get("index_topk_freq", 1), 1), config.get("index_skip_topk_offset", 2)
            if isinstance(freq, bool) or not isinstance(freq, int) or isinstance(offset, bool) or not isinstance(offset, int):
                raise config.fail("index_topk_freq", "integers index_topk_freq and index_skip_topk_offset", (freq, offset))
            listed = ["full" if max(i - offset + 1, 0) % freq == 0 else "shared" for i in range(layers)]
    if not isinstance(listed, list) or len(listed) != layers or not set(listed) <= {"full", "shared"}:
        raise config.fail("indexer_types", f'a list of {layers} entries "full" or "shared"', listed)
    if "shared" in listed:
        raise ConfigError(f"{config.model_type} config: layers that reuse another layer's indexer (\"shared\" in indexer_types "
                          "or its pattern) are not counted: they hold no indexer and no indexer keys")
    return 1


def _dsa(model_type: str, title: str, heads: int, defaults: dict, every_layer: Rule | int) -> Family:
    """DeepSeek sparse attention on DeepSeek-V3's blocks: MLA with the lightning indexer in every layer (DeepseekV32Indexer:
    index_n_heads heads of index_head_dim), DeepSeekMoE after mlp_layer_types. transformers 5.24 always builds the query
    latent (q_lora_rank) and keeps no MTP layers."""
    base = _deepseek(model_type, title, defaults["experts"], 8, 2048, 3, 1, 0)
    return dataclasses.replace(
        base,
        attention=dataclasses.replace(base.attention, latent=Latent(
            q_rank=Key("q_lora_rank", default=defaults["q_rank"]), kv_rank=Key("kv_lora_rank", default=512),
            rope=Key("qk_rope_head_dim", default=64), nope=Key("qk_nope_head_dim", default=defaults["nope"]),
            v=Key("v_head_dim", default=defaults["v"]))),
        experts=dataclasses.replace(base.experts, layout=_mlp_layer_types(3), score_bias=1),
        extra={"n_mtp": Count("num_nextn_predict_layers", 0), "dsa": every_layer,
               "n_idx": Key("index_n_heads", default=heads), "d_idx": Key("index_head_dim", default=128),
               "k_top": Key("index_topk", default=2048)},  # no weight or cache depends on it; serve prices attention at it
        not_structural=DEEPSEEK_UNREAD,
        why_not="multi-head latent attention with DeepSeek sparse attention's indexer",
    )


def _deepseek(model_type: str, title: str, experts: int, per_token: int | None, width: int, first_dense: int, shared: int,
              mtp: int) -> Family:
    """DeepSeek-V2/V3: multi-head latent attention and DeepSeekMoE (DeepseekV2/V3Config's defaults for absent keys;
    DeepseekV2Config leaves num_experts_per_tok None, so a config.json must give it)."""
    return Family(
        model_type, title,
        attention=Attention(kv_heads=Rule("= a (MLA keeps per-head keys and values)", lambda c, v: v["a"]), head_dim=MLA_HEAD,
                            latent=_mla()),
        experts=Experts(after_first_dense(first_dense), Key("n_routed_experts", default=experts), Key("num_experts_per_tok", default=per_token),
                        Key("moe_intermediate_size", default=width), shared=_deepseek_shared(shared), score_bias=int(model_type == "deepseek_v3")),
        extra={"n_mtp": Count("num_nextn_predict_layers", mtp)},
        refuse=(("attention_bias", True, "biases on MLA's projections"), ("mlp_bias", True, "biases on DeepSeek-V2's MLPs")),
        not_structural=DEEPSEEK_UNREAD,
        reduces_to=None, why_not="multi-head latent attention (reduces to the attention decoder with mla = 0)",
    )


# --- keys whose names look structural but change no weight (formulas/data/unread_keys.py), each checked against transformers 5.24 ---

QWEN_WINDOWS_OFF = {
    "sliding_window": "read only under use_sliding_window (the reader reads it then); off, no layer slides",
    "max_window_layers": "where the windows start, read only under use_sliding_window",
}
MLA_KV_HEADS = {"num_key_value_heads": "MLA builds each head's keys and values from the latent: no weight depends on it"}
DEEPSEEK_UNREAD = {**MLA_KV_HEADS, "moe_layer_freq": "not read by transformers' DeepSeek: first_k_dense_replace places the experts"}

GEMMA_NORMS = Norms(per_layer=4, placement="sandwich")  # input, post-attention, pre- and post-feedforward

FAMILIES: dict[str, Family] = {f.model_type: f for f in (
    # --- the classic families ---
    Family(
        "gpt2", "GPT-2, DistilGPT2",
        hidden=Key("n_embd", "hidden_size"), layers=Key("n_layer", "num_hidden_layers"),
        attention=Attention(heads=Key("n_head", "num_attention_heads"), kv_heads=Rule("= a", lambda c, v: v["a"]), head_dim=HEAD_DIM,
                            qkv_bias=1, out_bias=1, cross=Flag("add_cross_attention", False)),
        mlp=Mlp(width=Key("n_inner", default=FOUR_H), gated=0, bias=1), norms=Norms(layer_norm=1),
        embedding=Embedding(tied=Flag("tie_word_embeddings", True), positions=1, n_pos=Key("n_positions", "max_position_embeddings")),
        reduces_to="gpt",
    ),
    Family(
        "gptj", "GPT-J",
        hidden=Key("n_embd", "hidden_size"), layers=Key("n_layer", "num_hidden_layers"),
        attention=Attention(heads=Key("n_head", "num_attention_heads"), kv_heads=Rule("= a", lambda c, v: v["a"]), head_dim=HEAD_DIM),
        mlp=Mlp(width=Key("n_inner", default=FOUR_H), gated=0, bias=1), norms=Norms(layer_norm=1, per_layer=1, placement="parallel"),
        embedding=Embedding(tied=Flag("tie_word_embeddings", False), head_bias=1),
        not_structural={"n_positions": "rotary positions, no table: a length limit", "rotary_dim": "which dimensions rotate: no weight"},
        reduces_to=None, why_not="one LayerNorm feeds attention and MLP in parallel; a head bias",
    ),
    Family(
        "gpt_neox", "GPT-NeoX, Pythia",
        attention=Attention(kv_heads=Rule("= a", lambda c, v: v["a"]), head_dim=HEAD_DIM, qkv_bias=Flag("attention_bias", True),
                            out_bias=Flag("attention_bias", True)),
        mlp=Mlp(gated=0, bias=1), norms=Norms(layer_norm=1), embedding=tied(False),
        reduces_to=None, why_not="rotary positions: the classic GPT without its position table",
    ),
    Family(
        "opt", "OPT",
        attention=Attention(kv_heads=Rule("= a", lambda c, v: v["a"]), head_dim=HEAD_DIM, qkv_bias=Flag("enable_bias", True),
                            out_bias=Flag("enable_bias", True)),
        mlp=Mlp(width=Key("ffn_dim"), gated=0, bias=Flag("enable_bias", True)),
        norms=Norms(layer_norm=1, per_layer=Rule("2 with elementwise affine, else 0",
                                                 lambda c, v: 2 * c.flag("layer_norm_elementwise_affine", True)),
                    final=Rule("a final LayerNorm under pre-norm (do_layer_norm_before), unless removed", _opt_final)),
        embedding=Embedding(tied=Flag("tie_word_embeddings", True), positions=1, n_pos=Key("max_position_embeddings"), o_pos=2,
                            width=Key("word_embed_proj_dim", default=Rule("h", lambda c, v: v["h"])),
                            project=Rule("project_in/out exist when word_embed_proj_dim ≠ h", lambda c, v: int(v["d_emb"] != v["h"]))),
        reduces_to=None, why_not="a position table with 2 extra rows (OPTLearnedPositionalEmbedding)",
    ),
    Family(
        "bloom", "BLOOM",
        hidden=Key("hidden_size", "n_embed"), layers=Key("n_layer", "num_hidden_layers"),
        attention=Attention(heads=Key("n_head", "num_attention_heads"), kv_heads=Rule("= a", lambda c, v: v["a"]), head_dim=HEAD_DIM,
                            qkv_bias=1, out_bias=1),
        mlp=Mlp(width=FOUR_H, gated=0, bias=1), norms=Norms(layer_norm=1, embedding=1),
        embedding=Embedding(tied=Flag("tie_word_embeddings", True)),
        reduces_to=None, why_not="ALiBi (no position table) and a LayerNorm after the embedding",
    ),
    Family(
        "falcon", "Falcon-7B/40B/180B, Falcon2",
        hidden=Key("hidden_size", "n_embed"),
        attention=Attention(kv_heads=Rule("new architecture: num_kv_heads; else 1 (multi_query) or a", _falcon_kv_heads), head_dim=HEAD_DIM,
                            qkv_bias=Flag("bias", False), out_bias=Flag("bias", False),
                            kv_expand=Flag("new_decoder_architecture", False)),  # K, V broadcast to every query head before the cache
        mlp=Mlp(width=Key("ffn_hidden_size", default=FOUR_H), gated=0, bias=Flag("bias", False)),
        norms=Norms(layer_norm=1, per_layer=Rule("1 when parallel attention shares one LayerNorm, else 2", _falcon_norms), placement="parallel"),
        embedding=tied(True),
        not_structural={"num_kv_heads": "read under new_decoder_architecture; the old fused QKV is 3h, or h + 2·d_head (multi_query)"},
        reduces_to=None, why_not="LayerNorms and a plain MLP, parallel attention (the GPT form without biases or table)",
    ),
    Family(
        "llama", "Llama 1/2/3.x, DeepSeek-R1-Distill-Llama, SmolLM2, TinyLlama",
        attention=Attention(qkv_bias=ATTENTION_BIAS, out_bias=ATTENTION_BIAS), mlp=Mlp(bias=MLP_BIAS),
    ),
    Family(
        "mistral", "Mistral-7B, Mistral-Nemo, Ministral",
        attention=Attention(kv_heads=Key("num_key_value_heads", default=8)), kinds=Kinds(every_layer_slides(4096), window_default=4096),
    ),
    Family(
        "mixtral", "Mixtral-8x7B/8x22B",
        attention=Attention(kv_heads=Key("num_key_value_heads", default=8)), kinds=Kinds(every_layer_slides(None)),
        experts=Experts(every, Key("num_local_experts", "num_experts", default=8), Key("num_experts_per_tok", default=2),
                        Rule("intermediate_size", lambda c, v: v["d_ff"])),
    ),
    Family(
        "qwen2", "Qwen2, Qwen2.5, DeepSeek-R1-Distill-Qwen",
        attention=Attention(kv_heads=Key("num_key_value_heads", default=32), qkv_bias=1),  # biases on Q, K, V only
        kinds=Kinds(qwen_from_max_window_layers(), window_default=4096), not_structural=QWEN_WINDOWS_OFF,
        reduces_to=None, why_not="biases on Q, K and V always",
    ),
    Family(
        "gemma", "Gemma",
        attention=Attention(kv_heads=Key("num_key_value_heads", default=16), head_dim=Key("head_dim", default=256),
                            qkv_bias=ATTENTION_BIAS, out_bias=ATTENTION_BIAS), embedding=tied(True),
    ),
    Family("phi3", "Phi-3, Phi-3.5-mini, Phi-4, Phi-4-mini", kinds=Kinds(every_layer_slides(None))),
    # --- today's families ---
    _deepseek("deepseek_v2", "DeepSeek-V2, V2-Lite, Coder-V2", 64, None, 1407, 0, 2, 0),
    _deepseek("deepseek_v3", "DeepSeek-V3, R1, V3.1, Moonlight", 256, 8, 2048, 3, 1, 1),
    _dsa("deepseek_v32", "DeepSeek-V3.2 (sparse attention)", 64, {"experts": 256, "q_rank": 1536, "nope": 128, "v": 128}, 1),
    _dsa("glm_moe_dsa", "GLM-5 (sparse attention)", 32, {"experts": 256, "q_rank": 2048, "nope": 192, "v": 256},
         Rule("1: every layer runs its indexer (indexer_types all full)", _every_layer_indexes)),
    # Kimi-K2's config.json names model_type kimi_k2 and architectures DeepseekV3ForCausalLM: read as DeepSeek-V3
    dataclasses.replace(_deepseek("deepseek_v3", "", 256, 8, 2048, 3, 1, 1), model_type="kimi_k2", title="Kimi-K2 (as DeepSeek-V3)"),
    Family(
        "qwen3", "Qwen3 dense",
        attention=Attention(kv_heads=Key("num_key_value_heads", default=32), head_dim=Key("head_dim", default=128),
                            qkv_bias=ATTENTION_BIAS, out_bias=ATTENTION_BIAS, qk_norm=1),
        kinds=Kinds(qwen_from_max_window_layers(), window_default=4096), not_structural=QWEN_WINDOWS_OFF,
        reduces_to=None, why_not="q/k RMSNorms in every layer",
    ),
    Family(
        "qwen3_moe", "Qwen3-MoE (30B-A3B, 235B-A22B, Coder-480B)",
        attention=Attention(kv_heads=Key("num_key_value_heads", default=4), qkv_bias=ATTENTION_BIAS, out_bias=ATTENTION_BIAS, qk_norm=1),
        experts=Experts(qwen_sparse_step, Key("num_experts", "num_local_experts", default=128), Key("num_experts_per_tok", default=8),
                        Key("moe_intermediate_size", default=768)),
        kinds=Kinds(qwen3_moe_windows, window_default=4096),
        not_structural={**QWEN_WINDOWS_OFF, "shared_expert_intermediate_size": "Qwen3-MoE has no shared expert: transformers never reads it"},
        reduces_to=None, why_not="q/k RMSNorms in every layer",
    ),
    Family(
        "qwen2_moe", "Qwen1.5-MoE, Qwen2-MoE",
        attention=Attention(kv_heads=Key("num_key_value_heads", default=16), qkv_bias=Flag("qkv_bias", True)),
        experts=Experts(qwen_sparse_step, Key("num_experts", "num_local_experts", default=60), Key("num_experts_per_tok", default=4),
                        Key("moe_intermediate_size", default=1408), shared=Key("shared_expert_intermediate_size", default=5632),
                        shared_gate=1),
        kinds=Kinds(qwen2_moe_windows, window_default=4096), not_structural=QWEN_WINDOWS_OFF,
        reduces_to=None, why_not="a gated shared expert in every MoE layer",
    ),
    Family(
        "gemma2", "Gemma 2",
        attention=Attention(kv_heads=Key("num_key_value_heads", default=4), head_dim=Key("head_dim", default=256),
                            qkv_bias=ATTENTION_BIAS, out_bias=ATTENTION_BIAS),
        norms=GEMMA_NORMS, embedding=tied(True), kinds=Kinds(alternate, window_default=4096),
        reduces_to=None, why_not="four RMSNorms per layer",
    ),
    Family(
        "gemma3_text", "Gemma 3 text (1B; the text model of 4B-27B)",
        attention=Attention(kv_heads=Key("num_key_value_heads", default=4), head_dim=Key("head_dim", default=256),
                            qkv_bias=ATTENTION_BIAS, out_bias=ATTENTION_BIAS, qk_norm=1),
        norms=GEMMA_NORMS, embedding=tied(True),
        kinds=Kinds(one_global_in(6, "sliding_window_pattern", "_sliding_window_pattern"), window_default=4096),
        refuse=(("use_bidirectional_attention", True, "Gemma-3's bidirectional variant changes the window"),),
        reduces_to=None, why_not="four RMSNorms per layer and q/k norms",
    ),
    Family(
        "gpt_oss", "gpt-oss-20b/120b",
        attention=Attention(kv_heads=Key("num_key_value_heads", default=8), head_dim=Key("head_dim", default=64),
                            qkv_bias=Flag("attention_bias", True), out_bias=Flag("attention_bias", True), sinks=1),
        experts=Experts(every, Key("num_local_experts", "num_experts", default=128), Key("num_experts_per_tok", default=4),
                        Rule("intermediate_size", lambda c, v: v["d_ff"]), router_bias=1),
        extra={"b_mlp": 1},  # the experts' biases
        kinds=Kinds(alternate, window_default=128),
        reduces_to=None, why_not="learned attention sinks and biased experts",
    ),
    Family(
        "llama4_text", "Llama 4 text (Scout, Maverick)",
        attention=Attention(kv_heads=Key("num_key_value_heads", default=8), head_dim=Key("head_dim", default=128),
                            qkv_bias=ATTENTION_BIAS, out_bias=ATTENTION_BIAS),
        mlp=Mlp(width=Key("intermediate_size_mlp", default=16384)),
        experts=Experts(llama4_moe_layers, Key("num_local_experts", default=16), Key("num_experts_per_tok", default=1),
                        Key("intermediate_size"), shared=Rule("intermediate_size (one shared expert)", lambda c, v: v["d_moe"]),
                        all_experts=1),
        kinds=Kinds(llama4_chunks),
        reduces_to=None, why_not="a shared expert in every MoE layer",
    ),
    Family(
        "olmo2", "OLMo 2",
        attention=Attention(qkv_bias=ATTENTION_BIAS, out_bias=ATTENTION_BIAS, qk_norm_all=1), norms=Norms(placement="post"),
        reduces_to=None, why_not="q/k RMSNorms over all heads",
    ),
    Family(
        "glm4_moe", "GLM-4.5, GLM-4.5-Air, GLM-4.6",
        attention=Attention(kv_heads=Key("num_key_value_heads", default=8), qkv_bias=ATTENTION_BIAS, qk_norm=Flag("use_qk_norm", False)),
        experts=Experts(after_first_dense(1), Key("n_routed_experts", default=128), Key("num_experts_per_tok", default=8),
                        Key("moe_intermediate_size", default=1408), shared=_deepseek_shared(1), score_bias=1),
        extra={"n_mtp": Count("num_nextn_predict_layers", 1)},
        reduces_to=None, why_not="biases on Q, K and V (attention_bias) with an unbiased output",
    ),
    # --- families added in issue 28 ---
    Family(
        "nemotron", "Nemotron-4, Nemotron-3 (dense), Minitron, Nemotron-Mini",
        # num_key_value_heads has no default: transformers 5.24's NemotronAttention cannot build without it
        attention=Attention(kv_heads=Key("num_key_value_heads"), qkv_bias=ATTENTION_BIAS, out_bias=ATTENTION_BIAS),
        mlp=Mlp(gated=0, bias=MLP_BIAS), norms=Norms(layer_norm=1, kind="LayerNorm1P (a scale stored less 1, and a shift)"),
        embedding=tied(False),
        not_structural={"kv_channels": "Megatron's name for the head width, which transformers 5.24 never reads (head_dim, "
                                       "else h/a, is read)"},
        reduces_to=None, why_not="squared-ReLU MLP of two matrices, LayerNorms and partial rotary positions without a table",
    ),
    Family(
        "starcoder2", "StarCoder2",
        attention=Attention(kv_heads=Key("num_key_value_heads", default=2), qkv_bias=Flag("use_bias", True), out_bias=Flag("use_bias", True)),
        mlp=Mlp(gated=0, bias=Flag("use_bias", True)), norms=Norms(layer_norm=1), embedding=tied(True),
        kinds=Kinds(every_layer_slides(None)),
        reduces_to=None, why_not="LayerNorms and a plain MLP with rotary positions",
    ),
    Family(
        "cohere", "Command-R, Command-R+, Aya 23/Expanse",
        attention=Attention(qkv_bias=ATTENTION_BIAS, out_bias=ATTENTION_BIAS, qk_norm_all=Flag("use_qk_norm", False)),
        norms=Norms(per_layer=1, placement="parallel", kind="LayerNorm (no shift)"), embedding=tied(True),
        reduces_to=None, why_not="one LayerNorm (no shift) feeds attention and MLP in parallel",
    ),
    Family(
        "cohere2", "Command-R7B, Command-A",
        attention=Attention(qkv_bias=ATTENTION_BIAS, out_bias=ATTENTION_BIAS),
        norms=Norms(per_layer=1, placement="parallel", kind="LayerNorm (no shift)"), embedding=tied(True),
        kinds=Kinds(one_global_in(4, "sliding_window_pattern"), window_default=4096),
        reduces_to=None, why_not="one LayerNorm (no shift) feeds attention and MLP in parallel",
    ),
    Family("granite", "Granite 3.x dense", attention=Attention(qkv_bias=ATTENTION_BIAS, out_bias=ATTENTION_BIAS), mlp=Mlp(bias=MLP_BIAS)),
    Family(
        "granitemoe", "Granite 3.x MoE",
        attention=Attention(qkv_bias=ATTENTION_BIAS, out_bias=ATTENTION_BIAS),
        experts=Experts(every, Key("num_local_experts", default=8), Key("num_experts_per_tok", default=2),
                        Rule("intermediate_size", lambda c, v: v["d_ff"])),
    ),
    Family(
        "granitemoeshared", "Granite MoE with a shared expert",
        attention=Attention(qkv_bias=ATTENTION_BIAS, out_bias=ATTENTION_BIAS),
        experts=Experts(every, Key("num_local_experts", default=8), Key("num_experts_per_tok", default=2),
                        Rule("intermediate_size", lambda c, v: v["d_ff"]), shared=Count("shared_intermediate_size", 0)),
        reduces_to=None, why_not="a shared expert in every layer",
    ),
    Family(
        "stablelm", "StableLM 2, StableLM-3B-4E1T",
        attention=Attention(kv_heads=Key("num_key_value_heads", default=32), qkv_bias=Flag("use_qkv_bias", False),
                            qk_norm_all=Flag("qk_layernorm", False)),  # a LayerNorm (no shift) per head on queries and keys
        norms=Norms(layer_norm=1, per_layer=Rule("1 under use_parallel_residual, else 2",
                                                 lambda c, v: 1 if c.flag("use_parallel_residual", False) else 2)),
        reduces_to=None, why_not="LayerNorms (scale and shift)",
    ),
    Family(
        "olmoe", "OLMoE",
        attention=Attention(qkv_bias=ATTENTION_BIAS, out_bias=ATTENTION_BIAS, qk_norm_all=1),
        experts=Experts(every, Key("num_experts", default=64), Key("num_experts_per_tok", default=8), Rule("intermediate_size", lambda c, v: v["d_ff"])),
        reduces_to=None, why_not="q/k RMSNorms over all heads",
    ),
    Family(
        "smollm3", "SmolLM3",
        attention=Attention(kv_heads=Key("num_key_value_heads", default=4), qkv_bias=ATTENTION_BIAS, out_bias=ATTENTION_BIAS),
        mlp=Mlp(bias=MLP_BIAS), embedding=tied(True), kinds=Kinds(smollm3_windows),
        not_structural={key: "superseded by layer_types where the config lists them (the reader reads these otherwise)"
                        for key in ("use_sliding_window", "max_window_layers", "no_rope_layers", "no_rope_layer_interval")},
    ),
    Family(
        "glm", "GLM-4-9B",
        attention=Attention(kv_heads=Key("num_key_value_heads", default=2), head_dim=Key("head_dim", default=128),
                            qkv_bias=Flag("attention_bias", True)),
        reduces_to=None, why_not="biases on Q, K and V (attention_bias) with an unbiased output",
    ),
    Family(
        "glm4", "GLM-4-0414, GLM-Z1",
        attention=Attention(kv_heads=Key("num_key_value_heads", default=2), head_dim=Key("head_dim", default=128),
                            qkv_bias=Flag("attention_bias", True)),
        norms=Norms(per_layer=4, placement="sandwich"),
        reduces_to=None, why_not="four RMSNorms per layer",
    ),
    Family(
        "olmo3", "OLMo 3",
        attention=Attention(qkv_bias=ATTENTION_BIAS, out_bias=ATTENTION_BIAS, qk_norm_all=1), norms=Norms(placement="post"),
        kinds=Kinds(one_global_in(4), window_default=4096),
        reduces_to=None, why_not="q/k RMSNorms over all heads",
    ),
    Family(
        "exaone4", "EXAONE 4.0",
        attention=Attention(kv_heads=Key("num_key_value_heads", default=32), qk_norm=1), norms=Norms(placement="post"),
        kinds=Kinds(exaone4_windows, window_default=4096),
        reduces_to=None, why_not="q/k RMSNorms in every layer",
    ),
    Family(
        "seed_oss", "Seed-OSS",
        attention=Attention(kv_heads=Key("num_key_value_heads", default=8), head_dim=Key("head_dim", default=128),
                            qkv_bias=Flag("attention_bias", True), out_bias=Flag("attention_out_bias", False)),
        mlp=Mlp(bias=MLP_BIAS),
        reduces_to=None, why_not="biases on Q, K and V by default",
    ),
    Family(
        "minimax_m2", "MiniMax-M2",
        attention=Attention(kv_heads=Key("num_key_value_heads", default=8), head_dim=Key("head_dim", default=128), qk_norm_all=1),
        experts=Experts(every, Key("num_local_experts", default=256), Key("num_experts_per_tok", default=8),
                        Rule("intermediate_size", lambda c, v: v["d_ff"]), score_bias=1),
        not_structural={"rotary_dim": "partial RoPE: which dimensions rotate, no weight",
                        "mtp_transformer_layers": "multi-token-prediction modules transformers 5.24 does not build for MiniMax-M2",
                        "num_mtp_modules": "multi-token-prediction modules transformers 5.24 does not build for MiniMax-M2",
                        "shared_intermediate_size": "transformers 5.24's MiniMax-M2 builds no shared expert (never reads it)"},
        reduces_to=None, why_not="q/k RMSNorms over all heads",
    ),
    Family(
        "phi", "Phi-1, Phi-1.5, Phi-2",
        attention=Attention(qkv_bias=1, out_bias=1), mlp=Mlp(gated=0, bias=1),
        norms=Norms(layer_norm=1, per_layer=1, placement="parallel"), embedding=Embedding(tied=Flag("tie_word_embeddings", False), head_bias=1),
        refuse=(("qk_layernorm", True, "Phi's per-head LayerNorms on queries and keys"),),
        reduces_to=None, why_not="one LayerNorm feeds attention and MLP in parallel; a head bias",
    ),
    Family(
        "gpt_neo", "GPT-Neo", layers=Key("num_layers", "num_hidden_layers"),
        attention=Attention(heads=Key("num_heads", "num_attention_heads"), kv_heads=Rule("= a", lambda c, v: v["a"]), head_dim=HEAD_DIM, out_bias=1),
        mlp=Mlp(width=Key("intermediate_size", default=FOUR_H), gated=0, bias=1), norms=Norms(layer_norm=1),
        embedding=Embedding(tied=Flag("tie_word_embeddings", True), positions=1, n_pos=Key("max_position_embeddings", default=2048)),
        not_structural={"window_size": "the local layers' mask (they cache every token): no weight", "attention_types": "which layers mask locally"},
        reduces_to=None, why_not="no biases on Q, K and V (its local layers mask a window of 256 but cache every token)",
    ),
    Family(
        "mpt", "MPT",
        hidden=Key("d_model"), layers=Key("n_layers"),
        attention=Attention(heads=Key("n_heads"), kv_heads=Rule("= a", lambda c, v: v["a"]), head_dim=HEAD_DIM),
        mlp=Mlp(width=FOUR_H, gated=0), norms=Norms(kind="LayerNorm (no shift)"), embedding=tied(True),
        reduces_to=None, why_not="LayerNorms without shifts, a plain MLP, ALiBi",
    ),
    Family(
        "dbrx", "DBRX",
        hidden=Key("d_model"), layers=Key("n_layers"),
        attention=Attention(heads=Key("n_heads"), kv_heads=Key("attn_config.kv_n_heads", default=1), head_dim=HEAD_DIM),
        mlp=Mlp(width=Key("ffn_config.ffn_hidden_size", default=3584)), norms=Norms(kind="LayerNorm (no shift)"),
        experts=Experts(every, Key("ffn_config.moe_num_experts", default=4), Key("ffn_config.moe_top_k", default=1),
                        Rule("ffn_config.ffn_hidden_size", lambda c, v: v["d_ff"])),
    ),
    Family(
        "ministral", "Ministral-8B",
        attention=Attention(kv_heads=Key("num_key_value_heads", default=8)), kinds=Kinds(every_layer_slides(4096), window_default=4096),
    ),
    Family(
        "ministral3", "Ministral 3 (text)",
        attention=Attention(kv_heads=Key("num_key_value_heads", default=8), head_dim=Key("head_dim", default=128)),
        kinds=Kinds(every_layer_slides(None)),
    ),
    # --- the text models of multimodal checkpoints (formulas/data/multimodal.py) ---
    Family(
        "qwen2_5_vl_text", "Qwen2.5-VL (text model)",
        attention=Attention(kv_heads=Key("num_key_value_heads", default=8), qkv_bias=1),
        kinds=Kinds(qwen_from_max_window_layers(80), window_default=4096), not_structural=QWEN_WINDOWS_OFF,
        reduces_to=None, why_not="biases on Q, K and V always",
    ),
    Family(
        "qwen3_vl_text", "Qwen3-VL (text model)",
        attention=Attention(kv_heads=Key("num_key_value_heads", default=32), head_dim=Key("head_dim", default=128),
                            qkv_bias=ATTENTION_BIAS, out_bias=ATTENTION_BIAS, qk_norm=1),
        reduces_to=None, why_not="q/k RMSNorms in every layer",
    ),
    Family(
        "qwen3_vl_moe_text", "Qwen3-VL-MoE (text model)",
        attention=Attention(kv_heads=Key("num_key_value_heads", default=16), qkv_bias=ATTENTION_BIAS, out_bias=ATTENTION_BIAS, qk_norm=1),
        experts=Experts(qwen_sparse_step, Key("num_experts", default=60), Key("num_experts_per_tok", default=4),
                        Key("moe_intermediate_size", default=1408)),
        embedding=tied(True),
        reduces_to=None, why_not="q/k RMSNorms in every layer",
    ),
    # --- state-space and hybrid families ---
    _mamba("mamba", "Mamba"),
    _mamba("falcon_mamba", "Falcon-Mamba"),
    Family(
        "mamba2", "Mamba-2, Codestral-Mamba",
        attention=NO_ATTENTION, mlp=Mlp(width=0), norms=Norms(per_layer=1), embedding=tied(False),
        mixer=Mixer("mamba2", {"d_ssm": Rule("expand·h", lambda c, v: c.size("expand", default=2) * v["h"]),
                               "N_ssm": Key("state_size", default=128), "n_ssmh": Key("num_heads", default=128),
                               "n_grp": Key("n_groups", default=8), "k_conv": Key("conv_kernel", default=4),
                               "b_ssm": Flag("use_bias", False), "b_conv": Flag("use_conv_bias", True), "Q_ssd": Key("chunk_size", default=256)}),
        kinds=Kinds(every_layer("mamba"), recurrent="mamba2", single_block=True),
        not_structural={"head_dim": "the heads split d_ssm = expand·h: no weight depends on it"},
        reduces_to=None, why_not="no attention: a Mamba-2 mixer in every layer",
    ),
    Family(
        "jamba", "Jamba 1.5/1.6/1.7",
        attention=Attention(kv_heads=Key("num_key_value_heads", default=8)),
        experts=Experts(interleaved("expert_layer_period", "expert_layer_offset", 2, 1), Key("num_experts", default=16),
                        Key("num_experts_per_tok", default=2), Rule("intermediate_size", lambda c, v: v["d_ff"])),
        mixer=Mixer("mamba", {"d_ssm": Rule("mamba_expand·h", lambda c, v: c.size("mamba_expand", default=2) * v["h"]),
                              "N_ssm": Key("mamba_d_state", default=16), "r_dt": Rule("mamba_dt_rank, 'auto': ⌈h/16⌉",
                                                                                       lambda c, v: _dt_rank(c, "mamba_dt_rank", v["h"])),
                              "k_conv": Key("mamba_d_conv", default=4), "b_ssm": Flag("mamba_proj_bias", False),
                              "b_conv": Flag("mamba_conv_bias", True), "dt_norm": 1}),
        kinds=Kinds(jamba_layers, recurrent="mamba", types_key="layers_block_type"),
        reduces_to=None, why_not="Mamba layers between its attention layers",
    ),
    Family(
        "nemotron_h", "Nemotron-H, Nemotron Nano 2, Nemotron 3 Nano/Super/Ultra",
        layers=Rule("len(layers_block_type), else num_hidden_layers", nemotron_h_depth),
        attention=Attention(kv_heads=Key("num_key_value_heads", default=8), head_dim=Key("head_dim", default=128),
                            qkv_bias=ATTENTION_BIAS, out_bias=ATTENTION_BIAS),
        mlp=Mlp(gated=0), norms=Norms(per_layer=1),
        experts=Experts(nothing, Key("n_routed_experts", default=8), Key("num_experts_per_tok", default=2),
                        Key("moe_intermediate_size", default=7688), shared=Key("moe_shared_expert_intermediate_size", default=7688),
                        score_bias=1, latent="moe_latent_size"),
        mixer=Mixer("mamba2", {"n_ssmh": Key("mamba_num_heads", default=128),
                               "d_ssm": Rule("mamba_num_heads·mamba_head_dim", lambda c, v: v["n_ssmh"] * c.size("mamba_head_dim", default=64)),
                               "N_ssm": Key("ssm_state_size", default=128),
                               "n_grp": Key("n_groups", default=8), "k_conv": Key("conv_kernel", default=4),
                               "b_ssm": Flag("use_bias", False), "b_conv": Flag("use_conv_bias", True), "Q_ssd": Key("chunk_size", default=128)}),
        kinds=Kinds(nemotron_h_layers, recurrent="mamba2", types_key="layers_block_type", single_block=True),
        refuse=(("mlp_bias", True, "biases on Nemotron-H's MLPs and shared experts"),),
        not_structural={"n_shared_experts": "transformers builds one shared MLP of moe_shared_expert_intermediate_size whatever it says",
                        "attention_head_dim": "a legacy name transformers 5.24 never reads (head_dim is read)",
                        "time_step_rank": "Mamba-2 has one Δ per head, no low-rank Δ projection (Mamba-1's)",
                        "hybrid_override_pattern": "superseded by layers_block_type where the config gives both (the reader reads it otherwise)"},
        reduces_to=None, why_not="Mamba-2, attention, MLP and expert layers, one block each",
    ),
    Family(
        "recurrent_gemma", "RecurrentGemma (Griffin)",
        attention=Attention(kv_heads=Key("num_key_value_heads", default=1), qkv_bias=ATTENTION_BIAS, out_bias=1),
        mlp=Mlp(width=Rule("intermediate_size / 2", lambda c, v: c.size("intermediate_size", default=15360) // 2), bias=1),
        embedding=tied(True),
        mixer=Mixer("rglru", {"d_lru": Key("lru_width", default=Rule("h", lambda c, v: v["h"])),
                              "w_lru": Rule("lru_width / num_attention_heads", lambda c, v: v["d_lru"] // v["a"]),
                              "k_conv": Key("conv1d_width", default=4)}),
        kinds=Kinds(recurrent_gemma_layers, window_default=2048, recurrent="rglru", types_key="layers_block_type",
                    window_keys=("attention_window_size", "sliding_window")),
        reduces_to=None, why_not="recurrent blocks between local attention layers",
    ),
    Family(
        "qwen3_next", "Qwen3-Next",
        attention=qwen3_next_attention(kv_heads=2),
        experts=Experts(qwen_sparse_step, Key("num_experts", default=512), Key("num_experts_per_tok", default=10),
                        Key("moe_intermediate_size", default=512), shared=Key("shared_expert_intermediate_size", default=512),
                        shared_gate=1),
        mixer=QWEN3_NEXT_MIXER,
        kinds=Kinds(qwen3_next_layers, recurrent="gdn"),
        not_structural={"use_sliding_window": "Qwen3-Next has no sliding layers (full_attention_interval places its layers)"},
        reduces_to=None, why_not="gated delta-nets between gated attention layers",
    ),
    Family(  # Qwen3.5's text model: Qwen3-Next's gated attention and gated delta-nets, a dense SwiGLU in every layer
        "qwen3_5_text", "Qwen3.5 dense (text model)",
        attention=qwen3_next_attention(kv_heads=4), mixer=QWEN3_NEXT_MIXER, kinds=Kinds(qwen3_next_layers, recurrent="gdn"),
        not_structural={"use_sliding_window": "Qwen3.5 has no sliding layers (layer_types or full_attention_interval places them)"},
        reduces_to=None, why_not="gated delta-nets between gated attention layers",
    ),
    Family(  # every layer a MoE (transformers 5.24 drops decoder_sparse_step and mlp_only_layers for Qwen3.5)
        "qwen3_5_moe_text", "Qwen3.5 MoE, Qwen3.6 MoE (text model)",
        attention=qwen3_next_attention(kv_heads=2), mlp=Mlp(width=0),  # no dense MLP: its config has no intermediate_size
        experts=Experts(every, Key("num_experts", default=256), Key("num_experts_per_tok", default=8),
                        Key("moe_intermediate_size", default=512), shared=Key("shared_expert_intermediate_size", default=512),
                        shared_gate=1),
        mixer=QWEN3_NEXT_MIXER, kinds=Kinds(qwen3_next_layers, recurrent="gdn"),
        not_structural={"use_sliding_window": "Qwen3.5 has no sliding layers (layer_types or full_attention_interval places them)"},
        reduces_to=None, why_not="gated delta-nets between gated attention layers",
    ),
    Family(
        "phimoe", "Phi-3.5-MoE",
        attention=Attention(kv_heads=Key("num_key_value_heads", default=8), qkv_bias=ATTENTION_BIAS, out_bias=ATTENTION_BIAS),
        norms=Norms(layer_norm=1), embedding=Embedding(tied=Flag("tie_word_embeddings", False), head_bias=Flag("lm_head_bias", False)),
        experts=Experts(every, Key("num_local_experts", "num_experts", default=16), Key("num_experts_per_tok", default=2),
                        Rule("intermediate_size", lambda c, v: v["d_ff"])),
        kinds=Kinds(every_layer_slides(None)),
        reduces_to=None, why_not="LayerNorms (scale and shift)",
    ),
)}


# Model types transformers 5.24 builds (each has its modeling file) that no declaration here can state exactly: refused
# with the reason, never counted as a near family (issue 35). Each reason names what its modeling file builds that the
# general decoder's one attention block, one MLP block and one expert block per model cannot state.
REFUSED: dict[str, str] = {
    "deepseek_v4": "per-layer compressed attention (compress_ratios: HCA and CSA compressors, an indexer of their own), "
                   "hyper-connections of hc_mult streams, hash-routed first layers (num_hash_layers) and a grouped "
                   "low-rank output projection (o_groups, o_lora_rank) in modeling_deepseek_v4.py",
    "gemma4": "attention shaped per layer (per_layer_config), per-layer input embeddings (hidden_size_per_layer_input), "
              "layers that reuse an earlier layer's keys and values (num_kv_shared_layers) with double-wide MLPs, and a "
              "MoE block beside the dense MLP with a scaled router (modeling_gemma4.py)",
    "mimo_v2_flash": "its sliding layers have twice the full layers' key/value heads and sinks of their own, and every "
                     "layer's values are narrower than its keys (v_head_dim 128, head_dim 192; MiMoV2FlashAttention)",
    "step3p7": "its sliding layers have their own head count (num_sliding_attention_heads), every layer a head gate "
               "(g_proj), and its vision tower layer scales and two convolutional downsamplers (modeling_step3p7.py)",
}
