"""The catalogue as NumPy functions at run time: the committed generated module and an evaluator over it.

``render/numeric/llm_formulas_numeric.py`` is render.printers.codegen's module for the whole
catalogue, committed so that ``plan`` and sweeps never run SymPy's code printer;
``regenerate()`` rewrites it and tests/test_numeric.py fails on a stale copy.
``numeric(formula_id, **values)`` is an evaluator for formulas.reports.estimate: it calls
the generated function with the values it needs (scalars or arrays, broadcast).
``NUMPY_OPS`` are the same glue's choices element by element (where/minimum/maximum, and
``choose`` for settings that pick a formula id); ``numeric_inputs`` turns exact inputs
into floats.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Callable

import numpy as np

from llm_formulas.formulas.data.calibration import Efficiency
from llm_formulas.formulas.reports.estimate import Inputs, Ops
from llm_formulas.render.numeric import llm_formulas_numeric as generated

GENERATED_PATH = Path(generated.__file__)


def choose(key: object, options: dict) -> object:
    """Element by element, the value of the thunk that ``key`` names; only the thunks some element names run.

    Labels (strings) are picked from an object array, one reference per element: a fixed-width text array of every
    element's label cost more than the whole report's arithmetic."""
    keys = np.asarray(key)
    if keys.ndim == 0:
        return options[keys.item()]()
    masks = {value: mask for value in options if (mask := keys == value).any()}
    results = {value: options[value]() for value in masks}
    first, *others = masks
    if all(np.ndim(result) == 0 for result in results.values()):  # labels or constants: one lookup
        index = np.zeros(keys.shape, dtype=np.intp)
        for position, value in enumerate(others, start=1):
            index[masks[value]] = position
        return _table(list(results.values()))[index]
    chosen = results[first]
    for value in others:
        chosen = np.where(masks[value], results[value], chosen)
    return chosen


def _table(values: list) -> np.ndarray:
    """The values as an array to index: numbers as numbers, labels as references to the strings themselves."""
    if not any(isinstance(value, str) for value in values):
        return np.asarray(values)
    table = np.empty(len(values), dtype=object)
    table[:] = values
    return table


NUMPY_OPS = Ops(where=np.where, minimum=np.minimum, maximum=np.maximum,
                number=lambda value: np.asarray(value, dtype=np.float64), choose=choose, ceiling=np.ceil)


def regenerate() -> bool:
    """Rewrite the committed module and its record from the catalogue (render/numeric/module_record.py, in a fresh
    interpreter: this one holds the catalogue); True when the module changed."""
    import subprocess
    import sys

    before = GENERATED_PATH.read_bytes()
    subprocess.run([sys.executable, "-m", "llm_formulas.render.numeric.module_record"], check=True)
    return GENERATED_PATH.read_bytes() != before


def numeric(formula_id: str, **values: object) -> np.ndarray:
    """Evaluate one formula on NumPy arrays (float64) through the generated module, every argument by position: its
    required inputs, then its switches and switch-gated sizes from ``values``, each one ``values`` lacks at its
    default (by name, some sixty keyword arguments a call took longer to bind than many formulas take to compute)."""
    function, required, optional, defaults = _entry(formula_id)
    try:
        positional = [values[name] for name in required]
    except KeyError:
        raise KeyError(f"{formula_id} needs {', '.join(name for name in required if name not in values)}") from None
    return function(*positional, *map(values.get, optional, defaults))


@cache
def _entry(formula_id: str) -> tuple[Callable[..., np.ndarray], tuple[str, ...], tuple[str, ...], tuple[object, ...]]:
    """The generated function of a formula, its required inputs, the others (its arguments, in order: the module's
    ``INPUTS``) and their defaults."""
    try:
        function, names, required = generated.FORMULAS[formula_id], generated.INPUTS[formula_id], generated.REQUIRED[formula_id]
    except KeyError:
        raise KeyError(f"{formula_id} is not in the generated module: run render.numeric.evaluator.regenerate()") from None
    optional, defaults = names[len(required):], function.__defaults__ or ()
    if names[:len(required)] != required or len(defaults) != len(optional):
        raise RuntimeError(f"{formula_id}: the generated module's arguments are not its INPUTS: "
                           "run render.numeric.evaluator.regenerate()")
    return function, required, optional, defaults


@cache
def _left_out(model: tuple[tuple[str, int], ...]) -> tuple[str, ...]:
    """The sizes a model leaves out because a switch set to 0 removes their terms (pos_table = 0 removes
    n_pos); the generated code still takes them. A left-out size that changes the count is a KeyError:
    the count at two far-apart values of the left-out sizes must agree (this needs no SymPy, so plan
    and sweeps never build the catalogue; ``estimate``'s exact path checks the same symbolically)."""
    values = {name: float(value) for name, value in model}
    missing: list[str] = []
    for formula_id in ("params.decoder.total", "params.decoder.active"):
        left_out = [name for name in generated.INPUTS[formula_id] if name not in values]
        if numeric(formula_id, **values, **dict.fromkeys(left_out, 0.0)) != numeric(formula_id, **values, **dict.fromkeys(left_out, 7919.0)):
            raise KeyError(f"{formula_id} needs {', '.join(left_out)}")
        missing += [name for name in left_out if name not in missing]
    return tuple(missing)


def _complete(model: dict[str, int]) -> dict[str, int]:
    return dict(model) | dict.fromkeys(_left_out(tuple(sorted(model.items()))), 0)


def numeric_inputs(inputs: Inputs) -> Inputs:
    """The same inputs as floats (exact Rationals would make NumPy build object arrays)."""
    return Inputs(
        model={name: float(value) for name, value in _complete(inputs.model).items()},
        gpu={name: float(value) for name, value in inputs.gpu.items()},
        network=float(inputs.network),
        tokens=None if inputs.tokens is None else float(inputs.tokens),
        utilization=None if inputs.utilization is None else float(inputs.utilization),
        overlap=float(inputs.overlap),
        precision=inputs.precision,
        lora=None if inputs.lora is None else {name: float(value) for name, value in inputs.lora.items()},
        efficiency=None if inputs.efficiency is None else _floats(inputs.efficiency),
        node_size=inputs.node_size,
        flash=inputs.flash,
        framework=inputs.framework,
    )


def _floats(efficiency: Efficiency) -> Efficiency:
    """The calibrated constants as floats (arrays pass through: calibration sweeps them)."""
    def number(value: object) -> object:
        return value if isinstance(value, np.ndarray) else float(value)

    return replace(efficiency, eta_gemm=number(efficiency.eta_gemm), eta_mem=number(efficiency.eta_mem),
                   tau_k=number(efficiency.tau_k), eta_link=number(efficiency.eta_link))


if __name__ == "__main__":
    print(f"{GENERATED_PATH}: {'rewritten' if regenerate() else 'up to date'}")
