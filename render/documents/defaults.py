"""Documented default values: the worked example of a formula without a published case,
the calculator's presets and the plots' fixed inputs.

The model presets are formulas.data.presets (the default is GPT-3 175B, whose
architecture values every architecture symbol takes), the GPU presets are
formulas.data.gpus (default A100 80 GB SXM4: X, W_mem, W_link both directions,
M_GPU), the layout presets are listed here (default: Megatron's for GPT-3 175B,
Narayanan et al. 2021, Table 1: t = 8, p = 8, 1024 GPUs, so d = 16; B = 1536,
b = 1, s = 2048). The remaining inputs are in SYMBOL_DEFAULTS (300B training
tokens as GPT-3's, U = 0.45 as Megatron's 138 of 312 TFLOP/s, ...).
A symbol another topic declares later and that no table lists gets a generic
value (2 for a count, its maximum for a bounded count, half its maximum for a
bounded ratio, 1 otherwise), and the reference says so.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from llm_formulas.formulas.data import gpus, presets
from llm_formulas.formulas.reports.estimate import model_values, unpriced
from llm_formulas.formulas.vocabulary.symbols import Quantity, quantity
from llm_formulas.render.cli.estimate_command import DEFAULTS as ESTIMATE_DEFAULTS
from llm_formulas.render.cli.inputs import parse_number

GPT3 = "Brown et al. 2020 (GPT-3 175B), Table 2.1"
MEGATRON = "Narayanan et al. 2021, Table 1 (175B row)"

# name -> (value, where it comes from)
SYMBOL_DEFAULTS: dict[str, tuple[str, str]] = {
    "v": ("1", "no interleaving"),
    "P": ("175e9", GPT3),
    "D": ("300e9", GPT3),
    "U": ("0.45", MEGATRON + " (138 TFLOP/s of 312)"),
    "r": (ESTIMATE_DEFAULTS["overlap"], "estimate's --overlap: communication may hide under half the compute time"),
    "f": ("0.0005", "000 §3.5 (0.05 % serial)"),
    "q": ("2", "bf16 activations and gradients"),
    "q_w": ("2", "bf16 weights"),
    "x_msg": ("1e9", "a 1 GB buffer"),
    "tau": ("2592000", "a 30-day deadline (seconds)"),
    "W_alg": ("100e9", "an nccl-tests algorithm bandwidth of 100 GB/s"),
    "rho": ("2", "allreduce on many GPUs: 2(n−1)/n → 2"),
    "H_gpu": ("6.23e5", "GPU-hours of GPT-3 175B on 300B tokens at U = 0.45: 6ΨD/(3600·X·U)"),
    "M_rows": ("2048", "a [2048, 12288] × [12288, 49152] GEMM"),
    "K_inner": ("12288", "a [2048, 12288] × [12288, 49152] GEMM"),
    "N_cols": ("49152", "a [2048, 12288] × [12288, 49152] GEMM"),
    # issue 14: measured rates, energy, cost, failures, stages, serving and communication
    "X_run": ("140e12", "Narayanan et al. 2021 §5.1 (GPT-3 at 140 TFLOP/s per GPU)"),
    "R_tok": ("238.3e3", "Chowdhery et al. 2022, Appendix B (PaLM 540B, 238.3K tokens/s)"),
    "C_flops": ("3.14e23", "Brown et al. 2020, Table D.1 (GPT-3 175B)"),
    "W_gpu": ("400", "the A100 SXM's 400 W board power"),
    "PUE": ("1.1", "Touvron et al. 2023a §6"),
    "I_co2": ("385", "Touvron et al. 2023a §6 (0.385 kg CO2eq/kWh)"),
    "c_rent": ("2", "DeepSeek-AI 2024, Table 1 ($2 per GPU-hour)"),
    "c_gpu": ("40000", "001 (an H100 at about $40,000)"),
    "M_fail": ("2592000", "001 (one failure per GPU per month)"),
    "tau_ckpt": ("3600", "a checkpoint every hour"),
    "delta_ckpt": ("60", "a one-minute checkpoint write"),
    "R_restore": ("600", "001 (about 10 minutes to restore)"),
    "W_store": ("2e12", "Llama Team 2024 §3.3.4 (2 TB/s sustained)"),
    "l_first": ("12", "GPT-3's 96 layers over p = 8"),
    "w_max": ("12", "GPT-3's 96 layers over p = 8, balanced"),
    "w_tot": ("96", "GPT-3's 96 layers"),
    "s_max": ("4096", "a 4096-token reservation per sequence"),
    "k_blk": ("16", "Kwon et al. 2023 (blocks of 16 tokens)"),
    "f_w": ("0.174", "the warm-up share 004's 5× implies at 32 → 1 bit"),
    "k_cmp": ("32", "004 (32-bit values sent as 1 bit)"),
    "R_cmp": ("5", "004 (up to 5× less traffic)"),
    "pi_pen": ("0.05", "002 (an A800 trains about 5 % longer)"),
}

GENERIC = "generic value (no documented default yet)"


@dataclass(frozen=True)
class Default:
    symbol: sp.Symbol
    value: sp.Rational
    source: str


def _generic(entry: Quantity) -> sp.Rational:
    if entry.maximum is not None:
        return sp.Rational(entry.maximum) if entry.is_integer else sp.Rational(entry.maximum) / 2
    return sp.Integer(2) if entry.is_integer else sp.Integer(1)


def default(symbol: sp.Symbol) -> Default:
    """The documented default of a symbol, or a generic value that respects its assumptions."""
    entry = quantity(symbol)
    for preset in (MODELS[0], GPUS[0], LAYOUTS[0]):
        if entry.name in preset.values:
            return Default(entry.symbol, parse_number(preset.values[entry.name], entry.name), f"preset {preset.name}")
    if entry.name in SYMBOL_DEFAULTS:
        text, source = SYMBOL_DEFAULTS[entry.name]
        return Default(entry.symbol, parse_number(text, entry.name), source)
    return Default(entry.symbol, _generic(entry), GENERIC)


def literal(value: sp.Rational) -> str:
    """A value as the shortest decimal that a JavaScript Number or Python float reads back."""
    value = sp.Rational(value)
    return str(int(value)) if value.is_integer else repr(float(value))


@dataclass(frozen=True)
class InputPreset:
    """Values of some inputs, by symbol name: a model, a GPU or a parallel layout."""

    name: str
    values: dict[str, str]
    source: str
    settings: tuple[tuple[str, str], ...] = ()  # a published run's settings (framework, ZeRO, recompute), as it ran


def _model(name: str) -> InputPreset:
    entry = presets.preset(name)
    values = {symbol.name: literal(value) for symbol, value in entry.architecture.values.items()}
    return InputPreset(entry.title, values, entry.source)


def _gpu(key: str) -> InputPreset:
    entry = gpus.gpu(key)
    values = {symbol.name: literal(value) for symbol, value in entry.values().items()}
    return InputPreset(entry.name, values, "; ".join(str(s) for s in entry.sources))


DEFAULT_MODEL = "gpt3-175b"
DEFAULT_GPU = "a100-80gb"
PRICED = [n for n in presets.names() if unpriced(model_values(presets.preset(n).architecture.values)) is None]  # the report's
MODELS: tuple[InputPreset, ...] = tuple(_model(name) for name in [DEFAULT_MODEL] + [n for n in PRICED if n != DEFAULT_MODEL])
GPUS: tuple[InputPreset, ...] = tuple(_gpu(key) for key in [DEFAULT_GPU] + [k for k in gpus.PRESETS if k != DEFAULT_GPU])
LAYOUTS: tuple[InputPreset, ...] = (
    # GPT-3 175B as Narayanan et al. 2021 trained it: Megatron-LM's April 2021 code, activation recomputation (§3.5,
    # "we use activation recomputation"; the code's --checkpoint-activations is full recompute), no ZeRO
    InputPreset("t=8 p=8 d=16 (1024 GPUs)", {"t": "8", "p": "8", "d": "16", "n": "1024", "b": "1", "B": "1536", "m": "96", "s": "2048"},
                MEGATRON + "; Megatron-LM 2021, full recompute, no ZeRO",
                (("framework", "megatron-lm-2021"), ("zero", "0"), ("recompute", "full"))),
    # BLOOM: Megatron-DeepSpeed's pipeline engine, ZeRO 1, full recompute (BigScience 2022 §3.4)
    InputPreset("t=4 p=12 d=8 (384 GPUs)", {"t": "4", "p": "12", "d": "8", "n": "384", "b": "2", "B": "2048", "m": "128", "s": "2048"},
                "004 (BLOOM-176B); DeepSpeed's pipeline engine, ZeRO 1, full recompute",
                (("framework", "deepspeed-pipe"), ("zero", "1"), ("recompute", "full"))),
    InputPreset("t=2 p=1 d=212 (424 GPUs)", {"t": "2", "p": "1", "d": "212", "n": "424", "b": "1", "B": "1272", "m": "6", "s": "4096"}, "000 §4.1.2 (13B)"),
)
