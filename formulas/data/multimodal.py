"""Multimodal checkpoints: the text decoder from text_config, the vision tower and projector counted apart.

A multimodal config.json (gemma3, mistral3, qwen2_5_vl, qwen3_vl, qwen3_vl_moe, llama4, qwen3_5, kimi_k25) holds a text_config, read
by its text family (formulas/data/families.py), and a vision_config. Its tower is declared here as data, like a
family: the encoder layer's sizes and switches (read by the general block, params.decoder.layer), the patch stem,
the position table, the tower's own norms and the projector's linear layers and norms (formulas/topics/towers.py). The
counts are what transformers 5.24's ...ForConditionalGeneration builds; FLOPs and the cache are the text
decoder's. Where the head is tied is each config class's rule: Gemma-3, Mistral-3 and Kimi-K2.5 by the top-level key
(default true), Qwen3-VL and Llama-4 by the top-level key (default false), Qwen2.5-VL by either key.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from llm_formulas.formulas.data.blocks import Config, ConfigError, Flag, Key, Rule, Spec, classic_values, resolve

HEAD = Rule("h / num_heads", lambda c, v: v["h"] // v["a"])


@dataclass(frozen=True)
class Linear:
    """A projector's linear layer: input and output widths and a bias (specs over the tower's values)."""

    label: str
    d_in: Spec
    d_out: Spec
    bias: Spec = 0
    count: Spec = 1


@dataclass(frozen=True)
class Norm:
    """A norm of ``width`` (a shift too when ``layer_norm``)."""

    label: str
    width: Spec
    layer_norm: Spec = 0
    count: Spec = 1


@dataclass(frozen=True)
class Tower:
    """A vision encoder and its projector, as data. ``block``: the encoder layer by symbol name (h, a, d_head,
    d_ff, gated, b_q, b_o, b_mlp, norm_bias, n_norm); every head has its own keys and values (g = a).
    ``top``: values read from the top-level config (the text width, the merge size, the projector's bias)."""

    name: str
    block: dict[str, Spec]
    layers: Spec
    stem: dict[str, Spec]
    positions: dict[str, Spec] = field(default_factory=dict)
    norms: Spec = 0  # the tower's own pre/post norms of width h
    head: Spec = 0  # SigLIP's attention-pooling head: a probe and one more attention + MLP block with one norm
    projector: tuple[Linear | Norm, ...] = ()
    top: dict[str, Spec] = field(default_factory=dict)


@dataclass(frozen=True)
class Multimodal:
    model_type: str
    title: str
    text_type: str  # text_config's model_type when it gives none
    tower: Tower
    tied: Rule


@dataclass(frozen=True)
class Piece:
    """One counted piece: a catalogue formula at some values, times a count."""

    component: str  # "vision_tower" or "projector"
    label: str
    formula_id: str
    values: dict[str, int]
    count: int


def _text_h(config: Config, values: dict) -> int:
    return values["text_h"]


TEXT_H = Rule("text_config.hidden_size", _text_h)
MERGED = Rule("h·m² (m×m patches concatenated)", lambda c, v: v["h"] * v["merge"] ** 2)


def _tied(top_default: bool, either: bool = False) -> Rule:
    def rule(config: Config, values: dict) -> int:
        top = config.get("tie_word_embeddings")
        if either:
            text = (config.get("text_config") or {}).get("tie_word_embeddings")
            return int(bool(top) or bool(text))
        return int(top_default if top is None else bool(top))

    why = ("tie_word_embeddings at the top or in text_config" if either else
           f"the top-level tie_word_embeddings (default {str(top_default).lower()})")
    return Rule(why, rule)


SIGLIP = Tower(  # Gemma-3's SigLIP-So400m and its projector (modeling_siglip.py, modeling_gemma3.py)
    "SigLIP",
    block={"h": Key("hidden_size", default=768), "a": Key("num_attention_heads", default=12), "d_head": HEAD,
           "d_ff": Key("intermediate_size", default=3072), "gated": 0, "b_q": 1, "b_o": 1, "b_mlp": 1, "norm_bias": 1, "n_norm": 2},
    layers=Key("num_hidden_layers", default=12),
    stem={"C_img": Key("num_channels", default=3), "P_img": Key("patch_size", default=16), "P_t": 1, "b_patch": 1},
    positions={"n_vpos": Rule("(image_size / patch_size)²", lambda c, v: (c.size("image_size", default=224) // v["P_img"]) ** 2)},
    norms=1,  # post_layernorm
    head=Flag("vision_use_head", True),
    projector=(Norm("mm_soft_emb_norm", Rule("h", lambda c, v: v["h"])), Linear("mm_input_projection", Rule("h", lambda c, v: v["h"]), TEXT_H)),
)
PIXTRAL = Tower(  # Mistral-3's Pixtral encoder and its projector (modeling_pixtral.py, modeling_mistral3.py)
    "Pixtral",
    block={"h": Key("hidden_size", default=1024), "a": Key("num_attention_heads", default=16), "d_head": Key("head_dim", default=HEAD),
           "d_ff": Key("intermediate_size", default=4096), "gated": 1, "b_q": 0, "b_o": 0, "b_mlp": 0, "norm_bias": 0, "n_norm": 2},
    layers=Key("num_hidden_layers", default=24),
    stem={"C_img": Key("num_channels", default=3), "P_img": Key("patch_size", default=14), "P_t": 1, "b_patch": 0},
    norms=1,  # ln_pre
    projector=(
        Norm("norm", Rule("h", lambda c, v: v["h"])),
        Linear("patch_merger", MERGED, Rule("h", lambda c, v: v["h"])),
        Linear("linear_1", Rule("h · feature layers", lambda c, v: v["h"] * v["features"]), TEXT_H, Rule("bias", lambda c, v: v["bias"])),
        Linear("linear_2", TEXT_H, TEXT_H, Rule("bias", lambda c, v: v["bias"])),
    ),
    top={"merge": Key("spatial_merge_size", default=2), "bias": Flag("multimodal_projector_bias", False),
         "features": Rule("vision_feature_layer: one layer, or a list", lambda c, v: _feature_layers(c))},
)
QWEN2_5_VL = Tower(  # Qwen2.5-VL's window-attention ViT and its merger (modeling_qwen2_5_vl.py)
    "Qwen2.5-VL ViT",
    block={"h": Key("hidden_size", default=3584), "a": Key("num_heads", default=16), "d_head": HEAD,
           "d_ff": Key("intermediate_size", default=3420), "gated": 1, "b_q": 1, "b_o": 1, "b_mlp": 1, "norm_bias": 0, "n_norm": 2},
    layers=Key("depth", default=32),
    stem={"C_img": Key("in_channels", default=3), "P_img": Key("patch_size", default=14), "P_t": Key("temporal_patch_size", default=2),
          "b_patch": 0},
    projector=(Norm("merger.ln_q", Rule("h", lambda c, v: v["h"])), Linear("merger.mlp.0", MERGED, MERGED, 1),
               Linear("merger.mlp.2", MERGED, Key("out_hidden_size", default=3584), 1)),
    top={"merge": Rule("vision_config.spatial_merge_size", lambda c, v: 0)},
)
QWEN3_VL = Tower(  # Qwen3-VL's ViT with learned positions, its merger and the DeepStack mergers (modeling_qwen3_vl.py)
    "Qwen3-VL ViT",
    block={"h": Key("hidden_size", default=1152), "a": Key("num_heads", default=16), "d_head": HEAD,
           "d_ff": Key("intermediate_size", default=4304), "gated": 0, "b_q": 1, "b_o": 1, "b_mlp": 1, "norm_bias": 1, "n_norm": 2},
    layers=Key("depth", default=27),
    stem={"C_img": Key("in_channels", default=3), "P_img": Key("patch_size", default=16), "P_t": Key("temporal_patch_size", default=2),
          "b_patch": 1},
    positions={"n_vpos": Key("num_position_embeddings", default=2304)},
    projector=(
        Norm("merger.norm", Rule("h", lambda c, v: v["h"]), 1), Linear("merger.linear_fc1", MERGED, MERGED, 1),
        Linear("merger.linear_fc2", MERGED, Key("out_hidden_size", default=3584), 1),
        Norm("deepstack.norm", MERGED, 1, count=Rule("len(deepstack_visual_indexes)", lambda c, v: _deepstack(c))),
        Linear("deepstack.linear_fc1", MERGED, MERGED, 1, count=Rule("len(deepstack_visual_indexes)", lambda c, v: _deepstack(c))),
        Linear("deepstack.linear_fc2", MERGED, Key("out_hidden_size", default=3584), 1,
               count=Rule("len(deepstack_visual_indexes)", lambda c, v: _deepstack(c))),
    ),
    top={"merge": Rule("vision_config.spatial_merge_size", lambda c, v: 0)},
)
QWEN3_5_VISION = Tower(  # Qwen3.5's ViT: Qwen3-VL's without the DeepStack mergers (modeling_qwen3_5.py, Qwen3_5VisionModel)
    "Qwen3.5 ViT", QWEN3_VL.block, QWEN3_VL.layers, QWEN3_VL.stem, QWEN3_VL.positions,
    projector=tuple(part for part in QWEN3_VL.projector if not part.label.startswith("deepstack.")), top=QWEN3_VL.top,
)
LLAMA4_VISION = Tower(  # Llama-4's vision encoder, its pixel-shuffle adapter and projector (modeling_llama4.py)
    "Llama-4 ViT",
    block={"h": Key("hidden_size", default=768), "a": Key("num_attention_heads", default=16), "d_head": HEAD,
           "d_ff": Key("intermediate_size", default=5632), "gated": 0, "b_q": 1, "b_o": 1, "b_mlp": 1, "norm_bias": 1, "n_norm": 2},
    layers=Key("num_hidden_layers", default=34),
    stem={"C_img": Key("num_channels", default=3), "P_img": Key("patch_size", default=14), "P_t": 1, "b_patch": 0},
    positions={"n_vpos": Rule("(image_size / patch_size)² + 1", lambda c, v: (c.size("image_size", default=448) // v["P_img"]) ** 2 + 1),
               "cls_tok": 1},
    norms=2,  # layernorm_pre, layernorm_post
    projector=(
        Linear("vision_adapter.fc1", Rule("intermediate_size", lambda c, v: v["d_ff"]), Key("projector_input_dim", default=4096)),
        Linear("vision_adapter.fc2", Key("projector_output_dim", default=4096), Key("projector_output_dim", default=4096)),
        Linear("multi_modal_projector.linear_1", Key("vision_output_dim", default=7680), TEXT_H),
    ),
)


KERNEL_MERGED = Rule("h·k_h·k_w (merge_kernel_size)", lambda c, v: v["h"] * _kernel_area(c))
MOONVIT = Tower(  # Kimi-K2.5's MoonViT and its patch-merger projector (modeling_kimi_k25.py, Kimi_K25VisionModel)
    "MoonViT",
    block={"h": Key("hidden_size", default=1152), "a": Key("num_attention_heads", default=16), "d_head": HEAD,
           "d_ff": Key("intermediate_size", default=4304), "gated": 0, "b_q": 1, "b_o": 1, "b_mlp": 1, "norm_bias": 1, "n_norm": 2},
    layers=Key("num_hidden_layers", default=27),
    stem={"C_img": 3, "P_img": Key("patch_size", default=14), "P_t": 1, "b_patch": 1},
    positions={"n_vpos": Rule("pos_emb_height · pos_emb_width (a 2-D table; the time axis is a fixed sinusoid, no weight)",
                              lambda c, v: c.size("pos_emb_height", default=64) * c.size("pos_emb_width", default=64))},
    norms=1,  # final_layernorm
    projector=(
        Norm("mm_projector.pre_norm", Rule("projection_hidden_size", lambda c, v: v["proj_h"]), 1),
        Linear("mm_projector.in_proj", KERNEL_MERGED, KERNEL_MERGED, 1),
        Linear("mm_projector.out_proj", KERNEL_MERGED, TEXT_H, 1),
    ),
    top={"proj_h": Rule("projection_hidden_size (default 1152)", lambda c, v: _projection_width(c))},
)


def _feature_layers(config: Config) -> int:
    layer = config.get("vision_feature_layer", -1)
    if isinstance(layer, list) and layer:
        return len(layer)
    if isinstance(layer, bool) or not isinstance(layer, int):
        raise config.fail("vision_feature_layer", "a layer index or a list of them", layer)
    return 1


def _kernel_area(config: Config) -> int:
    """MoonViT's merge_kernel_size [k_h, k_w]: k_h·k_w patches concatenated into one token for the projector."""
    kernel = config.get("merge_kernel_size", [2, 2])
    if (not isinstance(kernel, list) or len(kernel) != 2
            or any(isinstance(k, bool) or not isinstance(k, int) or not 0 < k <= 64 for k in kernel)):
        raise config.fail("merge_kernel_size", "two positive integers [k_h, k_w]", kernel)
    return kernel[0] * kernel[1]


def _projection_width(config: Config) -> int:
    """Kimi-K2.5's projection_hidden_size: the width of the projector's pre-norm (null builds no norm in transformers)."""
    if config.setting("projection_hidden_size", 1152) is None:
        raise config.fail("projection_hidden_size", "a positive integer (transformers builds its LayerNorm of it)", None)
    return config.size("projection_hidden_size", default=1152)


def _deepstack(config: Config) -> int:
    indexes = config.get("deepstack_visual_indexes", [8, 16, 24])
    if not isinstance(indexes, list):
        raise config.fail("deepstack_visual_indexes", "a list of layer indices", indexes)
    return len(indexes)


MULTIMODAL: dict[str, Multimodal] = {m.model_type: m for m in (
    Multimodal("gemma3", "Gemma 3 4B-27B (with SigLIP)", "gemma3_text", SIGLIP, _tied(True)),
    Multimodal("mistral3", "Mistral-Small-3.1/3.2, Magistral-Small, Ministral 3 (with Pixtral)", "mistral", PIXTRAL, _tied(True)),
    Multimodal("qwen2_5_vl", "Qwen2.5-VL", "qwen2_5_vl_text", QWEN2_5_VL, _tied(False, either=True)),
    Multimodal("qwen3_vl", "Qwen3-VL dense", "qwen3_vl_text", QWEN3_VL, _tied(False)),
    Multimodal("qwen3_vl_moe", "Qwen3-VL MoE", "qwen3_vl_moe_text", QWEN3_VL, _tied(False)),
    Multimodal("llama4", "Llama 4 Scout, Maverick (with the vision encoder)", "llama4_text", LLAMA4_VISION, _tied(False)),
    Multimodal("qwen3_5", "Qwen3.5 dense (with its ViT)", "qwen3_5_text", QWEN3_5_VISION, _tied(False)),
    Multimodal("qwen3_5_moe", "Qwen3.5 MoE, Qwen3.6 MoE (with its ViT)", "qwen3_5_moe_text", QWEN3_5_VISION, _tied(False)),
    Multimodal("kimi_k25", "Kimi-K2.5, Kimi-K2.6 (DeepSeek-V3's text model with MoonViT)", "deepseek_v3", MOONVIT, _tied(True)),
)}


def tower_pieces(tower: Tower, vision: Config, top: Config, text_h: int) -> tuple[Piece, ...]:
    """The vision tower's and projector's pieces, each a catalogue formula at the tower's values."""
    v: dict[str, int] = {**classic_values(), "text_h": text_h}
    for name, spec in tower.top.items():
        v[name] = resolve(spec, top, v)
    if "merge" in tower.top and not v["merge"]:  # Qwen's merge size lives in vision_config
        v["merge"] = vision.size("spatial_merge_size", default=2)
    for name, spec in tower.block.items():
        v[name] = resolve(spec, vision, v)
    v["g"] = v["a"]
    v["b_k"] = v["b_v"] = v["b_q"]
    for name, spec in {**tower.stem, **tower.positions}.items():
        v[name] = resolve(spec, vision, v)
    if v["h"] % v["a"] and tower.block["d_head"] is HEAD:
        raise ConfigError(f"{vision.model_type}: hidden size {v['h']} is not a multiple of {v['a']} heads")
    layer = {**v, "x_attn": 0, "n_norm": v["n_norm"]}
    pieces = [Piece("vision_tower", "patch embedding", "params.vision.patch_embedding", v, 1),
              Piece("vision_tower", "positions", "params.vision.positions", {**_position_defaults(), **v}, 1),
              Piece("vision_tower", "layers", "params.decoder.layer", layer, resolve(tower.layers, vision, v)),
              Piece("vision_tower", "norms", "params.decoder.final_norm", {**v, "norm_final": 1}, resolve(tower.norms, vision, v))]
    if resolve(tower.head, vision, v):
        pieces += [Piece("vision_tower", "head", "params.decoder.layer", {**layer, "n_norm": 1}, 1),
                   Piece("vision_tower", "head probe", "params.vision.positions", {**v, "n_vpos": 1, "cls_tok": 0}, 1)]
    for part in tower.projector:
        count = resolve(part.count, vision, v)
        if isinstance(part, Linear):
            values = {"d_in": resolve(part.d_in, vision, v), "d_out": resolve(part.d_out, vision, v), "b_lin": resolve(part.bias, vision, v)}
            pieces.append(Piece("projector", part.label, "params.vision.linear", values, count))
        else:
            values = {"h": resolve(part.width, vision, v), "norm_final": 1, "norm_bias": resolve(part.layer_norm, vision, v)}
            pieces.append(Piece("projector", part.label, "params.decoder.final_norm", values, count))
    return tuple(piece for piece in pieces if piece.count)


def _position_defaults() -> dict[str, int]:
    return {"n_vpos": 0, "cls_tok": 0}
