"""Serving: prefill and decoding, the KV wall, TTFT and TPOT, experts touched, quantized weights, speculative decoding.

A request of s_in prompt tokens and s_out output tokens is served in two phases (Yu et al. 2022, Orca §2):

- **the prefill** runs the s_in tokens through the model at once and emits the first token: the GEMMs of
  ``flops.decoder.*`` at s = s_in, attention over the prompt (eager attention computes the full s² square, a
  causal kernel the s(s + 1)/2 pairs the mask keeps, a windowed layer s·m − m(m − 1)/2 with m = min(s, W)), the
  logits of the last token only, and the K, V of every token written to the cache;
- **a decoding step** at context s_ctx feeds each of the b sequences' newest token: every weight is read once per
  step (the embedding only at the b rows looked up; of an MoE layer the E_hit distinct experts the b tokens are routed
  to, E(1 − (1 − k/E)^b) in expectation under uniform top-k routing), and every sequence's cache: s_ctx positions in
  a full layer, min(s_ctx, W) in a windowed one (N_kv over the l_attn attention layers), the latent r_KV + d_rope for
  MLA; one position per attention layer written. A recurrent layer (Mamba, Mamba-2, RG-LRU, gated delta-net) caches
  no position: the step reads and rewrites its fixed state and runs the mixer's one-token update (transformers' step
  path, not its one-token forward); a layer without a mixer caches nothing.

The time of each phase is the performance model's roofline term by term (formulas/topics/performance.py, Williams et al.
2009): FLOPs at a fraction η of the GPU's peak, bytes at η_HBM of its HBM bandwidth, a fixed cost τ_L per layer,
and per layer two tensor-parallel all-reduces priced by the α-β model (Thakur et al. 2005), one message latency τ and
2(t − 1)/t·x/W: a decoding step's messages are b·h·q bytes, so the latency term dominates them. Decoding gets
its own compute fraction η_dec (skinny GEMMs), the prefill η_pf. Pipeline stages run in series: a token crosses all
p of them (p − 1 hops) and the time is the whole model's over the t GPUs of a stage, with p batches in flight.

A decoding step's time is affine in N_kv, so the e2e latency of a batch, the prefill plus s_out − 1 steps at
contexts s_in + 1 … s_in + s_out − 1, is the prefill, s_out − 1 times the step at an empty cache, and the step's
slope times Σ N_kv, whose closed form ``serving.decode.context.sum`` is proved equal to the step-by-step sum.

Memory per GPU (recurrent states split over the t ranks with the mixers' channels): the weights over t·p GPUs (16-bit embedding and head, the matrices at q_Ψ: 2 bf16/fp16, 1 fp8/int8,
1/2 + q_s/B_q int4 with a scale and zero point per group of B_q, GPTQ's scheme), the cache of b sequences at the
longest context over p stages and min(t, g) KV-head shards (MLA's latent is whole on every TP rank), paged caches
rounded up to blocks (Kwon et al. 2023), and a prefill workspace (vLLM's profile run). The largest batch at a context
and the longest context at a batch are solved in closed form.

Batching: a static batch runs until its longest request ends; continuous batching (Orca) refills a finished slot, so
in steady state each step also prefills b/s_out requests, their FLOPs riding on the step's weight reads; a chunked
prefill (Sarathi-Serve, Agrawal et al. 2024) spreads a prompt over ⌈s_in/n_chunk⌉ steps. Speculative decoding
(Leviathan et al. 2023): γ drafted tokens accepted at rate α give (1 − α^(γ+1))/(1 − α) tokens per target step, and a
speed-up of that over γc + 1 with a draft c times as costly as the target; DeepSeek-V3's one MTP module is γ = 1.
Disaggregated serving (Zhong et al. 2024): prefill and decoding GPUs in the ratio of the time each request holds them.
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.formulas.topics import architecture as arch
from llm_formulas.formulas.vocabulary.catalogue import Condition, Source, at_most, formula
from llm_formulas.formulas.vocabulary.parts import expand_parts
from llm_formulas.formulas.vocabulary.expressions import as_sympy
from llm_formulas.formulas.vocabulary.symbols import t_kv  # noqa: F401 - serving's name for it (derivations read S.t_kv)
from llm_formulas.formulas.vocabulary.symbols import (
    B_q, E, E_hit, F_fwd, F_pf, M_gpu, M_w, M_ws, N_kv, N_ssm, P, R_out, R_req, R_w, T_e2e, T_pf, T_tok, V, W, W_gpu,
    W_mem, W_pp, W_tp, X, a, alpha_acc, b, b_pf, c_draft, c_hour, c_rent, c_step, d_emb, d_ff, d_head, d_kh, d_lru, d_nope,
    d_idx, d_rope, d_ssm, d_v, d_vh, dsa, e, eta_dec, eta_hbm, eta_pf, g, gamma_spec, gated, h, k, k_conv, l, l_gdn, l_lru, l_mamba,
    k_top, l_moe, l_ssd, l_win, mla, n, n_blk, n_chunk, n_dec, n_grp, n_idx, n_kh, n_pf, n_ssmh, n_vh, p, pos_table, proj_emb, q, q_bf16,
    q_int4, q_kv, q_s, q_w, r_dt, r_kv, s_ctx, s_in, s_long, s_out, t, tau_L, tau_ar, tied, u_flop, u_param, u_seq, w_lru,
    x_msg,
)
from llm_formulas.formulas.topics import recurrent

ORCA = Source("yu2022", "§2, the initiation (prefill) and increment (decoding) phases of generation")
CACHE = Source("transformers", "cache_utils.py: DynamicLayer holds s tokens, DynamicSlidingWindowLayer W − 1; "
               "DeepSeek-V3's attention caches the latent and up-projects it every step")
FLOP_COUNTER = Source("pytorch", "FlopCounterMode: 2MKN per mm/bmm/addmm/baddbmm")
LEVIATHAN = Source("leviathan2023", "§3.1 eq. (1) and Theorem 3.8: (1 − α^(γ+1))/(1 − α) tokens per run, "
                   "an improvement (1 − α^(γ+1))/((1 − α)(γc + 1))")
MTP = Source("deepseek2024v3", "§2.2 and §5.4.3: one MTP module, second-token acceptance 85–90 %, 1.8× TPS")
ROOFLINE = Source("williams2009", "attainable performance bounded by peak compute and by bandwidth × intensity")
THAKUR = Source("thakur2005", "§2: the cost model α + nβ of a message; a ring all-reduce moves 2(p − 1)/p·n")
PAGED = Source("kwon2023", "§4.2: KV blocks of a fixed number of tokens")
GPTQ = Source("frantar2022", "§5: 4-bit weights with a scale and zero point per group of 128")
VLLM = Source("vllm", "profile_run: the peak activation memory of a forward of max_num_batched_tokens tokens")
SARATHI = Source("agrawal2024", "§4: chunked prefills piggybacked on decoding steps")
DISTSERVE = Source("zhong2024", "§3: prefill and decoding instances sized separately")
LITTLE = Source("little1961", "L = λW")
FEDUS = Source("fedus2021", "§2: top-k routing of each token to its experts")
CUSTOM_AR = Source("vllm", "custom_all_reduce: one-shot all-reduce of small messages over NVLink")
MEGATRON_TP = Source("shoeybi2019", "§3: two all-reduces in the forward of each layer")
PP_SERIES = Source("001", "inference: pipeline stages run in series")

AT_LEAST_TWO = Condition("s_out ≥ 2: a request that decodes at least once", sp.GreaterThan(s_out, 2))
FLOAT64 = Condition("E ≤ 4096: evaluated in float64, 1 − (1 − k/E)^b keeps 12 significant digits up to there (no released "
                    "MoE has more experts)", sp.LessThan(E, 4096))
UNIFORM = Condition("uniform routing: each token's k experts are k distinct of the E, every set equally likely, tokens "
                    "independent (balanced routers approach it; a skewed router touches fewer)")
ENGINE = Condition("one kernel per GEMM, compute and memory time added (formulas/topics/performance.py); weights and cache read "
                   "once per forward, at η_HBM of the bandwidth")
WINDOWED = at_most(l_win, arch.l_attn)  # the windowed layers are some of the attention layers
l_attn = arch.l_attn  # layers with attention: l less the recurrent mixers (l_mamba + l_ssd + l_lru + l_gdn) and l_noattn
CACHED = Condition("a cached position holds values (2g·d_head, or r_KV + d_rope under MLA)",
                   sp.StrictGreaterThan(arch.kv_width, 0))
STATE_SPLIT = Source("vllm", "MambaMixer, MambaMixer2: a mixer's channels and heads, and so its states, split over the TP ranks")

# --- what one decoding step reads and computes ----------------------------------------------
states = formula(
    "serving.memory.states",
    l_mamba * recurrent.mamba_state.at(q=q_kv) + l_ssd * recurrent.mamba2_state.at(q=q_kv)
    + l_lru * recurrent.rglru_state.at(q=q_kv) + l_gdn * recurrent.gdn_state.at(q=q_kv),
    "byte",
    "the recurrent layers' fixed states of b sequences, whatever their context: each mixer's convolution state at the "
    "cache's q_KV and its recurrent state in fp32",
    sources=[recurrent.CACHE],
    related=["memory.kv_cache.decoder"],
    symbol_latex=r"M_{rec}",
)
STATES = states.part
kv_position = formula(
    "serving.memory.kv.position",
    arch.kv_width * q_kv,
    "byte",
    "cache bytes of one position in one attention layer: a key and a value of g heads (MLA: the latent r_KV and the "
    "shared rope key) at q_KV bytes each",
    sources=[CACHE, arch.DEEPSEEK_V2],
    conditions=[CACHED],
    related=["serving.decode.kv_read"],
    symbol_latex=r"m_{KV}",
)

kv_width = arch.kv_width  # values cached per token and layer: K and V of g heads, or MLA's latent and rope key
ATTENTION_PER_POSITION = 2 * a * arch.score_width  # an eager layer's QKᵀ and scores·V FLOPs per cached position

context = formula(
    "serving.decode.context",
    (l_attn - l_win) * s_ctx + l_win * sp.Min(s_ctx, W),
    "1",
    "cached positions one sequence's decoding step reads over its attention layers: s_ctx in each of the l_attn − l_win "
    "full layers, min(s_ctx, W) in each windowed one (recurrent layers and layers without a mixer cache no position)",
    sources=[CACHE, arch.MISTRAL],
    conditions=[WINDOWED],
    symbol_latex=r"N_{KV}",
)

steps = s_out - 1  # decoding steps after the prefill's first token
below = formula(
    "serving.decode.steps_in_window",
    sp.Min(sp.Max(W - s_in, 0), steps),
    "1",
    "the decoding steps whose context is still within a window of W: W − s_in of them, none if the prompt fills it, at "
    "most s_out − 1",
    sources=[arch.MISTRAL],
    related=["serving.decode.context.sum"],
    symbol_latex=r"u",
).part
context_sum = formula(
    "serving.decode.context.sum",
    (l_attn - l_win) * (steps * s_in + steps * s_out / 2)
    + l_win * (below * s_in + below * (below + 1) / 2 + (steps - below) * W),
    "1",
    "N_KV summed over a request's s_out − 1 decoding steps at contexts s_in + 1, …, s_in + s_out − 1: "
    "(s_out − 1)·s_in + s_out(s_out − 1)/2 per full layer; per windowed layer the u = min(max(W − s_in, 0), s_out − 1) "
    "steps below the window, then W each",
    sources=[CACHE, ORCA],
    conditions=[WINDOWED],
    related=["serving.decode.context", "serving.time.e2e"],
    symbol_latex=r"\sum N_{KV}",
)
kv_read = formula(
    "serving.decode.kv_read",
    b * context.part * kv_position.part + STATES,
    "byte",
    "cache bytes one decoding step reads: N_KV positions of each of b sequences, K and V of g heads each "
    "(MLA: the latent r_KV and the shared rope key), and the whole fixed state of every recurrent layer",
    sources=[CACHE, arch.DEEPSEEK_V2, recurrent.CACHE],
    conditions=[WINDOWED],
    related=["serving.decode.context", "memory.kv_cache.decoder"],
    notes="What an attention kernel that reads the cache in place reads. transformers' DynamicCache also copies the "
    "s_ctx − 1 older positions into a new tensor every step (torch.cat): a kernel-per-op implementation moves that "
    "much again.",
    symbol_latex=r"R_{KV}",
)
kv_read_expanded = formula(
    "serving.decode.kv_read.mla_expanded",
    b * context.part * a * (arch.d_qk + d_v) * q_kv,
    "byte",
    "the same for an MLA model whose engine caches the up-projected per-head keys a·(d_nope + d_rope) and values a·d_v",
    sources=[arch.DEEPSEEK_V2],
    related=["serving.decode.kv_read", "memory.kv_cache.decoder.mla_expanded"],
    symbol_latex=r"R_{KV}^{exp}",
)
kv_written = formula(
    "serving.decode.kv_written",
    b * l_attn * kv_position.part + STATES,
    "byte",
    "cache bytes one decoding step writes: the new token's K and V (or latent) in every attention layer of b sequences, "
    "and every recurrent layer's state rewritten whole",
    sources=[CACHE, recurrent.CACHE],
    related=["serving.decode.kv_read"],
    symbol_latex=r"W_{KV}",
)


def _at(formula_id: str, **values: object) -> sp.Expr:
    """A catalogue entry at given symbol values (one new token: s = 1), as a named part."""
    from llm_formulas.formulas.vocabulary.catalogue import get

    return get(formula_id).at(**values)


UPDATED = 2  # outputs of causal_conv1d_update: the k_conv cached inputs and the new one, convolved without padding
STEP_SOURCES = [FLOP_COUNTER, recurrent.TRANSFORMERS, recurrent.CACHE]
mamba_step = formula(
    "serving.decode.flops.mamba",
    (2 * b * (2 * h * d_ssm + d_ssm * (r_dt + 2 * N_ssm) + r_dt * d_ssm + d_ssm * h)
     + 2 * b * d_ssm * UPDATED * k_conv + 2 * b * d_ssm * N_ssm) * u_flop,
    "FLOP",
    "one Mamba (S6) layer's update of b new tokens: in_proj, x_proj, dt_proj and out_proj; the convolution over 2 "
    "outputs of causal_conv1d_update; the state readout [d_ssm, N]×[N, 1]",
    sources=STEP_SOURCES,
    related=["flops.recurrent.mamba"],
    symbol_latex=r"F_{dec}^{S6}",
)
mamba2_step = formula(
    "serving.decode.flops.mamba2",
    (2 * b * h * (2 * d_ssm + 2 * n_grp * N_ssm + n_ssmh) + 2 * b * d_ssm * h
     + 2 * b * recurrent.xbc * UPDATED * k_conv + 2 * b * d_ssm * N_ssm) * u_flop,
    "FLOP",
    "one Mamba-2 (SSD) layer's update of b new tokens: in_proj and out_proj, the convolution over 2 outputs, the "
    "readout bmm [d_ssm/n, N]×[N, 1] per head",
    sources=STEP_SOURCES,
    related=["flops.recurrent.mamba2"],
    symbol_latex=r"F_{dec}^{SSD}",
)
rglru_step = formula(
    "serving.decode.flops.rglru",
    (2 * b * (2 * h * d_lru + d_lru * h) + 2 * 2 * b * d_lru * w_lru) * u_flop,
    "FLOP",
    "one Griffin recurrent block's update of b new tokens: its two input projections and output projection, the "
    "RG-LRU's two block-diagonal gates (the convolution is a multiply-and-sum, no matmul)",
    sources=STEP_SOURCES,
    related=["flops.recurrent.rglru"],
    symbol_latex=r"F_{dec}^{LRU}",
)
gdn_step = formula(
    "serving.decode.flops.gdn",
    (2 * b * h * (2 * n_kh * d_kh + 2 * n_vh * d_vh + 2 * n_vh) + 2 * b * n_vh * d_vh * h
     + 2 * b * recurrent.qkv_lin * UPDATED * k_conv) * u_flop,
    "FLOP",
    "one gated delta-net layer's update of b new tokens: its projections and the convolution over 2 outputs (the "
    "delta rule's state update and readout are elementwise)",
    sources=STEP_SOURCES,
    related=["flops.recurrent.gdn"],
    symbol_latex=r"F_{dec}^{GDN}",
)
mixers_step = formula(
    "serving.decode.flops.recurrent",
    l_mamba * mamba_step.part + l_ssd * mamba2_step.part + l_lru * rglru_step.part + l_gdn * gdn_step.part,
    "FLOP",
    "the recurrent mixers' one-token update in a decoding step, as FlopCounterMode counts transformers' step path: "
    "each mixer's projections of the b new tokens; the convolution over its k_conv cached inputs and the new one "
    "(causal_conv1d_update: 2 outputs of k_conv taps; RecurrentGemma's multiply-and-sum: no matmul); Mamba's and "
    "Mamba-2's state readout [d_ssm, N]×[N, 1]; the RG-LRU's two block-diagonal gates; the gated delta rule's state "
    "update and readout are elementwise (not counted)",
    sources=STEP_SOURCES,
    conditions=[arch.MIXERS],
    related=["flops.recurrent.mamba", "flops.recurrent.mamba2", "flops.recurrent.rglru", "flops.recurrent.gdn"],
    notes="transformers' step path differs from a forward of one token (flops.recurrent.* at s = 1): that pads the "
    "convolution to k_conv outputs, and Mamba-2's and the gated delta-net's chunked scans pad the lone token to a whole "
    "chunk of Q (Q²-sized products); the step updates the state instead. With mamba_ssm or causal_conv1d installed "
    "the fused kernels count nothing for the convolution and the scan.",
    symbol_latex=r"F_{dec}^{rec}",
)
decode_linear = formula(
    "serving.decode.flops.linear",
    l_attn * _at("flops.decoder.attention.projections", s=1) + arch.l_mlp * _at("flops.decoder.mlp", s=1)
    + l_moe * (_at("flops.decoder.experts", s=1) + _at("flops.decoder.shared_experts", s=1) + _at("flops.decoder.router", s=1)
               + _at("flops.decoder.moe_latent", s=1))
    + mixers_step.part + _at("flops.decoder.embedding_projections", s=1) + _at("flops.decoder.logits", s=1),
    "FLOP",
    "a decoding step's GEMMs without its attention over the cache: every attention layer's projections, the recurrent "
    "mixers' one-token updates, dense MLPs, routed (k per token) and shared experts, routers and latent projections, and the logits, for b "
    "new tokens",
    sources=[FLOP_COUNTER],
    conditions=[arch.MOE_LAYERS, arch.MIXERS, arch.CHANNELS],
    related=["flops.decoder.forward", "serving.decode.flops.recurrent"],
    symbol_latex=r"F_{dec}^{lin}",
)
decode_flops = formula(
    "serving.decode.flops",
    decode_linear.part + b * context.part * ATTENTION_PER_POSITION * u_flop
    + mla * b * (context.part - l_attn) * 2 * r_kv * a * (d_nope + d_v) * u_flop,
    "FLOP",
    "one decoding step at context s_ctx as transformers runs it with a DynamicCache (eager attention): the GEMMs, "
    "QKᵀ and scores·V over N_KV cached positions per sequence, and for MLA the up-projection of the cached latents "
    "through W_UK, W_UV again (the new token's is among the projections)",
    sources=[FLOP_COUNTER, CACHE, arch.DEEPSEEK_V2],
    conditions=[arch.MOE_LAYERS, WINDOWED],
    related=["serving.decode.flops.linear", "flops.decoder.mla.decode.naive"],
    notes="With nothing cached (s_ctx = 1) this is flops.decoder.forward at s = 1 in a model without recurrent mixers; "
    "a recurrent mixer's step is serving.decode.flops.recurrent, not its one-token forward.",
    symbol_latex=r"F_{dec}",
)
ENGINE_PER_POSITION = (1 - mla) * 2 * a * 2 * d_head + mla * 2 * a * (2 * r_kv + d_rope)  # absorbed MLA: scores and sums on the latent
attention_engine = formula(
    "serving.decode.attention.flops",
    b * N_kv * ENGINE_PER_POSITION * u_flop,
    "FLOP",
    "attention FLOPs of a decoding step as a serving engine runs it: QKᵀ and scores·V over N_KV positions per sequence, "
    "4a·d_head each; MLA with W_UK and W_UV absorbed, 2a(r_KV + d_rope) + 2a·r_KV on the latent itself",
    sources=[arch.DEEPSEEK_V2],
    related=["flops.decoder.mla.decode.absorbed", "serving.decode.flops"],
    symbol_latex=r"F_{dec}^{attn}",
)

experts_touched = formula(
    "serving.decode.experts_touched",
    E * (1 - (1 - k / E) ** b),
    "1",
    "expected distinct routed experts the b tokens of a decoding step reach in one MoE layer: each expert is missed by "
    "a token with probability 1 − k/E, by all b with (1 − k/E)^b",
    sources=[FEDUS],
    conditions=[UNIFORM, arch.TOP_K, FLOAT64],
    related=["serving.decode.params_read"],
    symbol_latex=r"E_{hit}",
)
TABLES_READ = (V + b) * d_emb * u_param  # the head's whole matrix (its own or the tied one) and the b embedding rows
HIT_LAYER = E_hit * arch.expert.part + arch.router.part + arch.shared_experts.part + arch.moe_latent.part  # E_hit of E experts
MIXERS_HELD = (l_mamba * recurrent.mamba.part + l_ssd * recurrent.mamba2.part + l_lru * recurrent.rglru.part
               + l_gdn * recurrent.gdn.part)  # the recurrent mixers, each read whole
REST_READ = ((proj_emb * 2 * d_emb * h + pos_table * b * h + arch.head_bias * V) * u_param + arch.emb_norm * arch.norm * u_param
             + l_attn * arch.attention.part + l * (arch.cross_attention.part + arch.norms.part) + MIXERS_HELD
             + arch.l_mlp * arch.mlp.part + l_moe * HIT_LAYER + arch.final_norm.part)
params_read = formula(
    "serving.decode.params_read",
    TABLES_READ + REST_READ,
    "parameter",
    "parameters one decoding step reads: all of them once (attention or a recurrent mixer, an MLP or experts, as each "
    "layer has them), but the embedding table only at the b rows looked up (the head reads the whole V×d_emb matrix, its "
    "own or the tied one) and of each MoE layer's E experts the E_hit routed to",
    sources=[arch.TRANSFORMERS, FEDUS, ROOFLINE, arch.HYBRID],
    conditions=[arch.MOE_LAYERS, arch.MIXERS, arch.CHANNELS, at_most(E_hit, E)],
    related=["params.decoder.total", "serving.decode.experts_touched"],
    symbol_latex=r"\Psi_{read}",
    composed=arch.total.part - (V - b) * d_emb * u_param + tied * V * d_emb * u_param
    - pos_table * (arch.n_pos + arch.o_pos - b) * h * u_param - l_moe * (E - E_hit) * arch.expert.part,
)
weights_read = formula(
    "serving.decode.weights_read",
    q_w * REST_READ + q_bf16 * TABLES_READ,
    "byte",
    "weight bytes one decoding step reads: the matrices at q_Ψ bytes per parameter, the head and the embedding rows "
    "in 16 bits (quantizers leave them so)",
    sources=[ROOFLINE, GPTQ],
    conditions=[arch.MOE_LAYERS, at_most(E_hit, E)],
    related=["serving.decode.params_read"],
    symbol_latex=r"R_{w}",
    composed=q_w * (params_read.part - TABLES_READ) + q_bf16 * TABLES_READ,
)
int4_bytes = formula(
    "serving.weights.int4",
    q_int4 + q_s / (B_q * u_param),
    "byte/parameter",
    "bytes per 4-bit weight with a scale and zero point of q_s bytes per group of B_q weights (GPTQ, AWQ: 128; "
    "gpt-fast: 32 with bf16 scale and zero)",
    sources=[GPTQ, Source("gpt-fast", "quantize.py, WeightOnlyInt4QuantHandler: groupsize, scales_and_zeros")],
    related=["memory.qlora.bytes_per_weight.single"],
    symbol_latex=r"q_{int4}^{G}",
)

# --- the prefill ------------------------------------------------------------------------------

window_span = sp.Min(s_in, W)  # keys the last query of a windowed layer sees
pairs_full = s_in * (s_in + 1) / 2  # query-key pairs the causal mask keeps
pairs_window = s_in * window_span - window_span * (window_span - 1) / 2  # each query the min(i, W) latest keys
prefill_flops = formula(
    "serving.prefill.flops",
    _at("flops.decoder.layers.forward", s=s_in) + _at("flops.decoder.embedding_projections", s=s_in)
    + _at("flops.decoder.logits", s=1),
    "FLOP",
    "a prefill of b prompts of s_in tokens as eager attention computes it: every GEMM at s = s_in, the full s_in² "
    "attention square in every attention layer, the recurrent mixers' forward over the prompt, the logits of the last "
    "token only (logits_to_keep = 1)",
    sources=[FLOP_COUNTER, ORCA, arch.HYBRID],
    conditions=[arch.MOE_LAYERS, arch.MIXERS, arch.CHANNELS],
    related=["flops.decoder.forward", "serving.prefill.flops.causal"],
    symbol_latex=r"F_{pf}",
)
PREFILL_GEMMS = prefill_flops.part - l_attn * _at("flops.decoder.attention.scores", s=s_in)  # all but attention
prefill_causal = formula(
    "serving.prefill.flops.causal",
    PREFILL_GEMMS + _at("flops.decoder.attention.scores", s=1) * ((l_attn - l_win) * pairs_full + l_win * pairs_window),
    "FLOP",
    "the same prefill as a causal kernel computes it: s_in(s_in + 1)/2 query-key pairs in a full attention layer, "
    "s_in·m − m(m − 1)/2 with m = min(s_in, W) in a windowed one",
    sources=[FLOP_COUNTER, arch.MISTRAL, Source("dao2023", "causal masking skips the masked blocks")],
    conditions=[arch.MOE_LAYERS, WINDOWED],
    related=["serving.prefill.flops", "flops.decoder.attention.scores.causal", "flops.decoder.attention.scores.windowed"],
    symbol_latex=r"F_{pf}^{causal}",
)
prefill_masked = formula(
    "serving.prefill.flops.masked",
    2 * b * a * arch.score_width * (l_attn * s_in * (s_in - 1) / 2
                                    + l_win * (s_in - window_span) * (s_in - window_span + 1) / 2) * u_flop,
    "FLOP",
    "what eager attention computes and a causal kernel skips: the s_in(s_in − 1)/2 pairs above the diagonal of every "
    "attention layer, and in a windowed one also the (s_in − m)(s_in − m + 1)/2 below it outside the band, QKᵀ and scores·V each",
    sources=[FLOP_COUNTER, arch.MISTRAL],
    conditions=[WINDOWED],
    related=["serving.prefill.flops", "serving.prefill.flops.causal"],
    symbol_latex=r"F_{pf}^{masked}",
)

# --- memory and the KV wall --------------------------------------------------------------------

TABLES = (2 - tied) * V * d_emb * u_param  # embedding and head matrices, kept 16-bit
weights_memory = formula(
    "serving.memory.weights",
    (q_w * (P - TABLES) + q_bf16 * TABLES) / (t * p),
    "byte",
    "weight bytes one GPU holds: the matrices at q_Ψ and the embedding and head in 16 bits, over the t·p GPUs of a "
    "replica (under expert parallelism a GPU holds whole experts instead of slices: the same bytes)",
    sources=[GPTQ, Source("kwon2023", "§4, the weights beside the KV cache")],
    related=["memory.model_states.inference", "params.per_gpu.ep"],
    symbol_latex=r"M_{w}",
)
kv_memory = formula(
    "serving.memory.kv",
    b * context.part * kv_position.part / (p * t_kv) + STATES / (p * t),
    "byte",
    "cache bytes one GPU holds for b sequences of s_ctx tokens: each stage its layers, each TP rank min(t, g) of the "
    "g KV heads' share (MLA: the whole latent on every rank), and 1/t of each recurrent layer's fixed state",
    sources=[CACHE, PAGED, MEGATRON_TP, STATE_SPLIT],
    conditions=[WINDOWED],
    related=["serving.decode.kv_read", "memory.kv_cache.decoder"],
    symbol_latex=r"M_{KV}",
)
kv_paged = formula(
    "serving.memory.kv.paged",
    b * kv_position.part * n_blk * ((l_attn - l_win) * sp.ceiling(s_ctx / n_blk) + l_win * sp.ceiling(sp.Min(s_ctx, W) / n_blk))
    / (p * t_kv) + STATES / (p * t),
    "byte",
    "the same cache in whole blocks of n_blk tokens per sequence and attention layer (PagedAttention: vLLM's blocks of "
    "16); the recurrent states as they are",
    sources=[PAGED, STATE_SPLIT],
    conditions=[WINDOWED],
    related=["serving.memory.kv", "memory.kv_cache.decoder.paged"],
    symbol_latex=r"M_{KV}^{paged}",
)
workspace = formula(
    "serving.memory.workspace",
    n_chunk * q * (2 * h + ((a + 2 * g) * d_head + (1 + gated) * d_ff) / t),
    "byte",
    "one GPU's workspace for a forward of n_chunk tokens, one layer's transients at a time: the residual and its norm "
    "(h each), the QKV output and the MLP's up (and gate) output, split over t",
    sources=[VLLM],
    symbol_latex=r"M_{ws}",
)
memory_total = formula(
    "serving.memory.per_gpu",
    M_w + kv_memory.part + M_ws,
    "byte",
    "what one GPU holds while serving: its weights, its share of the cache of b sequences at context s_ctx, the workspace",
    sources=[Source("kwon2023", "§4"), VLLM],
    conditions=[WINDOWED],
    related=["serving.memory.weights", "serving.memory.kv", "serving.memory.workspace"],
    symbol_latex=r"M_{serve}",
)
PER_SEQUENCE = context.part * kv_position.part / (p * t_kv) + states.at(b=1) / (p * t)  # one sequence's cache
max_batch = formula(
    "serving.memory.max_batch",
    (M_gpu - M_w - M_ws) / PER_SEQUENCE * u_seq,
    "sequence",
    "the KV wall: the most sequences of s_ctx tokens whose cache fits beside the weights and the workspace "
    "(round down; none if the weights alone do not fit)",
    sources=[Source("kwon2023", "§2.3, the KV cache limits the batch")],
    conditions=[WINDOWED, Condition("a sequence's cache holds bytes (positions or states)", sp.StrictGreaterThan(PER_SEQUENCE, 0)),
                Condition("M_GPU > M_w + M_ws", sp.StrictGreaterThan(M_gpu, M_w + M_ws))],
    related=["serving.memory.per_gpu"],
    symbol_latex=r"b_{max}",
)
max_context = formula(
    "serving.memory.max_context",
    (((M_gpu - M_w - M_ws) - STATES / (p * t)) * p * t_kv / (b * kv_position.part) - l_win * W) / (l_attn - l_win),
    "1",
    "the longest context b sequences can reach: the full layers' cache grows with s_ctx, the windowed layers' stays at W, "
    "the recurrent states at their fixed size",
    sources=[Source("kwon2023", "§2.3")],
    conditions=[CACHED, Condition("l_win < l_attn (with windows and states only, no context fills the memory)",
                                  sp.StrictLessThan(l_win, l_attn)),
                Condition("the answer is at least W (below it the windowed layers grow too)")],
    related=["serving.memory.per_gpu", "serving.memory.max_batch"],
    symbol_latex=r"s_{max}",
)

# --- time ----------------------------------------------------------------------------------------

allreduce = formula(
    "serving.time.allreduce",
    sp.Min(t - 1, 1) * tau_ar + 2 * (t - 1) / t * x_msg / W_tp,
    "second",
    "an all-reduce of x bytes over t GPUs: one message latency τ (none on one GPU), and 2(t − 1)/t of the buffer at the "
    "link's one-way bandwidth; a decoding step's few kilobytes are latency-bound",
    sources=[THAKUR, Source("nccl-tests", "bus bandwidth of an all-reduce 2(n − 1)/n"), CUSTOM_AR],
    conditions=[Condition("small messages go in one shot (every rank reads its peers' buffers over NVLink at once): the "
                          "latency does not grow with t as a ring's 2(t − 1) steps would")],
    symbol_latex=r"T_{AR}",
)
alltoall = formula(
    "serving.time.alltoall",
    (e - 1) * tau_ar + (e - 1) / e * x_msg / W_tp,
    "second",
    "an all-to-all of x bytes per GPU over e GPUs (expert dispatch or combine): e − 1 messages, (e − 1)/e of the buffer leaves",
    sources=[THAKUR, Source("lepikhin2020", "§3.2, all-to-all dispatch and combine")],
    symbol_latex=r"T_{A2A}",
)


def _layer_comms(tokens: sp.Expr) -> sp.Expr:
    """Per forward pass: two all-reduces of the tokens' hidden states in every layer and p − 1 stage hops (under expert
    parallelism ``serve`` adds each MoE layer's dispatch and combine, 2·l_moe·serving.time.alltoall of k·b·h·q bytes)."""
    hidden = tokens * h * q
    return 2 * l * allreduce.dimensioned.xreplace({x_msg: hidden}) + (p - 1) * (hidden / W_pp + tau_ar)


