"""Proofs of the cost formulas (DeepSeek-V3 Technical Report, Table 1)."""

from __future__ import annotations

from derivations.engine import Derivation
from formulas.cost import DEEPSEEK
from formulas.symbols import H_gpu, c_hour, c_rent, n


def training() -> Derivation:
    d = Derivation("cost.training", "Rental cost of a run", (DEEPSEEK,))
    d.defines("cost", H_gpu * c_rent, "each GPU-hour is billed at the rental price")
    d.concludes("cost.training")
    return d


def wall_clock() -> Derivation:
    d = Derivation("cost.wall_clock", "Wall-clock time of a GPU-hour budget", (DEEPSEEK,))
    d.defines("T", H_gpu * c_hour / n, "n GPUs burn n GPU-hours per hour")
    d.concludes("cost.wall_clock")
    return d


DERIVATIONS = (training, wall_clock)
