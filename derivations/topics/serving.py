"""Proofs of the serving formulas (formulas/topics/serving.py).

Each count is built from the decoder's own parts (``flops.decoder.*``, ``params.decoder.*``) at the shapes a phase
runs them: s = s_in for a prefill, one new token per sequence for a decoding step, whose attention reads N_KV cached
positions in each of the l_attn attention layers; a recurrent layer's fixed state is read and rewritten whole, and its
mixer's step is its one-token forward with transformers' step path in place of the padded convolution and the chunked
scan. The exact difference between the eager and the causal prefill is proved as such. The sum over a request's
growing context is evaluated by SymPy (``Sum(...).doit()``), below and beyond a window, and the e2e latency is proved
equal to the step-by-step sum where SymPy can sum it whole (no windowed layers). The expected number of experts b
tokens touch is built from the probability that one expert is missed, C(E − 1, k)/C(E, k) = 1 − k/E. The
speculative-decoding closed form is proved by its telescoping difference (a geometric series), and the DeepSeek-V3
MTP case is γ = 1. The time formulas reduce to the inference topic's memory-bound and compute-bound latencies where
their assumptions coincide, and an all-reduce moves the comms topic's 2(t − 1)/t of its buffer.
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.derivations.topics.architecture import NO_HYBRID
from llm_formulas.derivations.topics.cluster import solved_for
from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.formulas.topics import architecture as arch
from llm_formulas.formulas.topics import serving as S
from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.vocabulary.expressions import as_sympy
from llm_formulas.formulas.vocabulary.symbols import (
    B_q, E, E_hit, F_fwd, F_pf, M_gpu, M_w, M_ws, N_kv, P, R_out, R_req, R_w, T_e2e, T_pf, T_tok, V, W, W_gpu, W_mem,
    W_pp, W_tp, X, a, alpha_acc, b, b_pf, c_draft, c_hour, c_rent, c_step, d_emb, d_ff, d_head, d_nope, d_rope, d_v, e,
    eta_dec, eta_hbm, eta_pf, g, gamma_spec, gated, h, j_step, k, k_conv, l, l_gdn, l_lru, l_mamba, l_moe, l_ssd, l_win,
    mla, n, n_blk, n_chunk, n_dec, n_pf, n_pos, o_pos, p, pos_table, q, q_bf16, q_fp32, q_int4, q_kv, q_s, q_w, r_kv, s,
    s_ctx, s_in, s_long, s_out, t, tau_L, tau_ar, tied, u_below, u_flop, u_param, u_seq, x_msg,
)
from llm_formulas.formulas.topics import recurrent as R

steps = s_out - 1  # decoding steps after the prefill's first token


def _at(formula_id: str, **values: object) -> sp.Expr:
    """A catalogue entry at given symbol values (read through ``get``, so the engine traces it)."""
    from llm_formulas.formulas.vocabulary.symbols import resolve

    return get(formula_id).dimensioned.xreplace({resolve(name): as_sympy(v) for name, v in values.items()})


# --- what a decoding step reads ---------------------------------------------------------------

def context() -> Derivation:
    d = Derivation("serving.decode.context", "Cached positions a decoding step reads", (S.CACHE, arch.MISTRAL))
    d.defines("l_attn", S.l_attn, "the layers with attention: l less the recurrent mixers' and the mixer-less layers")
    d.defines("N_full", (S.l_attn - l_win) * s_ctx, "a full layer's new query attends to all s_ctx positions, itself included")
    d.defines("N_win", l_win * sp.Min(s_ctx, W), "a windowed layer's to the latest W of them at most")
    total = d.defines("N_KV", (S.l_attn - l_win) * s_ctx + l_win * sp.Min(s_ctx, W), "over the l_attn attention layers",
                      parts=("N_full", "N_win"))
    d.concludes("serving.decode.context")
    d.defines("N_KV, window longer than the context", total.xreplace({W: s_ctx + W, **NO_HYBRID}), "W > s_ctx, every layer attention")
    d.equals("l·s_ctx", l * s_ctx, aside=True, why="a window longer than the context hides nothing: every layer reads s_ctx positions")
    return d


def context_sum() -> Derivation:
    d = Derivation("serving.decode.context.sum", "Σ N_KV over a request's decoding steps, in closed form", (S.CACHE, S.ORCA))
    j, u = j_step, u_below
    d.defines("Σ_full", sp.Sum(s_in + j, (j, 1, steps)), "a full layer: step j (1 … s_out − 1) attends to s_in + j positions")
    full = d.equals("Σ_full closed", steps * s_in + steps * s_out / 2,
                    "SymPy evaluates the arithmetic series: (s_out − 1)·s_in + s_out(s_out − 1)/2")
    d.defines("Σ_win", sp.Sum(s_in + j, (j, 1, u)) + sp.Sum(W, (j, u + 1, steps)),
              "a windowed layer: min(s_in + j, W) is s_in + j for the u steps with j ≤ W − s_in, then W")
    window = d.equals("Σ_win closed", u * s_in + u * (u + 1) / 2 + (steps - u) * W, aside=True,
                      why="SymPy evaluates both sums, for any u (used below at the u the window gives)")
    below = d.defines("u", sp.Min(sp.Max(W - s_in, 0), steps),
                      "the steps below the window: W − s_in of them, none if the prompt fills it, at most s_out − 1")
    d.concludes("serving.decode.steps_in_window")
    d.defines("Σ N_KV", (S.l_attn - l_win) * full + l_win * window.xreplace({u: below}),
              "l_attn − l_win full attention layers and l_win windowed ones")
    d.concludes("serving.decode.context.sum")
    return d


def kv_read() -> Derivation:
    d = Derivation("serving.decode.kv_read", "Cache bytes a decoding step reads", (S.CACHE, arch.DEEPSEEK_V2))
    per_position = d.defines("K,V per position", arch.kv_width * q_kv,
                             "a key and a value of g heads (MLA: the latent r_KV and the shared rope key) at q_KV bytes each")
    d.concludes("serving.memory.kv.position")
    positions = d.defines("positions", b * get("serving.decode.context").part, "N_KV cached positions of each of b sequences")
    states = d.defines("states", l_mamba * _at("memory.state.mamba", q=q_kv) + l_ssd * _at("memory.state.mamba2", q=q_kv)
                       + l_lru * _at("memory.state.rglru", q=q_kv) + l_gdn * _at("memory.state.gdn", q=q_kv),
                       "each recurrent layer's convolution state (q_KV bytes) and recurrent state (fp32), read whole to "
                       "update them")
    d.concludes("serving.memory.states")
    total = d.defines("R_KV", positions * per_position + states, "each read once by the attention or the mixer")
    d.concludes("serving.decode.kv_read")
    d.defines("R_KV, no window", total.xreplace({l_win: 0}), "without windowed layers")
    d.equals("the cache after the step", _at("memory.kv_cache.decoder", s=s_ctx, q=q_kv, l_win=0),
             "is what memory.kv_cache.decoder holds at s = s_ctx: the step reads the whole cache, its own token included, "
             "and every recurrent state")
    return d


def kv_read_expanded() -> Derivation:
    d = Derivation("serving.decode.kv_read.mla_expanded", "An MLA cache stored up-projected", (arch.DEEPSEEK_V2,))
    d.defines("per position", a * (arch.d_qk + d_v) * q_kv, "a heads of keys d_nope + d_rope and values d_v")
    total = d.defines("R_KV^exp", b * get("serving.decode.context").part * a * (arch.d_qk + d_v) * q_kv,
                      "over N_KV positions of b sequences")
    d.concludes("serving.decode.kv_read.mla_expanded")
    d.defines("R_KV^exp, no window", total.xreplace({l_win: 0, **NO_HYBRID}),
              "without windowed or recurrent layers (DeepSeek-V2/V3 have none)")
    d.equals("as memory.kv_cache", _at("memory.kv_cache.decoder.mla_expanded", s=s_ctx, q=q_kv),
             "memory.kv_cache.decoder.mla_expanded at s = s_ctx")
    return d


def kv_written() -> Derivation:
    d = Derivation("serving.decode.kv_written", "Cache bytes a decoding step writes", (S.CACHE,))
    d.defines("positions", b * S.l_attn * S.kv_width * q_kv, "one new position per attention layer and sequence")
    d.defines("states", S.STATES, "every recurrent layer's state, rewritten whole (conv_state.copy_, state.copy_)")
    written = d.defines("W_KV", b * S.l_attn * S.kv_width * q_kv + S.STATES, "together", parts=("positions", "states"))
    d.concludes("serving.decode.kv_written")
    d.defines("W_KV, as a cache", written, "the same bytes")
    d.equals("a cache of one token", _at("memory.kv_cache.decoder", s=1, q=q_kv, l_win=0),
             "what memory.kv_cache.decoder holds for one token (no window): a position per attention layer, every state")
    return d


# --- what a decoding step computes ----------------------------------------------------------------

MIXER_FORWARDS = ((l_mamba, "flops.recurrent.mamba"), (l_ssd, "flops.recurrent.mamba2"), (l_lru, "flops.recurrent.rglru"),
                  (l_gdn, "flops.recurrent.gdn"))


def _forwards_at_one() -> sp.Expr:
    """The recurrent mixers' forward of one token each (flops.recurrent.* at s = 1)."""
    return sum((count * _at(fid, s=1) for count, fid in MIXER_FORWARDS), sp.Integer(0))


