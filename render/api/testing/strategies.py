"""Hypothesis strategies: exact, valid points for the catalogue's formulas (``pip install 'llm-formulas[hypothesis]'``).

    from hypothesis import given
    from llm_formulas.testing.strategies import valid_point

    @given(valid_point("memory.zero"))
    def test_zero_is_below_the_replicated_states(values): ...

A value respects its symbol's declaration in ``formulas/vocabulary/symbols.py``: integer
symbols draw integers (from 1 when positive, from 0 for a non-negative switch,
up to the symbol's maximum: switches 0/1), other symbols positive Rationals
(U and f in (0, 1]). ``valid_point`` then makes a formula's testable
conditions hold ("t divides a": a becomes a multiple of t; "τ > q_Ψ·Ψ/W_mem":
τ is raised above the bound) and filters out anything still invalid. Strategies
are built once per symbol and per formula (``Formula.inputs`` substitutes the
constants, which is slow to repeat per example).
"""

from __future__ import annotations

from functools import cache

import sympy as sp
from hypothesis import strategies as st

from llm_formulas.formulas.vocabulary.catalogue import Formula, get, within
from llm_formulas.formulas.vocabulary.symbols import constant_values, quantity

COUNT_MAX = 4096  # structural sizes and degrees: big enough to matter, small enough to stay fast
RATIONAL_DENOMINATOR = 1000


@cache
def value_of(symbol: sp.Symbol) -> st.SearchStrategy[sp.Rational]:
    """An exact value that respects the symbol's assumptions and bounds."""
    entry = quantity(symbol)
    if entry.is_integer:
        low = 1 if symbol.is_positive else 0
        high = int(entry.maximum) if entry.maximum is not None else (COUNT_MAX if symbol.is_positive else 4)
        return st.integers(low, high).map(sp.Integer)
    if entry.maximum is not None:  # U, f: (0, maximum]
        top = entry.maximum * RATIONAL_DENOMINATOR
        return st.integers(1, int(top)).map(lambda k: sp.Rational(k, RATIONAL_DENOMINATOR))
    numerators = st.integers(1, 10**9)
    denominators = st.sampled_from([1, 1, 1, 2, 3, 7, 1000])
    return st.builds(sp.Rational, numerators, denominators)


def point(symbols) -> st.SearchStrategy[dict[sp.Symbol, sp.Rational]]:
    """Independent values for ``symbols``."""
    ordered = sorted(symbols, key=lambda x: x.name)
    return st.fixed_dictionaries({x: value_of(x) for x in ordered})


def evaluate(expr: sp.Basic, values: dict[sp.Symbol, sp.Basic]) -> sp.Basic:
    """``expr`` at ``values``, constants put in, exactly (structural replacement)."""
    return expr.xreplace({**constant_values(), **values})


def _repair(test: sp.Basic, values: dict[sp.Symbol, sp.Rational]) -> None:
    """Move ``values`` so that a divisibility or lower-bound predicate holds."""
    if isinstance(test, sp.Eq) and isinstance(test.lhs, sp.Mod) and test.rhs == 0:
        dividend, divisor = test.lhs.args
        if isinstance(dividend, sp.Symbol) and dividend in values:
            values[dividend] = values[dividend] * evaluate(divisor, values)
    elif isinstance(test, sp.StrictGreaterThan) and isinstance(test.lhs, sp.Symbol) and test.lhs in values:
        values[test.lhs] = values[test.lhs] + evaluate(test.rhs, values)


def satisfies(formula: Formula, values: dict[sp.Symbol, sp.Rational]) -> bool:
    """Every testable condition of ``formula`` holds at ``values`` (untestable ones count as holding)."""
    for condition in formula.conditions:
        test = condition.predicate
        if test is not None and test.free_symbols <= set(values) and not bool(evaluate(test, values)):
            return False
    return True


def valid_point(formula: Formula | str) -> st.SearchStrategy[dict[sp.Symbol, sp.Rational]]:
    """A point for a formula's inputs (a Formula, a user's included, or a catalogue id) where its testable
    conditions hold; a user's formula reads its symbols from its own catalogue, active or not."""
    chosen = get(formula) if isinstance(formula, str) else formula
    with within(chosen.catalogue):
        return _valid_point(chosen)


@cache
def _valid_point(formula: Formula) -> st.SearchStrategy[dict[sp.Symbol, sp.Rational]]:
    tests = [c.predicate for c in formula.conditions if c.predicate is not None]
    symbols = set(formula.inputs)
    for test in tests:
        symbols |= test.free_symbols
    symbols -= set(constant_values())

    def repaired(values: dict[sp.Symbol, sp.Rational]) -> dict[sp.Symbol, sp.Rational]:
        values = dict(values)
        for test in tests:
            _repair(test, values)
        return values

    return point(symbols).map(repaired).filter(lambda values: satisfies(formula, values))
