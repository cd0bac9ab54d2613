"""Proofs of the cost formulas (DeepSeek-V3 Technical Report, Table 1; 001's price comparison).

The break-even rent solves the payback for the rent; the value ratio divides two
throughputs per dollar, in which the throughput itself cancels; 001's 3.35× for
the memory bandwidth is refuted (the H100's 3.35 TB/s over the 4090's 1008 GB/s is 3.32).
"""

from __future__ import annotations

from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.formulas.vocabulary.catalogue import get
import sympy as sp

from llm_formulas.formulas.topics.cost import DEEPSEEK, LI, LI_VALUE
from llm_formulas.formulas.vocabulary.symbols import (
    D, H_gpu, N_pay, R_tok, U, W_mem, W_ref, X, X_ref, c_gpu, c_hour, c_month, c_ref, c_rent, n, u_gpu, x_thr,
)


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
    flops = get("flops.training.approx").part
    d.defines(
        "D_USD",
        D / (flops / (X * U * c_hour) * c_rent),
        "tokens over what their GPU-hours, 6ΨD/(X·U·3600 s) at X·U, cost: D cancels",
    )
    d.concludes("cost.tokens_per_dollar")
    return d


def breakeven_rent() -> Derivation:
    d = Derivation("cost.breakeven_rent", "The rent at which a GPU pays back in N months", (LI,))
    d.defines("N(c_rent)", get("cost.payback_months").part, "months to pay back at the rent c_rent (cost.payback_months)")
    d.solves("c_rent(N)", c_gpu * c_hour / (N_pay * c_month), "the rent at which the payback takes N months: the price over N·720 hours",
             unknown=c_rent, target=N_pay, of="N(c_rent)")
    d.concludes("cost.breakeven_rent")
    return d


def value_ratio() -> Derivation:
    d = Derivation("cost.value_ratio", "Throughput per dollar of two GPUs", (LI_VALUE,))
    cheap = d.defines("R_ref/c_ref", R_tok / c_ref, "the cheaper GPU trains R tokens per second for its price c_ref")
    dear = d.defines("R/c", x_thr * R_tok / c_gpu, "the dearer one trains x times as many, for its price c")
    d.defines("ratio", sp.Mul(cheap, sp.Pow(dear, -1, evaluate=False), evaluate=False), "the cheaper GPU's throughput per dollar over the dearer one's")
    d.equals("c/(c_ref·x)", c_gpu / (c_ref * x_thr), "R cancels: the price ratio over the throughput ratio")
    d.concludes("cost.value_ratio")
    return d


def compute_ratio() -> Derivation:
    d = Derivation("cost.compute_ratio", "Peak compute of two GPUs", (LI_VALUE,))
    d.defines("X/X_ref", X / X_ref, "the datasheets' dense peaks over each other")
    d.concludes("cost.compute_ratio")
    return d


def bandwidth_ratio() -> Derivation:
    d = Derivation("cost.bandwidth_ratio", "Memory bandwidth of two GPUs", (LI_VALUE,))
    ratio = d.defines("W/W_ref", W_mem / W_ref, "the datasheets' memory bandwidths over each other")
    d.concludes("cost.bandwidth_ratio")
    d.refutes(
        "S26: 3.35×",
        sp.Rational("3.35"),
        "001 prints the H100's memory bandwidth as 3.35× the 4090's: that is the H100's 3.35 TB/s over a 4090 taken at 1 TB/s; "
        "the 4090's datasheet 1008 GB/s gives 3.32",
        correct=ratio.subs({W_mem: sp.Rational("3.35e12"), W_ref: sp.Rational("1.008e12")}),
        source=LI_VALUE,
    )
    return d


DERIVATIONS = (training, wall_clock, payback, tokens_per_dollar, breakeven_rent, value_ratio, compute_ratio, bandwidth_ratio)