def _scan_at_one(formula_id: str, chunk: sp.Symbol) -> sp.Expr:
    """The terms of a mixer's expanded forward that involve its chunk length (its chunked scan's), at s = 1. Found at
    any s, then put at 1: there ⌈1/Q⌉ = 1 for every chunk length Q ≥ 1, and SymPy writes them without Q."""
    expr = get(formula_id).dimensioned
    return sp.Add(*[term for term in sp.Add.make_args(sp.expand(expr)) if term.has(chunk)]).xreplace({s: 1})


def mixers_step() -> Derivation:
    d = Derivation("serving.decode.flops.recurrent", "The recurrent mixers' one-token update", (S.FLOP_COUNTER, R.TRANSFORMERS))
    conv = 2 * b * k_conv * u_flop  # a depthwise convolution's 2·k_conv FLOPs per output and channel, over b sequences
    one = sp.Integer(1) + k_conv - 1  # the outputs a forward of one token convolves: s + k_conv − 1 at s = 1
    mamba = d.defines("S6 step", _at("flops.recurrent.mamba", s=1) - R.d_ssm * conv * (one - S.UPDATED),
                      "Mamba's forward of one token, the convolution over the 2 outputs of causal_conv1d_update (its k_conv "
                      "cached inputs and the new one, unpadded) instead of k_conv; the readout matmul [d_ssm, N]×[N, 1] stays")
    d.concludes("serving.decode.flops.mamba")
    ssd = d.defines("SSD step", _at("flops.recurrent.mamba2", s=1) - _scan_at_one("flops.recurrent.mamba2", R.Q_ssd)
                    - R.xbc * conv * (one - S.UPDATED),
                    "Mamba-2's forward of one token less the terms of its chunked scan in Q (a lone token padded to a "
                    "chunk), the convolution over 2 outputs; what is left of the scan, 2b·d_ssm·N, is the step's readout "
                    "bmm [d_ssm/n, N]×[N, 1] per head")
    d.concludes("serving.decode.flops.mamba2")
    lru = d.defines("LRU step", _at("flops.recurrent.rglru", s=1) - R.d_lru * conv * one,
                    "the recurrent block's forward of one token less its convolution: RecurrentGemma's step multiplies the "
                    "cached inputs by the taps and sums (no matmul)")
    d.concludes("serving.decode.flops.rglru")
    gdn = d.defines("GDN step", _at("flops.recurrent.gdn", s=1) - _scan_at_one("flops.recurrent.gdn", R.Q_gdn)
                    - R.qkv_lin * conv * (one - S.UPDATED),
                    "the gated delta-net's forward of one token less its chunked products (the recurrent rule's decay, "
                    "update and readout are elementwise), the convolution over 2 outputs")
    d.concludes("serving.decode.flops.gdn")
    d.defines("F_rec", l_mamba * mamba + l_ssd * ssd + l_lru * lru + l_gdn * gdn, "over the recurrent layers")
    d.concludes("serving.decode.flops.recurrent")
    return d


