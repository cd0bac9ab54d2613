"""The general decoder: exact parameters, forward FLOPs and KV cache of the decoder families in use.

Sizes: hidden h, embedding width d_emb (h but in OPT-350m), heads a, key/value heads g (MHA g = a, GQA, MQA g = 1),
head dimension d_head (h/a except Gemma and others), MLP width d_ff, layers l, vocabulary V. A mixture of experts
has l_moe MoE layers (the other l − l_moe are dense) of E routed experts of width d_moe, k per token, shared experts
of total width d_sh and a router. Multi-head latent attention (MLA, DeepSeek-V2/V3) replaces per-head K/V
projections by a latent of rank r_KV (queries optionally through r_Q), with head parts d_nope, d_rope and d_v.
l_win of the layers attend within a window of W tokens (sliding or chunked). Structural switches (0/1,
formulas/vocabulary/symbols.py "architecture switches") pick the terms a family has: gated MLP, biases, LayerNorm or RMSNorm,
norms per layer (2; 1 for GPT-J/Falcon-7B; 4 for Gemma-2/3), q/k norms, attention sinks, tied head, ...

Per layer:  Ψ_attn = (1 − mla)·(h·a·d_head + 2h·g·d_head + a·d_head·h + biases) + mla·Ψ_MLA + q/k norms + sink·a
            Ψ_mlp  = (2 + gated)·h·d_ff + b_mlp·((1 + gated)·d_ff + h)        (dense layer)
            Ψ_moe  = E·Ψ_expert(d_moe) + (h + b_router)·E + (2 + gated)·h·d_sh + σ_sh·h
Forward FLOPs, b sequences of s tokens, every GEMM 2MKN, as PyTorch's FlopCounterMode counts a transformers
model with eager attention and eager experts: projections, QKᵀ and scores·V over the full s×s square, the dense
MLP, the k routed experts each token visits (all E in Llama-4's implementation), shared experts, router; logits.
Backward = 2× forward. Where a kernel skips work (the causal mask, a window, unrouted experts) the skipped
figure is stated separately. The KV cache is what transformers' DynamicCache holds: s tokens in a full layer,
min(s, W − 1) in a windowed one, the latent (r_KV + d_rope values) per token in an MLA layer.
"""
from __future__ import annotations

import sympy as sp

from llm_formulas.formulas.vocabulary.catalogue import Source, at_most, divides, formula
from llm_formulas.formulas.vocabulary.symbols import (
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
    W,
    all_experts,
    c_f,
    d_idx,
    d_lat,
    d_moe,
    d_nope,
    d_rope,
    d_sh,
    d_v,
    l_moe,
    l_win,
    dsa,
    moe_lat,
    n_idx,
    mla,
    n_blk,
    n_mtp,
    n_sink,
    q,
    q_lora,
    qk_norm,
    qk_norm_full,
    r_kv,
    r_q,
    router_bias,
    sh_gate,
    sink,
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
    kv_expand,
    x_attn,
    attn_gate,
    l_mamba,
    l_ssd,
    l_lru,
    l_gdn,
    l_noattn,
    l_nomlp,
)
from llm_formulas.formulas.topics import recurrent

TRANSFORMERS = Source("transformers", "parameter shapes")
FLOP_COUNTER = Source("pytorch", "FlopCounterMode: 2MKN per mm/bmm/addmm/baddbmm")
CACHE = Source("transformers", "cache_utils.py: DynamicLayer, DynamicSlidingWindowLayer")
BILIBILI = Source("000", "§3.1–3.2 (the classic case)")
SHAZEER = Source("shazeer2020", "gated MLP, three matrices")
AINSLIE = Source("ainslie2023", "g key/value heads")
FEDUS = Source("fedus2021", "router h·E, k of E experts")
MIXTRAL = Source("jiang2024", "top-k routing over E experts")
CAPACITY = Source("lepikhin2020", "§2.2 expert capacity")
DEEPSEEK_V2 = Source("deepseek2024v2", "§2.1 Multi-Head Latent Attention (eq. 9–19), §2.1.3 absorbing W_UK and W_UV, §2.2 DeepSeekMoE")
DEEPSEEK_V3 = Source("deepseek2024v3", "§2.1 (first 3 layers dense, 1 shared + 256 routed experts, 8 active), §2.2 Multi-Token Prediction")
MISTRAL = Source("jiang2023", "§2 sliding window attention, rolling buffer cache")
GEMMA = Source("gemma2025", "§2 local:global layers 5:1, window 1024 (Gemma 2: 1:1, window 4096)")
GPT_OSS = Source("openai2025", "§2.1 alternating banded window of 128 tokens, learned attention sinks")
STREAMING = Source("xiao2023", "§3 sink tokens")
PAGED = Source("kwon2023", "§4.2 KV blocks")

