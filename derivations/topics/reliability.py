"""Proofs of the failure and checkpoint formulas; Young's interval derived by SymPy minimisation.

The cluster fails at the sum of n independent rates, n/M. Per checkpoint
interval τ the run writes for δ, and a failure (probability ≈ τ·n/M per
interval) costs the restart R plus on average τ/2 of lost work; dividing by τ
gives the wasted share. SymPy solves d(waste)/dτ = 0 for τ > 0 and the second
derivative is positive there: Young's √(2δM/n). Substituted back, goodput is
1 − √(2δn/M) − Rn/M.
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.derivations.vocabulary.proof import much_less
from llm_formulas.formulas.vocabulary.expressions import as_sympy
from llm_formulas.formulas.topics.reliability import DALY, LI, YOUNG
from llm_formulas.formulas.vocabulary.symbols import M_fail, P, R_restore, W_store, delta_ckpt, n, q_bf16, q_fp32, tau_ckpt


def cluster_mtbf() -> Derivation:
    d = Derivation("reliability.cluster_mtbf", "Cluster MTBF", (LI,))
    d.defines(
        "M_cluster",
        1 / (n / M_fail),
        "independent failures add their rates, n GPUs at 1/M each: the mean time between failures is the inverse of n/M",
    )
    d.concludes("reliability.cluster_mtbf")
    return d


def checkpoint_size() -> Derivation:
    d = Derivation("reliability.checkpoint.size", "Checkpoint size", (LI,))
    d.defines("S", P * q_bf16 + P * q_fp32 + 2 * P * q_fp32, "16-bit weights, fp32 master weights, Adam's momentum and variance; gradients are not saved")
    d.concludes("reliability.checkpoint.size")
    return d


def checkpoint_time() -> Derivation:
    d = Derivation("reliability.checkpoint.time", "Checkpoint write time", (LI,))
    d.defines("δ", P * (q_bf16 + 3 * q_fp32) / W_store, "the checkpoint's bytes at the storage bandwidth")
    d.concludes("reliability.checkpoint.time")
    return d


def wasted() -> Derivation:
    d = Derivation("reliability.wasted", "Time wasted by checkpoints and failures", (YOUNG, DALY))
    per_interval = d.defines(
        "W_τ", delta_ckpt + (tau_ckpt * n / M_fail) * (R_restore + tau_ckpt / 2),
        "one interval: the write δ, and with probability τ·n/M a failure costing R and on average τ/2 of redone work",
    )
    d.defines("w", per_interval / tau_ckpt, "per unit of time")
    d.concludes("reliability.wasted")
    return d


def young_daly() -> Derivation:
    d = Derivation("reliability.young_daly", "Young's optimal checkpoint interval, by minimisation", (YOUNG, DALY))
    waste = as_sympy(delta_ckpt / tau_ckpt + (R_restore + tau_ckpt / 2) * n / M_fail)
    slope = d.defines("dw/dτ", sp.diff(waste, tau_ckpt), "the wasted share's derivative in τ")
    roots = [root for root in sp.solve(sp.Eq(slope, 0), tau_ckpt) if root.is_positive]
    if len(roots) != 1:
        raise ValueError(f"expected one positive root, SymPy gave {roots}")
    optimum = d.solves("τ_opt", roots[0], "SymPy solves dw/dτ = 0 for τ > 0", unknown=tau_ckpt, target=0, of="dw/dτ")
    d.concludes("reliability.young_daly")
    d.defines("d²w/dτ²", sp.diff(waste, tau_ckpt, 2), "the curvature, 2δ/τ³")
    d.bounds("0", sp.Integer(0), "the curvature is positive: the root is a minimum", direction="lower")
    d.defines("w_opt", waste.subs(tau_ckpt, optimum), "the wasted share at the optimum")
    d.equals("√(2δn/M) + Rn/M", sp.sqrt(2 * delta_ckpt * n / M_fail) + R_restore * n / M_fail, "writes and lost work balance: each costs √(δn/2M)", aside=True)
    return d


def goodput() -> Derivation:
    d = Derivation("reliability.goodput", "Goodput at Young's interval", (YOUNG, DALY))
    waste = delta_ckpt / tau_ckpt + (R_restore + tau_ckpt / 2) * n / M_fail
    d.defines("G", 1 - waste.subs(tau_ckpt, sp.sqrt(2 * delta_ckpt * M_fail / n)), "what the wasted share leaves, at τ_opt")
    d.concludes("reliability.goodput")
    return d


def restart_share() -> Derivation:
    d = Derivation("reliability.restart_share", "Restarts alone", (LI,))
    d.defines("w", (delta_ckpt / tau_ckpt + (R_restore + tau_ckpt / 2) * n / M_fail).subs(delta_ckpt, 0), "checkpoints that cost nothing (δ = 0)")
    d.approximates(
        "Rn/M", R_restore * n / M_fail,
        "001 counts only the restart (the step in flight is lost): frequent checkpoints make τ/2 small",
        condition=much_less(tau_ckpt, 2 * R_restore),
        dropped=tau_ckpt * n / (2 * M_fail),
    )
    d.concludes("reliability.restart_share")
    return d


DERIVATIONS = (cluster_mtbf, checkpoint_size, checkpoint_time, wasted, young_daly, goodput, restart_share)
