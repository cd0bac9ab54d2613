"""LaTeX of expressions and formulas, printed from the same expressions that compute.

Constants become their values and unit marks 1; every symbol prints with its registered LaTeX name
(``P`` as ``\\Psi``, ``d_ff`` as ``d_{ff}``), the active user catalogues' symbols included.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sympy as sp

from llm_formulas.formulas.vocabulary.symbols import DERIVED_COUNTS, constant_values, latex_names
from llm_formulas.formulas.vocabulary.expressions import as_sympy

if TYPE_CHECKING:
    from llm_formulas.formulas.vocabulary.catalogue import Formula

__all__ = ["READABLE_LATEX", "abbreviated", "formula_latex", "latex", "symbol_names"]

# what a person reads in one look: a formula's default rendering longer than this must name its parts (issue 31)
READABLE_LATEX = 400


def latex(expr: sp.Basic) -> str:
    """Constants become their values; symbols take their registered LaTeX names; derived counts their own."""
    return sp.latex(abbreviated(as_sympy(expr).xreplace(constant_values())), symbol_names=symbol_names())


def symbol_names() -> dict[sp.Symbol, str]:
    """Every symbol's LaTeX name: the registered ones and the derived counts'."""
    return latex_names() | {symbol: name for _, symbol, name, _ in DERIVED_COUNTS}


def abbreviated(expr: sp.Basic) -> sp.Basic:
    """``l − l_S6 − l_SSD − l_LRU − l_GDN − l_∅mix`` written ``l_attn`` (and the table's other derived counts), for
    printing only: the symbols put in are not the table's and compute nothing."""
    for count, symbol, _, _ in DERIVED_COUNTS:
        if count.free_symbols <= expr.free_symbols:
            expr = expr.subs(count, symbol)
    return expr


def formula_latex(formula: Formula, *, expanded: bool = False) -> str:
    """``lhs = expression`` for a catalogue formula: its composed form, its parts named (``expanded``: spelled out)."""
    lhs = formula.symbol_latex or r"\mathrm{" + formula.id.replace("_", r"\_") + "}"
    return f"{lhs} = {latex(formula.expr if expanded else formula.composed)}"
