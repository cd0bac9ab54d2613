"""Token mixers without a KV cache: Mamba (S6), Mamba-2 (SSD), Griffin's RG-LRU, the gated delta-net.

Each holds a fixed-size state per sequence in place of keys and values: a short convolution's last k_conv inputs
and a recurrent state (Mamba d_ssm × N; Mamba-2 d_ssm × N over its heads; RG-LRU d_LRU; the gated delta-net a
d_K × d_V matrix per value head). Parameters are the shapes transformers 5.24 builds; FLOPs are what PyTorch's
FlopCounterMode counts on transformers' reference (CPU) paths: every projection 2MKN, the depthwise convolution
over the s + k_conv − 1 positions its padding makes, and the scans' matmuls (Mamba: one [d_ssm, N]×[N, 1] product
per token; Mamba-2: the chunked SSD einsums over ⌈s/Q⌉ chunks; the gated delta rule: its chunked matmuls, the
triangular solves uncounted). State bytes are those transformers' cache holds: the convolution states in the
cache dtype q, the recurrent states in fp32 whatever q is.

    Ψ_S6  = 2h·d(1 + b) + d·k(1) + b_conv·d + d(r_Δ + 2N) + r_Δ·d + d + d·N + d + d·h + b·h + σ_ΔBC(r_Δ + 2N)
    Ψ_SSD = (h + b)(2d + 2GN + n) + (d + 2GN)k + b_conv(d + 2GN) + 3n + d + (d + b)h
    M_S6  = b(d·k·q + 4·d·N),   M_SSD = b((d + 2GN)k·q + 4·d·N)
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.formulas.vocabulary.catalogue import Source, formula
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
    u_flop,
    u_param,
    w_lru,
)

TRANSFORMERS = Source("transformers", "modeling_mamba.py, modeling_mamba2.py, modeling_recurrent_gemma.py, modeling_qwen3_next.py")
FLOP_COUNTER = Source("pytorch", "FlopCounterMode: mm/bmm/addmm/baddbmm 2MKN, convolution 2·out·(in/groups)·k")
CACHE = Source("transformers", "cache_utils.py: LinearAttentionLayer (conv_states, recurrent_states)")
MAMBA = Source("gu2023", "§3.4, Figure 3: the Mamba block")
MAMBA2 = Source("dao2024", "§7, Figure 6: the Mamba-2 block; §6, the chunked algorithm")
GRIFFIN = Source("de2024", "§2.4: the recurrent block and the RG-LRU")
GDN = Source("yang2024gdn", "§3: gated delta rule, chunkwise form")
JAMBA = Source("lieber2024", "§2: RMSNorms on Δ, B, C")

conv_tokens = s + k_conv - 1  # a depthwise convolution padded by k_conv − 1 on both sides, cropped after
ssd_chunks = sp.ceiling(s / Q_ssd)
gdn_chunks = sp.ceiling(s / Q_gdn)
xbc = d_ssm + 2 * n_grp * N_ssm  # Mamba-2's convolved channels: x and the grouped B and C
qkv_lin = 2 * n_kh * d_kh + n_vh * d_vh  # the gated delta-net's convolved channels: q, k, v
fp32 = 4 * c_byte  # the recurrent states are kept in full precision

# --- Mamba (S6) ---------------------------------------------------------------------------------------
mamba = formula(
    "params.recurrent.mamba",
    (2 * h * d_ssm + b_ssm * 2 * d_ssm + d_ssm * k_conv + b_conv * d_ssm + d_ssm * (r_dt + 2 * N_ssm) + r_dt * d_ssm + d_ssm
     + d_ssm * N_ssm + d_ssm + d_ssm * h + b_ssm * h + dt_norm * (r_dt + 2 * N_ssm)) * u_param,
    "parameter",
    "one Mamba mixer: in_proj h→2d_ssm, a depthwise convolution of k_conv taps, x_proj d_ssm→r_Δ + 2N, dt_proj r_Δ→d_ssm "
    "(biased), A (d_ssm×N), D, out_proj d_ssm→h; biases by switch; Jamba's RMSNorms on Δ, B and C",
    sources=[TRANSFORMERS, MAMBA, JAMBA],
    symbol_latex=r"\Psi_{S6}",
)
mamba_forward = formula(
    "flops.recurrent.mamba",
    (2 * b * s * (2 * h * d_ssm + d_ssm * (r_dt + 2 * N_ssm) + r_dt * d_ssm + d_ssm * h) + 2 * b * d_ssm * conv_tokens * k_conv
     + 2 * b * s * d_ssm * N_ssm) * u_flop,
    "FLOP",
    "one Mamba mixer's forward as FlopCounterMode counts transformers' reference path: the four projections, the convolution "
    "over s + k_conv − 1 positions, and one state readout [d_ssm, N]×[N, 1] per token",
    sources=[FLOP_COUNTER, TRANSFORMERS, MAMBA],
    notes="The selective scan's elementwise updates (exp(ΔA), ΔB·x) are not matmuls and not counted; the fused CUDA kernel "
    "(mamba_ssm) does the same arithmetic without the readout matmul.",
    symbol_latex=r"F_{S6}",
)
mamba_state = formula(
    "memory.state.mamba",
    b * (d_ssm * k_conv * q + d_ssm * N_ssm * fp32),
    "byte",
    "what one Mamba layer's cache holds for b sequences, whatever their length: the convolution's last k_conv inputs "
    "[b, d_ssm, k_conv] in q bytes and the state [b, d_ssm, N] in fp32",
    sources=[CACHE, MAMBA],
    symbol_latex=r"M_{S6}",
)

# --- Mamba-2 (SSD) ------------------------------------------------------------------------------------
mamba2 = formula(
    "params.recurrent.mamba2",
    ((h + b_ssm) * (2 * d_ssm + 2 * n_grp * N_ssm + n_ssmh) + xbc * k_conv + b_conv * xbc + 3 * n_ssmh + d_ssm
     + (d_ssm + b_ssm) * h) * u_param,
    "parameter",
    "one Mamba-2 mixer: in_proj h→ z, x (d_ssm each), grouped B and C (n_grp·N each) and Δ (one per head); a depthwise "
    "convolution over x, B, C; dt_bias, A and D per head; the gated RMSNorm (d_ssm); out_proj d_ssm→h",
    sources=[TRANSFORMERS, MAMBA2],
    symbol_latex=r"\Psi_{SSD}",
)
mamba2_forward = formula(
    "flops.recurrent.mamba2",
    (2 * b * s * h * (2 * d_ssm + 2 * n_grp * N_ssm + n_ssmh) + 2 * b * s * d_ssm * h + 2 * b * xbc * conv_tokens * k_conv
     + 2 * b * (ssd_chunks * Q_ssd**2 * (n_ssmh * N_ssm + d_ssm) + 2 * ssd_chunks * Q_ssd * d_ssm * N_ssm
                + (ssd_chunks + 1) ** 2 * d_ssm * N_ssm)) * u_flop,
    "FLOP",
    "one Mamba-2 mixer's forward on transformers' chunked reference scan: projections, convolution, and per chunk of Q "
    "tokens (the sequence padded to ⌈s/Q⌉ chunks) the C·Bᵀ scores and their values, the chunk states, the passing of states "
    "between chunks and their readout",
    sources=[FLOP_COUNTER, TRANSFORMERS, MAMBA2],
    symbol_latex=r"F_{SSD}",
)
mamba2_state = formula(
    "memory.state.mamba2",
    b * (xbc * k_conv * q + d_ssm * N_ssm * fp32),
    "byte",
    "one Mamba-2 layer's cache for b sequences: the convolution's last k_conv inputs of x, B and C in q bytes and the "
    "state [b, n_SSD, d_ssm/n_SSD, N] in fp32",
    sources=[CACHE, MAMBA2],
    symbol_latex=r"M_{SSD}",
)

# --- Griffin's recurrent block (RecurrentGemma) -----------------------------------------------------------
rglru = formula(
    "params.recurrent.rglru",
    (2 * (h * d_lru + d_lru) + d_lru * h + h + d_lru * k_conv + d_lru + d_lru + 2 * (d_lru * w_lru + d_lru)) * u_param,
    "parameter",
    "one Griffin recurrent block: linear_x and linear_y h→d_LRU and linear_out d_LRU→h (biased), a depthwise convolution "
    "(biased), the RG-LRU's recurrence parameter and its two block-diagonal gates (heads of w_LRU×w_LRU, biased)",
    sources=[TRANSFORMERS, GRIFFIN],
    symbol_latex=r"\Psi_{LRU}",
)
rglru_forward = formula(
    "flops.recurrent.rglru",
    (2 * b * s * (2 * h * d_lru + d_lru * h) + 2 * b * d_lru * conv_tokens * k_conv + 2 * 2 * b * s * d_lru * w_lru) * u_flop,
    "FLOP",
    "one recurrent block's forward: the three projections, the convolution, the input and recurrence gates "
    "(block-diagonal baddbmm); the scan itself is elementwise",
    sources=[FLOP_COUNTER, TRANSFORMERS, GRIFFIN],
    symbol_latex=r"F_{LRU}",
)
rglru_state = formula(
    "memory.state.rglru",
    b * (d_lru * (k_conv - 1) * q + d_lru * fp32),
    "byte",
    "one recurrent block's state for b sequences: the convolution's last k_conv − 1 inputs in q bytes, the RG-LRU state "
    "in fp32 (recurrent_states 'always computed in full precision')",
    sources=[TRANSFORMERS, GRIFFIN],
    symbol_latex=r"M_{LRU}",
)

# --- the gated delta-net (Qwen3-Next's linear attention) --------------------------------------------------
gdn = formula(
    "params.recurrent.gdn",
    (h * (2 * n_kh * d_kh + 2 * n_vh * d_vh + 2 * n_vh) + qkv_lin * k_conv + 2 * n_vh + d_vh + n_vh * d_vh * h) * u_param,
    "parameter",
    "one gated delta-net: in_proj_qkvz h→ q, k (n_K heads of d_K), v and the output gate z (n_V heads of d_V), in_proj_ba "
    "h→ β and the decay (one each per value head); a depthwise convolution over q, k, v (no bias); dt_bias and A per "
    "value head; the gated RMSNorm of a head (d_V); out_proj n_V·d_V→h",
    sources=[TRANSFORMERS, GDN],
    symbol_latex=r"\Psi_{GDN}",
)
gdn_forward = formula(
    "flops.recurrent.gdn",
    (2 * b * s * h * (2 * n_kh * d_kh + 2 * n_vh * d_vh + 2 * n_vh) + 2 * b * s * n_vh * d_vh * h
     + 2 * b * qkv_lin * conv_tokens * k_conv
     + 2 * b * n_vh * gdn_chunks * (2 * Q_gdn**2 * d_kh + Q_gdn**2 * d_vh + 3 * Q_gdn * d_kh * d_vh)) * u_flop,
    "FLOP",
    "one gated delta-net's forward on transformers' chunked torch path (chunks of Q tokens, the sequence padded to ⌈s/Q⌉): "
    "projections, convolution, and per chunk and value head the two Q×Q products of keys, the intra-chunk attention on the "
    "new values, and three products with the d_K×d_V state",
    sources=[FLOP_COUNTER, TRANSFORMERS, GDN],
    notes="The two triangular solves per chunk (torch.linalg.solve_triangular) have no FlopCounterMode formula and are not "
    "counted: Q²·(d_K + d_V) multiply-adds per chunk and head.",
    symbol_latex=r"F_{GDN}",
)
gdn_state = formula(
    "memory.state.gdn",
    b * (qkv_lin * k_conv * q + n_vh * d_kh * d_vh * fp32),
    "byte",
    "one gated delta-net's cache for b sequences: the convolution's last k_conv inputs of q, k, v in q bytes and one "
    "d_K×d_V state per value head in fp32",
    sources=[CACHE, GDN],
    symbol_latex=r"M_{GDN}",
)
