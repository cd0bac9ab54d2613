"""The general decoder: exact parameters and forward FLOPs of any mainstream decoder family.

Sizes: hidden h, embedding width d_emb (h but in OPT-350m), heads a, key/value heads g (MHA g = a, GQA, MQA g = 1), head
dimension d_head (h/a except Gemma and others), MLP width d_ff, layers l,
vocabulary V, E experts with k per token (dense: E = k = 1). Structural
switches (0/1, formulas/symbols.py "architecture switches") pick the terms a
family has: gated MLP, a bias on each of Q, K, V, O and on the MLP, LayerNorm
or RMSNorm, norms per layer (2; 1 when GPT-J or Falcon-7B run attention and MLP
in parallel off one norm), final norm, embedding norm (BLOOM), learned position
table with its extra rows (OPT: 2), tied head, head bias (GPT-J), router (MoE).

Per layer:  Ψ_attn = h·a·d_head + 2h·g·d_head + a·d_head·h + b_Q·a·d_head + (b_K + b_V)·g·d_head + b_O·h
            Ψ_mlp  = (2 + gated)·h·d_ff + b_mlp·((1 + gated)·d_ff + h)     (one expert)
            Ψ_layer = Ψ_attn + E·Ψ_mlp + moe·h·E + n_norm·(1 + β)·h
Forward FLOPs, b sequences of s tokens, every GEMM 2MKN, as PyTorch's FlopCounterMode
counts a transformers model with eager attention: projections 2bs·d_head·h·(2a + 2g),
QKᵀ and scores·V 4b·a·s²·d_head (GQA keys and values repeated to a heads first),
MLP 2bs·k·(2 + gated)·h·d_ff, router 2bs·moe·h·E; logits 2bs·d_emb·V (and OPT's
embedding projections). Backward = 2× forward.
"""

from __future__ import annotations

from formulas.catalogue import Source, divides, formula
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
    u_flop,
    u_param,
)

TRANSFORMERS = Source("transformers", "parameter shapes")
FLOP_COUNTER = Source("pytorch", "FlopCounterMode: 2MKN per mm/bmm/addmm/baddbmm")
BILIBILI = Source("000", "§3.1–3.2 (the classic case)")
SHAZEER = Source("shazeer2020", "gated MLP, three matrices")
AINSLIE = Source("ainslie2023", "g key/value heads")
FEDUS = Source("fedus2021", "router h·E, k of E experts")
MIXTRAL = Source("jiang2024", "top-k routing over E experts")

GROUPS = divides(g, a)  # each key/value head serves a/g query heads

# --- parameters ------------------------------------------------------------------

norm = (1 + norm_bias) * h  # one norm: a scale, and a shift for LayerNorm