def decode_linear() -> Derivation:
    d = Derivation("serving.decode.flops.linear", "A decoding step's GEMMs", (S.FLOP_COUNTER,))
    proj = d.defines("projections", S.l_attn * _at("flops.decoder.attention.projections", s=1),
                     "Q, K, V, O (or MLA's) of b tokens in the l_attn attention layers")
    rec = d.defines("mixers", get("serving.decode.flops.recurrent").part, "the recurrent mixers' one-token updates")
    mlp = d.defines("MLPs", arch.l_mlp * _at("flops.decoder.mlp", s=1), "the dense MLPs (l − l_moe − l_nomlp layers)")
    moe = d.defines("MoE", l_moe * (_at("flops.decoder.experts", s=1) + _at("flops.decoder.shared_experts", s=1)
                                    + _at("flops.decoder.router", s=1) + _at("flops.decoder.moe_latent", s=1)),
                    "k routed experts per token, shared experts, router, any latent projections")
    tail = d.defines("ends", _at("flops.decoder.embedding_projections", s=1) + _at("flops.decoder.logits", s=1),
                     "OPT's embedding projections and the logits of the b new tokens")
    d.defines("F_lin", proj + rec + mlp + moe + tail, "every GEMM of the step but the attention over the cache",
              parts=("projections", "mixers", "MLPs", "MoE", "ends"))
    d.concludes("serving.decode.flops.linear")
    d.equals("a forward of one token, less its attention, the mixers stepping", _at("flops.decoder.forward", s=1)
             - S.l_attn * _at("flops.decoder.attention.scores", s=1) - _forwards_at_one()
             + get("serving.decode.flops.recurrent").part,
             "flops.decoder.forward at s = 1 without the attention scores of the lone token, each recurrent mixer's "
             "forward of one token replaced by its step", of="F_lin")
    return d


def decode_flops() -> Derivation:
    d = Derivation("serving.decode.flops", "One decoding step as transformers runs it", (S.FLOP_COUNTER, S.CACHE))
    positions = get("serving.decode.context").part
    d.defines("F_lin", get("serving.decode.flops.linear").part, "the GEMMs of the b new tokens")
    d.defines("F_attn", b * positions * 2 * a * arch.score_width * u_flop,
              "QKᵀ and scores·V: 2·score_width FLOPs per head and cached position")
    d.defines("F_up", mla * b * (positions - S.l_attn) * 2 * r_kv * a * (d_nope + d_v) * u_flop,
              "MLA: every cached latent but the new one up-projected through W_UK and W_UV again (the new one's is "
              "among the projections)")
    total = d.defines("F_dec", get("serving.decode.flops.linear").part + b * positions * 2 * a * arch.score_width * u_flop
                      + mla * b * (positions - S.l_attn) * 2 * r_kv * a * (d_nope + d_v) * u_flop, "the step",
                      parts=("F_lin", "F_attn", "F_up"))
    d.concludes("serving.decode.flops")
    empty = d.defines("F_dec, nothing cached", total.xreplace({s_ctx: 1, l_win: 0}), "the first step with an empty cache")
    d.equals("a forward of one token, the mixers stepping", _at("flops.decoder.forward", s=1) - _forwards_at_one()
             + get("serving.decode.flops.recurrent").part,
             "flops.decoder.forward at s = 1, each recurrent mixer's one-token forward replaced by its step")
    d.defines("F_dec, nothing cached, attention only", empty.xreplace({l_mamba: 0, l_ssd: 0, l_lru: 0, l_gdn: 0}),
              "no recurrent mixer (layers without a mixer or an MLP may remain)")
    d.equals("a forward of one token", _at("flops.decoder.forward", s=1, l_mamba=0, l_ssd=0, l_lru=0, l_gdn=0),
             "with nothing cached a decoding step is flops.decoder.forward at s = 1")
    return d


def attention_engine() -> Derivation:
    d = Derivation("serving.decode.attention.flops", "A serving engine's attention over the cache", (arch.DEEPSEEK_V2,))
    mha = d.defines("per position, per head", 2 * d_head + 2 * d_head, "qᵀk and the weighted value: d_head multiply-adds each")
    absorbed = d.defines("per position, absorbed MLA", 2 * (r_kv + d_rope) + 2 * r_kv,
                         "the absorbed query against the latent and rope key, the weighted sum of latents")
    total = d.defines("F_attn", b * N_kv * a * ((1 - mla) * mha + mla * absorbed) * u_flop, "a heads, N_KV positions, b sequences")
    d.concludes("serving.decode.attention.flops")
    d.defines("F_attn, MLA, one sequence", total.xreplace({mla: 1, b: 1}), "one MLA sequence")
    d.equals("as flops.decoder.mla.decode.absorbed", _at("flops.decoder.mla.decode.absorbed", s=N_kv)
             - 2 * a * r_kv * (d_nope + d_v) * u_flop,
             "flops.decoder.mla.decode.absorbed at s = N_KV less its two per-token terms (the absorbed query and output, "
             "which take the place of the new latent's up-projection among the projections)")
    return d


# --- experts, parameters and bytes read ---------------------------------------------------------------

def experts_touched() -> Derivation:
    d = Derivation("serving.decode.experts_touched", "Distinct experts b tokens reach", (S.FEDUS,))
    d.defines("P(miss | 1 token)", sp.binomial(E - 1, k) / sp.binomial(E, k),
              "a token picks k distinct experts of E, each set equally likely: those without expert i are C(E − 1, k)")
    miss = d.equals("1 − k/E", 1 - k / E, "C(E − 1, k)/C(E, k) = (E − k)/E")
    missed = d.defines("P(miss | b tokens)", miss**b, "tokens route independently")
    hit = d.defines("E_hit", E * (1 - missed), "linearity of expectation over the E experts' indicators")
    d.concludes("serving.decode.experts_touched")
    d.defines("E_hit, one token", hit.xreplace({b: 1}), "b = 1")
    d.equals("k", k, aside=True, why="one token reaches exactly its k experts")
    return d


def params_read() -> Derivation:
    d = Derivation("serving.decode.params_read", "Parameters a decoding step reads", (arch.TRANSFORMERS, S.FEDUS))
    total = d.defines("Ψ", get("params.decoder.total").part, "every parameter the model holds")
    rows = d.defines("unread rows", (V - b) * d_emb * u_param, "the embedding lookup reads the b rows of the new tokens")
    head = d.defines("tied head", tied * V * d_emb * u_param, "a tied head reads the embedding's whole matrix again")
    positions = d.defines("unread positions", pos_table * (n_pos + o_pos - b) * h * u_param, "a position table: b rows too")
    experts = d.defines("unread experts", l_moe * (E - E_hit) * get("params.decoder.expert").part,
                        "of each MoE layer's E experts only the E_hit routed to")
    read = d.defines("Ψ_read", total - rows + head - positions - experts, "the rest is read once")
    d.concludes("serving.decode.params_read")
    d.defines("Ψ_read, batch 1", read.xreplace({b: 1, E_hit: k}), "one sequence, its k experts")
    d.equals("the active parameters", _at("params.decoder.active") - (V - 1) * d_emb * u_param + tied * V * d_emb * u_param
             - pos_table * (n_pos + o_pos - 1) * h * u_param,
             "params.decoder.active less the embedding rows not looked up (and with a tied head its matrix again)")
    return d


