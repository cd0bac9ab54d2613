"""Proofs of the general decoder's parameters and FLOPs (formulas/topics/architecture.py).

Each count is built from the shapes of the weights (as transformers holds them) or
from the GEMMs of a forward pass priced by ``flops.gemm``, with the structural
switches multiplying the terms a family may lack. Two reductions close the loop:
with the classic switches (MHA, d_head = h/a, d_ff = 4h, two-matrix MLP, every
bias, two LayerNorms, a learned table of s positions, tied head, dense) the general
count is the foundation's ``params.total`` and the general forward is ``flops.forward``.
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.derivations.topics.flops import gemm
from llm_formulas.formulas.topics.architecture import (
    BILIBILI,
    CACHE,
    CAPACITY,
    DEEPSEEK_V2,
    DEEPSEEK_V3,
    DEEPSEEK_V32,
    FEDUS,
    FLOP_COUNTER,
    GEMMA,
    GPT_OSS,
    MISTRAL,
    NEMOTRON_H,
    PAGED,
    SHAZEER,
    STREAMING,
    TRANSFORMERS,
)
from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.vocabulary.classic import CLASSIC
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
    d_idx,
    d_lat,
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
    d_moe,
    d_nope,
    d_rope,
    d_sh,
    d_v,
    l_moe,
    dsa,
    moe_lat,
    n_idx,
    l_win,
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
from llm_formulas.formulas.topics.architecture import HYBRID

MIXER_IDS = {l_mamba: "recurrent.mamba", l_ssd: "recurrent.mamba2", l_lru: "recurrent.rglru", l_gdn: "recurrent.gdn"}
NO_HYBRID = {count: 0 for count in (*MIXER_IDS, l_noattn, l_nomlp)}  # an attention decoder: every layer attention and an MLP

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


def mla_attention() -> Derivation:
    d = Derivation("params.decoder.attention.mla", "Multi-head latent attention from its ranks", (TRANSFORMERS, DEEPSEEK_V2))
    d_qk = d_nope + d_rope
    q_low = d.defines("Ψ_Q,low", h * r_q + r_q + r_q * (a * d_qk), "q_a_proj h→r_Q, its RMSNorm (r_Q), q_b_proj r_Q→a heads of d_nope + d_rope")
    q_full = d.defines("Ψ_Q,full", h * (a * d_qk), "without a query latent (DeepSeek-V2-Lite), q_proj h→a·(d_nope + d_rope)")
    kv_down = d.defines("Ψ_KV,down", h * (r_kv + d_rope) + r_kv,
                        "kv_a_proj_with_mqa: h→ the latent c_KV (r_KV) and one rope key shared by all heads (d_rope); the latent's RMSNorm")
    kv_up = d.defines("Ψ_KV,up", r_kv * (a * d_nope) + r_kv * (a * d_v), "kv_b_proj: r_KV→ per-head no-rope keys W_UK and values W_UV")
    o = d.defines("Ψ_O", (a * d_v) * h, "o_proj: a·d_v→h")
    idx = d.defines("Ψ_idx", get("params.decoder.indexer").expr, "DeepSeek sparse attention's indexer, where the layer has one")
    d.defines("Ψ_MLA", q_lora * q_low + (1 - q_lora) * q_full + kv_down + kv_up + o + idx,
              "no biases (attention_bias = false in every DeepSeek config)")
    d.concludes("params.decoder.attention.mla")
    return d


def attention() -> Derivation:
    d = Derivation("params.decoder.attention", "Attention parameters with g key/value heads of width d_head", (TRANSFORMERS, GPT_OSS))
    q_ = d.defines("Ψ_Q", (1 + attn_gate) * (h * (a * d_head) + b_q * a * d_head),
                   "a query heads of width d_head: an h×a·d_head matrix and its bias; twice that where q_proj also yields "
                   "the output gate (Qwen3-Next)")
    kv = d.defines("Ψ_KV", 2 * (h * (g * d_head)) + (b_k + b_v) * g * d_head, "keys and values have g heads only (GQA; MQA g = 1)")
    o = d.defines("Ψ_O", (a * d_head) * h + b_o * h, "the output projection maps the a·d_head concatenated heads back to h")
    standard = d.defines("Ψ_attn,std", q_ + kv + o, "fused (Falcon, Phi-3, GPT-2's c_attn) or separate, the shapes add up the same",
                         parts=("Ψ_Q", "Ψ_KV", "Ψ_O"))
    norms_ = d.defines("Ψ_qk", qk_norm * (d_head + d_head) + qk_norm_full * (a * d_head + g * d_head),
                       "q/k RMSNorms: per head of width d_head (Qwen3, Gemma-3, GLM-4.5), or over all heads (OLMo-2)")
    d.defines("Ψ_attn", (1 - mla) * standard + mla * get("params.decoder.attention.mla").part + norms_ + sink * a,
              "standard or latent attention, the norms, and gpt-oss's one learned sink logit per head")
    d.concludes("params.decoder.attention")
    return d


def mlp() -> Derivation:
    d = Derivation("params.decoder.mlp", "MLP parameters, plain or gated", (TRANSFORMERS, SHAZEER))
    up = d.defines("Ψ_up", (1 + gated) * (h * d_ff + b_mlp * d_ff), "the up projection h→d_ff, and a second one (the gate) when gated")
    down = d.defines("Ψ_down", d_ff * h + b_mlp * h, "the down projection d_ff→h")
    d.defines("Ψ_mlp", up + down, "two matrices, or three when gated (SwiGLU, GeGLU)")
    d.concludes("params.decoder.mlp")
    return d


def expert() -> Derivation:
    d = Derivation("params.decoder.expert", "One routed expert", (TRANSFORMERS, FEDUS, NEMOTRON_H))
    width = d.defines("h_expert", h + moe_lat * (d_lat - h),
                      "what an expert reads and writes: h, or the latent d_lat between Nemotron-3-Super's down and up projections")
    d.defines("Ψ_expert", get("params.decoder.mlp").dimensioned.xreplace({d_ff: d_moe, h: width}),
              "an MLP of width d_moe; the fused 3-D gate_up_proj [E, h, 2·d_moe] and down_proj [E, d_moe, h] hold E of them")
    d.concludes("params.decoder.expert")
    return d


def shared_experts() -> Derivation:
    d = Derivation("params.decoder.shared_experts", "Shared experts", (TRANSFORMERS, DEEPSEEK_V2))
    mlp_ = d.defines("Ψ_sh,mlp", (1 + gated) * h * d_sh + d_sh * h,
                     "n_shared experts of width d_moe run as one MLP of width d_sh = n_shared·d_moe (DeepSeek), "
                     "or Qwen2-MoE's shared_expert_intermediate_size, Llama-4's intermediate_size; no biases")
    d.defines("Ψ_shared", mlp_ + sh_gate * h, "Qwen2-MoE scales it by sigmoid(h→1)")
    d.concludes("params.decoder.shared_experts")
    return d


def router() -> Derivation:
    d = Derivation("params.decoder.router", "The router of a mixture of experts", (TRANSFORMERS, FEDUS))
    d.defines("Ψ_router", h * E + router_bias * E, "one score per expert from the hidden state: an h×E matrix (gpt-oss adds a bias)")
    d.concludes("params.decoder.router")
    return d


def indexer() -> Derivation:
    d = Derivation("params.decoder.indexer", "DeepSeek sparse attention's lightning indexer", (DEEPSEEK_V32,))
    q_ = d.defines("Ψ_idx,Q", r_q * (n_idx * d_idx), "wq_b: the query latent r_Q → n_idx heads of d_idx")
    k_ = d.defines("Ψ_idx,K", h * d_idx + d_idx + d_idx, "wk: h → one key of d_idx shared by the heads, and its LayerNorm (scale, shift)")
    w_ = d.defines("Ψ_idx,w", h * n_idx, "weights_proj: h → one weight per head")
    d.defines("Ψ_idx", dsa * (q_ + k_ + w_), "in an MLA layer with DSA (DeepSeek-V3.2, GLM-5); none otherwise")
    d.concludes("params.decoder.indexer")
    return d


def moe_latent() -> Derivation:
    d = Derivation("params.decoder.moe_latent", "A latent MoE layer's projections", (NEMOTRON_H,))
    down = d.defines("Ψ_lat,down", h * d_lat + b_mlp * d_lat, "fc1_latent_proj: h→d_lat before the routed experts")
    up = d.defines("Ψ_lat,up", d_lat * h + b_mlp * h, "fc2_latent_proj: d_lat→h after them (the router and shared expert read h)")
    pair = d.defines("Ψ_lat,pair", down + up, "the two projections", parts=("Ψ_lat,down", "Ψ_lat,up"))
    d.defines("Ψ_lat", moe_lat * pair, "in a layer whose experts work at the latent width; none otherwise")
    d.concludes("params.decoder.moe_latent")
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


def cross_attention() -> Derivation:
    d = Derivation("params.decoder.cross_attention", "A cross-attention block", (TRANSFORMERS,))
    q_ = d.defines("Ψ_Q^x", h * (a * d_head) + b_q * a * d_head, "queries from the layer's hidden state (GPT-2's q_attn)")
    kv = d.defines("Ψ_KV^x", 2 * (h * (a * d_head)) + (b_k + b_v) * a * d_head,
                   "keys and values of all a heads from the encoder's hidden states (GPT-2's c_attn, h→2h)")
    o = d.defines("Ψ_O^x", (a * d_head) * h + b_o * h, "the output projection (c_proj)")
    block = d.defines("Ψ_x,block", q_ + kv + o, "fused or separate, the shapes add up the same", parts=("Ψ_Q^x", "Ψ_KV^x", "Ψ_O^x"))
    d.defines("Ψ_cross", x_attn * (block + one_norm()), "the block and its own norm (ln_cross_attn) in every layer that has one")
    d.concludes("params.decoder.cross_attention")
    return d


def layer() -> Derivation:
    d = Derivation("params.decoder.layer", "One dense decoder layer", (TRANSFORMERS,))
    d.defines("Ψ_layer", sum(get(i).dimensioned for i in ("params.decoder.attention", "params.decoder.cross_attention",
                                                           "params.decoder.mlp", "params.decoder.norms")),
              "attention (and a cross-attention block where the family has one), the MLP, norms")
    d.concludes("params.decoder.layer")
    return d


def layer_moe() -> Derivation:
    d = Derivation("params.decoder.layer.moe", "One mixture-of-experts layer", (TRANSFORMERS, FEDUS, DEEPSEEK_V2))
    routed = d.defines("Ψ_routed", E * get("params.decoder.expert").part, "E routed experts")
    d.defines("Ψ_layer^moe", get("params.decoder.layer").part - get("params.decoder.mlp").part + routed
              + get("params.decoder.router").part + get("params.decoder.shared_experts").part
              + get("params.decoder.moe_latent").part,
              "a dense layer whose MLP is replaced by the routed experts, the router, the shared experts and any latent projections")
    d.concludes("params.decoder.layer.moe")
    return d


def layer_active() -> Derivation:
    d = Derivation("params.decoder.layer.active", "The part of a MoE layer one token uses", (TRANSFORMERS, FEDUS))
    one = get("params.decoder.expert").part
    d.defines("Ψ_layer^active", get("params.decoder.layer.moe").part - (E - k) * one, "the layer less the E − k routed experts the token skips")
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


def hybrid_params() -> sp.Expr:
    """What hybrid layers change: a recurrent mixer's parameters instead of attention's; no mixer, or no MLP, at all."""
    attention_ = get("params.decoder.attention").part
    return (sum(count * (get(f"params.{name}").part - attention_) for count, name in MIXER_IDS.items())
            - l_noattn * attention_ - l_nomlp * get("params.decoder.mlp").part)


def total() -> Derivation:
    d = Derivation("params.decoder.total", "The whole decoder", (TRANSFORMERS, BILIBILI, HYBRID))
    parts = [get(i).dimensioned for i in ("params.decoder.embeddings", "params.decoder.final_norm", "params.decoder.head")]
    body = d.defines("Ψ_layers", (l - l_moe) * get("params.decoder.layer").part + l_moe * get("params.decoder.layer.moe").part,
                     "l − l_moe dense layers and l_moe MoE layers (DeepSeek-V3: 3 and 58; Mixtral: 0 and 32), each with attention")
    mixed = d.defines("Ψ_hybrid", hybrid_params(),
                      "hybrid models: l_S6, l_SSD, l_LRU, l_GDN layers hold a recurrent mixer instead of attention, l_∅mix "
                      "layers no mixer (Nemotron-H's MLP layers), l_∅mlp layers no MLP (Mamba's); each keeps its norms")
    d.defines("Ψ", parts[0] + body + mixed + parts[1] + parts[2], "embeddings, the layers, final norm, head")
    d.concludes("params.decoder.total")
    return d


def active() -> Derivation:
    d = Derivation("params.decoder.active", "Active parameters of a mixture of experts", (TRANSFORMERS, FEDUS))
    d.defines("Ψ_active", get("params.decoder.total").part - l_moe * (E - k) * get("params.decoder.expert").part,
              "the total less the E − k routed experts a token skips in each of the l_moe MoE layers; a dense model has all active")
    d.equals("Ψ_active", sum(get(i).dimensioned for i in ("params.decoder.embeddings", "params.decoder.final_norm", "params.decoder.head"))
             + (l - l_moe) * get("params.decoder.layer").part + l_moe * get("params.decoder.layer.active").part
             + hybrid_params(), "the same, layer by layer")
    d.concludes("params.decoder.active")
    return d


def mtp() -> Derivation:
    d = Derivation("params.decoder.mtp", "Multi-token-prediction modules (an option)", (DEEPSEEK_V3,))
    one = d.defines("Ψ_MTP,1", 2 * one_norm() + (2 * h) * h + get("params.decoder.layer.moe").part + one_norm(),
                    "RMSNorms of the hidden state and of the next token's embedding, their concatenation projected 2h→h, "
                    "one Transformer block (a MoE layer), and the norm before the shared head")
    d.defines("Ψ_MTP", n_mtp * one, "D = n_MTP sequential modules; embedding and output head shared with the main model")
    d.concludes("params.decoder.mtp")
    return d


def classic_params() -> Derivation:
    d = Derivation("params.decoder.classic", "The classic switches give the foundation's params.total", (BILIBILI,))
    d.defines("Ψ|classic", get("params.decoder.total").dimensioned.xreplace(CLASSIC),
              "MHA (g = a), d_head = h/a, d_ff = 4h, two matrices, every bias, two LayerNorms, a table of s positions, tied, dense")
    d.equals("Ψ", get("params.total").part, "the foundation's l(12h² + 13h) + Vh + sh + 2h")
    return d


# --- FLOPs ---------------------------------------------------------------------------


def mla_projections() -> Derivation:
    d = Derivation("flops.decoder.attention.projections.mla", "MLA projections, as transformers runs them", (FLOP_COUNTER, DEEPSEEK_V2))
    d_qk = d_nope + d_rope
    q_ = d.defines("F_Q", q_lora * (gemm(b * s, h, r_q) + gemm(b * s, r_q, a * d_qk)) + (1 - q_lora) * gemm(b * s, h, a * d_qk),
                   "through the query latent, or straight")
    kv = d.defines("F_KV", gemm(b * s, h, r_kv + d_rope) + gemm(b * s, r_kv, a * (d_nope + d_v)),
                   "down to the latent and the rope key; the latent up to per-head keys and values for every token")
    o = d.defines("F_O", gemm(b * s, a * d_v, h), "[bs, a·d_v] × [a·d_v, h]")
    idx = d.defines("F_idx", dsa * (gemm(b * s, r_q, n_idx * d_idx) + gemm(b * s, h, d_idx) + gemm(b * s, h, n_idx)),
                    "DSA's indexer: wq_b from the query latent, wk to its one key, weights_proj to its head weights")
    d.defines("F_proj^MLA", q_ + kv + o + idx, "the rope key is shared: its heads are a broadcast, not a GEMM")
    d.concludes("flops.decoder.attention.projections.mla")
    return d


def projections() -> Derivation:
    d = Derivation("flops.decoder.attention.projections", "Q, K, V and O projections", (FLOP_COUNTER,))
    q_ = d.defines("F_Q", (1 + attn_gate) * gemm(b * s, h, a * d_head), "[bs, h] × [h, a·d_head] (twice with an output gate)")
    kv = d.defines("F_KV", 2 * gemm(b * s, h, g * d_head), "keys and values: [bs, h] × [h, g·d_head] each")
    o = d.defines("F_O", gemm(b * s, a * d_head, h), "[bs, a·d_head] × [a·d_head, h]")
    standard = d.defines("F_proj,std", q_ + kv + o, "Q, K, V and O", parts=("F_Q", "F_KV", "F_O"))
    d.defines("F_proj", (1 - mla) * standard + mla * get("flops.decoder.attention.projections.mla").part,
              "a bias is an add (addmm counts the product only); MLA's own projections where mla = 1")
    d.concludes("flops.decoder.attention.projections")
    return d


def _score_width() -> sp.Expr:
    return (1 - mla) * (d_head + d_head) + mla * (d_nope + d_rope + d_v + dsa * n_idx * (d_idx + 1) / a)


def scores() -> Derivation:
    d = Derivation("flops.decoder.attention.scores", "The two attention matmuls, per head", (FLOP_COUNTER, BILIBILI))
    qk = d.defines("F_QK", b * a * gemm(s, d_head, s), "per sequence and query head, [s, d_head] × [d_head, s]")
    sv = d.defines("F_SV", b * a * gemm(s, s, d_head), "per sequence and query head, [s, s] × [s, d_head]")
    mla_ = d.defines("F_attn^MLA", b * a * (gemm(s, d_nope + d_rope, s) + gemm(s, s, d_v))
                     + dsa * b * n_idx * (gemm(s, d_idx, s) + gemm(1, 1, s) * s),
                     "MLA: query/key heads of d_nope + d_rope, value heads of d_v (the latent up-projected first); DSA's "
                     "indexer: its n_idx heads' [s, d_idx] × [d_idx, s] and the weighted sum over heads, [1, n_idx] × "
                     "[n_idx, s] per query (all s² pairs, masked after)")
    d.defines(
        "F_attn",
        (1 - mla) * (qk + sv) + mla * mla_,
        "with GQA, eager attention repeats the g key/value heads to a before the matmuls (repeat_kv), so a heads are paid for; "
        "the full s×s square is computed, the causal mask and a sliding window only hide part of it",
    )
    d.equals("F_attn", 2 * b * a * s**2 * _score_width(), "2·s² per head and unit of width")
    d.concludes("flops.decoder.attention.scores")
    return d


_i = sp.Symbol("i", positive=True, integer=True)  # a query's position, summed over


def scores_causal() -> Derivation:
    d = Derivation("flops.decoder.attention.scores.causal", "Attention a causal kernel computes", (FLOP_COUNTER, BILIBILI))
    pairs = d.defines("n_pairs", sp.summation(_i, (_i, 1, s)), "the query at position i sees keys 1..i: Σ i")
    d.equals("n_pairs", s * (s + 1) / 2, "a triangle with its diagonal", aside=True)
    d.defines("F_attn^causal", 2 * b * a * _score_width() * pairs, "2 FLOPs per pair, head and unit of width, as in the full square")
    d.concludes("flops.decoder.attention.scores.causal")
    return d


def scores_windowed() -> Derivation:
    d = Derivation("flops.decoder.attention.scores.windowed", "Attention within a sliding window", (MISTRAL, GEMMA))
    pairs = d.defines("n_pairs", sp.summation(_i, (_i, 1, W)) + sp.summation(W, (_i, W + 1, s)),
                      "the query at i sees min(i, W) keys: i of them while i ≤ W, then the W latest (s ≥ W)")
    d.equals("n_pairs", s * W - W * (W - 1) / 2, "W per query, less the W(W − 1)/2 the first W queries lack", aside=True)
    d.equals("n_pairs", s * (s + 1) / 2 - (s - W) * (s - W + 1) / 2, "the causal triangle less the (s − W)(s − W + 1)/2 pairs beyond the window",
             aside=True)
    d.defines("F_attn^win", 2 * b * a * _score_width() * pairs, "eager attention computes s² pairs anyway; this is what a windowed kernel does")
    d.concludes("flops.decoder.attention.scores.windowed")
    return d


def scores_chunked() -> Derivation:
    d = Derivation("flops.decoder.attention.scores.chunked", "Attention inside chunks (Llama-4)", (TRANSFORMERS,))
    pairs = d.defines("n_pairs", (s / W) * sp.summation(_i, (_i, 1, W)), "s/W chunks, causal inside each, nothing across")
    d.equals("n_pairs", s * (W + 1) / 2, "half a chunk plus one per query, on average", aside=True)
    d.defines("F_attn^chunk", 2 * b * a * _score_width() * pairs, "2 FLOPs per pair, head and unit of width")
    d.concludes("flops.decoder.attention.scores.chunked")
    return d


def mlp_forward() -> Derivation:
    d = Derivation("flops.decoder.mlp", "Dense MLP GEMMs", (FLOP_COUNTER, SHAZEER))
    d.defines("F_mlp", (1 + gated) * gemm(b * s, h, d_ff) + gemm(b * s, d_ff, h), "one MLP over bs tokens: up (and gate), down")
    d.concludes("flops.decoder.mlp")
    return d


def experts_forward() -> Derivation:
    d = Derivation("flops.decoder.experts", "Routed expert GEMMs", (FLOP_COUNTER, FEDUS))
    width = h + moe_lat * (d_lat - h)  # h, or the latent width (params.decoder.expert)
    one = d.defines("F_expert,1", (1 + gated) * gemm(1, width, d_moe) + gemm(1, d_moe, width), "one token through one expert")
    d.defines("F_experts", b * s * (k + all_experts * (E - k)) * one,
              "eager experts loop over the experts hit, each a GEMM on its own tokens: k·bs rows in all; "
              "Llama-4's implementation multiplies every token by every expert (a [E, bs, h] bmm) and weights by the router's scores")
    d.concludes("flops.decoder.experts")
    return d


def experts_skipped() -> Derivation:
    d = Derivation("flops.decoder.experts.skipped", "What a top-k kernel would skip in Llama-4", (FLOP_COUNTER, TRANSFORMERS))
    topk = get("flops.decoder.experts").dimensioned.xreplace({all_experts: 0})
    d.defines("F_experts^skip", get("flops.decoder.experts").part - topk, "the implementation's count less a top-k kernel's")
    d.equals("F_experts^skip", all_experts * (E - k) * topk / k, "E − k experts per token that contribute a zero score")
    d.concludes("flops.decoder.experts.skipped")
    return d


def experts_capacity() -> Derivation:
    d = Derivation("flops.decoder.experts.capacity", "Expert capacity", (CAPACITY,))
    slots = d.defines("C", c_f * k * b * s / E, "each expert takes at most c_f times its even share of the k·bs assignments")
    width = h + moe_lat * (d_lat - h)  # h, or the latent width (params.decoder.expert)
    one = (1 + gated) * gemm(1, width, d_moe) + gemm(1, d_moe, width)
    d.defines("F_experts^cap", sp.Mul(E, slots, one, evaluate=False), "at most E·C token-expert pairs are computed; the rest are dropped (or overflow)")
    d.equals("F_experts^cap", c_f * get("flops.decoder.experts").dimensioned.xreplace({all_experts: 0}),
             "c_f times the top-k count: padding to capacity pays (c_f − 1)·k·bs idle slots, c_f < 1 drops at least (1 − c_f)·k·bs pairs")
    d.concludes("flops.decoder.experts.capacity")
    return d


def shared_forward() -> Derivation:
    d = Derivation("flops.decoder.shared_experts", "Shared-expert GEMMs", (FLOP_COUNTER, DEEPSEEK_V2))
    d.defines("F_shared", (1 + gated) * gemm(b * s, h, d_sh) + gemm(b * s, d_sh, h) + sh_gate * gemm(b * s, h, 1),
              "every token through the shared MLP; Qwen2-MoE's gate [bs, h] × [h, 1]")
    d.concludes("flops.decoder.shared_experts")
    return d


def router_forward() -> Derivation:
    d = Derivation("flops.decoder.router", "The router GEMM", (FLOP_COUNTER, FEDUS))
    d.defines("F_router", gemm(b * s, h, E), "[bs, h] × [h, E]; softmax, top-k and DeepSeek's group limits are not GEMMs")
    d.concludes("flops.decoder.router")
    return d


def indexer_forward() -> Derivation:
    d = Derivation("flops.decoder.indexer", "DSA's indexer in the forward", (FLOP_COUNTER, DEEPSEEK_V32))
    proj = d.defines("F_idx,proj", gemm(b * s, r_q, n_idx * d_idx) + gemm(b * s, h, d_idx) + gemm(b * s, h, n_idx),
                     "wq_b, wk and weights_proj over bs tokens")
    score = d.defines("F_idx,score", b * n_idx * gemm(s, d_idx, s) + b * s * gemm(1, n_idx, s),
                      "each head's [s, d_idx] × [d_idx, s], then per query [1, n_idx] × [n_idx, s]")
    d.defines("F_idx", dsa * (proj + score), "where the layer has the indexer")
    d.concludes("flops.decoder.indexer")
    return d


def moe_latent_forward() -> Derivation:
    d = Derivation("flops.decoder.moe_latent", "A latent MoE layer's projections", (FLOP_COUNTER, NEMOTRON_H))
    d.defines("F_lat", moe_lat * (gemm(b * s, h, d_lat) + gemm(b * s, d_lat, h)),
              "every token down to d_lat before the experts and back up after: [bs, h] × [h, d_lat], [bs, d_lat] × [d_lat, h]")
    d.concludes("flops.decoder.moe_latent")
    return d


def layer_forward() -> Derivation:
    d = Derivation("flops.decoder.layer.forward", "Forward FLOPs of one dense layer", (FLOP_COUNTER,))
    parts = [get(i).dimensioned for i in ("flops.decoder.attention.projections", "flops.decoder.attention.scores", "flops.decoder.mlp")]
    d.defines("F_layer", sum(parts), "projections, the two attention matmuls, the MLP; parallel or sequential, the same GEMMs")
    d.concludes("flops.decoder.layer.forward")
    return d


def layer_forward_moe() -> Derivation:
    d = Derivation("flops.decoder.layer.forward.moe", "Forward FLOPs of one MoE layer", (FLOP_COUNTER, FEDUS))
    moe_mlp = sum(get(i).dimensioned for i in ("flops.decoder.experts", "flops.decoder.shared_experts", "flops.decoder.router",
                                               "flops.decoder.moe_latent"))
    d.defines("F_layer^moe", get("flops.decoder.layer.forward").part - get("flops.decoder.mlp").part + moe_mlp,
              "the dense layer's MLP replaced by routed experts, shared experts and router")
    d.concludes("flops.decoder.layer.forward.moe")
    return d


def layers_forward() -> Derivation:
    d = Derivation("flops.decoder.layers.forward", "Forward FLOPs of the layers", (FLOP_COUNTER, HYBRID))
    body = d.defines("F_layers,attn", (l - l_moe) * get("flops.decoder.layer.forward").part
                     + l_moe * get("flops.decoder.layer.forward.moe").part, "dense and MoE layers, each with attention")
    attention_ = get("flops.decoder.attention.projections").part + get("flops.decoder.attention.scores").part
    mixed = d.defines("F_hybrid", sum(count * (get(f"flops.{name}").part - attention_) for count, name in MIXER_IDS.items())
                      - l_noattn * attention_ - l_nomlp * get("flops.decoder.mlp").part,
                      "a recurrent mixer's forward instead of attention's; nothing for a layer without a mixer or an MLP")
    d.defines("F_layers", body + mixed, "as each layer is built")
    d.concludes("flops.decoder.layers.forward")
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
        get("flops.decoder.layers.forward").part + get("flops.decoder.embedding_projections").part + get("flops.decoder.logits").part,
        "l layers, the embedding projections and the logits; embedding lookups, norms, softmax, activations are not GEMMs",
    )
    d.concludes("flops.decoder.forward")
    return d


def backward() -> Derivation:
    d = Derivation("flops.decoder.backward", "The backward pass", (FLOP_COUNTER, BILIBILI))
    graded = d.defines("F_fwd,grad", get("flops.decoder.forward").part
                       - (l - sum(MIXER_IDS) - l_noattn) * get("flops.decoder.indexer").part,
                       "the forward less DSA's indexer, which runs under torch.no_grad")
    d.defines(
        "F_bwd",
        graded + graded,
        "every GEMM Y = XW (and the attention matmuls, both inputs activations) has two gradient products of its own size, "
        "dX = dY·Wᵀ and dW = Xᵀ·dY, provided both inputs need a gradient: the first layer's input does when its norm weight does",
    )
    d.concludes("flops.decoder.backward")
    return d


def training() -> Derivation:
    d = Derivation("flops.decoder.training", "A training step", (FLOP_COUNTER, BILIBILI))
    d.defines("F_train", get("flops.decoder.forward").part + get("flops.decoder.backward").part, "forward and backward")
    d.concludes("flops.decoder.training")
    return d


def classic_flops() -> Derivation:
    d = Derivation("flops.decoder.classic", "The classic switches give the foundation's flops.forward", (BILIBILI,))
    d.defines("F_fwd|classic", get("flops.decoder.forward").dimensioned.xreplace(CLASSIC), "the classic GPT's switches")
    d.equals("F_fwd", get("flops.forward").part, "the foundation's 24bslh²(1 + s/6h + V/12lh)")
    return d


def mla_decode_naive() -> Derivation:
    d = Derivation("flops.decoder.mla.decode.naive", "One decoded token in MLA, the latent re-expanded", (DEEPSEEK_V2, TRANSFORMERS))
    up = d.defines("F_up", gemm(s, r_kv, a * (d_nope + d_v)), "kv_b_proj over the s cached latents, every step")
    att = d.defines("F_att", a * (gemm(1, d_nope + d_rope, s) + gemm(1, s, d_v)), "per head, one query against s keys, then s values")
    d.defines("F_MLA^naive", up + att, "what grows with s")
    d.concludes("flops.decoder.mla.decode.naive")
    return d


def mla_decode_absorbed() -> Derivation:
    d = Derivation("flops.decoder.mla.decode.absorbed", "One decoded token in MLA, up-projections absorbed", (DEEPSEEK_V2,))
    q_abs = d.defines("F_q", a * gemm(1, d_nope, r_kv), "q_nope·W_UK per head: the query moved into the latent space (q̃ = W_UKᵀ q)")
    att = d.defines("F_att", a * (gemm(1, r_kv + d_rope, s) + gemm(1, s, r_kv)),
                    "scores against the cached latent and rope key (width r_KV + d_rope), then the weighted sum of latents")
    out = d.defines("F_o", a * gemm(1, r_kv, d_v), "W_UV per head on the weighted latent (or absorbed further into W_O)")
    d.defines("F_MLA^absorbed", q_abs + att + out, "nothing is re-expanded: per token the cost grows by 2a(2r_KV + d_rope) per cached token")
    d.concludes("flops.decoder.mla.decode.absorbed")
    return d


def _kv_heads() -> sp.Expr:
    return (1 - kv_expand) * g + kv_expand * a


def _kv_width() -> sp.Expr:
    return (1 - mla) * (_kv_heads() * d_head + _kv_heads() * d_head) + mla * (r_kv + d_rope + dsa * d_idx)


def kv_full_layer() -> Derivation:
    d = Derivation("memory.kv_cache.layer.full", "Cache of a full-attention layer", (CACHE, DEEPSEEK_V2))
    heads = d.defines("g_KV", (1 - kv_expand) * g + kv_expand * a,
                      "the key/value heads cached: g, or all a where the family broadcasts K and V to every query head before "
                      "writing the cache (transformers' Falcon with new_decoder_architecture: full-size storages)")
    per_token = d.defines("w_KV", (1 - mla) * (heads * d_head + heads * d_head) + mla * (r_kv + d_rope + dsa * d_idx),
                          "a key and a value of g_KV heads [b, g_KV, s, d_head] each; MLA caches the normed latent [b, 1, s, r_KV] "
                          "and the rotated shared key [b, 1, s, d_rope] instead, and with DSA the indexer's key [b, s, d_idx]")
    d.defines("M_KV^full", b * s * per_token * q, "s tokens of every sequence, q bytes per value")
    d.concludes("memory.kv_cache.layer.full")
    return d


def kv_window_layer() -> Derivation:
    d = Derivation("memory.kv_cache.layer.window", "Cache of a sliding-window or chunked layer", (CACHE, MISTRAL))
    d.defines("M_KV^win", b * sp.Min(s, W - 1) * _kv_width() * q,
              "DynamicSlidingWindowLayer keeps the last W − 1 tokens (all s while fewer): the next query is the W-th of its window; "
              "Llama-4's chunked layers are held the same way with W the chunk size")
    d.concludes("memory.kv_cache.layer.window")
    return d


def recurrent_states() -> sp.Expr:
    return sum(count * get(f"memory.state.{name.split('.')[1]}").dimensioned for count, name in MIXER_IDS.items())


def kv_decoder() -> Derivation:
    d = Derivation("memory.kv_cache.decoder", "The whole cache", (CACHE, GEMMA, GPT_OSS, HYBRID))
    attending = d.defines("l_attn", l - sum(MIXER_IDS) - l_noattn, "the layers with attention: the rest hold a recurrent state or nothing")
    kv = d.defines("M_KV,attn", (attending - l_win) * get("memory.kv_cache.layer.full").part
                   + l_win * get("memory.kv_cache.layer.window").part,
                   "Gemma-3: 5 window layers to 1 full; Gemma-2, gpt-oss: 1 to 1; Mistral-7B-v0.1: all windowed; DeepSeek: all full")
    states = d.defines("M_state", recurrent_states(),
                       "each recurrent layer's fixed-size state (Jamba: 28 Mamba layers to 4 attention; Qwen3-Next: 3 delta-nets to 1)")
    d.defines("M_KV", kv + states, "what the cache holds", parts=("M_KV,attn", "M_state"))
    d.concludes("memory.kv_cache.decoder")
    return d


def kv_classic() -> Derivation:
    d = Derivation("memory.kv_cache.decoder.classic", "Without windows or MLA, the cache is 001's", (CACHE,))
    d.defines("M_KV|full", get("memory.kv_cache.decoder").dimensioned.xreplace({l_win: 0, mla: 0, kv_expand: 0, **NO_HYBRID}),
              "every layer full, per-head K and V of the g key/value heads")
    d.equals("M_KV", get("memory.kv_cache").part, "2·l·g·d_head·s·b·q")
    return d


def kv_paged() -> Derivation:
    d = Derivation("memory.kv_cache.decoder.paged", "A paged cache", (PAGED,))
    attending = l - sum(MIXER_IDS) - l_noattn
    blocks = d.defines("M_KV^blocks", b * _kv_width() * q * n_blk * ((attending - l_win) * sp.ceiling(s / n_blk)
                                                                     + l_win * sp.ceiling(sp.Min(s, W - 1) / n_blk)),
                       "each sequence's tokens of each attention layer in whole blocks: at most n_blk − 1 slots idle per "
                       "sequence and layer")
    d.defines("M_KV^paged", blocks + recurrent_states(), "the recurrent layers' states as they are")
    d.concludes("memory.kv_cache.decoder.paged")
    return d


def kv_mla_expanded() -> Derivation:
    d = Derivation("memory.kv_cache.decoder.mla_expanded", "MLA's cache decompressed per head", (DEEPSEEK_V2,))
    full = d.defines("M_KV^exp", b * s * l * (a * (d_nope + d_rope) + a * d_v) * q,
                     "per-head keys of d_nope + d_rope and values of d_v, as an engine without MLA kernels stores them")
    d.equals("M_KV^exp", get("memory.kv_cache.decoder").dimensioned.xreplace({mla: 1, l_win: 0, dsa: 0, **NO_HYBRID})
             * (a * (d_nope + d_rope + d_v)) / (r_kv + d_rope),
             "the latent cache times a(d_nope + d_rope + d_v)/(r_KV + d_rope): 128·320/576 = 71.1× for DeepSeek-V3")
    d.concludes("memory.kv_cache.decoder.mla_expanded")
    return d


def kv_sinks() -> Derivation:
    d = Derivation("memory.kv_cache.layer.window_sinks", "A window that keeps sink tokens", (STREAMING,))
    d.defines("M_KV^sink", b * (sp.Min(s, W - 1) + n_sink) * _kv_width() * q,
              "the first n_sink tokens stay, whatever slides: StreamingLLM keeps 4 so that softmax has somewhere to put its mass "
              "(gpt-oss learns a sink logit per head instead: a parameters per layer, nothing cached)")
    d.concludes("memory.kv_cache.layer.window_sinks")
    return d


DERIVATIONS = (
    embeddings,
    mla_attention,
    attention,
    mlp,
    expert,
    shared_experts,
    router,
    indexer,
    moe_latent,
    norms,
    cross_attention,
    layer,
    layer_moe,
    layer_active,
    final_norm,
    head,
    total,
    active,
    mtp,
    classic_params,
    mla_projections,
    projections,
    scores,
    scores_causal,
    scores_windowed,
    scores_chunked,
    mlp_forward,
    experts_forward,
    experts_skipped,
    experts_capacity,
    shared_forward,
    router_forward,
    indexer_forward,
    moe_latent_forward,
    layer_forward,
    layer_forward_moe,
    layers_forward,
    embedding_projections,
    logits,
    forward,
    backward,
    training,
    classic_flops,
    mla_decode_naive,
    mla_decode_absorbed,
    kv_full_layer,
    kv_window_layer,
    kv_decoder,
    kv_classic,
    kv_paged,
    kv_mla_expanded,
    kv_sinks,
)
