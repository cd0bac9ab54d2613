"""Testable validity conditions: the SymPy predicate of a Condition, when it has one.

A topic may wrap one Condition in another (``Condition("t divides a", divides(t, a))``);
the predicate is then the inner one's. ``holds`` is True/False when every symbol
of the predicate has a value, else None.
"""

from __future__ import annotations

import sympy as sp

from formulas.catalogue import Condition


def predicate(condition: Condition) -> sp.Basic | None:
    found = condition.predicate
    while isinstance(found, Condition):
        found = found.predicate
    return found


def holds(condition: Condition, values: dict[sp.Symbol, sp.Basic]) -> bool | None:
    found = predicate(condition)
    if found is None or not found.free_symbols <= set(values):
        return None
    return bool(found.subs(values))
