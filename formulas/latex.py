"""LaTeX of expressions and formulas, printed from the same expressions that compute.

Constants become their values and unit marks 1; every symbol prints with its registered LaTeX name
(``P`` as ``\\Psi``, ``d_ff`` as ``d_{ff}``), the active user catalogues' symbols included.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sympy as sp

from llm_formulas.formulas.symbols import constant_values, latex_names
from llm_formulas.formulas.expressions import as_sympy

if TYPE_CHECKING:
    from llm_formulas.formulas.catalogue import Formula

__all__ = ["latex", "formula_latex"]


def latex(expr: sp.Basic) -> str:
    """Constants become their values; symbols take their registered LaTeX names."""
    return sp.latex(as_sympy(expr).xreplace(constant_values()), symbol_names=latex_names())


def formula_latex(formula: Formula) -> str:
    """``lhs = expression`` for a catalogue formula."""
    lhs = formula.symbol_latex or r"\mathrm{" + formula.id.replace("_", r"\_") + "}"
    return f"{lhs} = {latex(formula.expr)}"