GROUPS = divides(g, a)  # each key/value head serves a/g query heads
MOE_LAYERS = at_most(l_moe, l)  # the MoE layers are some of the l layers
WINDOW_LAYERS = at_most(l_win, l)  # so are the windowed ones
TOP_K = at_most(k, E)  # a token picks k of the E experts

# --- parameters ------------------------------------------------------------------

norm = (1 + norm_bias) * h  # one norm: a scale, and a shift for LayerNorm
d_qk = d_nope + d_rope  # an MLA query/key head


def mlp_params(width, outer=h):
    """One MLP of the given inner width: up (and gate), down, biases by switch (outer: the width it reads and writes)."""
    return (2 + gated) * outer * width + b_mlp * ((1 + gated) * width + outer)


EXPERT_WIDTH = h + moe_lat * (d_lat - h)  # what a routed expert reads and writes: h, or the latent d_lat (Nemotron-3-Super)
NEMOTRON_H = Source("transformers", "models/nemotron_h/modeling_nemotron_h.py: NemotronHMoE's fc1/fc2_latent_proj, NemotronHExperts")


embeddings = formula(
    "params.decoder.embeddings",
    (V * d_emb + proj_emb * 2 * d_emb * h + pos_table * (n_pos + o_pos) * h + emb_norm * norm) * u_param,
    "parameter",
    "token embedding (width d_emb, projected to h and back in OPT-350m), learned position table "
    "(with OPT's 2 extra rows) and embedding norm (BLOOM)",
    sources=[TRANSFORMERS, BILIBILI],
    symbol_latex=r"\Psi_{emb}",
)
DEEPSEEK_V32 = Source("transformers", "models/deepseek_v32/modeling_deepseek_v32.py: DeepseekV32Indexer (wq_b, wk, k_norm, "
                      "weights_proj; its scores q·kᵀ per head, weighted and summed over heads; its key cache)")
