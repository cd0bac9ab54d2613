"""Rental cost of a training run and the wall-clock time of a GPU-hour budget.

Cost is GPU-hours × the rental price per GPU-hour; H GPU-hours on n GPUs take
H/n hours (DeepSeek-AI 2024, DeepSeek-V3 Technical Report, Table 1 and §1).
"""

from __future__ import annotations

from formulas.catalogue import Source, formula
from formulas.symbols import H_gpu, c_hour, c_rent, n

DEEPSEEK = Source("DeepSeek-AI 2024, DeepSeek-V3 Technical Report", "Table 1, training costs")

cost = formula(
    "cost.training",
    H_gpu * c_rent,
    "dollar",
    "rental cost of a run: GPU-hours × price per GPU-hour",
    sources=[DEEPSEEK],
    symbol_latex=r"\mathrm{cost}_{train}",
)
wall_clock = formula(
    "cost.wall_clock",
    H_gpu * c_hour / n,
    "second",
    "wall-clock time of H GPU-hours spread over n GPUs",
    sources=[DEEPSEEK],
    symbol_latex=r"T_{wall}",
)
