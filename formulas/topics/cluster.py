"""Cluster sizing: bubbles, Amdahl, training time, GPUs and utilization (000 §3.5, §4.1.1; 002; Narayanan 2021).

Pipeline bubble (p−1)/m for GPipe/1F1B, (p−1)/(v·m) interleaved. Amdahl's
speed-up with serial fraction f on n workers: 1/(f + (1−f)/n). Training time
6ΨD/(n·X·U), 8ΨD/(n·X·U) with full recompute; the GPUs a deadline τ needs,
6ΨD/(X·U·τ); the utilization a published run implies (MFU, 6ΨD/(n·X·τ)) and
the hardware utilization that also counts the recompute (HFU, 8ΨD/(n·X·τ));
GPU-hours 6ΨD/(X·U·3600 s) and the MFU implied by published GPU-hours.
"""

from __future__ import annotations

from llm_formulas.formulas.vocabulary.catalogue import Condition, Source, formula
from llm_formulas.formulas.vocabulary.examples import worked_example
from llm_formulas.formulas.vocabulary.symbols import D, H_gpu, P, U, X, c_flop, c_hour, f, m, n, p, tau, u_gpu, v

AMDAHL = Source("000", "§3.5.1, Amdahl's law")
TRAINING_TIME = Source("000", "§3.5.3, training time")
SIZING = Source("000", "§4.1.1, cluster size")
LLAMA2_HOURS = Source("002", "§1.2, GPU-hours and utilization")
NARAYANAN = Source("narayanan2021", "§2.2, pipeline bubble")
KORTHIKANTI = Source("korthikanti2022", "§6, MFU and HFU")

SIX_PSI_D = Condition("6ΨD training FLOPs (s ≪ 6h, V ≪ 12lh)")

bubble = formula(
    "cluster.bubble",
    (p - 1) / m,
    "1",
    "pipeline bubble of GPipe/1F1B: idle time over ideal compute time, p stages, m micro-batches",
    sources=[NARAYANAN, Source("000", "§3.3.2.1, pipeline parallelism")],
    symbol_latex=r"\beta",
)
bubble_interleaved = formula(
    "cluster.bubble.interleaved",
    (p - 1) / (v * m),
    "1",
    "pipeline bubble of the interleaved 1F1B schedule with v model chunks per GPU",
    sources=[NARAYANAN],
    related=["cluster.bubble"],
    symbol_latex=r"\beta_{int}",
)
amdahl = formula(
    "cluster.amdahl",
    1 / (f + (1 - f) / n),
    "1",
    "Amdahl speed-up on n workers when a fraction f of the work is serial",
    sources=[AMDAHL, Source("amdahl1967")],
    notes="Amdahl's law is often written 1/((1−f)+f/N) with f the parallel share; here f is the serial share (Yu 2024 (000): 0.05 %)",
    symbol_latex=r"S_{Amdahl}",
)
training_time = formula(
    "cluster.training_time",
    3 * c_flop * P * D / (n * X * U),
    "second",
    "training time: 6ΨD FLOPs on n GPUs of peak X at utilization U",
    sources=[TRAINING_TIME],
    conditions=[SIX_PSI_D],
    related=["flops.training.approx"],
    symbol_latex=r"T_{train}",
)
training_time_recompute = formula(
    "cluster.training_time.recompute",
    4 * c_flop * P * D / (n * X * U),
    "second",
    "training time with full activation recompute: 8ΨD FLOPs on n GPUs of peak X at utilization U",
    sources=[TRAINING_TIME],
    conditions=[SIX_PSI_D],
    related=["flops.training.recompute.approx", "cluster.training_time"],
    symbol_latex=r"T_{train}^{recompute}",
)
gpus_for_deadline = formula(
    "cluster.gpus_for_deadline",
    3 * c_flop * P * D / (X * U * tau) * u_gpu,
    "GPU",
    "GPUs needed to train on D tokens within τ: 6ΨD/(X·U·τ)",
    sources=[SIZING],
    conditions=[SIX_PSI_D],
    related=["cluster.training_time"],
    symbol_latex=r"n_{GPU}",
)
mfu = formula(
    "cluster.mfu",
    3 * c_flop * P * D / (n * X * tau),
    "1",
    "model FLOPs utilization a run implies: 6ΨD over what n GPUs could do in τ",
    sources=[SIZING, KORTHIKANTI],
    conditions=[SIX_PSI_D],
    related=["cluster.training_time", "cluster.hfu"],
    symbol_latex=r"MFU",
)
hfu = formula(
    "cluster.hfu",
    4 * c_flop * P * D / (n * X * tau),
    "1",
    "hardware FLOPs utilization with full recompute: the recomputed forward counted too (8ΨD)",
    sources=[KORTHIKANTI],
    conditions=[SIX_PSI_D],
    related=["cluster.mfu"],
    symbol_latex=r"HFU",
)
gpu_hours = formula(
    "cluster.gpu_hours",
    3 * c_flop * P * D / (X * U * c_hour) * u_gpu,
    "GPU",
    "GPU-hours of a run: 6ΨD FLOPs at X·U per GPU, in hours",
    sources=[LLAMA2_HOURS],
    conditions=[SIX_PSI_D],
    related=["cluster.training_time"],
    symbol_latex=r"H_{GPU}",
)
mfu_from_gpu_hours = formula(
    "cluster.mfu.gpu_hours",
    3 * c_flop * P * D * u_gpu / (X * H_gpu * c_hour),
    "1",
    "utilization implied by published GPU-hours: 6ΨD over what those GPU-hours could do at peak",
    sources=[LLAMA2_HOURS],
    conditions=[SIX_PSI_D],
    related=["cluster.gpu_hours", "cluster.mfu"],
    symbol_latex=r"U_{implied}",
)