indexer = formula(
    "params.decoder.indexer",
    dsa * (r_q * n_idx * d_idx + h * d_idx + 2 * d_idx + h * n_idx) * u_param,
    "parameter",
    "DeepSeek sparse attention's lightning indexer in one MLA layer: wq_b r_Q→n_idx·d_idx from the query latent, wk h→d_idx "
    "(one key shared by its heads), the key's LayerNorm (scale and shift), weights_proj h→n_idx",
    sources=[DEEPSEEK_V32],
    symbol_latex=r"\Psi_{idx}",
)
INDEXER_GEMMS = dsa * (r_q * n_idx * d_idx + h * d_idx + h * n_idx)  # its three projections, per token
INDEXER_PER_POSITION = dsa * n_idx * (d_idx + 1)  # q·kᵀ of its n_idx heads and their weighted sum, per key position
mla_attention = formula(
    "params.decoder.attention.mla",
    (q_lora * (h * r_q + r_q + r_q * a * d_qk) + (1 - q_lora) * h * a * d_qk
    + h * (r_kv + d_rope) + r_kv + r_kv * a * (d_nope + d_v) + a * d_v * h) * u_param + indexer.part,
    "parameter",
    "one layer's multi-head latent attention from its ranks: queries h→r_Q (normed) →a·(d_nope + d_rope) or h→a·(d_nope + d_rope); "
    "the joint latent h→r_KV + d_rope (the latent normed), up-projected r_KV→a·(d_nope + d_v); output a·d_v→h; "
    "DeepSeek sparse attention's indexer where it has one",
    sources=[TRANSFORMERS, DEEPSEEK_V2, DEEPSEEK_V32],
    symbol_latex=r"\Psi_{MLA}",
)
attention = formula(
    "params.decoder.attention",
    ((1 - mla) * ((1 + attn_gate) * (h * a * d_head + b_q * a * d_head) + 2 * h * g * d_head + a * d_head * h + (b_k + b_v) * g * d_head
                  + b_o * h)
     + qk_norm * 2 * d_head + qk_norm_full * (a + g) * d_head + sink * a) * u_param + mla * mla_attention.part,
    "parameter",
    "one layer's attention: W_Q (h×a·d_head, twice that with an output gate), W_K and W_V (h×g·d_head), W_O (a·d_head×h), "
    "biases by switch; or MLA; plus q/k norms and one sink logit per head where the family has them",
    sources=[TRANSFORMERS, AINSLIE, DEEPSEEK_V2, GPT_OSS],
    conditions=[GROUPS],
    symbol_latex=r"\Psi_{attn}",
)
mlp = formula(
    "params.decoder.mlp",
    (mlp_params(d_ff)) * u_param,
    "parameter",
    "one dense MLP: up (and gate) h×d_ff, down d_ff×h, biases by switch",
    sources=[TRANSFORMERS, SHAZEER],
    symbol_latex=r"\Psi_{mlp}",
)
expert = formula(
    "params.decoder.expert",
    (mlp_params(d_moe, EXPERT_WIDTH)) * u_param,
    "parameter",
    "one routed expert: an MLP of width d_moe (transformers 5.24 stores a layer's E experts as 3-D tensors, E of these each), "
    "reading and writing h, or the latent d_lat where the layer has latent projections",
    sources=[TRANSFORMERS, FEDUS],
    symbol_latex=r"\Psi_{expert}",
)
shared_experts = formula(
    "params.decoder.shared_experts",
    ((2 + gated) * h * d_sh + sh_gate * h) * u_param,
    "parameter",
    "a MoE layer's shared experts, every token's: one gated MLP of their total width d_sh, and Qwen2-MoE's h→1 gate",
    sources=[TRANSFORMERS, DEEPSEEK_V2],
    symbol_latex=r"\Psi_{shared}",
)
moe_latent = formula(
    "params.decoder.moe_latent",
    (moe_lat * (2 * h * d_lat + b_mlp * (d_lat + h))) * u_param,
    "parameter",
    "a latent MoE layer's projections: h→d_lat before the routed experts, d_lat→h after (the router and shared experts read h)",
    sources=[NEMOTRON_H],
    symbol_latex=r"\Psi_{lat}",
)
router = formula(
    "params.decoder.router",
    (h * E + router_bias * E) * u_param,
    "parameter",
    "one MoE layer's router: an h×E matrix, with a bias in gpt-oss",
    sources=[TRANSFORMERS, FEDUS, MIXTRAL],
    notes="DeepSeek-V3's and GLM-4.5's e_score_correction_bias is a buffer, not a parameter: model.parameters() leaves it out.",
    symbol_latex=r"\Psi_{router}",
)
norms = formula(
    "params.decoder.norms",
    (n_norm * norm) * u_param,
    "parameter",
    "one layer's norms: n_norm of them, h (RMSNorm) or 2h (LayerNorm) each",
    sources=[TRANSFORMERS],
    symbol_latex=r"\Psi_{norm}",
)
cross_attention = formula(
    "params.decoder.cross_attention",
    x_attn * (4 * h * a * d_head + (b_q + b_k + b_v) * a * d_head + b_o * h + norm) * u_param,
    "parameter",
    "one layer's cross-attention block where the family has one (GPT-2's add_cross_attention): queries from the layer, "
    "keys and values of every head from the encoder's states, an output projection, biases by switch, and its own norm",
    sources=[TRANSFORMERS],
    symbol_latex=r"\Psi_{cross}",
)
layer = formula(
    "params.decoder.layer",
    attention.part + cross_attention.part + mlp.part + norms.part,
    "parameter",
    "one dense decoder layer: attention (and cross-attention where the family has it), MLP, norms",
    sources=[TRANSFORMERS],
    related=["params.decoder.attention", "params.decoder.cross_attention", "params.decoder.mlp", "params.decoder.norms"],
    symbol_latex=r"\Psi_{layer}",
)
layer_moe = formula(
    "params.decoder.layer.moe",
    attention.part + cross_attention.part + E * expert.part + router.part + shared_experts.part
    + moe_latent.part + norms.part,
    "parameter",
    "one mixture-of-experts layer: attention, E routed experts, router, shared experts, norms",
    sources=[TRANSFORMERS, FEDUS],
    related=["params.decoder.attention", "params.decoder.expert", "params.decoder.router", "params.decoder.shared_experts"],
    symbol_latex=r"\Psi_{layer}^{moe}",
)
layer_active = formula(
    "params.decoder.layer.active",
    attention.part + cross_attention.part + k * expert.part + router.part
    + shared_experts.part + moe_latent.part + norms.part,
    "parameter",
    "the parameters of one MoE layer that a token uses: k of the E routed experts, the shared ones and the router",
    sources=[TRANSFORMERS, FEDUS, MIXTRAL],
    related=["params.decoder.layer.moe"],
    symbol_latex=r"\Psi_{layer}^{active}",
)
final_norm = formula(
    "params.decoder.final_norm",
    (norm_final * norm) * u_param,
    "parameter",
    "the norm after the last layer",
    sources=[TRANSFORMERS],
    symbol_latex=r"\Psi_{final}",
)
head = formula(
    "params.decoder.head",
    ((1 - tied) * V * d_emb + head_bias * V) * u_param,
    "parameter",
    "the output head's own parameters: a V×d_emb matrix unless tied to the embedding, and a bias (GPT-J, Phi-3.5-MoE's option)",
    sources=[TRANSFORMERS],
    symbol_latex=r"\Psi_{head}",
)
from llm_formulas.formulas.vocabulary.symbols import l_attn, l_mlp, l_rec  # noqa: E402 - the layers by kind, where they are used
HYBRID = Source("transformers", "hybrid decoder layers (Jamba, Nemotron-H, RecurrentGemma, Qwen3-Next; Mamba, Mamba-2)")
MIXERS = at_most(l_mamba + l_ssd + l_lru + l_gdn + l_noattn, l)  # the layers without attention are some of the l
CHANNELS = at_most(l_moe + l_nomlp, l)

