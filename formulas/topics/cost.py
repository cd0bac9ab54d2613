"""Rental cost of a training run, the wall-clock time of a GPU-hour budget, payback and tokens per dollar.

Cost is GPU-hours × the rental price per GPU-hour; H GPU-hours on n GPUs take
H/n hours (DeepSeek-AI 2024, DeepSeek-V3 Technical Report, Table 1 and §1).
A GPU bought at price c and rented out at c_rent per hour pays back in
c/(c_rent · 720 h) months (001); training buys X·U·3600/(6Ψ·c_rent) tokens per
dollar of rent, and the rent at which it pays back in N months is the price over
N·720 hours. Comparing two GPUs (001's H100 against an RTX 4090), throughput per
dollar goes as the price ratio over the throughput ratio: $30,000 over $1,600 at
twice the throughput is 9.4, the "close to 10×" of LambdaLabs' table; the peak
compute and memory bandwidth ratios are the datasheets' figures over each other.
"""

from __future__ import annotations

from llm_formulas.formulas.vocabulary.catalogue import Source, formula
from llm_formulas.formulas.vocabulary.examples import worked_example
from llm_formulas.formulas.vocabulary.symbols import (
    H_gpu, N_pay, P, U, W_mem, W_ref, X, X_ref, c_flop, c_gpu, c_hour, c_month, c_ref, c_rent, n, u_gpu, x_thr,
)

DEEPSEEK = Source("deepseek2024", "Table 1, training costs")
LI = Source("001", "GPU prices, rental and payback")
LI_VALUE = Source("001", "LambdaLabs' single-GPU training throughput and throughput per dollar: H100 against RTX 4090")

cost = formula(
    "cost.training",
    H_gpu * c_rent / u_gpu,
    "dollar",
    "rental cost of a run: GPU-hours × price per GPU-hour",
    sources=[DEEPSEEK],
    symbol_latex=r"\mathrm{cost}_{train}",
)
wall_clock = formula(
    "cost.wall_clock",
    H_gpu * c_hour / (n * u_gpu),
    "second",
    "wall-clock time of H GPU-hours spread over n GPUs",
    sources=[DEEPSEEK],
    symbol_latex=r"T_{wall}",
)
payback = formula(
    "cost.payback_months",
    c_gpu * c_hour / (c_rent * c_month),
    "1",
    "months a GPU rented out around the clock takes to earn its purchase price",
    sources=[LI],
    symbol_latex=r"N_{payback}",
)
tokens_per_dollar = formula(
    "cost.tokens_per_dollar",
    X * U * c_hour / (3 * c_flop * P * c_rent),
    "token/dollar",
    "training tokens one dollar of rent buys: an hour of X·U FLOP/s over 6Ψ FLOPs per token",
    sources=[LI, DEEPSEEK],
    related=["cost.training", "flops.training.approx"],
    symbol_latex=r"D_{USD}",
)
breakeven_rent = formula(
    "cost.breakeven_rent",
    c_gpu * c_hour / (N_pay * c_month),
    "dollar",
    "rent per GPU-hour at which a GPU rented out around the clock earns its price in N months",
    sources=[LI],
    related=["cost.payback_months"],
    symbol_latex=r"c_{GPU\cdot h}^{N}",
)
value_ratio = formula(
    "cost.value_ratio",
    c_gpu / (c_ref * x_thr),
    "1",
    "throughput per dollar of the cheaper GPU over the dearer one's: the price ratio over the throughput ratio",
    sources=[LI_VALUE],
    symbol_latex=r"V_{ref}/V",
)
compute_ratio = formula(
    "cost.compute_ratio",
    X / X_ref,
    "1",
    "peak FLOP/s of one GPU over the compared GPU's",
    sources=[LI_VALUE],
    related=["cost.value_ratio"],
    symbol_latex=r"X/X_{ref}",
)
bandwidth_ratio = formula(
    "cost.bandwidth_ratio",
    W_mem / W_ref,
    "1",
    "memory bandwidth of one GPU over the compared GPU's",
    sources=[LI_VALUE],
    related=["cost.value_ratio"],
    symbol_latex=r"W_{mem}/W_{ref}",
)

# --- worked examples (001's price comparison) ----------------------------------------
worked_example(
    "S24",
    "RTX 4090 ($1,600) against H100 ($30,000) at half its training throughput: throughput per dollar",
    LI_VALUE,
    "cost.value_ratio",
    {"c_gpu": 30000, "c_ref": 1600, "x_thr": 2},
    claimed=10,
    claimed_text="the gap between 4090 and H100 close to 10×",
)
worked_example(
    "S25",
    "H100 SXM (989 TFLOPS dense FP16) against RTX 4090 (330 TFLOPS FP16): peak compute",
    LI_VALUE,
    "cost.compute_ratio",
    {"X": 989 * 10**12, "X_ref": 330 * 10**12},
    claimed=3,
    claimed_text="H100's FP16 compute about 3× the 4090's",
)
worked_example(
    "S26",
    "H100 SXM (3.35 TB/s) against RTX 4090 (1008 GB/s): memory bandwidth",
    LI_VALUE,
    "cost.bandwidth_ratio",
    {"W_mem": "3.35e12", "W_ref": "1.008e12"},
    claimed="3.35",
    claimed_text="memory bandwidth 3.35×",
    slip="3.35 is the H100's 3.35 TB/s over a 4090 taken at 1 TB/s; its 1008 GB/s gives 3.32",
)
worked_example(
    "S27",
    "An H100 bought at $30,000 that pays back in 7 months: the rent per GPU-hour that implies",
    LI,
    "cost.breakeven_rent",
    {"c_gpu": 30000, "N_pay": 7},
    claimed=None,
    claimed_text="about 7 months at list price (the list price itself is not in the text)",
    scale_name="$/GPU-hour",
)
