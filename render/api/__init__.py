"""llm-formulas: the arithmetic of large-model systems as checked SymPy derivations.

The public API, in one place (everything else is internal)::

    import llm_formulas as lf

    lf.get("params.total")                                   # a Formula: .expr (plain SymPy), .unit, .sources, ...
    lf.search("kv cache")                                    # formulas whose id or meaning holds the words
    lf.evaluate("params.total", l=12, h=768, V=50257, s=1024)   # 124439808, exactly
    lf.evaluate("flops.decoder.attention.scores", b=1, s=2048, a=96, d_head=128)  # switches at classic values
    lf.latex("params.layer"), lf.markdown("params.layer")    # rendered from the expression that computes
    f = lf.numpy_function("memory.zero"); f(P=7e9, t=1, p=1) # a NumPy-vectorised callable, like lambdify
    h, l = lf.symbols("h l")                                 # the catalogue's symbols (with their assumptions)

    mine = lf.Catalogue("acme")                              # your own formulas, symbols, sources and models
    with mine:
        ...                                                  # lf.formula(...) registers into it

    d = lf.Derivation("acme.layer", "one layer, part by part")   # proofs: defines / equals / approximates / concludes
    lf.assert_derivation(d); lf.assert_identity(a, b); lf.assert_approximation(exact, approx, dropped=..., condition=...)

``llm_formulas.testing`` holds the assertion helpers and Hypothesis strategies for property tests; the pytest
plugin (loaded automatically) gives the ``llm_catalogue`` fixture, which isolates a test's registrations.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

__version__: str = "0.1.0"  # pyproject.toml's version (tests/test_library_contract.py holds the two equal)

# name → the module that defines it. Loaded on first use (PEP 562): ``import llm_formulas`` and the command line's
# start-up stay free of SymPy until a name is used.
_EXPORTS = {
    "Derivation": "llm_formulas.derivations.vocabulary.engine",
    "much_greater": "llm_formulas.derivations.vocabulary.proof",
    "much_less": "llm_formulas.derivations.vocabulary.proof",
    "assert_approximation": "llm_formulas.derivations.reports.testing",
    "assert_derivation": "llm_formulas.derivations.reports.testing",
    "assert_identity": "llm_formulas.derivations.reports.testing",
    "Source": "llm_formulas.formulas.vocabulary.bibliography",
    "Catalogue": "llm_formulas.formulas.vocabulary.catalogue",
    "Condition": "llm_formulas.formulas.vocabulary.catalogue",
    "Formula": "llm_formulas.formulas.vocabulary.catalogue",
    "UnknownFormula": "llm_formulas.formulas.vocabulary.catalogue",
    "divides": "llm_formulas.formulas.vocabulary.catalogue",
    "formula": "llm_formulas.formulas.vocabulary.catalogue",
    "get": "llm_formulas.formulas.vocabulary.catalogue",
    "search": "llm_formulas.formulas.vocabulary.catalogue",
    "DimensionError": "llm_formulas.formulas.vocabulary.dimensions",
    "InputError": "llm_formulas.formulas.vocabulary.errors",
    "MissingInput": "llm_formulas.formulas.vocabulary.evaluation",
    "UnknownSymbol": "llm_formulas.formulas.vocabulary.symbols",
    "NumpyFunction": "llm_formulas.render.library",
    "evaluate": "llm_formulas.render.library",
    "latex": "llm_formulas.render.library",
    "markdown": "llm_formulas.render.library",
    "model": "llm_formulas.render.library",
    "numpy_function": "llm_formulas.render.library",
    "symbol": "llm_formulas.render.library",
    "symbols": "llm_formulas.render.library",
    "unit_of": "llm_formulas.render.library",
}

# Written out (a static list, as type checkers read it): the test holds it equal to _EXPORTS' names.
__all__ = [
    "Catalogue", "Condition", "Derivation", "DimensionError", "Formula", "InputError", "MissingInput", "NumpyFunction",
    "Source", "UnknownFormula", "UnknownSymbol", "__version__", "assert_approximation",
    "assert_derivation", "assert_identity", "divides", "evaluate", "formula", "get", "latex", "markdown", "model",
    "much_greater", "much_less", "numpy_function", "search", "symbol", "symbols", "unit_of",
]

if TYPE_CHECKING:  # what type checkers and IDEs see: the same names, imported eagerly and re-exported explicitly
    from llm_formulas.derivations.vocabulary.engine import Derivation as Derivation
    from llm_formulas.derivations.vocabulary.proof import much_greater as much_greater, much_less as much_less
    from llm_formulas.derivations.reports.testing import assert_approximation as assert_approximation
    from llm_formulas.derivations.reports.testing import assert_derivation as assert_derivation
    from llm_formulas.derivations.reports.testing import assert_identity as assert_identity
    from llm_formulas.formulas.vocabulary.bibliography import Source as Source
    from llm_formulas.formulas.vocabulary.catalogue import Catalogue as Catalogue, Condition as Condition, Formula as Formula
    from llm_formulas.formulas.vocabulary.catalogue import UnknownFormula as UnknownFormula, divides as divides
    from llm_formulas.formulas.vocabulary.catalogue import formula as formula, get as get, search as search
    from llm_formulas.formulas.vocabulary.dimensions import DimensionError as DimensionError
    from llm_formulas.formulas.vocabulary.errors import InputError as InputError
    from llm_formulas.formulas.vocabulary.evaluation import MissingInput as MissingInput
    from llm_formulas.formulas.vocabulary.symbols import UnknownSymbol as UnknownSymbol
    from llm_formulas.render.library import NumpyFunction as NumpyFunction, evaluate as evaluate
    from llm_formulas.render.library import latex as latex, markdown as markdown, model as model
    from llm_formulas.render.library import numpy_function as numpy_function, symbol as symbol, symbols as symbols
    from llm_formulas.render.library import unit_of as unit_of


def __getattr__(name: str) -> object:
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'llm_formulas' has no attribute {name!r}") from None
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
