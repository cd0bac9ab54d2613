"""The per-op time formulas' constants (formulas/topics/kernels.py), fitted per GPU on measured kernels.

formulas/data/published/kernel_constants.json holds, per AIConfigurator system (h100_sxm, h200_sxm, a100_sxm), the GPU preset
it is, and per op kind the formula, the measured table it was fitted on (its path inside ``aiconfigurator-core``
0.12.0, backend and version, the rows kept), the fitted constants (decimal strings), their agreement with the table
(median and worst |error| by regime) and a few measured rows copied from it (Apache-2.0, attributed in the file).
``render/numeric/kernel_calibrate.py`` refits them from the installed wheel (the calibration extra); reading them needs
neither the wheel nor SymPy (``exact=False``).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

CONSTANTS_FILE = Path(__file__).with_name("published") / "kernel_constants.json"
SYSTEMS = {"h100_sxm": "h100-sxm", "h200_sxm": "h200", "a100_sxm": "a100-80gb"}  # AIConfigurator's name → GPU preset


class NoKernelFit(LookupError):
    """An op kind with no fitted constants for a GPU (its table is missing from the wheel, or the GPU was not fitted)."""


@cache
def stored() -> dict:
    """The whole stored fit."""
    return json.loads(CONSTANTS_FILE.read_text(encoding="utf-8"))


def fitted_op(system: str, op: str) -> dict:
    """The stored entry of one op kind on one system; NoKernelFit (one line) when there is none."""
    systems = stored()["systems"]
    if system not in systems:
        raise NoKernelFit(f"no kernel fit for {system!r}: fitted systems are {', '.join(systems)}")
    ops = systems[system]["ops"]
    if op not in ops:
        raise NoKernelFit(f"no kernel fit of {op!r} on {system}: fitted ops are {', '.join(ops)}")
    return ops[op]


def constants(system: str, op: str, gpus: int | None = None, exact: bool = True) -> dict[str, object]:
    """The constants of ``op`` on ``system`` by symbol name, together with those of the ops its formula also uses (an FP8
    GEMM's cast, the engine all-reduce's ring): exact Rationals of the stored decimals, or floats (``exact=False``).
    A constant fitted per GPU count (W_bus) is taken at ``gpus``."""
    entry = fitted_op(system, op)
    values: dict[str, object] = {}
    for other in entry["fixed_from"]:
        values.update(constants(system, other, gpus, exact))
    for name, value in entry["constants"].items():
        if isinstance(value, dict):
            if gpus is None or str(gpus) not in value:
                raise NoKernelFit(f"{op} on {system} is fitted at {', '.join(value)} GPUs, not at {gpus}")
            value = value[str(gpus)]
        values[name] = _number(value, exact)
    return values


def _number(text: str, exact: bool) -> object:
    if not exact:
        return float(text)
    import sympy as sp

    return sp.Rational(text)


def sample() -> list[dict]:
    """The measured rows kept beside the fit, each with its system: the tests reproduce them without the wheel."""
    return [{"system": system, **row} for system, fitted in stored()["systems"].items() for row in fitted["sample"]]
