"""Expressions with their unit-carrying constants replaced by values, fast.

The same substitution as ``derivations.proof.valued``, done with ``xreplace``
(constants are plain symbols, so replacing them structurally is exact and an
order of magnitude faster than ``subs``); rendering calls it thousands of times.
"""

from __future__ import annotations

from functools import cache

import sympy as sp

from formulas.symbols import constant_values


@cache
def _constants() -> tuple[tuple[sp.Symbol, sp.Rational], ...]:
    return tuple(constant_values().items())


def valued(expr: sp.Basic, values: dict[sp.Symbol, sp.Basic] | None = None) -> sp.Basic:
    """``expr`` with the constants (and ``values``, if given) put in."""
    replacements = dict(_constants())
    replacements.update(values or {})
    return sp.sympify(expr).xreplace(replacements)