def weights_read() -> Derivation:
    d = Derivation("serving.decode.weights_read", "Weight bytes a decoding step reads", (S.ROOFLINE, S.GPTQ))
    tables = d.defines("Ψ_tables", (V + b) * d_emb * u_param, "the head's matrix and the b embedding rows")
    rest = d.defines("Ψ_rest", get("serving.decode.params_read").part - tables, "everything else read")
    total = d.defines("R_w", q_w * rest + q_bf16 * tables, "the rest at q_Ψ, the tables in 16 bits")
    d.concludes("serving.decode.weights_read")
    d.defines("R_w, unquantized", total.xreplace({q_w: q_bf16}), "q_Ψ = 2")
    d.equals("2 bytes a parameter", q_bf16 * get("serving.decode.params_read").part, "every parameter read is 2 bytes")
    return d


def int4_bytes() -> Derivation:
    d = Derivation("serving.weights.int4", "Bytes per grouped 4-bit weight", (S.GPTQ,))
    total = d.defines("q", q_int4 + q_s / (B_q * u_param), "half a byte per weight, q_s bytes of scale and zero point per B_q weights")
    d.concludes("serving.weights.int4")
    d.defines("q, an fp32 constant per group", total.xreplace({q_s: q_fp32 * u_param}), "q_s = 4 bytes")
    d.equals("NF4 without double quantization", _at("memory.qlora.bytes_per_weight.single"),
             "QLoRA's memory.qlora.bytes_per_weight.single: the same layout")
    return d


# --- the prefill ------------------------------------------------------------------------------------

def prefill_flops() -> Derivation:
    d = Derivation("serving.prefill.flops", "A prefill as eager attention computes it", (S.FLOP_COUNTER, S.ORCA))
    layers = d.defines("F_layers", _at("flops.decoder.layers.forward", s=s_in), "every layer over s_in tokens, full s_in² squares")
    ends = d.defines("F_emb", _at("flops.decoder.embedding_projections", s=s_in), "OPT's embedding projections of every token")
    logits = d.defines("F_logits", _at("flops.decoder.logits", s=1), "the logits of the last token only: it alone is sampled")
    d.defines("F_pf", layers + ends + logits, "the prefill", parts=("F_layers", "F_emb", "F_logits"))
    d.concludes("serving.prefill.flops")
    d.equals("a forward with one token's logits", _at("flops.decoder.forward", s=s_in) - _at("flops.decoder.logits", s=s_in)
             + _at("flops.decoder.logits", s=1), "flops.decoder.forward at s = s_in, the logits cut to the last token", of="F_pf")
    return d


def prefill_causal() -> Derivation:
    d = Derivation("serving.prefill.flops.causal", "A prefill as a causal kernel computes it", (S.FLOP_COUNTER, arch.MISTRAL))
    gemms = d.defines("F_GEMM", get("serving.prefill.flops").part - S.l_attn * _at("flops.decoder.attention.scores", s=s_in),
                      "the eager prefill without its attention layers' squares")
    per_pair = 2 * b * a * arch.score_width * u_flop  # QKᵀ and scores·V per query-key pair, over b sequences and a heads
    full = d.defines("F_full", per_pair * s_in * (s_in + 1) / 2, "a full layer: query i sees keys 1 … i")
    d.equals("as flops.decoder", _at("flops.decoder.attention.scores.causal", s=s_in),
             "flops.decoder.attention.scores.causal at s = s_in", of="F_full")
    span = sp.Min(s_in, W)
    window = d.defines("F_win", per_pair * (s_in * span - span * (span - 1) / 2),
                       "a windowed layer: query i sees min(i, W) keys; m = min(s_in, W)")
    d.defines("F_win beyond the window", window.xreplace({s_in: W + j_step}), "s_in = W + j, past the window")
    d.equals("as flops.decoder", _at("flops.decoder.attention.scores.windowed", s=W + j_step),
             "flops.decoder.attention.scores.windowed at s = W + j")
    d.defines("F_pf^causal", gemms + (S.l_attn - l_win) * full + l_win * window, "l_attn − l_win full and l_win windowed layers")
    d.concludes("serving.prefill.flops.causal")
    return d


def prefill_masked() -> Derivation:
    d = Derivation("serving.prefill.flops.masked", "What a causal kernel skips, exactly", (S.FLOP_COUNTER, arch.MISTRAL))
    d.defines("F_masked", get("serving.prefill.flops").part - get("serving.prefill.flops.causal").part,
              "the eager prefill minus the causal one")
    span = sp.Min(s_in, W)
    d.equals("closed form", 2 * b * a * arch.score_width * (S.l_attn * s_in * (s_in - 1) / 2
                                                            + l_win * (s_in - span) * (s_in - span + 1) / 2) * u_flop,
             "every attention layer's s_in² − s_in(s_in + 1)/2 pairs above the diagonal, and a windowed layer's s_in(s_in + 1)/2 − "
             "(s_in·m − m(m − 1)/2) = (s_in − m)(s_in − m + 1)/2 below it outside the band")
    d.concludes("serving.prefill.flops.masked")
    return d


# --- memory --------------------------------------------------------------------------------------------

def weights_memory() -> Derivation:
    d = Derivation("serving.memory.weights", "Weight bytes per GPU", (S.GPTQ,))
    tables = d.defines("Ψ_tables", (2 - tied) * V * d_emb * u_param, "the embedding and (untied) head matrices")
    stored = d.defines("bytes", q_w * (P - tables) + q_bf16 * tables, "the matrices at q_Ψ, the tables kept 16-bit")
    total = d.defines("M_w", stored / (t * p), "split over the t·p GPUs of a replica")
    d.concludes("serving.memory.weights")
    d.defines("M_w, unquantized", total.xreplace({q_w: q_bf16}), "q_Ψ = 2")
    d.equals("as memory.model_states", _at("memory.model_states.inference") / (t * p), "memory.model_states.inference over t·p")
    return d


