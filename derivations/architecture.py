"""Proofs of the general decoder's parameters and FLOPs (formulas/architecture.py).

Each count is built from the shapes of the weights (as transformers holds them) or
from the GEMMs of a forward pass priced by ``flops.gemm``, with the structural
switches multiplying the terms a family may lack. Two reductions close the loop:
with the classic switches (MHA, d_head = h/a, d_ff = 4h, two-matrix MLP, every
bias, two LayerNorms, a learned table of s positions, tied head, dense) the general
count is the foundation's ``params.total`` and the general forward is ``flops.forward``.
"""

from __future__ import annotations

import sympy as sp

from derivations.engine import Derivation
from derivations.flops import gemm
from formulas.architecture import BILIBILI, FEDUS, FLOP_COUNTER, SHAZEER, TRANSFORMERS
from formulas.catalogue import get
from formulas.symbols import (
    E,
    V,
    a,
    b,
    b_k,
    b_mlp,
    b_o,
    b_q,
    b_v,
    d_emb,
    d_ff,
    d_head,
    emb_norm,
    g,
    gated,
    h,
    head_bias,
    k,
    l,
    moe,
    n_norm,
    n_pos,
    norm_bias,
    norm_final,
    o_pos,
    pos_table,
    proj_emb,
    s,
    tied,
)

# The classic GPT of the foundation (000 §3.1–3.2) as values of the switches.
CLASSIC = {
    g: a,
    d_head: h / a,
    d_ff: 4 * h,
    d_emb: h,
    proj_emb: 0,
    gated: 0,
    b_q: 1,
    b_k: 1,
    b_v: 1,
    b_o: 1,
    b_mlp: 1,
    norm_bias: 1,
    n_norm: 2,
    norm_final: 1,
    emb_norm: 0,
    pos_table: 1,
    n_pos: s,
    o_pos: 0,
    tied: 1,
    head_bias: 0,
    moe: 0,
    E: 1,
    k: 1,
}


def one_norm() -> sp.Expr:
    return (1 + norm_bias) * h


def embeddings() -> Derivation:
    d = Derivation("params.decoder.embeddings", "Embedding parameters", (TRANSFORMERS, BILIBILI))
    token = d.defines("Ψ_tok", V * d_emb, "the token table: V rows of width d_emb (= h except OPT-350m)")
    projection = d.defines("Ψ_proj", proj_emb * (d_emb * h + h * d_emb), "OPT-350m: project_in d_emb→h and project_out h→d_emb, no bias")
    position = d.defines("Ψ_pos", pos_table * (n_pos + o_pos) * h, "a learned table of n_pos rows (OPT adds 2: its position ids start at 2)")
    norm = d.defines("Ψ_embnorm", emb_norm * one_norm(), "BLOOM normalises the embedding: a LayerNorm of h scales and h shifts")
    d.defines("Ψ_emb", token + projection + position + norm, "everything before the first layer")
    d.concludes("params.decoder.embeddings")
    return d


def attention() -> Derivation:
    d = Derivation("params.decoder.attention", "Attention parameters with g key/value heads of width d_head", (TRANSFORMERS,))
    q = d.defines("Ψ_Q", h * (a * d_head) + b_q * a * d_head, "a query heads of width d_head: an h×a·d_head matrix and its bias")
    kv = d.defines("Ψ_KV", 2 * (h * (g * d_head)) + (b_k + b_v) * g * d_head, "keys and values have g heads only (GQA; MQA g = 1)")
    o = d.defines("Ψ_O", (a * d_head) * h + b_o * h, "the output projection maps the a·d_head concatenated heads back to h")
    d.defines("Ψ_attn", q + kv + o, parts=("Ψ_Q", "Ψ_KV", "Ψ_O"), why="fused (Falcon, Phi-3, GPT-2's c_attn) or separate, the shapes add up the same")
    d.concludes("params.decoder.attention")
    return d


def mlp() -> Derivation:
    d = Derivation("params.decoder.mlp", "MLP parameters, plain or gated", (TRANSFORMERS, SHAZEER))
    up = d.defines("Ψ_up", (1 + gated) * (h * d_ff + b_mlp * d_ff), "the up projection h→d_ff, and a second one (the gate) when gated")
    down = d.defines("Ψ_down", d_ff * h + b_mlp * h, "the down projection d_ff→h")
    d.defines("Ψ_mlp", up + down, "two matrices, or three when gated (SwiGLU, GeGLU)")
    d.concludes("params.decoder.mlp")
    return d


def router() -> Derivation:
    d = Derivation("params.decoder.router", "The router of a mixture of experts", (TRANSFORMERS, FEDUS))
    d.defines("Ψ_router", moe * (h * E), "one score per expert from the hidden state: an h×E matrix, no bias (Mixtral's gate)")
    d.concludes("params.decoder.router")
    return d


