"""Proofs of the state-space and linear-attention mixers (formulas/topics/recurrent.py).

Parameters add up the weight shapes transformers builds; FLOPs price each matmul and einsum of the reference
path with ``flops.gemm`` (a depthwise convolution is one [positions, k_conv] × [k_conv, 1] product per channel);
state bytes add up the cached tensors. The chunked scans are summed chunk by chunk.
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.derivations.topics.flops import gemm
from llm_formulas.formulas.topics.recurrent import CACHE, FLOP_COUNTER, GDN, GRIFFIN, JAMBA, MAMBA, MAMBA2, TRANSFORMERS
from llm_formulas.formulas.vocabulary.symbols import (
    N_ssm,
    Q_gdn,
    Q_ssd,
    b,
    b_conv,
    b_ssm,
    c_byte,
    d_kh,
    d_lru,
    d_ssm,
    d_vh,
    dt_norm,
    h,
    k_conv,
    n_grp,
    n_kh,
    n_ssmh,
    n_vh,
    q,
    r_dt,
    s,
    w_lru,
)


def _linear(d_in: sp.Expr, d_out: sp.Expr, bias: sp.Expr) -> sp.Expr:
    return d_in * d_out + bias * d_out


def _conv(channels: sp.Expr) -> sp.Expr:
    """A depthwise convolution's FLOPs: every channel, every padded position, k_conv taps."""
    return b * channels * gemm(s + k_conv - 1, k_conv, 1)


def mamba() -> Derivation:
    d = Derivation("params.recurrent.mamba", "A Mamba mixer's parameters", (TRANSFORMERS, MAMBA, JAMBA))
    proj = d.defines("Ψ_in,out", _linear(h, 2 * d_ssm, b_ssm) + _linear(d_ssm, h, b_ssm),
                     "in_proj to the SSM branch x and the gate z, out_proj back to h")
    conv = d.defines("Ψ_conv", d_ssm * k_conv + b_conv * d_ssm, "a depthwise Conv1d: k_conv taps per channel")
    select = d.defines("Ψ_sel", _linear(d_ssm, r_dt + 2 * N_ssm, 0) + _linear(r_dt, d_ssm, 1),
                       "the selection: x_proj to Δ (rank r_Δ), B and C (N each); dt_proj r_Δ→d_ssm with its bias")
    ssm = d.defines("Ψ_ssm", d_ssm * N_ssm + d_ssm, "A_log (d_ssm × N) and the skip D")
    core = d.defines("Ψ_S6,core", proj + conv + select + ssm, "the Mamba block", parts=("Ψ_in,out", "Ψ_conv", "Ψ_sel", "Ψ_ssm"))
    d.defines("Ψ_S6", core + dt_norm * (r_dt + 2 * N_ssm), "and, in Jamba, RMSNorms of width r_Δ, N and N on Δ, B and C")
    d.concludes("params.recurrent.mamba")
    return d


def mamba_forward() -> Derivation:
    d = Derivation("flops.recurrent.mamba", "A Mamba mixer's forward FLOPs", (FLOP_COUNTER, MAMBA))
    proj = d.defines("F_proj", gemm(b * s, h, 2 * d_ssm) + gemm(b * s, d_ssm, r_dt + 2 * N_ssm) + gemm(b * s, r_dt, d_ssm)
                     + gemm(b * s, d_ssm, h), "in_proj, x_proj, dt_proj, out_proj over bs tokens")
    conv = d.defines("F_conv", _conv(d_ssm), "the causal convolution on d_ssm channels")
    scan = d.defines("F_scan", b * s * gemm(d_ssm, N_ssm, 1), "per token, the state [d_ssm, N] read out against C [N, 1]")
    d.defines("F_S6", proj + conv + scan, "the discretisation and state updates are elementwise")
    d.concludes("flops.recurrent.mamba")
    return d


def mamba_state() -> Derivation:
    d = Derivation("memory.state.mamba", "A Mamba layer's cache", (CACHE, MAMBA))
    conv = d.defines("M_conv", b * d_ssm * k_conv * q, "conv_states [b, d_ssm, k_conv] in the model's dtype")
    ssm = d.defines("M_ssm", b * d_ssm * N_ssm * 4 * c_byte, "recurrent_states [b, d_ssm, N] in fp32")
    d.defines("M_S6", conv + ssm, "fixed: a longer context changes neither", parts=("M_conv", "M_ssm"))
    d.concludes("memory.state.mamba")
    return d