embeddings = formula(
    "params.decoder.embeddings",
    (V * d_emb + proj_emb * 2 * d_emb * h + pos_table * (n_pos + o_pos) * h + emb_norm * norm) * u_param,
    "parameter",
    "token embedding (width d_emb, projected to h and back in OPT-350m), learned position table "
    "(with OPT's 2 extra rows) and embedding norm (BLOOM)",
    sources=[TRANSFORMERS, BILIBILI],
    symbol_latex=r"\Psi_{emb}",
)
attention = formula(
    "params.decoder.attention",
    (h * a * d_head + 2 * h * g * d_head + a * d_head * h + b_q * a * d_head + (b_k + b_v) * g * d_head + b_o * h) * u_param,
    "parameter",
    "one layer's attention: W_Q (h×a·d_head), W_K and W_V (h×g·d_head), W_O (a·d_head×h), biases by switch",
    sources=[TRANSFORMERS, AINSLIE],
    conditions=[GROUPS],
    symbol_latex=r"\Psi_{attn}",
)
mlp = formula(
    "params.decoder.mlp",
    ((2 + gated) * h * d_ff + b_mlp * ((1 + gated) * d_ff + h)) * u_param,
    "parameter",
    "one MLP (or one expert): up (and gate) h×d_ff, down d_ff×h, biases by switch",
    sources=[TRANSFORMERS, SHAZEER],
    symbol_latex=r"\Psi_{mlp}",
)
router = formula(
    "params.decoder.router",
    moe * h * E * u_param,
    "parameter",
    "one layer's MoE router: an h×E matrix without bias",
    sources=[TRANSFORMERS, FEDUS, MIXTRAL],
    symbol_latex=r"\Psi_{router}",
)
norms = formula(
    "params.decoder.norms",
    n_norm * norm * u_param,
    "parameter",
    "one layer's norms: n_norm of them, h (RMSNorm) or 2h (LayerNorm) each",
    sources=[TRANSFORMERS],
    symbol_latex=r"\Psi_{norm}",
)
layer = formula(
    "params.decoder.layer",
    attention.expr + E * mlp.expr + router.expr + norms.expr,
    "parameter",
    "one decoder layer: attention, E MLPs (E = 1 when dense), router, norms",
    sources=[TRANSFORMERS],
    related=["params.decoder.attention", "params.decoder.mlp", "params.decoder.router", "params.decoder.norms"],
    symbol_latex=r"\Psi_{layer}",
)
layer_active = formula(
    "params.decoder.layer.active",
    attention.expr + k * mlp.expr + router.expr + norms.expr,
    "parameter",
    "the parameters of one layer that a token uses: only k of the E experts",
    sources=[TRANSFORMERS, FEDUS, MIXTRAL],
    related=["params.decoder.layer"],
    symbol_latex=r"\Psi_{layer}^{active}",
)
final_norm = formula(
    "params.decoder.final_norm",
    norm_final * norm * u_param,
    "parameter",
    "the norm after the last layer",
    sources=[TRANSFORMERS],
    symbol_latex=r"\Psi_{final}",
)
head = formula(
    "params.decoder.head",
    ((1 - tied) * V * d_emb + head_bias * V) * u_param,
    "parameter",
    "the output head's own parameters: a V×d_emb matrix unless tied to the embedding, and a bias (GPT-J)",
    sources=[TRANSFORMERS],
    symbol_latex=r"\Psi_{head}",
)
total = formula(
    "params.decoder.total",
    embeddings.expr + l * layer.expr + final_norm.expr + head.expr,
    "parameter",
    "parameters of a decoder model: embeddings, l layers, final norm, head (what transformers' model.parameters() holds)",
    sources=[TRANSFORMERS, BILIBILI],
    related=["params.decoder.layer", "params.total"],
    symbol_latex=r"\Psi",
)
active = formula(
    "params.decoder.active",
    embeddings.expr + l * layer_active.expr + final_norm.expr + head.expr,
    "parameter",
    "parameters a token passes through: as params.decoder.total with k experts per layer instead of E",
    sources=[TRANSFORMERS, FEDUS, MIXTRAL],
    related=["params.decoder.total", "params.decoder.layer.active"],
    symbol_latex=r"\Psi_{active}",
)

# --- forward FLOPs -----------------------------------------------------------------