def norms() -> Derivation:
    d = Derivation("params.decoder.norms", "Norm parameters per layer", (TRANSFORMERS,))
    d.defines("Ψ_norm,1", h + norm_bias * h, "a scale γ of size h; LayerNorm adds a shift β, RMSNorm has none")
    d.defines(
        "Ψ_norm",
        n_norm * (h + norm_bias * h),
        "two norms in a sequential block; one when attention and MLP read the same normalised input (GPT-J, Falcon-7B)",
    )
    d.concludes("params.decoder.norms")
    return d


def _layer_parts() -> tuple[sp.Expr, sp.Expr, sp.Expr, sp.Expr]:
    return tuple(get(i).expr for i in ("params.decoder.attention", "params.decoder.mlp", "params.decoder.router", "params.decoder.norms"))


def layer() -> Derivation:
    d = Derivation("params.decoder.layer", "One decoder layer", (TRANSFORMERS,))
    attn, one_mlp, route, norm = _layer_parts()
    d.defines("Ψ_layer", attn + E * one_mlp + route + norm, "attention, E expert MLPs (a dense model has E = 1 and no router), norms")
    d.concludes("params.decoder.layer")
    return d


def layer_active() -> Derivation:
    d = Derivation("params.decoder.layer.active", "The part of a layer one token uses", (TRANSFORMERS, FEDUS))
    attn, one_mlp, route, norm = _layer_parts()
    d.defines("Ψ_layer^active", attn + k * one_mlp + route + norm, "the router sends each token to k of the E experts")
    d.equals(
        "Ψ_layer^active",
        get("params.decoder.layer").expr - (E - k) * one_mlp,
        "the whole layer less the E − k experts the token skips",
    )
    d.concludes("params.decoder.layer.active")
    return d


def final_norm() -> Derivation:
    d = Derivation("params.decoder.final_norm", "The final norm", (TRANSFORMERS,))
    d.defines("Ψ_final", norm_final * one_norm(), "pre-norm models normalise the last layer's output (OPT-350m, post-norm, does not)")
    d.concludes("params.decoder.final_norm")
    return d


def head() -> Derivation:
    d = Derivation("params.decoder.head", "The output head", (TRANSFORMERS,))
    d.defines(
        "Ψ_head",
        (1 - tied) * (d_emb * V) + head_bias * V,
        "a d_emb×V matrix, counted once when it is the embedding itself (tied); GPT-J adds a V bias",
    )
    d.concludes("params.decoder.head")
    return d


def total() -> Derivation:
    d = Derivation("params.decoder.total", "The whole decoder", (TRANSFORMERS, BILIBILI))
    parts = [get(i).expr for i in ("params.decoder.embeddings", "params.decoder.final_norm", "params.decoder.head")]
    d.defines("Ψ", parts[0] + l * get("params.decoder.layer").expr + parts[1] + parts[2], "embeddings, l layers, final norm, head")
    d.concludes("params.decoder.total")
    return d


def active() -> Derivation:
    d = Derivation("params.decoder.active", "Active parameters of a mixture of experts", (TRANSFORMERS, FEDUS))
    parts = [get(i).expr for i in ("params.decoder.embeddings", "params.decoder.final_norm", "params.decoder.head")]
    d.defines("Ψ_active", parts[0] + l * get("params.decoder.layer.active").expr + parts[1] + parts[2], "as the total, with active layers")
    d.equals(
        "Ψ_active",
        get("params.decoder.total").expr - l * (E - k) * get("params.decoder.mlp").expr,
        "the total less l·(E − k) experts; a dense model (E = k = 1) has every parameter active",
    )
    d.concludes("params.decoder.active")
    return d


def classic_params() -> Derivation:
    d = Derivation("params.decoder.classic", "The classic switches give the foundation's params.total", (BILIBILI,))
    d.defines("Ψ|classic", get("params.decoder.total").expr.subs(CLASSIC, simultaneous=True),
              "MHA (g = a), d_head = h/a, d_ff = 4h, two matrices, every bias, two LayerNorms, a table of s positions, tied, dense")
    d.equals("Ψ", get("params.total").expr, "the foundation's l(12h² + 13h) + Vh + sh + 2h")
    return d


# --- FLOPs ---------------------------------------------------------------------------


def projections() -> Derivation:
    d = Derivation("flops.decoder.attention.projections", "Q, K, V and O projections", (FLOP_COUNTER,))
    q = d.defines("F_Q", gemm(b * s, h, a * d_head), "[bs, h] × [h, a·d_head]")
    kv = d.defines("F_KV", 2 * gemm(b * s, h, g * d_head), "keys and values: [bs, h] × [h, g·d_head] each")
    o = d.defines("F_O", gemm(b * s, a * d_head, h), "[bs, a·d_head] × [a·d_head, h]")
    d.defines("F_proj", q + kv + o, parts=("F_Q", "F_KV", "F_O"), why="a bias is an add (addmm counts the product only)")
    d.concludes("flops.decoder.attention.projections")
    return d


