"""A user's script that touches every public name of llm_formulas, checked by ``mypy --strict`` in
tests/test_library_contract.py (never run by pytest: it only has to type-check)."""

from __future__ import annotations

import json

import numpy

import llm_formulas as lf


def every_public_name() -> str:
    total = lf.evaluate("params.total", l=12, h=768, V=50257, s=1024)
    exact = total.exact
    whole: int | float = total
    shown = f"{total:,} = {exact}" + json.dumps(total)
    formula: lf.Formula = lf.get("params.total")
    found: list[lf.Formula] = lf.search("kv cache")
    h, l = lf.symbols("h l")
    d_ff = lf.symbol("d_ff")
    sizes: dict[str, object] = lf.model("llama2-7b")
    compiled: lf.NumpyFunction = lf.numpy_function("memory.zero")
    bytes_: numpy.ndarray | float = compiled(P=7e9, t=1, p=1)
    unit = lf.unit_of("params.total")
    text = lf.latex("params.layer") + lf.markdown("params.layer")
    mine = lf.Catalogue("acme")
    mine.source("acme2026", authors="A. Engineer", title="Notes", date="2026")
    source: lf.Source = mine.cite("acme2026")
    rule: lf.Condition = lf.divides(h, d_ff)
    with mine:
        own: lf.Formula = lf.formula("acme.layer", 12 * l * h**2, "1", "a layer", sources=[source], conditions=[rule])
    derivation = lf.Derivation("acme.layer", "a layer")
    derivation.defines("Ψ", 12 * l * h**2, "the layer")
    lf.assert_identity(12 * l * h**2, 12 * h**2 * l)
    lf.assert_approximation(h + 1, h, dropped=h**0, condition=lf.much_greater(h, 1))
    lf.assert_derivation(derivation)
    errors: tuple[type[Exception], ...] = (lf.InputError, lf.MissingInput, lf.UnknownFormula, lf.UnknownSymbol,
                                           lf.DimensionError)
    bounds = (lf.much_less(1, h),)
    return " ".join(str(x) for x in (shown, whole, formula, found, sizes, bytes_, unit, text, own, errors, bounds,
                                      lf.__version__))
