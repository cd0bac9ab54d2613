"""The performance model's efficiency constants per GPU, and the published runs behind them.

Four constants, fitted on Megatron-LM 2021 Table 1 (Narayanan et al., "Efficient Large-Scale
Language Model Training on GPU Clusters Using Megatron-LM", SC 2021: the per-GPU TFLOP/s of
its ten GPT configurations on A100 80 GB DGX nodes, 8 × 200 Gb/s HDR InfiniBand each) and on
nothing else (``render/numeric/calibrate.py`` refits them; ``formulas/data/published/`` holds the
table and the validation runs):

- η_gemm: the fraction of peak a large GEMM sustains;
- η_mem: the fraction of HBM bandwidth memory-bound kernels sustain;
- τ_k: the fixed cost of one kernel or collective;
- η_link: the fraction of a link's one-way bandwidth a NCCL collective sustains.

Table 1 is predicted as the authors' script ran it (NVIDIA/Megatron-LM commit de7dc40f88,
examples/sc21/run_table_1.sh; formulas/data/published/megatron2021_table1.json): each row's micro-batch
(16 down to 1), its interleaving degree (v = 3, 2, 2, 3 for 76B-530B, 1 elsewhere) and its DDP
(formulas/data/frameworks.py: ``megatron-lm-2021-torch``, PyTorch DDP's all-reduce under the last
backward, for the four rows without a pipeline; ``megatron-lm-2021``, the all-reduce after the
backward, for the rest), TP all-reduces blocking. The fit lands inside its grid: η_gemm = 0.802,
η_mem = 0.843, τ_k = 55 µs, η_link = 0.877; the small rows' many short kernels set τ_k.

The A800 is an A100 with slower NVLink (same silicon): the A100's constants apply. Hopper
GPUs have no run in the calibration set: their constants are the A100's fractions applied to
their own datasheet figures (η of *their* peak and bandwidth), and the report says so. A GPU
without constants (the RTX 4090) cannot be predicted: give ``--mfu``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # SymPy is imported where the constants are read: plan's NumPy path loads this module without it
    import sympy as sp

PUBLISHED = Path(__file__).with_name("published")


@dataclass(frozen=True)
class Efficiency:
    """Calibrated constants of the performance model for one GPU: exact Fractions (``efficiency``) or SymPy Rationals
    (``a100``); NumPy arrays where the calibration sweeps them."""

    eta_gemm: Fraction | sp.Rational
    eta_mem: Fraction | sp.Rational
    tau_k: Fraction | sp.Rational
    eta_link: Fraction | sp.Rational
    provenance: str

    def values(self) -> dict[str, sp.Rational]:
        return {"eta_gemm": self.eta_gemm, "eta_mem": self.eta_mem, "tau_k": self.tau_k}


def _fitted() -> dict:
    return json.loads((PUBLISHED / "a100_constants.json").read_text(encoding="utf-8"))


PROVENANCE = "calibrated on Megatron-LM 2021 Table 1 (Narayanan et al. 2021)"


def _fractions(provenance: str = PROVENANCE) -> Efficiency:
    """The constants fitted on Megatron-LM 2021 Table 1 as exact Fractions (no SymPy: plan's NumPy path reads them)."""
    fit = _fitted()["constants"]
    return Efficiency(*(Fraction(fit[name]) for name in ("eta_gemm", "eta_mem", "tau_k", "eta_link")), provenance=provenance)


def a100() -> Efficiency:
    """The constants fitted on Megatron-LM 2021 Table 1 (stored with the fit's errors), as exact SymPy Rationals."""
    import sympy as sp

    fitted = _fractions()
    return replace(fitted, **{name: sp.Rational(getattr(fitted, name)) for name in ("eta_gemm", "eta_mem", "tau_k", "eta_link")})


DERIVED = "derived from the datasheet: the A100's calibrated fractions of peak FLOP/s, HBM and link bandwidth (no published run calibrates this GPU)"
_CALIBRATED = {"a100-40gb", "a100-80gb", "a800"}
_DERIVED = {"h100-sxm", "h100-pcie", "h800", "h200"}


class NoCalibration(LookupError):
    """A GPU whose performance cannot be predicted: neither calibrated nor derivable."""


def efficiency(gpu_key: str) -> Efficiency:
    """The constants for a GPU preset, as exact Fractions (read without SymPy); NoCalibration (one line) when it has
    none."""
    if gpu_key in _CALIBRATED:
        return _fractions()
    if gpu_key in _DERIVED:
        return _fractions(DERIVED)
    raise NoCalibration(f"no performance constants for {gpu_key}: it has no calibration run and no datasheet "
                        f"relation to the A100; give --mfu U to assume a utilization")


def table1() -> list[list]:
    """Megatron-LM 2021 Table 1's rows, as published, each with the micro-batch, interleaving degree and DDP of the
    authors' script (the data file's columns)."""
    return json.loads((PUBLISHED / "megatron2021_table1.json").read_text(encoding="utf-8"))["rows"]


def validation_runs() -> list[dict]:
    """Measured runs from other publications, never used to fit."""
    return _validation()["runs"]


def layer_timings() -> tuple[dict, list[dict]]:
    """Korthikanti et al. 2022 Table 4: the 22B layer's shape and its five measured forward + backward times."""
    document = _validation()
    return document["layer_shape"], document["layers"]


def _validation() -> dict:
    return json.loads((PUBLISHED / "validation_runs.json").read_text(encoding="utf-8"))
