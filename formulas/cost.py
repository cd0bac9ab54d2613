"""Rental cost of a training run, the wall-clock time of a GPU-hour budget, payback and tokens per dollar.

Cost is GPU-hours × the rental price per GPU-hour; H GPU-hours on n GPUs take
H/n hours (DeepSeek-AI 2024, DeepSeek-V3 Technical Report, Table 1 and §1).
A GPU bought at price c and rented out at c_rent per hour pays back in
c/(c_rent · 720 h) months (001); training buys X·U·3600/(6Ψ·c_rent) tokens per
dollar of rent.
"""

from __future__ import annotations

from formulas.catalogue import Source, formula
from formulas.symbols import H_gpu, P, U, X, c_flop, c_gpu, c_hour, c_month, c_rent, n, u_gpu

DEEPSEEK = Source("deepseek2024", "Table 1, training costs")
LI = Source("001", "GPU prices, rental and payback")

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