total = formula(
    "params.decoder.total",
    embeddings.part + l_attn * attention.part + l * (cross_attention.part + norms.part)
    + l_mamba * recurrent.mamba.part + l_ssd * recurrent.mamba2.part + l_lru * recurrent.rglru.part
    + l_gdn * recurrent.gdn.part + l_mlp * mlp.part
    + l_moe * (E * expert.part + router.part + shared_experts.part + moe_latent.part) + final_norm.part + head.part,
    "parameter",
    "parameters of a decoder model: embeddings; attention in the layers that have it, a recurrent mixer (Mamba, Mamba-2, "
    "RG-LRU, gated delta-net) in the others; every layer's norms; a dense MLP or the experts, router and shared experts; "
    "final norm, head (what transformers' model.parameters() holds)",
    sources=[TRANSFORMERS, BILIBILI, HYBRID],
    conditions=[MOE_LAYERS, MIXERS, CHANNELS],
    related=["params.decoder.layer", "params.decoder.layer.moe", "params.recurrent.mamba", "params.total"],
    notes="DeepSeek-V3's multi-token-prediction module is not built by transformers: params.decoder.mtp adds it.",
    symbol_latex=r"\Psi",
)
active = formula(
    "params.decoder.active",
    embeddings.part + l_attn * attention.part + l * (cross_attention.part + norms.part)
    + l_mamba * recurrent.mamba.part + l_ssd * recurrent.mamba2.part + l_lru * recurrent.rglru.part
    + l_gdn * recurrent.gdn.part + l_mlp * mlp.part
    + l_moe * (k * expert.part + router.part + shared_experts.part + moe_latent.part) + final_norm.part + head.part,
    "parameter",
    "parameters a token passes through: as params.decoder.total with k routed experts per MoE layer instead of E",
    sources=[TRANSFORMERS, FEDUS, MIXTRAL],
    conditions=[MOE_LAYERS],
    related=["params.decoder.total", "params.decoder.layer.active"],
    symbol_latex=r"\Psi_{active}",
)
mtp = formula(
    "params.decoder.mtp",
    n_mtp * ((3 * norm + 2 * h * h) * u_param + layer_moe.part),
    "parameter",
    "n_MTP multi-token-prediction modules, each two input norms, a 2h→h projection, one MoE layer and an output norm; "
    "the embedding and the output head are the main model's",
    sources=[DEEPSEEK_V3],
    related=["params.decoder.total"],
    notes="DeepSeek-V3's checkpoint stores each module with its own copy of the embedding and head (2Vh more): "
    "671B + 14B = 685B in its model card.",
    symbol_latex=r"\Psi_{MTP}",
)