decode_step = formula(
    "serving.time.decode_step",
    F_fwd / (t * X * eta_dec) + attention_engine.part / (t * X * eta_dec)
    + R_w / (t * W_mem * eta_hbm) + b * N_kv * kv_position.part / (t_kv * W_mem * eta_hbm) + STATES / (t * W_mem * eta_hbm)
    + l * tau_L + _layer_comms(b),
    "second",
    "one decoding step of a replica: the GEMMs' FLOPs F_fwd and the attention's at η_dec of the t GPUs' peak, the weights "
    "R_w, the cache and the recurrent states at η_HBM of their bandwidth, τ_L per layer, TP all-reduces of b·h·q bytes, p − 1 stage hops "
    "(the stages in series)",
    sources=[ROOFLINE, THAKUR, PP_SERIES, ORCA],
    conditions=[ENGINE],
    related=["perf.gemm.time", "serving.time.allreduce", "serving.decode.attention.flops"],
    symbol_latex=r"T_{dec}",
)
prefill_time = formula(
    "serving.time.prefill",
    F_fwd / (t * X * eta_pf) + R_w / (t * W_mem * eta_hbm) + l * tau_L + _layer_comms(b * s_in),
    "second",
    "one prefill of b prompts of s_in tokens: its FLOPs at η_pf of peak, the weights read once, τ_L per layer, "
    "all-reduces of b·s_in·h·q bytes and stage hops: the time to the first token",
    sources=[ROOFLINE, THAKUR, ORCA],
    conditions=[ENGINE],
    related=["serving.time.decode_step", "serving.prefill.flops.causal"],
    symbol_latex=r"T_{pf}",
)
_step0 = decode_step.dimensioned.xreplace({N_kv: 0})  # a step at an empty cache
_slope = sp.diff(decode_step.dimensioned, N_kv)  # what each cached position of every sequence adds
e2e = formula(
    "serving.time.e2e",
    T_pf + steps * _step0 + _slope * context_sum.part,
    "second",
    "a batch's latency to its last token: the prefill, then s_out − 1 decoding steps at contexts s_in + 1, …, "
    "s_in + s_out − 1; the step is affine in N_KV, so the sum is s_out − 1 steps at an empty cache plus the slope "
    "times Σ N_KV",
    sources=[ORCA, ROOFLINE],
    conditions=[ENGINE, WINDOWED, AT_LEAST_TWO],
    related=["serving.time.decode_step", "serving.decode.context.sum"],
    symbol_latex=r"T_{e2e}",
    composed=T_pf + steps * decode_step.at(N_kv=context_sum.part / steps),
)
tpot = formula(
    "serving.time.tpot",
    (T_e2e - T_pf) / steps,
    "second",
    "time per output token (TPOT): the mean decoding step after the first token",
    sources=[ORCA, Source("nim-1.8", "ITL, inter-token latency")],
    conditions=[AT_LEAST_TWO],
    related=["serving.time.e2e"],
    symbol_latex=r"T_{tok}",
)
throughput = formula(
    "serving.throughput.per_gpu",
    b * s_out * c_step / (t * T_e2e),
    "token/second",
    "output tokens per second per GPU of a replica of t·p GPUs keeping p batches of b in flight, one per stage: "
    "p·b·s_out tokens every T_e2e",
    sources=[ORCA, PP_SERIES],
    related=["serving.time.e2e"],
    symbol_latex=r"R_{GPU}",
)
per_user = formula(
    "serving.throughput.per_user",
    c_step / T_tok,
    "token/second",
    "output tokens per second one user sees after the first: one per decoding step",
    sources=[ORCA],
    related=["serving.time.tpot"],
    symbol_latex=r"R_{user}",
)
static_batch = formula(
    "serving.batching.static",
    b * s_out * c_step / (T_pf + (s_long - 1) * T_tok),
    "token/second",
    "output tokens per second of a static batch whose requests want s_out tokens on average: it runs s_long − 1 steps, "
    "until its longest request ends, while the finished ones idle",
    sources=[Source("yu2022", "§2.2: early-finished requests wait for the batch")],
    conditions=[at_most(s_out, s_long)],
    related=["serving.batching.continuous"],
    symbol_latex=r"R_{static}",
)
continuous_step = formula(
    "serving.batching.continuous.step",
    T_tok + b * F_pf / (s_out * t * X * eta_pf),
    "second",
    "a decoding step of continuous batching in steady state: b slots, each freed after s_out tokens, so b/s_out prompts "
    "join per step and their prefill FLOPs ride on the step's weight reads",
    sources=[Source("yu2022", "§3.1, iteration-level scheduling"), SARATHI],
    related=["serving.batching.continuous", "serving.time.decode_step"],
    symbol_latex=r"T_{step}^{cont}",
)
continuous_batch = formula(
    "serving.batching.continuous",
    b * c_step / continuous_step.part,
    "token/second",
    "output tokens per second of continuous batching in steady state: b tokens per step",
    sources=[Source("yu2022", "§3.1")],
    related=["serving.batching.continuous.step", "serving.batching.static"],
    symbol_latex=r"R_{cont}",
)
chunked_ttft = formula(
    "serving.chunked.ttft",
    sp.ceiling(s_in / n_chunk) * (T_tok + n_chunk * F_pf / (s_in * t * X * eta_pf)),
    "second",
    "time to the first token with chunked prefill: ⌈s_in/n_chunk⌉ steps, each a decoding step of the batch carrying "
    "n_chunk of the prompt's tokens (their share of its FLOPs)",
    sources=[SARATHI],
    related=["serving.time.prefill", "serving.batching.continuous.step"],
    symbol_latex=r"T_{TTFT}^{chunk}",
)