def kv_memory() -> Derivation:
    d = Derivation("serving.memory.kv", "Cache bytes per GPU", (S.CACHE, S.PAGED, S.MEGATRON_TP))
    positions = d.defines("M_KV^positions", b * get("serving.decode.context").part * S.kv_width * q_kv,
                          "the attention layers' N_KV positions of b sequences")
    states = d.defines("M_KV^states", S.STATES, "the recurrent layers' fixed states")
    d.defines("M_KV^replica", positions + states, "the replica's whole cache", parts=("M_KV^positions", "M_KV^states"))
    d.equals("what a step reads", get("serving.decode.kv_read").part, aside=True,
             why="the cache of b sequences at context s_ctx holds what a step at that context reads (serving.decode.kv_read)")
    per_gpu = d.defines("M_KV", positions / (p * S.t_kv) + states / (p * t),
                        "each stage its own layers; the TP ranks split the g KV heads (at most g ways) and each holds MLA's "
                        "whole latent; a recurrent mixer's channels and heads, so its state, split t ways")
    d.concludes("serving.memory.kv")
    d.defines("M_KV, one GPU, no window", per_gpu.xreplace({t: 1, p: 1, l_win: 0}), "t = p = 1, l_win = 0")
    d.equals("as memory.kv_cache", _at("memory.kv_cache.decoder", s=s_ctx, q=q_kv, l_win=0),
             "memory.kv_cache.decoder at s = s_ctx")
    return d


def kv_paged() -> Derivation:
    d = Derivation("serving.memory.kv.paged", "A paged cache in whole blocks", (S.PAGED,))
    full = d.defines("slots_full", n_blk * sp.ceiling(s_ctx / n_blk), "a full layer's s_ctx tokens in whole blocks of n_blk")
    window = d.defines("slots_win", n_blk * sp.ceiling(sp.Min(s_ctx, W) / n_blk), "a windowed layer's min(s_ctx, W)")
    total = d.defines("M_KV^paged", b * S.kv_width * q_kv * ((S.l_attn - l_win) * full + l_win * window) / (p * S.t_kv)
                      + S.STATES / (p * t), "b sequences' attention layers, over the stages and KV-head shards; the "
                      "recurrent states whole, as serving.memory.kv holds them")
    d.concludes("serving.memory.kv.paged")
    d.defines("M_KV^paged, one GPU, no window", total.xreplace({t: 1, p: 1, l_win: 0}), "t = p = 1, l_win = 0")
    d.equals("as memory.kv_cache", _at("memory.kv_cache.decoder.paged", s=s_ctx, q=q_kv, l_win=0),
             "memory.kv_cache.decoder.paged at s = s_ctx")
    return d


def workspace() -> Derivation:
    d = Derivation("serving.memory.workspace", "A prefill's workspace", (S.VLLM,))
    d.defines("residual", 2 * h, "the residual stream and its norm")
    d.defines("QKV", (a + 2 * g) * d_head / t, "this GPU's queries, keys and values")
    d.defines("MLP", (1 + gated) * d_ff / t, "this GPU's up (and gate) output")
    width = d.defines("per token", 2 * h + ((a + 2 * g) * d_head + (1 + gated) * d_ff) / t, "values per token",
                      parts=("residual", "QKV", "MLP"))
    d.defines("M_ws", n_chunk * q * width, "n_chunk tokens of q bytes, one layer's transients at a time")
    d.concludes("serving.memory.workspace")
    return d


def memory_total() -> Derivation:
    d = Derivation("serving.memory.per_gpu", "What one GPU holds", (S.VLLM,))
    d.defines("weights", M_w, "serving.memory.weights")
    d.defines("cache", get("serving.memory.kv").part, "b sequences at context s_ctx")
    d.defines("workspace", M_ws, "serving.memory.workspace")
    d.defines("M", M_w + get("serving.memory.kv").part + M_ws, "together", parts=("weights", "cache", "workspace"))
    d.concludes("serving.memory.per_gpu")
    return d


def max_batch() -> Derivation:
    d = Derivation("serving.memory.max_batch", "The KV wall: solve M(b) = M_GPU for b", (S.PAGED,))
    memory = d.defines("M(b)", get("serving.memory.per_gpu").part, "linear in b: each sequence adds its cache")
    d.solves("b_max", solved_for(memory, M_gpu, b), "SymPy solves M(b) = M_GPU", unknown=b, target=M_gpu, of="M(b)")
    d.concludes("serving.memory.max_batch", of="b_max")
    return d


def max_context() -> Derivation:
    d = Derivation("serving.memory.max_context", "The longest context: solve M(s_ctx) = M_GPU past the window", (S.PAGED,))
    d.defines("M past the window", get("serving.memory.per_gpu").dimensioned.xreplace({s_ctx: W + j_step}),
              "at s_ctx = W + j (j ≥ 1) a windowed layer holds W positions")
    d.equals("linear in j", M_w + M_ws + b * ((S.l_attn - l_win) * (W + j_step) + l_win * W) * S.kv_width * q_kv / (p * S.t_kv)
             + S.STATES / (p * t), aside=True,
             why="min(W + j, W) = W: past the window only the full layers' cache grows; the states do not")
    beyond = d.defines("M(s_ctx ≥ W)", M_w + M_ws + b * ((S.l_attn - l_win) * s_ctx + l_win * W) * S.kv_width * q_kv / (p * S.t_kv)
                       + S.STATES / (p * t), "the same in s_ctx = W + j")
    d.solves("s_max", solved_for(beyond, M_gpu, s_ctx), "SymPy solves M(s_ctx) = M_GPU", unknown=s_ctx, target=M_gpu)
    d.concludes("serving.memory.max_context")
    return d


# --- time ------------------------------------------------------------------------------------------------

def allreduce() -> Derivation:
    d = Derivation("serving.time.allreduce", "An all-reduce, latency and bandwidth", (S.THAKUR,))
    d.defines("T_α", sp.Min(t - 1, 1) * tau_ar, "one message's latency, in one shot; none on one GPU (t − 1 = 0)")
    d.defines("T_β", _at("comms.collective.allreduce", n=t) / W_tp, "the 2(t − 1)/t·x bytes each GPU sends, at W_TP")
    d.defines("T_AR", sp.Min(t - 1, 1) * tau_ar + _at("comms.collective.allreduce", n=t) / W_tp, "the α-β model",
              parts=("T_α", "T_β"))
    d.concludes("serving.time.allreduce")
    return d