# --- forward FLOPs -----------------------------------------------------------------

# a query·key dot product and a weighted sum of values, per head and key position; DSA's indexer scores every position too
score_width = (1 - mla) * 2 * d_head + mla * (d_qk + d_v + INDEXER_PER_POSITION / a)

mla_projections = formula(
    "flops.decoder.attention.projections.mla",
    (2 * b * s * (q_lora * (h * r_q + r_q * a * d_qk) + (1 - q_lora) * h * a * d_qk
                 + h * (r_kv + d_rope) + r_kv * a * (d_nope + d_v) + a * d_v * h + INDEXER_GEMMS)) * u_flop,
    "FLOP",
    "one MLA layer's projections over bs tokens, the latent up-projected for every token (transformers' naive form), and "
    "DeepSeek sparse attention's indexer projections where it has one",
    sources=[FLOP_COUNTER, DEEPSEEK_V2, DEEPSEEK_V32],
    symbol_latex=r"F_{proj}^{MLA}",
)
projections = formula(
    "flops.decoder.attention.projections",
    (1 - mla) * 2 * b * s * h * d_head * ((2 + attn_gate) * a + 2 * g) * u_flop + mla * mla_projections.part,
    "FLOP",
    "one layer's Q, K, V and O projections: [bs,h]×[h,a·d_head] (doubled with an output gate), two [bs,h]×[h,g·d_head], "
    "[bs,a·d_head]×[a·d_head,h] (or MLA's)",
    sources=[FLOP_COUNTER, AINSLIE],
    symbol_latex=r"F_{proj}",
)
scores = formula(
    "flops.decoder.attention.scores",
    (2 * b * a * s**2 * score_width) * u_flop,
    "FLOP",
    "one layer's QKᵀ and scores·V over the full s×s square, per sequence and head: 4b·a·s²·d_head "
    "(MLA: heads of d_nope + d_rope and d_v); GQA repeats K, V to a heads",
    sources=[FLOP_COUNTER, BILIBILI],
    conditions=[GROUPS],
    notes="Eager attention computes the full s×s square: neither the causal mask nor a sliding window reduces the count; "
    "flops.decoder.attention.scores.causal and .windowed give what a kernel that skips masked entries computes.",
    symbol_latex=r"F_{attn}",
)
scores_causal = formula(
    "flops.decoder.attention.scores.causal",
    (2 * b * a * score_width * s * (s + 1) / 2) * u_flop,
    "FLOP",
    "one layer's attention matmuls on the s(s + 1)/2 query-key pairs the causal mask keeps (what a causal kernel computes)",
    sources=[FLOP_COUNTER, BILIBILI],
    symbol_latex=r"F_{attn}^{causal}",
)
scores_windowed = formula(
    "flops.decoder.attention.scores.windowed",
    (2 * b * a * score_width * (s * W - W * (W - 1) / 2)) * u_flop,
    "FLOP",
    "one sliding-window layer's attention matmuls on the pairs the window keeps, each query the W latest keys (itself included)",
    sources=[MISTRAL, GEMMA],
    conditions=[at_most(W, s)],
    notes="For s ≥ W; below it the window hides nothing and the causal count holds.",
    symbol_latex=r"F_{attn}^{win}",
)
scores_chunked = formula(
    "flops.decoder.attention.scores.chunked",
    (2 * b * a * score_width * s * (W + 1) / 2) * u_flop,
    "FLOP",
    "one chunked layer's attention matmuls (Llama-4): causal attention inside chunks of W tokens, s/W chunks",
    sources=[TRANSFORMERS],
    conditions=[divides(W, s)],
    symbol_latex=r"F_{attn}^{chunk}",
)
mlp_forward = formula(
    "flops.decoder.mlp",
    (2 * b * s * (2 + gated) * h * d_ff) * u_flop,
    "FLOP",
    "one dense layer's MLP GEMMs: 2 or 3 matrices h×d_ff",
    sources=[FLOP_COUNTER, SHAZEER],
    symbol_latex=r"F_{mlp}",
)
experts_forward = formula(
    "flops.decoder.experts",
    (2 * b * s * (k + all_experts * (E - k)) * (2 + gated) * EXPERT_WIDTH * d_moe) * u_flop,
    "FLOP",
    "one MoE layer's routed experts: each token through its k experts (an expert sees only its tokens, so the rows add up to "
    "k·bs), or through all E where the implementation runs every expert (Llama-4)",
    sources=[FLOP_COUNTER, FEDUS],
    conditions=[TOP_K],
    symbol_latex=r"F_{experts}",
)
experts_skipped = formula(
    "flops.decoder.experts.skipped",
    (all_experts * 2 * b * s * (E - k) * (2 + gated) * EXPERT_WIDTH * d_moe) * u_flop,
    "FLOP",
    "the expert FLOPs of one MoE layer that a top-k kernel would skip where the implementation runs every expert",
    sources=[FLOP_COUNTER, TRANSFORMERS],
    conditions=[TOP_K],
    symbol_latex=r"F_{experts}^{skip}",
)
experts_capacity = formula(
    "flops.decoder.experts.capacity",
    (c_f * 2 * b * s * k * (2 + gated) * EXPERT_WIDTH * d_moe) * u_flop,
    "FLOP",
    "the most a capacity-limited MoE layer computes: E experts of c_f·k·bs/E token slots each",
    sources=[CAPACITY],
    notes="With c_f < 1 at least (1 − c_f)·k·bs token-expert pairs are dropped; with c_f ≥ 1 none need be, "
    "and an uneven router still drops those above an expert's c_f·k·bs/E.",
    symbol_latex=r"F_{experts}^{cap}",
)
shared_forward = formula(
    "flops.decoder.shared_experts",
    (2 * b * s * ((2 + gated) * h * d_sh + sh_gate * h)) * u_flop,
    "FLOP",
    "one MoE layer's shared experts on every token (and Qwen2-MoE's [bs,h]×[h,1] gate)",
    sources=[FLOP_COUNTER, DEEPSEEK_V2],
    symbol_latex=r"F_{shared}",
)
moe_latent_forward = formula(
    "flops.decoder.moe_latent",
    (moe_lat * 2 * b * s * 2 * h * d_lat) * u_flop,
    "FLOP",
    "a latent MoE layer's two projections on every token: [bs,h]×[h,d_lat] and [bs,d_lat]×[d_lat,h]",
    sources=[FLOP_COUNTER, NEMOTRON_H],
    symbol_latex=r"F_{lat}",
)
router_forward = formula(
    "flops.decoder.router",
    (2 * b * s * h * E) * u_flop,
    "FLOP",
    "one MoE layer's router: [bs,h]×[h,E]",
    sources=[FLOP_COUNTER, FEDUS, MIXTRAL],
    symbol_latex=r"F_{router}",
)
layer_forward = formula(
    "flops.decoder.layer.forward",
    projections.part + scores.part + mlp_forward.part,
    "FLOP",
    "forward FLOPs of one dense decoder layer (norms, softmax, activations, rotary: no GEMM, not counted)",
    sources=[FLOP_COUNTER],
    related=["flops.decoder.attention.projections", "flops.decoder.attention.scores", "flops.decoder.mlp"],
    symbol_latex=r"F_{layer}",
)
layer_forward_moe = formula(
    "flops.decoder.layer.forward.moe",
    projections.part + scores.part + experts_forward.part + shared_forward.part + router_forward.part
    + moe_latent_forward.part,
    "FLOP",
    "forward FLOPs of one MoE layer: attention, routed and shared experts, router",
    sources=[FLOP_COUNTER, FEDUS],
    related=["flops.decoder.experts", "flops.decoder.shared_experts", "flops.decoder.router"],
    symbol_latex=r"F_{layer}^{moe}",
)
layers_forward = formula(
    "flops.decoder.layers.forward",
    l_attn * (projections.part + scores.part) + l_mamba * recurrent.mamba_forward.part
    + l_ssd * recurrent.mamba2_forward.part + l_lru * recurrent.rglru_forward.part
    + l_gdn * recurrent.gdn_forward.part + l_mlp * mlp_forward.part
    + l_moe * (experts_forward.part + shared_forward.part + router_forward.part + moe_latent_forward.part),
    "FLOP",
    "forward FLOPs of all l layers (what full recomputation repeats): attention or a recurrent mixer, a dense MLP or the "
    "experts, as each layer has them",
    sources=[FLOP_COUNTER, HYBRID],
    conditions=[MOE_LAYERS, MIXERS, CHANNELS],
    related=["flops.decoder.layer.forward", "flops.decoder.layer.forward.moe", "flops.recurrent.mamba"],
    symbol_latex=r"F_{layers}",
)
embedding_projections = formula(
    "flops.decoder.embedding_projections",
    (2 * proj_emb * (2 * b * s * d_emb * h)) * u_flop,
    "FLOP",
    "OPT-350m's project_in [bs,d_emb]×[d_emb,h] and project_out [bs,h]×[h,d_emb]",
    sources=[FLOP_COUNTER, TRANSFORMERS],
    symbol_latex=r"F_{proj,emb}",
)
logits = formula(
    "flops.decoder.logits",
    (2 * b * s * d_emb * V) * u_flop,
    "FLOP",
    "the output head [bs,d_emb]×[d_emb,V] (tied or not; a head bias is an add, not counted)",
    sources=[FLOP_COUNTER],
    symbol_latex=r"F_{logits}",
)
forward = formula(
    "flops.decoder.forward",
    layers_forward.part + embedding_projections.part + logits.part,
    "FLOP",
    "forward FLOPs of a decoder model for b sequences of s tokens",
    sources=[FLOP_COUNTER, BILIBILI],
    conditions=[MOE_LAYERS],
    related=["flops.decoder.layers.forward", "flops.decoder.embedding_projections", "flops.decoder.logits", "flops.forward"],
    notes="Equal to FlopCounterMode (torch 2.13) on transformers 5.24 models built with attn_implementation='eager' and "
    "experts_implementation='eager', run with use_cache=False. On the CPU the default sdpa attention counts 0 for QKᵀ and "
    "scores·V, and the default grouped_mm experts count 0 (aten._grouped_mm has no FLOP formula). "
    "logits_to_keep=n replaces s by n in the logits term.",
    symbol_latex=r"F_{fwd}",
)
indexer_forward = formula(
    "flops.decoder.indexer",
    dsa * (2 * b * s * (r_q * n_idx * d_idx + h * d_idx + h * n_idx) + 2 * b * n_idx * s**2 * (d_idx + 1)) * u_flop,
    "FLOP",
    "one layer's DSA indexer in the forward (inside flops.decoder.attention.projections.mla and .scores): its three "
    "projections, and q·kᵀ of its n_idx heads with their weighted sum over all s² pairs",
    sources=[FLOP_COUNTER, DEEPSEEK_V32],
    symbol_latex=r"F_{idx}",
)
backward = formula(
    "flops.decoder.backward",
    2 * (forward.part - l_attn * indexer_forward.part),
    "FLOP",
    "backward FLOPs: for each GEMM Y = XW, dX = dY·Wᵀ and dW = Xᵀ·dY",
    sources=[FLOP_COUNTER, BILIBILI],
    conditions=[MOE_LAYERS],
    related=["flops.decoder.forward", "flops.backward"],
    notes="Measured exactly 2× for every family when every weight and the first layer's input need gradients; "
    "freezing the embedding and the first norm drops layer 0's input-gradient GEMMs. DSA's indexer runs under "
    "torch.no_grad in transformers 5.24 (DeepseekV32Indexer.forward): it has no backward.",
    symbol_latex=r"F_{bwd}",
)
training = formula(
    "flops.decoder.training",
    forward.part + backward.part,
    "FLOP",
    "training FLOPs of one step: forward + backward (3× the forward, less twice a DSA indexer's)",
    sources=[FLOP_COUNTER, BILIBILI],
    conditions=[MOE_LAYERS],
    related=["flops.decoder.forward", "flops.decoder.backward", "flops.training"],
    symbol_latex=r"F_{train}",
)
mla_decode_naive = formula(
    "flops.decoder.mla.decode.naive",
    (2 * s * r_kv * a * (d_nope + d_v) + 2 * a * s * (d_qk + d_v)) * u_flop,
    "FLOP",
    "one MLA layer, one decoded token against s cached latents, as transformers runs it: the whole latent cache up-projected "
    "through W_UK, W_UV again, then per-head scores and weighted values",
    sources=[DEEPSEEK_V2, TRANSFORMERS],
    notes="Only the terms that grow with s; the token's own projections are flops.decoder.attention.projections.mla at b = s = 1.",
    symbol_latex=r"F_{MLA}^{naive}",
)
mla_decode_absorbed = formula(
    "flops.decoder.mla.decode.absorbed",
    (2 * a * d_nope * r_kv + 2 * a * s * (r_kv + d_rope) + 2 * a * s * r_kv + 2 * a * r_kv * d_v) * u_flop,
    "FLOP",
    "the same with W_UK absorbed into the query and W_UV into the output: scores and weighted sums on the latent itself",
    sources=[DEEPSEEK_V2],
    symbol_latex=r"F_{MLA}^{absorbed}",
)

