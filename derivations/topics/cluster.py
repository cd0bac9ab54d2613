"""Proofs of the cluster-sizing formulas (000 §3.5, §4.1.1; 002; Narayanan 2021).

The bubble is counted in pipeline slots; Amdahl's speed-up is the ratio of
two run times and tends to 1/f; training time divides 6ΨD (``flops``) by the
cluster's effective FLOP/s, and the GPU count for a deadline and the implied
utilization are obtained by SymPy solving that same equation for n or U.
002's slips on the 34B estimate (1.02e22 FLOPs, 27700 GPU-hours) are refuted.
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.derivations.vocabulary.proof import much_greater
from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.topics.cluster import AMDAHL, KORTHIKANTI, LLAMA2_HOURS, NARAYANAN, SIZING, TRAINING_TIME
from llm_formulas.formulas.vocabulary.symbols import D, H_gpu, P, U, X, c_hour, f, m, n, p, tau, v


DAY = 86400  # seconds
LLAMA2_34B_RUN = {P: 34 * 10**9, D: 5 * 10**9, X: 312 * 10**12, U: sp.Rational(35, 100)}  # 002's 34B estimate


def solved_for(expr: sp.Basic, target: sp.Basic, unknown: sp.Symbol) -> sp.Basic:
    """The unique solution of expr = target for ``unknown``: (target − expr|₀)/slope when ``expr`` is affine in it
    (its derivative free of it: a memory linear in the batch), else SymPy's solve. The ``solves`` step that holds
    it proves it either way; SymPy's solve took 10 s on the serving memory, rebuilt for every mutant that reads it."""
    slope = sp.diff(expr, unknown)
    if slope != 0 and not slope.has(unknown) and not target.has(unknown):
        return (target - expr.xreplace({unknown: 0})) / slope
    solutions = sp.solve(sp.Eq(expr, target), unknown)
    if len(solutions) != 1:
        raise ValueError(f"expected one solution for {unknown}, SymPy gave {solutions}")
    return solutions[0]


def bubble() -> Derivation:
    d = Derivation("cluster.bubble", "Pipeline bubble (p−1)/m", (NARAYANAN,))
    d.defines("T_pipe", (m + p - 1) * tau, "m micro-batches through p stages take m + p − 1 slots of τ (fill, steady state, drain)")
    d.defines("T_ideal", m * tau, "a GPU does useful work in m of them")
    d.defines("β", ((m + p - 1) * tau - m * tau) / (m * tau), "idle time over ideal time")
    d.equals("(p−1)/m", (p - 1) / m, "p − 1 idle slots per m useful ones")
    d.concludes("cluster.bubble")
    return d


def bubble_interleaved() -> Derivation:
    d = Derivation("cluster.bubble.interleaved", "Interleaved bubble (p−1)/(v·m)", (NARAYANAN,))
    d.defines(
        "β_int",
        (p - 1) * (tau / v) / (m * tau),
        "with v chunks per GPU each slot lasts τ/v: the fill and drain still take p − 1 slots, the useful work m·τ",
    )
    d.equals("(p−1)/(vm)", (p - 1) / (v * m), "the bubble shrinks v-fold (at v times the PP messages)")
    d.concludes("cluster.bubble.interleaved")
    return d


def amdahl() -> Derivation:
    d = Derivation("cluster.amdahl", "Amdahl's law", (AMDAHL,))
    d.defines("T_1", tau, "one worker takes τ")
    d.defines("T_n", f * tau + (1 - f) * tau / n, "the serial share fτ is not sped up; the rest divides over n workers")
    d.defines("S", tau / (f * tau + (1 - f) * tau / n), "speed-up T_1/T_n")
    d.equals("1/(f + (1−f)/n)", 1 / (f + (1 - f) / n), "τ cancels")
    d.concludes("cluster.amdahl")
    d.approximates(
        "1/f",
        1 / f,
        "no number of workers beats the serial part: the speed-up approaches 1/f",
        condition=much_greater(n, 1),
        dropped=-(1 - f) / (f * (f * n + 1 - f)),
        of="S",
    )
    return d


def _training_time(target: str, flops_id: str, what: str) -> Derivation:
    d = Derivation(target, f"Training time, {what}", (TRAINING_TIME,))
    total = d.defines("C", get(flops_id).dimensioned, f"{what} for D tokens")
    d.defines("T", total / (n * X * U), "n GPUs each deliver X·U FLOP/s")
    d.concludes(target)
    return d


def training_time() -> Derivation:
    return _training_time("cluster.training_time", "flops.training.approx", "6ΨD FLOPs")


def training_time_recompute() -> Derivation:
    return _training_time("cluster.training_time.recompute", "flops.training.recompute.approx", "8ΨD FLOPs (full recompute)")