def alltoall() -> Derivation:
    d = Derivation("serving.time.alltoall", "An all-to-all, latency and bandwidth", (S.THAKUR,))
    d.defines("T_α", (e - 1) * tau_ar, "e − 1 messages, one to each peer")
    d.defines("T_β", _at("comms.collective.alltoall", n=e) / W_tp, "(e − 1)/e of the buffer leaves each GPU")
    d.defines("T_A2A", (e - 1) * tau_ar + _at("comms.collective.alltoall", n=e) / W_tp, "the α-β model", parts=("T_α", "T_β"))
    d.concludes("serving.time.alltoall")
    return d


def _comms(tokens: sp.Expr) -> sp.Expr:
    """Two all-reduces of the tokens' hidden states per layer, p − 1 stage hops."""
    hidden = tokens * h * q
    return 2 * l * _at("serving.time.allreduce", x_msg=hidden) + (p - 1) * (hidden / W_pp + tau_ar)


def decode_step() -> Derivation:
    d = Derivation("serving.time.decode_step", "One decoding step on the roofline", (S.ROOFLINE, S.THAKUR, S.PP_SERIES))
    compute = d.defines("T_F", (F_fwd + get("serving.decode.attention.flops").part) / (t * X * eta_dec),
                        "the GEMMs and the attention over the t GPUs of a stage at η_dec of peak; the stages in series")
    memory = d.defines("T_B", R_w / (t * W_mem * eta_hbm) + b * N_kv * S.kv_width * q_kv / (S.t_kv * W_mem * eta_hbm)
                       + S.STATES / (t * W_mem * eta_hbm), "the weights over t GPUs, the cache over its min(t, g) shards, "
                       "the recurrent states over t, at η_HBM of the bandwidth")
    fixed = d.defines("T_L", l * tau_L, "each layer's kernels' fixed cost")
    comms = d.defines("T_comm", _comms(b), "two all-reduces of b·h·q bytes per layer, p − 1 stage hops")
    total = d.defines("T_dec", compute + memory + fixed + comms, "added, kernel by kernel", parts=("T_F", "T_B", "T_L", "T_comm"))
    d.concludes("serving.time.decode_step")
    bound = {F_fwd: 0, N_kv: 0, tau_L: 0, t: 1, p: 1, eta_hbm: 1, R_w: q_w * P, **NO_HYBRID}
    d.defines("T_dec, weights only", total.xreplace(bound), "one GPU reading q_Ψ·Ψ bytes at full bandwidth, nothing else")
    d.equals("the memory-bound latency", _at("inference.latency.memory_bound", n=1),
             "inference.latency.memory_bound on one GPU: the 2023 sketch is this step without compute, cache or fixed costs")
    return d


def prefill_time() -> Derivation:
    d = Derivation("serving.time.prefill", "A prefill on the roofline", (S.ROOFLINE, S.THAKUR))
    compute = d.defines("T_F", F_fwd / (t * X * eta_pf), "its FLOPs at η_pf of the stage's peak")
    memory = d.defines("T_B", R_w / (t * W_mem * eta_hbm), "the weights, read once")
    fixed = d.defines("T_L", l * tau_L, "each layer's kernels' fixed cost")
    comms = d.defines("T_comm", _comms(b * s_in), "all-reduces of b·s_in·h·q bytes, stage hops")
    total = d.defines("T_pf", compute + memory + fixed + comms, "added", parts=("T_F", "T_B", "T_L", "T_comm"))
    d.concludes("serving.time.prefill")
    bound = {R_w: 0, tau_L: 0, t: 1, p: 1, eta_pf: 1, F_fwd: b * s_in * c_step * get("flops.inference.per_token").part}
    d.defines("T_pf, compute only", total.xreplace(bound), "one GPU at peak, 2Ψ FLOPs per prompt token, nothing else")
    d.equals("the compute-bound latency", _at("inference.latency.compute_bound", n=1, b=b * s_in),
             "inference.latency.compute_bound for b·s_in tokens: a prefill is compute-bound where decoding is not")
    return d


def e2e() -> Derivation:
    d = Derivation("serving.time.e2e", "A batch's latency: the prefill and the sum over the growing context", (S.ORCA,))
    step = get("serving.time.decode_step").dimensioned
    at_empty, slope = step.xreplace({N_kv: 0}), sp.diff(step, N_kv)
    d.defines("T_dec(N_KV)", step, "a step at N_KV cached positions per sequence")
    d.equals("affine in N_KV", at_empty + slope * N_kv, aside=True,
             why="the cache's bytes and the attention's FLOPs grow with N_KV, nothing else")
    positions = get("serving.decode.context").dimensioned.xreplace({s_ctx: s_in + j_step})
    d.defines("Σ_j N_KV, no window", sp.Sum(positions.xreplace({l_win: 0}), (j_step, 1, steps)),
              "the positions the s_out − 1 steps read, one step at a time (no windowed layer)")
    d.equals("as serving.decode.context.sum", get("serving.decode.context.sum").dimensioned.xreplace({l_win: 0}),
             "SymPy's sum is the closed form of serving.decode.context.sum (which also covers windows)")
    total = T_pf + steps * at_empty + slope * get("serving.decode.context.sum").part
    d.defines("T_e2e", total, "the prefill, then Σ_j (T_dec(0) + slope·N_KV(s_in + j)) = s_out − 1 steps at an empty cache "
              "and the slope times Σ N_KV: the step is affine in N_KV")
    d.concludes("serving.time.e2e")
    return d


def tpot() -> Derivation:
    d = Derivation("serving.time.tpot", "Time per output token", (S.ORCA,))
    decoding = d.defines("decoding", T_e2e - T_pf, "after the first token")
    d.defines("T_tok", decoding / steps, "over its s_out − 1 steps")
    d.concludes("serving.time.tpot")
    return d


def throughput() -> Derivation:
    d = Derivation("serving.throughput.per_gpu", "Output tokens per second per GPU", (S.ORCA, S.PP_SERIES))
    d.defines("R_GPU", sp.Mul(p * b * s_out * c_step, sp.Pow(t * p * T_e2e, -1), evaluate=False),
              "p batches in flight, one per stage, of b requests of s_out tokens every T_e2e, over the t·p GPUs")
    d.concludes("serving.throughput.per_gpu")
    return d


def per_user() -> Derivation:
    d = Derivation("serving.throughput.per_user", "Tokens per second a user sees", (S.ORCA,))
    d.defines("R_user", c_step / T_tok, "one token per decoding step")
    d.concludes("serving.throughput.per_user")
    return d