# --- KV cache ----------------------------------------------------------------------

kv_heads = g + kv_expand * (a - g)  # key/value heads the cache holds: g, or a where the family expands them first (Falcon)
kv_width = (1 - mla) * 2 * kv_heads * d_head + mla * (r_kv + d_rope + dsa * d_idx)  # values cached per token and layer (DSA: the indexer's key)

kv_full_layer = formula(
    "memory.kv_cache.layer.full",
    b * s * kv_width * q,
    "byte",
    "one full-attention layer's cache: a key and a value of g heads (a where the family expands them first; MLA: the latent "
    "and the shared rope key) for each of s tokens",
    sources=[CACHE, DEEPSEEK_V2],
    symbol_latex=r"M_{KV}^{full}",
)
kv_window_layer = formula(
    "memory.kv_cache.layer.window",
    b * sp.Min(s, W - 1) * kv_width * q,
    "byte",
    "one sliding-window (or chunked) layer's cache: the latest W − 1 tokens; the next query brings the W-th",
    sources=[CACHE, MISTRAL],
    symbol_latex=r"M_{KV}^{win}",
)
states = (l_mamba * recurrent.mamba_state.part + l_ssd * recurrent.mamba2_state.part
          + l_lru * recurrent.rglru_state.part + l_gdn * recurrent.gdn_state.part)  # fixed-size, whatever s is

