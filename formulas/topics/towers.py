"""The vision towers of multimodal checkpoints: the parameters of their stem, position table and projector.

A vision tower is an encoder of l_v layers, each the general decoder block's attention, MLP and norms at the
tower's own sizes (every head its own keys and values, no cache): params.decoder.layer counts one at the tower's
values. Around them sit the stem, a convolution (or a linear map) of each C·P_t·P² patch to the tower's width h, a
learned position table and class embedding where the tower has them, pre- and post-norms, and a projector of
linear layers and norms into the text model's width (with Qwen's patch mergers, 2×2 patches concatenated first).
The counts are what transformers 5.24 builds (Gemma3ForConditionalGeneration, Mistral3, Qwen2.5-VL, Qwen3-VL,
Llama-4); the text decoder's parameters, FLOPs and cache stay those of formulas/topics/architecture.py.

    Ψ_patch = C·P_t·P²·h + σ_b·h,   Ψ_pos = n_pos·h + σ_cls·h,   Ψ_linear = d_in·d_out + σ_b·d_out
"""

from __future__ import annotations

from llm_formulas.formulas.vocabulary.catalogue import Source, formula
from llm_formulas.formulas.vocabulary.symbols import C_img, P_img, P_t, b_lin, b_patch, cls_tok, d_in, d_out, h, n_vpos, u_param

TRANSFORMERS = Source("transformers", "modeling_siglip.py, modeling_pixtral.py, modeling_qwen2_5_vl.py, modeling_qwen3_vl.py, modeling_llama4.py")
VIT = Source("zhai2023", "§2: a ViT image encoder of patches")
QWEN_VL = Source("bai2025vl", "§2.1: the vision encoder and its MLP-based patch merger")

patch_embedding = formula(
    "params.vision.patch_embedding",
    (C_img * P_t * P_img**2 * h + b_patch * h) * u_param,
    "parameter",
    "a vision tower's patch embedding: each patch of C channels, P_t frames and P×P pixels mapped to the tower's width h "
    "(a Conv2d/Conv3d of stride P, or Llama-4's unfolded linear), with a bias by switch",
    sources=[TRANSFORMERS, VIT],
    symbol_latex=r"\Psi_{patch}",
)
positions = formula(
    "params.vision.positions",
    (n_vpos * h + cls_tok * h) * u_param,
    "parameter",
    "a vision tower's learned position table of n_pos rows and a class embedding where it has one (Llama-4); towers "
    "with 2-D rotary positions (Pixtral, Qwen2.5-VL) have neither",
    sources=[TRANSFORMERS, VIT],
    symbol_latex=r"\Psi_{pos}^{img}",
)
linear = formula(
    "params.vision.linear",
    (d_in * d_out + b_lin * d_out) * u_param,
    "parameter",
    "one linear layer of a projector: d_in×d_out weights and a bias of d_out by switch",
    sources=[TRANSFORMERS, QWEN_VL],
    symbol_latex=r"\Psi_{linear}",
)