def gpus_for_deadline() -> Derivation:
    d = Derivation("cluster.gpus_for_deadline", "GPUs for a deadline: solve T = τ for n", (SIZING,))
    time = d.defines("T", get("cluster.training_time").part, "the training time on n GPUs")
    d.solves("n", solved_for(time, tau, n), "SymPy solves T(n) = τ for n", unknown=n, target=tau, of="T")
    d.concludes("cluster.gpus_for_deadline")
    d.refutes(
        "002: 4466 × 1.2 = 5280",
        sp.Integer(5280),
        "002 adds 20 % to 4466 A100s for the communication of the gradient update and prints 5280; 4466 × 1.2 is 5359.2",
        correct=sp.Integer(4466) * sp.Rational(6, 5),
        source=LLAMA2_HOURS,
    )
    return d


def mfu() -> Derivation:
    d = Derivation("cluster.mfu", "Utilization a run implies: solve T = τ for U", (SIZING, KORTHIKANTI))
    time = d.defines("T", get("cluster.training_time").part, "a run of n GPUs that took τ")
    d.solves("U", solved_for(time, tau, U), "SymPy solves T(U) = τ for U: the model FLOPs over what the GPUs could do", unknown=U, target=tau, of="T")
    d.concludes("cluster.mfu")
    return d


def hfu() -> Derivation:
    d = Derivation("cluster.hfu", "Hardware FLOPs utilization counts the recompute", (KORTHIKANTI,))
    time = d.defines("T", get("cluster.training_time.recompute").part, "the GPUs also ran the recomputed forward: 8ΨD")
    d.solves("HFU", solved_for(time, tau, U), "SymPy solves T(U) = τ for U", unknown=U, target=tau, of="T")
    d.concludes("cluster.hfu")
    d.equals("4/3 MFU", sp.Rational(4, 3) * get("cluster.mfu").part, "4/3 of the MFU of the same run", of="HFU")
    return d


def gpu_hours() -> Derivation:
    d = Derivation("cluster.gpu_hours", "GPU-hours of a run", (LLAMA2_HOURS,))
    time = d.defines("T", get("cluster.training_time").part, "the run's wall-clock time on n GPUs")
    hours = d.defines("H_GPU", sp.Mul(n, time, 1 / c_hour, evaluate=False), "n GPUs for T seconds, in hours: n cancels")
    d.concludes("cluster.gpu_hours")
    d.refutes(
        "002: C = 1.02e22",
        sp.Rational("1.02e22"),
        "002 prints 6 × 3.4e10 × 5e9 as 1.02e22 FLOPs; it is 1.02e21",
        correct=get("flops.training.approx").dimensioned.subs({P: 34 * 10**9, D: 5 * 10**9}),
        source=LLAMA2_HOURS,
        unit="FLOP",
    )
    d.refutes(
        "S17: 27700 GPU-hours",
        sp.Integer(27700),
        "002 then divides 1.09e22 (sic) by 109.2 TFLOP/s; the correct 1.02e21 FLOPs take about 2595 GPU-hours",
        correct=hours.subs(LLAMA2_34B_RUN),
        source=LLAMA2_HOURS,
    )
    d.refutes(
        "002: 14.5 days on 80 A100",
        sp.Rational("14.5") * DAY,
        "002 spreads its 27700 GPU-hours over 80 A100s; the correct 2595 GPU-hours take 1.35 days: "
        "the 14.5 days inherit the 10× error of C",
        correct=time.subs({**LLAMA2_34B_RUN, n: 80}),
        source=LLAMA2_HOURS,
        unit="second",
    )
    return d


def mfu_from_gpu_hours() -> Derivation:
    d = Derivation("cluster.mfu.gpu_hours", "Utilization implied by published GPU-hours", (LLAMA2_HOURS,))
    hours = d.defines("H_GPU", get("cluster.gpu_hours").part, "the GPU-hours a run at utilization U needs")
    implied = d.solves("U", solved_for(hours, H_gpu, U), "SymPy solves H(U) = the published GPU-hours for U", unknown=U, target=H_gpu, of="H_GPU")
    d.concludes("cluster.mfu.gpu_hours")
    d.refutes(
        "S16a: LLaMA-2 7B at 40.5 %",
        sp.Rational("0.405"),
        "002 truncates 74 786 / 184 320 = 40.57 % to 40.5 %; rounded it is 40.6 %",
        correct=implied.subs({P: 7 * 10**9, D: 2 * 10**12, X: 312 * 10**12, H_gpu: 184320}),
        source=LLAMA2_HOURS,
    )
    return d


DERIVATIONS = (
    bubble,
    bubble_interleaved,
    amdahl,
    training_time,
    training_time_recompute,
    gpus_for_deadline,
    mfu,
    hfu,
    gpu_hours,
    mfu_from_gpu_hours,
)