def mamba2() -> Derivation:
    d = Derivation("params.recurrent.mamba2", "A Mamba-2 mixer's parameters", (TRANSFORMERS, MAMBA2))
    xbc = d_ssm + 2 * n_grp * N_ssm
    proj = d.defines("Ψ_in", _linear(h, d_ssm + xbc + n_ssmh, b_ssm), "in_proj: z (d_ssm), x, B, C (the convolved part) and one Δ per head")
    conv = d.defines("Ψ_conv", xbc * k_conv + b_conv * xbc, "a depthwise Conv1d over x, B and C")
    heads = d.defines("Ψ_heads", 3 * n_ssmh, "dt_bias, A_log and D: one of each per head (A is scalar per head in SSD)")
    out = d.defines("Ψ_out", d_ssm + _linear(d_ssm, h, b_ssm), "the gated RMSNorm's scale and out_proj")
    d.defines("Ψ_SSD", proj + conv + heads + out, "the Mamba-2 block", parts=("Ψ_in", "Ψ_conv", "Ψ_heads", "Ψ_out"))
    d.concludes("params.recurrent.mamba2")
    return d


def mamba2_forward() -> Derivation:
    d = Derivation("flops.recurrent.mamba2", "A Mamba-2 mixer's forward FLOPs", (FLOP_COUNTER, MAMBA2))
    xbc = d_ssm + 2 * n_grp * N_ssm
    c = sp.ceiling(s / Q_ssd)
    proj = d.defines("F_proj", gemm(b * s, h, d_ssm + xbc + n_ssmh) + gemm(b * s, d_ssm, h), "in_proj and out_proj")
    conv = d.defines("F_conv", _conv(xbc), "the convolution over x, B, C")
    scores = d.defines("F_CB", b * c * n_ssmh * gemm(Q_ssd, N_ssm, Q_ssd), "per chunk and head, C·Bᵀ: [Q, N] × [N, Q] (B, C repeated to every head)")
    diag = d.defines("F_diag", b * c * n_ssmh * gemm(Q_ssd, Q_ssd, d_ssm / n_ssmh), "the masked scores on the chunk's values: [Q, Q] × [Q, p]")
    states = d.defines("F_states", b * c * n_ssmh * gemm(d_ssm / n_ssmh, Q_ssd, N_ssm), "each chunk's state: Σ over its positions of x·Bᵀ")
    passing = d.defines("F_pass", b * n_ssmh * gemm(c + 1, c + 1, d_ssm / n_ssmh * N_ssm),
                        "the states passed between the c + 1 chunk boundaries (the initial state included)")
    readout = d.defines("F_out", b * c * n_ssmh * gemm(Q_ssd, N_ssm, d_ssm / n_ssmh), "each position reads its chunk's start state through C")
    d.defines("F_SSD", proj + conv + scores + diag + states + passing + readout, "padded to c = ⌈s/Q⌉ chunks of Q")
    d.concludes("flops.recurrent.mamba2")
    return d


def mamba2_state() -> Derivation:
    d = Derivation("memory.state.mamba2", "A Mamba-2 layer's cache", (CACHE, MAMBA2))
    conv = d.defines("M_conv", b * (d_ssm + 2 * n_grp * N_ssm) * k_conv * q, "conv_states [b, d_ssm + 2·n_grp·N, k_conv]")
    ssm = d.defines("M_ssm", b * n_ssmh * (d_ssm / n_ssmh) * N_ssm * 4 * c_byte, "recurrent_states [b, n_SSD, head_dim, N] in fp32")
    d.defines("M_SSD", conv + ssm, "fixed whatever the context", parts=("M_conv", "M_ssm"))
    d.concludes("memory.state.mamba2")
    return d


def rglru() -> Derivation:
    d = Derivation("params.recurrent.rglru", "A Griffin recurrent block's parameters", (TRANSFORMERS, GRIFFIN))
    proj = d.defines("Ψ_proj", 2 * _linear(h, d_lru, 1) + _linear(d_lru, h, 1), "linear_x and linear_y h→d_LRU, linear_out back, all biased")
    conv = d.defines("Ψ_conv", d_lru * k_conv + d_lru, "a depthwise Conv1d with its bias")
    gates = d.defines("Ψ_gates", 2 * ((d_lru / w_lru) * w_lru * w_lru + d_lru),
                      "input and recurrence gates: d_LRU/w_LRU heads of w_LRU × w_LRU, each with a bias of d_LRU")
    lam = d.defines("Ψ_Λ", d_lru, "the recurrence parameter Λ, one per channel")
    d.defines("Ψ_LRU", proj + conv + gates + lam, "the recurrent block", parts=("Ψ_proj", "Ψ_conv", "Ψ_gates", "Ψ_Λ"))
    d.concludes("params.recurrent.rglru")
    return d


