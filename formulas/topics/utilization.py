"""Utilization from measured rates and iteration times, with the physical FLOP counts.

Percent of peak X_run/X and aggregate n·X_run from a measured per-GPU rate
(Narayanan et al. 2021, Table 1); MFU of one iteration, F_model/(n·X·τ) with
F_model = 72·B·s·l·h²(1 + s/6h + V/12lh), and its hardware counterpart under
selective recompute, which also runs QKᵀ and scores·V forward again
(4·B·s²·h·l more; Korthikanti et al. 2022 §6); MFU from a token throughput with
the full-square attention count 6Ψ + 12·l·a·d_head·s per token (Chowdhery et
al. 2022, Appendix B), and without self-attention, 6Ψ (PaLM Table 3's first
figure); the attention FLOPs per token, full square or causal; the training
time of Narayanan's Eq. 3 at a measured rate; and two measured times against
each other: the overhead τ/τ₀ − 1 of a run over its baseline (Korthikanti
Table 4) and the throughput increase τ₀/τ − 1 of a faster run (Table 5).
"""

from __future__ import annotations

from llm_formulas.formulas.vocabulary.catalogue import Source, formula
from llm_formulas.formulas.vocabulary.examples import worked_example
from llm_formulas.formulas.vocabulary.symbols import (
    B, D, P, R_tok, U, U_hw, V, X, X_run, a, c_flop, c_mac, c_token, causal, d_head, f_remat, h, l, n, s, tau, tau_0,
)

NARAYANAN = Source("narayanan2021", "Table 1; §5.1, Eq. 3")
KORTHIKANTI = Source("korthikanti2022", "§6, model and hardware FLOPs")
PALM = Source("chowdhery2022", "Appendix B, model FLOPs utilization")
KAPLAN = Source("kaplan2020", "§2.1, Table 1")
PALM_T3 = Source("chowdhery2022", "Table 3, MFU without and with self-attention")
PALM_REMAT = Source("chowdhery2022", "§4 and §4.1: one activation tensor saved per layer, the rest rematerialized; MFU 46.2 %, HFU 57.8 %")
KORTHIKANTI_T4 = Source("korthikanti2022", "Table 4, time overheads of one layer")
KORTHIKANTI_T5 = Source("korthikanti2022", "Table 5, throughput increase")

MODEL_FLOPS = 36 * c_mac * B * s * l * h**2 * (1 + s / (6 * h) + V / (12 * l * h))  # 72Bslh²(…) FLOP
SELECTIVE_RECOMPUTE = 2 * c_mac * B * s**2 * h * l  # 4Bs²hl: QKᵀ and scores·V of every layer, forward once more

