"""The serving model's constants, and the one published source they are fitted on.

Five constants (formulas/topics/serving.py): η_pf and η_dec, the fractions of peak FLOP/s a prefill's and a decoding step's
GEMMs sustain, one pair for 16-bit and one for 8-bit (FP8) compute; η_HBM, the fraction of the HBM bandwidth the
weight and cache reads sustain; τ_L, the fixed cost of one layer's kernels per forward pass; τ, one all-reduce
message's latency. They are fitted on the TensorRT-LLM 0.8.0 static-batch tables only (NVIDIA, docs/source/
performance.md: Peak Throughput at batch 16-1024 and the batch-1 first-token latency, on A100 (FP16), H100 and H200
(FP8)), by render/numeric/serving_calibrate.py, which refits them and writes formulas/data/published/serving_constants.json
with the fit's residuals; the other published sources are predicted without refitting (``llm-formulas validate``).
The fractions are of each GPU's own datasheet figures, so one fit serves every GPU preset: a GPU without published
serving runs (the RTX 4090) is priced at the same fractions of its peak and bandwidth, which the report says.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

PUBLISHED = Path(__file__).with_name("published")
CONSTANTS_FILE = PUBLISHED / "serving_constants.json"
NAMES = ("eta_pf", "eta_dec", "eta_hbm", "tau_L", "tau_ar")
PROVENANCE = "fitted on the TensorRT-LLM 0.8.0 static-batch tables (NVIDIA, docs/source/performance.md)"


@dataclass(frozen=True)
class ServingConstants:
    """The serving model's constants at one compute precision."""

    eta_pf: object
    eta_dec: object
    eta_hbm: object
    tau_L: object
    tau_ar: object
    provenance: str = PROVENANCE

    def values(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in NAMES}


@cache
def _stored() -> dict:
    return json.loads(CONSTANTS_FILE.read_text(encoding="utf-8"))


def constants(compute: str, exact: bool = True) -> ServingConstants:
    """The fitted constants for 16-bit (``"16"``) or 8-bit (``"8"``) compute, as exact Rationals of their stored
    decimals, or as those decimals' floats (``exact=False``: the NumPy path, which imports no SymPy)."""
    fit = _stored()["constants"]
    stored = {**fit["shared"], **fit[compute]}
    if not exact:
        return ServingConstants(*(float(stored[name]) for name in NAMES))
    import sympy as sp

    return ServingConstants(*(sp.Rational(str(stored[name])) for name in NAMES))


def stored() -> dict:
    """The stored fit: constants, the rows it used and its residuals."""
    return _stored()