def static_batch() -> Derivation:
    d = Derivation("serving.batching.static", "Static batching of a mix", (S.ORCA,))
    time = d.defines("time", T_pf + (s_long - 1) * T_tok, "the batch decodes until its longest request ends")
    d.defines("R_static", b * s_out * c_step / time, "b requests of s_out tokens on average in that time")
    d.concludes("serving.batching.static")
    return d


def continuous_step() -> Derivation:
    d = Derivation("serving.batching.continuous.step", "Continuous batching in steady state", (S.ORCA, S.SARATHI))
    joining = d.defines("joining", b / s_out, "b slots each freed after s_out tokens: b/s_out new requests per step (Little's law)")
    fill = d.defines("T_fill", joining * F_pf / (t * X * eta_pf), "their prefill FLOPs, riding on the step's weight reads")
    d.defines("T_step", T_tok + fill, "the decoding step and the prefills it carries")
    d.concludes("serving.batching.continuous.step")
    return d


def continuous_batch() -> Derivation:
    d = Derivation("serving.batching.continuous", "Continuous batching's throughput", (S.ORCA,))
    d.defines("R_cont", b * c_step / get("serving.batching.continuous.step").part, "b tokens per step")
    d.concludes("serving.batching.continuous")
    return d


def chunked_ttft() -> Derivation:
    d = Derivation("serving.chunked.ttft", "Time to first token with chunked prefill", (S.SARATHI,))
    chunks = d.defines("chunks", sp.ceiling(s_in / n_chunk), "the prompt in chunks of n_chunk tokens")
    per_chunk = d.defines("per chunk", T_tok + n_chunk * F_pf / (s_in * t * X * eta_pf),
                          "a decoding step carrying n_chunk/s_in of the prefill's FLOPs")
    d.defines("TTFT", chunks * per_chunk, "one chunk per step")
    d.concludes("serving.chunked.ttft")
    return d


# --- speculative decoding, disaggregation, replicas, cost -------------------------------------------------

def speculative_tokens() -> Derivation:
    d = Derivation("serving.speculative.tokens", "Tokens per target step: a geometric series", (S.LEVIATHAN,))
    closed = d.defines("S(γ)", (1 - alpha_acc ** (gamma_spec + 1)) / (1 - alpha_acc),
                       "the claim: Σ_{i=0}^{γ} α^i (the i-th draft accepted with probability α^i, and the target's own token)")
    d.defines("S(γ) − S(γ − 1)", closed - closed.xreplace({gamma_spec: gamma_spec - 1}), "one more draft")
    d.equals("α^γ", alpha_acc**gamma_spec, aside=True, why="adds the probability α^γ that all γ drafts are accepted")
    d.defines("S(0)", closed.xreplace({gamma_spec: 0}), "no draft")
    d.equals("1", sp.Integer(1), aside=True, why="the target's own token: by induction S(γ) = Σ_{i=0}^{γ} α^i")
    total = d.defines("E[tokens]", closed * c_step, "in tokens")
    d.concludes("serving.speculative.tokens")
    d.defines("E[tokens], one MTP module", total.xreplace({gamma_spec: 1}), "γ = 1: DeepSeek-V3's MTP module drafts one token")
    d.equals("1 + α", (1 + alpha_acc) * c_step, aside=True, why="the next token, and the drafted one with probability α")
    return d


def speculative_speedup() -> Derivation:
    d = Derivation("serving.speculative.speedup", "The speed-up, with the draft's cost", (S.LEVIATHAN, S.MTP))
    tokens = d.defines("tokens", get("serving.speculative.tokens").part / c_step, "per target step")
    cost = d.defines("cost", gamma_spec * c_draft + 1, "γ draft steps of c and one target step, in target steps")
    d.defines("S", tokens / cost, "tokens per unit of target-step time")
    d.concludes("serving.speculative.speedup")
    return d


def disaggregated() -> Derivation:
    d = Derivation("serving.disaggregated.ratio", "Prefill GPUs per decoding GPU", (S.DISTSERVE, S.LITTLE))
    pf = d.defines("prefill GPU-seconds", n_pf * T_pf / b_pf, "a request's share of a prefill instance's batch")
    dec = d.defines("decoding GPU-seconds", n_dec * steps * T_tok / b, "its slot of a decoding instance for s_out − 1 steps")
    d.defines("ratio", sp.Mul(pf, sp.Pow(dec, -1, evaluate=False), evaluate=False), "each pool sized to its work at the same request rate")
    d.concludes("serving.disaggregated.ratio")
    return d


def replicas() -> Derivation:
    d = Derivation("serving.replicas", "Replicas for a request rate", (S.LITTLE,))
    in_flight = d.defines("L", R_req * T_e2e, "Little's law: requests in flight")
    d.defines("d", in_flight / (p * b * u_seq), "a replica holds p batches of b")
    d.concludes("serving.replicas")
    return d


def cost() -> Derivation:
    d = Derivation("serving.cost.per_token", "Rent per output token", (S.MTP,))
    rent = d.defines("rent per second", c_rent * n / c_hour, "n GPUs at c per GPU-hour")
    d.defines("c_tok", rent / R_out, "over R_out tokens per second")
    d.concludes("serving.cost.per_token")
    return d


def energy() -> Derivation:
    d = Derivation("serving.energy.per_token", "Energy per output token", (S.ROOFLINE,))
    power = d.defines("power", W_gpu * n, "n boards")
    d.defines("E_tok", power / R_out, "over R_out tokens per second")
    d.concludes("serving.energy.per_token")
    return d


DERIVATIONS = (
    context, context_sum, kv_read, kv_read_expanded, kv_written, mixers_step, decode_linear, decode_flops, attention_engine,
    experts_touched, params_read, weights_read, int4_bytes, prefill_flops, prefill_causal, prefill_masked,
    weights_memory, kv_memory, kv_paged, workspace, memory_total, max_batch, max_context, allreduce, alltoall,
    decode_step, prefill_time, e2e, tpot, throughput, per_user, static_batch, continuous_step, continuous_batch,
    chunked_ttft, speculative_tokens, speculative_speedup, disaggregated, replicas, cost, energy,
)


# --- DeepSeek sparse attention: the indexer over every position, the attention over its top k_top ----------------------