projections = formula(
    "flops.decoder.attention.projections",
    2 * b * s * h * d_head * (2 * a + 2 * g) * u_flop,
    "FLOP",
    "one layer's Q, K, V and O projections: [bs,h]×[h,a·d_head], two [bs,h]×[h,g·d_head], [bs,a·d_head]×[a·d_head,h]",
    sources=[FLOP_COUNTER, AINSLIE],
    symbol_latex=r"F_{proj}",
)
scores = formula(
    "flops.decoder.attention.scores",
    4 * b * a * s**2 * d_head * u_flop,
    "FLOP",
    "one layer's QKᵀ and scores·V, per sequence and head [s,d_head]×[d_head,s] and [s,s]×[s,d_head]; GQA repeats K, V to a heads",
    sources=[FLOP_COUNTER, BILIBILI],
    conditions=[GROUPS],
    notes="Eager attention computes the full s×s square: neither the causal mask nor a sliding window (Mistral, Qwen2) "
    "reduces the count.",
    symbol_latex=r"F_{attn}",
)
mlp_forward = formula(
    "flops.decoder.mlp",
    2 * b * s * k * (2 + gated) * h * d_ff * u_flop,
    "FLOP",
    "one layer's MLP GEMMs: each token through k MLPs (k = 1 when dense) of 2 or 3 matrices h×d_ff",
    sources=[FLOP_COUNTER, SHAZEER, FEDUS, MIXTRAL],
    symbol_latex=r"F_{mlp}",
)
router_forward = formula(
    "flops.decoder.router",
    2 * b * s * moe * h * E * u_flop,
    "FLOP",
    "one layer's router: [bs,h]×[h,E]",
    sources=[FLOP_COUNTER, FEDUS, MIXTRAL],
    symbol_latex=r"F_{router}",
)
layer_forward = formula(
    "flops.decoder.layer.forward",
    projections.expr + scores.expr + mlp_forward.expr + router_forward.expr,
    "FLOP",
    "forward FLOPs of one decoder layer (norms, softmax, activations, rotary: no GEMM, not counted)",
    sources=[FLOP_COUNTER],
    related=[
        "flops.decoder.attention.projections",
        "flops.decoder.attention.scores",
        "flops.decoder.mlp",
        "flops.decoder.router",
    ],
    symbol_latex=r"F_{layer}",
)
embedding_projections = formula(
    "flops.decoder.embedding_projections",
    2 * proj_emb * (2 * b * s * d_emb * h) * u_flop,
    "FLOP",
    "OPT-350m's project_in [bs,d_emb]×[d_emb,h] and project_out [bs,h]×[h,d_emb]",
    sources=[FLOP_COUNTER, TRANSFORMERS],
    symbol_latex=r"F_{proj,emb}",
)
logits = formula(
    "flops.decoder.logits",
    2 * b * s * d_emb * V * u_flop,
    "FLOP",
    "the output head [bs,d_emb]×[d_emb,V] (tied or not; a head bias is an add, not counted)",
    sources=[FLOP_COUNTER],
    symbol_latex=r"F_{logits}",
)
forward = formula(
    "flops.decoder.forward",
    l * layer_forward.expr + embedding_projections.expr + logits.expr,
    "FLOP",
    "forward FLOPs of a decoder model for b sequences of s tokens",
    sources=[FLOP_COUNTER, BILIBILI],
    related=["flops.decoder.layer.forward", "flops.decoder.embedding_projections", "flops.decoder.logits", "flops.forward"],
    notes="Equal to FlopCounterMode (torch 2.13) on transformers 5.24 models built with attn_implementation='eager' and "
    "run with use_cache=False. On the CPU the default sdpa attention counts 0 for QKᵀ and scores·V, and Mixtral's default "
    "grouped_mm experts count 0 (aten._grouped_mm has no FLOP formula): build with experts_implementation='eager'. "
    "logits_to_keep=n replaces s by n in the logits term.",
    symbol_latex=r"F_{fwd}",
)
backward = formula(
    "flops.decoder.backward",
    2 * forward.expr,
    "FLOP",
    "backward FLOPs: for each GEMM Y = XW, dX = dY·Wᵀ and dW = Xᵀ·dY",
    sources=[FLOP_COUNTER, BILIBILI],
    related=["flops.decoder.forward", "flops.backward"],
    notes="Measured exactly 2× for every family when every weight and the first layer's input need gradients; "
    "freezing the embedding and the first norm drops layer 0's input-gradient GEMMs.",
    symbol_latex=r"F_{bwd}",
)
training = formula(
    "flops.decoder.training",
    3 * forward.expr,
    "FLOP",
    "training FLOPs of one step: forward + backward",
    sources=[FLOP_COUNTER, BILIBILI],
    related=["flops.decoder.forward", "flops.decoder.backward", "flops.training"],
    symbol_latex=r"F_{train}",
)