of_peak = formula(
    "utilization.of_peak",
    X_run / X,
    "1",
    "share of the peak a measured per-GPU rate reaches (Megatron's 'percentage of theoretical peak')",
    sources=[NARAYANAN],
    symbol_latex=r"U_{peak}",
)
aggregate = formula(
    "utilization.aggregate",
    n * X_run,
    "FLOP/second",
    "aggregate FLOP/s of n GPUs at a measured per-GPU rate",
    sources=[NARAYANAN],
    symbol_latex=r"X_{agg}",
)
mfu_iteration = formula(
    "utilization.mfu.iteration",
    MODEL_FLOPS / (n * X * tau),
    "1",
    "model FLOPs utilization of one iteration of B sequences that took τ on n GPUs",
    sources=[KORTHIKANTI],
    related=["flops.training"],
    symbol_latex=r"MFU_{iter}",
)
hfu_selective = formula(
    "utilization.hfu.selective",
    (MODEL_FLOPS + SELECTIVE_RECOMPUTE) / (n * X * tau),
    "1",
    "hardware FLOPs utilization with selective recompute: the model FLOPs plus QKᵀ and scores·V run again (4Bs²hl)",
    sources=[KORTHIKANTI],
    related=["utilization.mfu.iteration", "conventions.korthikanti.hfu"],
    symbol_latex=r"HFU_{sel}",
)
selective_overhead = formula(
    "utilization.selective_overhead",
    SELECTIVE_RECOMPUTE / MODEL_FLOPS,
    "1",
    "FLOPs selective recompute adds, over the model FLOPs: 4Bs²hl / 72Bslh²(1 + s/6h + V/12lh)",
    sources=[KORTHIKANTI],
    related=["conventions.korthikanti.overhead"],
    symbol_latex=r"\delta_{sel}",
)
attention_per_token = formula(
    "utilization.attention_per_token",
    c_mac * l * h * (2 * s - causal * (s - 1)) / c_token,
    "FLOP/token",
    "forward FLOPs of QKᵀ and scores·V per token: 4lhs over the full square, 2lh(s+1) over the causal triangle",
    sources=[KAPLAN],
    related=["conventions.kaplan.forward_per_token"],
    symbol_latex=r"F_{attn}",
)
training_per_token = formula(
    "utilization.training_per_token",
    3 * c_flop * P + 6 * c_mac * l * a * d_head * s / c_token,
    "FLOP/token",
    "training FLOPs per token with full-square attention: 6Ψ + 12·l·a·d_head·s (PaLM's count)",
    sources=[PALM],
    related=["utilization.attention_per_token"],
    symbol_latex=r"F_{tok}",
)
mfu_throughput = formula(
    "utilization.mfu.throughput",
    R_tok * training_per_token.part / (n * X),
    "1",
    "model FLOPs utilization from a token throughput: R·(6Ψ + 12·l·a·d_head·s)/(n·X)",
    sources=[PALM],
    related=["utilization.training_per_token"],
    symbol_latex=r"MFU_{tok}",
)
mfu_throughput_weights = formula(
    "utilization.mfu.throughput.weights",
    R_tok * 3 * c_flop * P / (n * X),
    "1",
    "model FLOPs utilization from a token throughput without self-attention: R·6Ψ/(n·X) (PaLM Table 3's first figure)",
    sources=[PALM, PALM_T3],
    related=["utilization.mfu.throughput"],
    symbol_latex=r"MFU_{tok}^{6N}",
)
hfu_remat = formula(
    "utilization.hfu.remat",
    U * (1 + f_remat / 3),
    "1",
    "HFU of a run whose backward runs a share f of the forward again: the forward is a third of the training FLOPs",
    sources=[PALM, PALM_REMAT],
    related=["utilization.training_per_token", "utilization.remat_share", "cluster.hfu"],
    symbol_latex=r"HFU_{remat}",
)
remat_share = formula(
    "utilization.remat_share",
    3 * (U_hw / U - 1),
    "1",
    "share of the forward a run rematerializes, from its published MFU and HFU: 3(HFU/MFU − 1)",
    sources=[PALM_REMAT],
    related=["utilization.hfu.remat"],
    symbol_latex=r"f_{remat}",
)
time_overhead = formula(
    "utilization.time_overhead",
    tau / tau_0 - 1,
    "1",
    "overhead of a measured time over its baseline's for the same work: τ/τ₀ − 1 (negative when it is faster)",
    sources=[KORTHIKANTI_T4],
    related=["utilization.throughput_gain"],
    symbol_latex=r"\delta_{\tau}",
)
throughput_gain = formula(
    "utilization.throughput_gain",
    tau_0 / tau - 1,
    "1",
    "throughput increase of a run that does the baseline's work in τ instead of τ₀: τ₀/τ − 1",
    sources=[KORTHIKANTI_T5],
    related=["utilization.time_overhead"],
    symbol_latex=r"\gamma_{\tau}",
)
training_time_eq3 = formula(
    "utilization.training_time.megatron",
    48 * c_mac * D * l * h**2 * (1 + s / (6 * h) + V / (16 * l * h)) / (c_token * n * X_run),
    "second",
    "training time by Narayanan's Eq. 3: D/(B·s) iterations of 96·B·s·l·h²(1 + s/6h + V/16lh) FLOPs at n·X_run",
    sources=[NARAYANAN],
    related=["flops.megatron", "conventions.megatron.eq4"],
    symbol_latex=r"T_{Eq.3}",
)

# --- worked examples (the papers' own figures; llm-formulas validate runs every row) ------------
worked_example(
    "Chowdhery-T3",
    "Megatron-Turing NLG on 2240 A100 at 65.43K tokens/s, PaLM's N = 529.6B, without self-attention",
    PALM_T3,
    "utilization.mfu.throughput.weights",
    {"R_tok": "65.43e3", "P": "529.6e9", "n": 2240, "X": "312e12"},
    claimed="0.297",
    claimed_text="29.7 % (with self-attention 30.2 %)",
)
worked_example(
    "Chowdhery-4.1",
    "PaLM 540B's partial rematerialization: MFU 46.2 %, HFU 57.8 % (one activation tensor kept per layer, the rest recomputed)",
    PALM_REMAT,
    "utilization.remat_share",
    {"U": "0.462", "U_hw": "0.578"},
    claimed=None,
    claimed_text="the share is not printed: the two utilizations imply three quarters of the forward (full recompute is 1)",
)
worked_example(
    "Korthikanti-T4",
    "One layer of the 22B model, full recompute: 27.2 ms forward and backward against the baseline's 19.6 ms",
    KORTHIKANTI_T4,
    "utilization.time_overhead",
    {"tau": "27.2e-3", "tau_0": "19.6e-3"},
    claimed="0.39",
    claimed_text="39 % overhead",
)
worked_example(
    "Korthikanti-T5",
    "The 530B model: 37.83 s per iteration with sequence parallelism and selective recompute, 49.05 s with full recompute",
    KORTHIKANTI_T5,
    "utilization.throughput_gain",
    {"tau": "37.83", "tau_0": "49.05"},
    claimed="0.297",
    claimed_text="29.7 % throughput increase",
)