# --- worked examples (SOURCES.md) ---------------------------------------------------
DAY = 86400
worked_example(
    "S1",
    "Amdahl: 0.05 % serial communication, 512 data-parallel replicas",
    AMDAHL,
    "cluster.amdahl",
    {"f": "0.0005", "n": 512},
    claimed="407.8",
    claimed_text="speed-up 407.8",
)
worked_example(
    "S2",
    "1T parameters, 450B tokens, 3072 A100 (312 TFLOPS), U = 0.5, full recompute",
    TRAINING_TIME,
    "cluster.training_time.recompute",
    {"P": 10**12, "D": 450 * 10**9, "n": 3072, "X": 312 * 10**12, "U": "0.5"},
    claimed=None,
    claimed_text="(the article's figure was lost with its formula image)",
    scale=DAY,
    scale_name="days",
)
for _case, _title, _params, _tokens, _days, _gpus in (
    ("S3", "GPT-3 175B, 300B tokens in 23 days", 175 * 10**9, 300 * 10**9, 23, 1110),
    ("S4", "LLaMA-65B, 1.4T tokens in 21 days", 65 * 10**9, 1400 * 10**9, 21, 2113),
    ("S5", "LLaMA-13B, 1T tokens in 15 days", 13 * 10**9, 10**12, 15, 422),
):
    worked_example(
        _case,
        f"{_title} on {_gpus} GPUs of 300 TFLOPS: the utilization 000's GPU count implies",
        SIZING,
        "cluster.mfu",
        {"P": _params, "D": _tokens, "n": _gpus, "X": 300 * 10**12, "tau": _days * DAY},
        claimed=None,
        claimed_text=f"{_gpus} GPUs (000 does not print the U it assumed)",
    )
for _case, _size, _params, _hours, _claimed in (
    ("S16a", "7B", 7 * 10**9, 184320, "0.405"),
    ("S16b", "34B", 34 * 10**9, 1038336, "0.350"),
    ("S16c", "70B", 70 * 10**9, 1720320, "0.435"),
):
    worked_example(
        _case,
        f"LLaMA-2 {_size}, 2T tokens, {_hours} A100 GPU-hours (312 TFLOPS)",
        LLAMA2_HOURS,
        "cluster.mfu.gpu_hours",
        {"P": _params, "D": 2 * 10**12, "X": 312 * 10**12, "H_gpu": _hours},
        claimed=_claimed,
        claimed_text=f"U = {float(_claimed) * 100:.1f} %",
        slip="002 truncates 40.57 % to 40.5 %" if _size == "7B" else "",
    )
worked_example(
    "S17",
    "34B model, 5B tokens, A100 at U = 0.35: GPU-hours",
    LLAMA2_HOURS,
    "cluster.gpu_hours",
    {"P": 34 * 10**9, "D": 5 * 10**9, "X": 312 * 10**12, "U": "0.35"},
    claimed=27700,
    claimed_text="27700 GPU-hours",
    slip="the article divides 1.09e22 (sic) FLOPs; the correct 1.02e21 gives 2595 GPU-hours",
)