# --- speculative decoding, disaggregation, replicas, cost ------------------------------------------

speculative_tokens = formula(
    "serving.speculative.tokens",
    (1 - alpha_acc ** (gamma_spec + 1)) / (1 - alpha_acc) * c_step,
    "token",
    "expected tokens one target step emits with γ drafted tokens each accepted with probability α (the accepted "
    "prefix and one more, sampled from the target)",
    sources=[LEVIATHAN],
    conditions=[Condition("α < 1 (at α = 1 every draft is accepted: γ + 1 tokens)", sp.StrictLessThan(alpha_acc, 1))],
    related=["serving.speculative.speedup"],
    symbol_latex=r"\mathbb{E}[\#\,tokens]",
)
speculative_speedup = formula(
    "serving.speculative.speedup",
    (1 - alpha_acc ** (gamma_spec + 1)) / ((1 - alpha_acc) * (gamma_spec * c_draft + 1)),
    "1",
    "speed-up of speculative decoding over plain decoding: the tokens per target step over the cost of a step, γ draft "
    "steps of c and the target's one; DeepSeek-V3's one MTP module is γ = 1: (1 + α)/(c + 1)",
    sources=[LEVIATHAN, MTP],
    conditions=[Condition("α < 1", sp.StrictLessThan(alpha_acc, 1))],
    related=["serving.speculative.tokens"],
    symbol_latex=r"S_{spec}",
)
disaggregated = formula(
    "serving.disaggregated.ratio",
    T_pf * n_pf * b / (b_pf * steps * T_tok * n_dec),
    "1",
    "prefill GPUs per decoding GPU for a request mix: a request holds a prefill instance's n_pf GPUs for T_pf/b_pf and a "
    "decoding slot of n_dec/b GPUs for its s_out − 1 steps of T_tok (Little's law for each pool)",
    sources=[DISTSERVE, LITTLE],
    conditions=[AT_LEAST_TWO],
    symbol_latex=r"n_{pf}/n_{dec}",
)
replicas = formula(
    "serving.replicas",
    R_req * T_e2e / (p * b * u_seq),
    "1",
    "data-parallel replicas for R requests per second: by Little's law R·T_e2e requests are in flight, a replica holds "
    "p·b of them (round up)",
    sources=[LITTLE],
    related=["serving.time.e2e"],
    symbol_latex=r"d",
)
cost = formula(
    "serving.cost.per_token",
    c_rent * n / (c_hour * R_out),
    "dollar/token",
    "rent per output token: n GPUs at c per GPU-hour over the tokens they emit in an hour",
    sources=[Source("deepseek2024v3", "Table 1, $2 per H800 GPU-hour")],
    related=["cost.training"],
    symbol_latex=r"c_{tok}",
)
energy = formula(
    "serving.energy.per_token",
    W_gpu * n / R_out,
    "joule/token",
    "board energy per output token: n GPUs at their power over the tokens per second they emit",
    sources=[Source("touvron2023b", "Table 2, power consumption (W)")],
    related=["energy.training"],
    symbol_latex=r"E_{tok}",
)