def rglru_forward() -> Derivation:
    d = Derivation("flops.recurrent.rglru", "A Griffin recurrent block's forward FLOPs", (FLOP_COUNTER, GRIFFIN))
    proj = d.defines("F_proj", 2 * gemm(b * s, h, d_lru) + gemm(b * s, d_lru, h), "the three projections")
    gates = d.defines("F_gates", 2 * (d_lru / w_lru) * gemm(b * s, w_lru, w_lru), "two gates, one [bs, w] × [w, w] product per head")
    d.defines("F_LRU", proj + _conv(d_lru) + gates, "and the convolution; the scan is elementwise")
    d.concludes("flops.recurrent.rglru")
    return d


def rglru_state() -> Derivation:
    d = Derivation("memory.state.rglru", "A Griffin recurrent block's cache", (TRANSFORMERS, GRIFFIN))
    conv = d.defines("M_conv", b * d_lru * (k_conv - 1) * q, "conv1d_state [b, d_LRU, k_conv − 1]: the decode step brings the k-th input")
    state = d.defines("M_lru", b * d_lru * 4 * c_byte, "rg_lru.recurrent_states [b, d_LRU] in fp32")
    d.defines("M_LRU", conv + state, "held by the block itself", parts=("M_conv", "M_lru"))
    d.concludes("memory.state.rglru")
    return d


def gdn() -> Derivation:
    d = Derivation("params.recurrent.gdn", "A gated delta-net's parameters", (TRANSFORMERS, GDN))
    keys, values = n_kh * d_kh, n_vh * d_vh
    proj = d.defines("Ψ_in", _linear(h, 2 * keys + 2 * values, 0) + _linear(h, 2 * n_vh, 0),
                     "in_proj_qkvz: q, k, v and the gate z; in_proj_ba: β and the decay input, per value head")
    conv = d.defines("Ψ_conv", (2 * keys + values) * k_conv, "a depthwise Conv1d over q, k, v, no bias")
    d.defines("Ψ_GDN", proj + conv + 2 * n_vh + d_vh + _linear(values, h, 0),
              "dt_bias and A_log per value head, the gated RMSNorm of one head's width, out_proj")
    d.concludes("params.recurrent.gdn")
    return d


def gdn_forward() -> Derivation:
    d = Derivation("flops.recurrent.gdn", "A gated delta-net's forward FLOPs", (FLOP_COUNTER, GDN))
    keys, values = n_kh * d_kh, n_vh * d_vh
    c = sp.ceiling(s / Q_gdn)
    proj = d.defines("F_proj", gemm(b * s, h, 2 * keys + 2 * values) + gemm(b * s, h, 2 * n_vh) + gemm(b * s, values, h),
                     "the input projections and out_proj")
    conv = d.defines("F_conv", _conv(2 * keys + values), "the convolution over q, k, v")
    intra = d.defines("F_intra", b * n_vh * c * 2 * gemm(Q_gdn, d_kh, Q_gdn),
                      "per chunk and value head (q, k repeated to the value heads), β·k·kᵀ and q·kᵀ: [Q, d_K] × [d_K, Q] each")
    scan = d.defines("F_scan", b * n_vh * c * (2 * gemm(Q_gdn, d_kh, d_vh) + gemm(Q_gdn, Q_gdn, d_vh) + gemm(d_kh, Q_gdn, d_vh)),
                     "the scan over chunks: the decayed keys and the queries against the state, the intra-chunk attention on the "
                     "corrected values, and the state update kᵀ·v")
    d.defines("F_GDN", proj + conv + intra + scan, "the triangular solves of the UT transform are not counted by FlopCounterMode")
    d.concludes("flops.recurrent.gdn")
    return d


def gdn_state() -> Derivation:
    d = Derivation("memory.state.gdn", "A gated delta-net's cache", (CACHE, GDN))
    conv = d.defines("M_conv", b * (2 * n_kh * d_kh + n_vh * d_vh) * k_conv * q, "conv_states over q, k, v")
    state = d.defines("M_rec", b * n_vh * d_kh * d_vh * 4 * c_byte, "recurrent_states [b, n_V, d_K, d_V] in fp32")
    d.defines("M_GDN", conv + state, "fixed whatever the context", parts=("M_conv", "M_rec"))
    d.concludes("memory.state.gdn")
    return d


DERIVATIONS = (mamba, mamba_forward, mamba_state, mamba2, mamba2_forward, mamba2_state, rglru, rglru_forward, rglru_state,
               gdn, gdn_forward, gdn_state)
