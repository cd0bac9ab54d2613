"""Proofs of the cost formulas (DeepSeek-V3 Technical Report, Table 1)."""

from __future__ import annotations

from derivations.engine import Derivation
from formulas.catalogue import get
from formulas.cost import DEEPSEEK, LI
from formulas.symbols import D, H_gpu, P, U, X, c_gpu, c_hour, c_month, c_rent, n, u_gpu


def training() -> Derivation:
    d = Derivation("cost.training", "Rental cost of a run", (DEEPSEEK,))
    d.defines("cost", H_gpu * c_rent / u_gpu, "each GPU-hour is billed at the rental price (per GPU)")
    d.concludes("cost.training")
    return d


def wall_clock() -> Derivation:
    d = Derivation("cost.wall_clock", "Wall-clock time of a GPU-hour budget", (DEEPSEEK,))
    d.defines("T", H_gpu * c_hour / (n * u_gpu), "n GPUs burn n GPU-hours per hour")
    d.concludes("cost.wall_clock")
    return d


def payback() -> Derivation:
    d = Derivation("cost.payback_months", "Months to pay back a GPU", (LI,))
    d.defines("N", c_gpu / (c_rent * c_month / c_hour), "the price over a month's rent, 720 hours at c_rent")
    d.concludes("cost.payback_months")
    return d


def tokens_per_dollar() -> Derivation:
    d = Derivation("cost.tokens_per_dollar", "Training tokens per dollar", (LI, DEEPSEEK))
    flops = get("flops.training.approx").expr
    d.defines(
        "D_USD",
        D / (flops / (X * U * c_hour) * c_rent),
        "tokens over what their GPU-hours, 6ΨD/(X·U·3600 s) at X·U, cost: D cancels",
    )
    d.concludes("cost.tokens_per_dollar")
    return d


DERIVATIONS = (training, wall_clock, payback, tokens_per_dollar)