# --- DeepSeek sparse attention: the indexer scores every cached position, the attention reads its top k_top -----------

DSA_ENGINE = Source("transformers", "models/deepseek_v32/modeling_deepseek_v32.py: DeepseekV32Indexer scores every "
                    "cached key and keeps index_topk of them, the attention reads only those")
SPARSE = Condition("σ_DSA = 1 (DeepSeek-V3.2, GLM-5): every attention layer is MLA with an indexer of its own, no window, "
                   "no recurrent layer", sp.Eq(dsa, 1))
TOP_K = {"dsa": 0, "l_win": l_attn, "W": k_top}  # the attention as if every layer kept a window of k_top: min(i, k_top) keys each
INDEXER_PAIR = 2 * n_idx * (d_idx + 1) * u_flop  # its n_idx heads' q·k and the weighted sum over heads, per query-key pair
indexer_time = formula(
    "serving.time.indexer",
    b * l_attn * s_ctx * (INDEXER_PAIR / (t * X * eta_dec) + d_idx * q_kv / (t_kv * W_mem * eta_hbm)),
    "second",
    "what DeepSeek sparse attention's indexer adds to a decoding step at context s_ctx: in every attention layer it reads "
    "each sequence's s_ctx cached indexer keys (d_idx each) and scores them, 2n_idx(d_idx + 1) FLOPs a position",
    sources=[DSA_ENGINE, ROOFLINE],
    conditions=[ENGINE, SPARSE],
    related=["serving.time.decode_step.sparse"],
    symbol_latex=r"T_{idx}",
)
decode_step_sparse = formula(
    "serving.time.decode_step.sparse",
    decode_step.at(dsa=0, N_kv=l_attn * sp.Min(s_ctx, k_top)) + indexer_time.part,
    "second",
    "one decoding step of a sparse-attention model: the engine's step with the attention over the k_top positions the "
    "indexer selects in each layer (their latents only), and the indexer's own reads and scores over all s_ctx",
    sources=[DSA_ENGINE, ROOFLINE],
    conditions=[ENGINE, SPARSE],
    related=["serving.time.decode_step", "serving.time.indexer"],
    symbol_latex=r"T_{dec}^{DSA}",
)
e2e_sparse = formula(
    "serving.time.e2e.sparse",
    e2e.at(**TOP_K) + steps * indexer_time.at(s_ctx=s_in + s_out / 2),
    "second",
    "a sparse-attention batch's latency to its last token: the attention's share summed as windowed layers of k_top "
    "(min(s_ctx, k_top) positions at context s_ctx), and the indexer's, linear in the context, s_out − 1 times its "
    "value at the mean context s_in + s_out/2",
    sources=[DSA_ENGINE, ORCA],
    conditions=[ENGINE, SPARSE, AT_LEAST_TWO],
    related=["serving.time.e2e", "serving.time.decode_step.sparse"],
    symbol_latex=r"T_{e2e}^{DSA}",
)
kv_read_sparse = formula(
    "serving.decode.kv_read.sparse",
    kv_read.at(**TOP_K) + b * l_attn * s_ctx * d_idx * q_kv,
    "byte",
    "cache bytes a sparse-attention decoding step reads: the latents of the min(s_ctx, k_top) selected positions in each "
    "attention layer, and every cached indexer key",
    sources=[DSA_ENGINE, CACHE],
    conditions=[SPARSE],
    related=["serving.decode.kv_read"],
    symbol_latex=r"R_{KV}^{DSA}",
)
attention_sparse = formula(
    "serving.decode.attention.flops.sparse",
    attention_engine.at(N_kv=l_attn * sp.Min(s_ctx, k_top)) + b * l_attn * s_ctx * INDEXER_PAIR,
    "FLOP",
    "a sparse-attention decoding step's attention FLOPs: absorbed MLA over the selected min(s_ctx, k_top) positions, the "
    "indexer's scores over all s_ctx",
    sources=[DSA_ENGINE, arch.DEEPSEEK_V2],
    conditions=[SPARSE],
    related=["serving.decode.attention.flops"],
    symbol_latex=r"F_{dec}^{DSA}",
)
selected_span = sp.Min(s_in, k_top)
prefill_sparse = formula(
    "serving.prefill.flops.sparse",
    prefill_causal.at(l_win=l_attn, W=k_top)
    + b * l_attn * INDEXER_PAIR * (pairs_full - (s_in * selected_span - selected_span * (selected_span - 1) / 2)),
    "FLOP",
    "a sparse-attention prefill: query i attends its min(i, k_top) selected keys (the causal count of a window of "
    "k_top) while the indexer scores all i, so the indexer's pairs beyond the selection are added back",
    sources=[DSA_ENGINE, FLOP_COUNTER],
    conditions=[SPARSE],
    related=["serving.prefill.flops.causal"],
    symbol_latex=r"F_{pf}^{DSA}",
)