def scores() -> Derivation:
    d = Derivation("flops.decoder.attention.scores", "The two attention matmuls, per head", (FLOP_COUNTER, BILIBILI))
    qk = d.defines("F_QK", b * a * gemm(s, d_head, s), "per sequence and query head, [s, d_head] × [d_head, s]")
    sv = d.defines("F_SV", b * a * gemm(s, s, d_head), "per sequence and query head, [s, s] × [s, d_head]")
    d.defines(
        "F_attn",
        qk + sv,
        "with GQA, eager attention repeats the g key/value heads to a before the matmuls (repeat_kv), so a heads are paid for; "
        "the full s×s square is computed, the causal mask only hides half of it",
        parts=("F_QK", "F_SV"),
    )
    d.concludes("flops.decoder.attention.scores")
    return d


def mlp_forward() -> Derivation:
    d = Derivation("flops.decoder.mlp", "MLP GEMMs, dense or routed", (FLOP_COUNTER, SHAZEER, FEDUS))
    one = d.defines("F_mlp,1", (1 + gated) * gemm(b * s, h, d_ff) + gemm(b * s, d_ff, h), "one MLP over bs tokens: up (and gate), down")
    d.defines(
        "F_mlp",
        k * one,
        "each token runs through its k experts (a dense model: k = 1); an expert sees only its tokens, so over all experts the rows add up to k·bs",
    )
    d.concludes("flops.decoder.mlp")
    return d


def router_forward() -> Derivation:
    d = Derivation("flops.decoder.router", "The router GEMM", (FLOP_COUNTER, FEDUS))
    d.defines("F_router", moe * gemm(b * s, h, E), "[bs, h] × [h, E]; softmax and top-k are not GEMMs")
    d.concludes("flops.decoder.router")
    return d


def layer_forward() -> Derivation:
    d = Derivation("flops.decoder.layer.forward", "Forward FLOPs of one layer", (FLOP_COUNTER,))
    parts = [get(i).expr for i in ("flops.decoder.attention.projections", "flops.decoder.attention.scores", "flops.decoder.mlp", "flops.decoder.router")]
    d.defines("F_layer", sum(parts), "projections, the two attention matmuls, the MLP, the router; parallel or sequential, the same GEMMs")
    d.concludes("flops.decoder.layer.forward")
    return d


def embedding_projections() -> Derivation:
    d = Derivation("flops.decoder.embedding_projections", "OPT-350m's embedding projections", (FLOP_COUNTER, TRANSFORMERS))
    d.defines("F_proj,emb", proj_emb * (gemm(b * s, d_emb, h) + gemm(b * s, h, d_emb)), "project_in before the layers, project_out after")
    d.concludes("flops.decoder.embedding_projections")
    return d


def logits() -> Derivation:
    d = Derivation("flops.decoder.logits", "The logits", (FLOP_COUNTER,))
    d.defines("F_logits", gemm(b * s, d_emb, V), "[bs, d_emb] × [d_emb, V] at every position (no logits_to_keep)")
    d.concludes("flops.decoder.logits")
    return d


def forward() -> Derivation:
    d = Derivation("flops.decoder.forward", "The forward pass", (FLOP_COUNTER, BILIBILI))
    d.defines(
        "F_fwd",
        l * get("flops.decoder.layer.forward").expr + get("flops.decoder.embedding_projections").expr + get("flops.decoder.logits").expr,
        "l layers, the embedding projections and the logits; embedding lookups, norms, softmax, activations are not GEMMs",
    )
    d.concludes("flops.decoder.forward")
    return d


def backward() -> Derivation:
    d = Derivation("flops.decoder.backward", "The backward pass", (FLOP_COUNTER, BILIBILI))
    forward_expr = get("flops.decoder.forward").expr
    d.defines(
        "F_bwd",
        forward_expr + forward_expr,
        "every GEMM Y = XW (and the attention matmuls, both inputs activations) has two gradient products of its own size, "
        "dX = dY·Wᵀ and dW = Xᵀ·dY, provided both inputs need a gradient: the first layer's input does when its norm weight does",
    )
    d.concludes("flops.decoder.backward")
    return d


def training() -> Derivation:
    d = Derivation("flops.decoder.training", "A training step", (FLOP_COUNTER, BILIBILI))
    d.defines("F_train", get("flops.decoder.forward").expr + get("flops.decoder.backward").expr, "forward and backward")
    d.concludes("flops.decoder.training")
    return d


def classic_flops() -> Derivation:
    d = Derivation("flops.decoder.classic", "The classic switches give the foundation's flops.forward", (BILIBILI,))
    d.defines("F_fwd|classic", get("flops.decoder.forward").expr.subs(CLASSIC, simultaneous=True), "the classic GPT's switches")
    d.equals("F_fwd", get("flops.forward").expr, "the foundation's 24bslh²(1 + s/6h + V/12lh)")
    return d


DERIVATIONS = (
    embeddings,
    attention,
    mlp,
    router,
    norms,
    layer,
    layer_active,
    final_norm,
    head,
    total,
    active,
    classic_params,
    projections,
    scores,
    mlp_forward,
    router_forward,
    layer_forward,
    embedding_projections,
    logits,
    forward,
    backward,
    training,
    classic_flops,
)