kv_decoder = formula(
    "memory.kv_cache.decoder",
    (l_attn - l_win) * kv_full_layer.part + l_win * kv_window_layer.part + states,
    "byte",
    "the bytes transformers' DynamicCache holds after b sequences of s tokens: full attention layers s tokens, the l_win "
    "windowed ones W − 1, and the fixed-size state of each recurrent layer; layers without a mixer hold nothing",
    sources=[CACHE, MISTRAL, GEMMA, DEEPSEEK_V2, HYBRID],
    conditions=[WINDOW_LAYERS, MIXERS],
    related=["memory.kv_cache.layer.full", "memory.kv_cache.layer.window", "memory.state.mamba", "memory.kv_cache"],
    symbol_latex=r"M_{KV}",
)
kv_paged = formula(
    "memory.kv_cache.decoder.paged",
    kv_full_layer.at(s=1) * ((l_attn - l_win) * sp.ceiling(s / n_blk) + l_win * sp.ceiling(sp.Min(s, W - 1) / n_blk)) * n_blk
    + states,
    "byte",
    "the same tokens held in whole blocks of n_blk tokens per sequence and layer (a paged cache); recurrent states as they are",
    sources=[PAGED],
    conditions=[WINDOW_LAYERS],
    related=["memory.kv_cache.decoder"],
    symbol_latex=r"M_{KV}^{paged}",
)
kv_mla_expanded = formula(
    "memory.kv_cache.decoder.mla_expanded",
    b * s * l * a * (d_qk + d_v) * q,
    "byte",
    "an MLA model's cache when an engine stores the up-projected per-head keys (d_nope + d_rope) and values (d_v) instead of the latent",
    sources=[DEEPSEEK_V2],
    related=["memory.kv_cache.decoder"],
    symbol_latex=r"M_{KV}^{MLA,exp}",
)
kv_sinks = formula(
    "memory.kv_cache.layer.window_sinks",
    b * (sp.Min(s, W - 1) + n_sink) * kv_width * q,
    "byte",
    "a windowed layer that also keeps the first n_sink tokens (StreamingLLM's attention sinks)",
    sources=[STREAMING],
    symbol_latex=r"M_{KV}^{sink}",
)
