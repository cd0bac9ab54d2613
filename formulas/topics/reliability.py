"""Failures and checkpoints: cluster MTBF, checkpoint size and time, Young–Daly interval, goodput.

n GPUs that each fail once per M on average fail together once per M/n (001:
one failure per GPU per month on 2048 GPUs is one every 21 minutes). A run
that checkpoints every τ, spends δ writing each checkpoint, and after a failure
loses R to restart plus on average τ/2 of work since the last checkpoint wastes
δ/τ + (R + τ/2)·n/M of its time (first order in 1/M); the interval that
minimises it is Young's √(2δM/n) (Young 1974; Daly 2006), and goodput is the
rest. A full checkpoint of mixed-precision Adam holds the 16-bit weights and
the fp32 master copy, momentum and variance, 14Ψ bytes.
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.formulas.vocabulary.catalogue import Source, formula
from llm_formulas.formulas.vocabulary.examples import worked_example
from llm_formulas.formulas.vocabulary.symbols import M_fail, P, R_restore, W_store, delta_ckpt, n, q_bf16, q_fp32, tau_ckpt

LI = Source("001", "fault tolerance: one failure per GPU per month, a 10-minute restore")
YOUNG = Source("young1974", "Eq. for T_opt = √(2δM)")
DALY = Source("daly2006", "§3")

cluster_mtbf = formula(
    "reliability.cluster_mtbf",
    M_fail / n,
    "second",
    "mean time between failures of n GPUs that fail independently, each once per M",
    sources=[LI],
    symbol_latex=r"M_{cluster}",
)
checkpoint_size = formula(
    "reliability.checkpoint.size",
    P * (q_bf16 + 3 * q_fp32),
    "byte",
    "bytes of a full checkpoint of mixed-precision Adam: 16-bit weights, fp32 master weights, momentum, variance (14Ψ)",
    sources=[LI],
    related=["memory.model_states"],
    symbol_latex=r"S_{ckpt}",
)
checkpoint_time = formula(
    "reliability.checkpoint.time",
    P * (q_bf16 + 3 * q_fp32) / W_store,
    "second",
    "time to write (or read back) a full checkpoint at the storage bandwidth",
    sources=[LI],
    related=["reliability.checkpoint.size"],
    symbol_latex=r"\delta_{ckpt}",
)
wasted = formula(
    "reliability.wasted",
    delta_ckpt / tau_ckpt + (R_restore + tau_ckpt / 2) * n / M_fail,
    "1",
    "share of the run's time lost to checkpoints, restarts and recomputed work (first order in 1/M)",
    sources=[YOUNG, DALY, LI],
    symbol_latex=r"w",
)
young_daly = formula(
    "reliability.young_daly",
    sp.sqrt(2 * delta_ckpt * M_fail / n),
    "second",
    "checkpoint interval that minimises the wasted time: Young's √(2δ·M/n)",
    sources=[YOUNG, DALY],
    related=["reliability.wasted"],
    symbol_latex=r"\tau_{opt}",
)
goodput = formula(
    "reliability.goodput",
    1 - sp.sqrt(2 * delta_ckpt * n / M_fail) - R_restore * n / M_fail,
    "1",
    "share of the time that trains at Young's interval: 1 − √(2δn/M) − R·n/M",
    sources=[YOUNG, DALY],
    related=["reliability.young_daly", "reliability.wasted"],
    symbol_latex=r"G",
)
restart_share = formula(
    "reliability.restart_share",
    R_restore * n / M_fail,
    "1",
    "share of the time spent restarting when checkpoints cost nothing: R over the cluster MTBF",
    sources=[LI],
    related=["reliability.wasted"],
    symbol_latex=r"w_{restart}",
)

MONTH = 30 * 86400
worked_example(
    "S21",
    "2048 GPUs, each failing once a month: the cluster's time between failures",
    LI,
    "reliability.cluster_mtbf",
    {"M_fail": MONTH, "n": 2048},
    claimed=20 * 60,
    claimed_text="about one failure every 20 minutes",
    scale=60,
    scale_name="minutes",
)
worked_example(
    "S22",
    "a 10-minute restore after each of those failures: the share of the compute lost",
    LI,
    "reliability.restart_share",
    {"M_fail": MONTH, "n": 2048, "R_restore": 600},
    claimed="0.5",
    claimed_text="half of the effective compute wasted",
)