def indexer_time() -> Derivation:
    from llm_formulas.formulas.vocabulary.symbols import d_idx, n_idx, t_kv

    d = Derivation("serving.time.indexer", "The indexer's share of a sparse-attention decoding step", (S.DSA_ENGINE, S.ROOFLINE))
    flops = d.defines("F_idx", b * S.l_attn * s_ctx * 2 * n_idx * (d_idx + 1) * u_flop,
                      "in each attention layer and sequence, every one of the s_ctx cached keys: each of the n_idx heads' "
                      "q·k (d_idx multiply-adds) and its weight in the sum over heads (one more)")
    d.equals("as the forward's per pair", b * S.l_attn * s_ctx * 2 * arch.INDEXER_PER_POSITION.xreplace({arch.dsa: 1}) * u_flop,
             "the indexer's term of the forward's score width (flops.decoder.attention.scores), per query-key pair", of="F_idx")
    read = d.defines("R_idx", b * S.l_attn * s_ctx * d_idx * q_kv,
                     "the s_ctx cached indexer keys, d_idx values each at q_KV bytes, whole on every TP rank as MLA's latent")
    d.defines("T_idx", flops / (t * X * eta_dec) + read / (t_kv * W_mem * eta_hbm),
              "at the decoding step's rates: FLOPs at η_dec of the t GPUs' peak, bytes at η_HBM of the bandwidth")
    d.concludes("serving.time.indexer")
    return d


def decode_step_sparse() -> Derivation:
    from llm_formulas.formulas.vocabulary.symbols import dsa, k_top

    d = Derivation("serving.time.decode_step.sparse", "A sparse-attention decoding step", (S.DSA_ENGINE, S.ROOFLINE))
    selected = d.defines("N_sel", S.l_attn * sp.Min(s_ctx, k_top),
                         "positions the attention reads per sequence: the k_top the indexer keeps in each attention layer, "
                         "every cached one while s_ctx ≤ k_top")
    attention = d.defines("T_attn", get("serving.time.decode_step").at(dsa=0, N_kv=selected),
                          "the engine's step over N_sel positions, each the latent r_KV + d_rope (σ_DSA = 0: the indexer's key "
                          "is read by the indexer, below)")
    d.defines("T_dec^DSA", attention + get("serving.time.indexer").part, "and the indexer over all s_ctx positions")
    d.concludes("serving.time.decode_step.sparse")
    return d


def e2e_sparse() -> Derivation:
    from llm_formulas.formulas.vocabulary.symbols import k_top

    d = Derivation("serving.time.e2e.sparse", "A sparse-attention batch's latency", (S.DSA_ENGINE, S.ORCA))
    attention = d.defines("T_attn, summed", get("serving.time.e2e").at(dsa=0, l_win=S.l_attn, W=k_top),
                          "the prefill and the steps' attention: min(s_ctx, k_top) positions at context s_ctx is what a "
                          "window of k_top reads, so serving.time.e2e with every attention layer such a window sums it")
    indexer = d.defines("T_idx, summed", steps * get("serving.time.indexer").at(s_ctx=s_in + s_out / 2),
                        "linear in s_ctx: over the contexts s_in + 1 … s_in + s_out − 1, s_out − 1 times its value at their "
                        "mean s_in + s_out/2")
    d.equals("step by step", sp.summation(as_sympy(S.indexer_time.dimensioned).xreplace({s_ctx: s_in + j_step}), (j_step, 1, steps)),
             "SymPy's sum of the indexer's time over the steps", of="T_idx, summed", aside=True)
    d.defines("T_e2e^DSA", attention + indexer, "together")
    d.concludes("serving.time.e2e.sparse")
    return d


def kv_read_sparse() -> Derivation:
    from llm_formulas.formulas.vocabulary.symbols import d_idx, k_top

    d = Derivation("serving.decode.kv_read.sparse", "Cache bytes a sparse-attention decoding step reads", (S.DSA_ENGINE, S.CACHE))
    latents = d.defines("R_sel", get("serving.decode.kv_read").at(dsa=0, l_win=S.l_attn, W=k_top),
                        "the latents of the min(s_ctx, k_top) selected positions per layer: serving.decode.kv_read with "
                        "every attention layer a window of k_top and the position's bytes without the indexer key")
    keys = d.defines("R_idx", b * S.l_attn * s_ctx * d_idx * q_kv, "every cached indexer key, d_idx values, read to score it")
    d.defines("R_KV^DSA", latents + keys, "together")
    d.concludes("serving.decode.kv_read.sparse")
    return d


def attention_sparse() -> Derivation:
    from llm_formulas.formulas.vocabulary.symbols import k_top

    d = Derivation("serving.decode.attention.flops.sparse", "A sparse-attention decoding step's attention",
                   (S.DSA_ENGINE, arch.DEEPSEEK_V2))
    selected = d.defines("F_sel", get("serving.decode.attention.flops").at(N_kv=S.l_attn * sp.Min(s_ctx, k_top)),
                         "absorbed MLA over the min(s_ctx, k_top) positions each layer selects")
    scores = d.defines("F_idx", b * S.l_attn * s_ctx * S.INDEXER_PAIR, "the indexer's scores of every cached position")
    d.defines("F_dec^DSA", selected + scores, "together")
    d.concludes("serving.decode.attention.flops.sparse")
    return d


def prefill_sparse() -> Derivation:
    from llm_formulas.formulas.vocabulary.symbols import k_top

    d = Derivation("serving.prefill.flops.sparse", "A sparse-attention prefill", (S.DSA_ENGINE, S.FLOP_COUNTER))
    windowed = d.defines("F_pf, k_top window", get("serving.prefill.flops.causal").at(l_win=S.l_attn, W=k_top),
                         "query i attends its min(i, k_top) selected keys: the causal prefill with every attention layer a "
                         "window of k_top (its score width includes the indexer's per-pair term, counted here at those pairs only)")
    m = sp.Min(s_in, k_top)
    beyond = d.defines("pairs beyond the selection", s_in * (s_in + 1) / 2 - (s_in * m - m * (m - 1) / 2),
                       "the indexer scores all i keys of query i: the causal pairs less the selected ones")
    d.defines("F_pf^DSA", windowed + b * S.l_attn * S.INDEXER_PAIR * beyond, "the indexer's scores of those pairs added back")
    d.concludes("serving.prefill.flops.sparse")
    return d


DERIVATIONS = DERIVATIONS + (indexer_time, decode_step_sparse, e2e_sparse, kv_read_sparse, attention_sparse, prefill_sparse)
