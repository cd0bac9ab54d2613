"""Proofs of the vision towers' stem, positions and projector pieces (formulas/topics/towers.py)."""

from __future__ import annotations

from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.formulas.vocabulary.symbols import C_img, P_img, P_t, b_lin, b_patch, cls_tok, d_in, d_out, h, n_vpos
from llm_formulas.formulas.topics.towers import QWEN_VL, TRANSFORMERS, VIT


def patch_embedding() -> Derivation:
    d = Derivation("params.vision.patch_embedding", "The patch embedding", (TRANSFORMERS, VIT))
    kernel = d.defines("Ψ_kernel", h * (C_img * P_t * P_img * P_img), "h filters, each over a C × P_t × P × P patch")
    d.defines("Ψ_patch", kernel + b_patch * h, "and a bias per filter where the stem has one (SigLIP, Qwen3-VL; not Pixtral, Qwen2.5-VL)")
    d.concludes("params.vision.patch_embedding")
    return d


def positions() -> Derivation:
    d = Derivation("params.vision.positions", "Learned positions and a class embedding", (TRANSFORMERS, VIT))
    table = d.defines("Ψ_table", n_vpos * h, "one row of width h per position")
    d.defines("Ψ_pos^img", table + cls_tok * h, "the class token's embedding is one more vector of h")
    d.concludes("params.vision.positions")
    return d


def linear() -> Derivation:
    d = Derivation("params.vision.linear", "A linear layer", (TRANSFORMERS, QWEN_VL))
    weights = d.defines("Ψ_W", d_out * d_in, "a d_out × d_in matrix")
    d.defines("Ψ_linear", weights + b_lin * d_out, "and a bias of d_out where the layer has one")
    d.concludes("params.vision.linear")
    return d


DERIVATIONS = (patch_embedding, positions, linear)
