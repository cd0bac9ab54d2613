"""Proof primitives: exact equality, vanishing error, sign, and difference.

Equality climbs a ladder of exact manipulations (expand, cancel, together,
simplify); it is proved only when one of them reduces the difference to 0.
Evaluation at random exact rational points can only *refute* (a point where
the sides differ is a counterexample) or *corroborate*; it never proves.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import sympy as sp

from formulas.symbols import constant_values, is_declared, quantity

_LADDER = (
    ("expand", sp.expand),
    ("doit", lambda e: sp.expand(e.doit())),
    ("cancel", sp.cancel),
    ("together", lambda e: sp.cancel(sp.together(e))),
    ("simplify", sp.simplify),
)


@dataclass(frozen=True)
class Verdict:
    """A proof attempt's result: ok, the method that decided it, and details (a counterexample, a limit)."""

    ok: bool
    method: str
    detail: str = ""


def valued(expr: sp.Basic, values: dict[sp.Symbol, sp.Basic] | None = None) -> sp.Basic:
    """``expr`` with the unit-carrying constants (and ``values``, if given) put in.

    Constants are plain symbols, so ``xreplace`` replaces them structurally: exact,
    and an order of magnitude faster than ``subs`` (rendering calls this thousands of times).
    """
    return sp.sympify(expr).xreplace(constant_values() | dict(values or {}))


def prove_equal(lhs: sp.Basic, rhs: sp.Basic) -> Verdict:
    """Prove lhs == rhs by exact symbolic manipulation."""
    difference = valued(lhs) - valued(rhs)
    for method, step in _LADDER:
        if step(difference) == 0:
            return Verdict(True, method)
    counterexample = find_counterexample(difference)
    if counterexample is not None:
        point, value = counterexample
        return Verdict(False, "counterexample", f"at {point} the sides differ by {value}")
    return Verdict(False, "unproved", "no counterexample at random rational points, but no exact proof either")


def random_point(symbols, rng: random.Random) -> dict[sp.Symbol, sp.Rational]:
    """An exact point that respects each symbol's assumptions (integers stay integers)."""
    point = {}
    for symbol in sorted(symbols, key=lambda x: x.name):
        lowest = 1 if symbol.is_positive else 0
        highest = _maximum(symbol) or 97
        if symbol.is_integer:
            point[symbol] = sp.Integer(rng.randint(lowest, highest))
        elif highest < 97:
            point[symbol] = sp.Rational(rng.randint(1, 97 * highest), 97)
        else:
            point[symbol] = sp.Rational(rng.randint(1, 997), rng.randint(1, 97))
    return point


def _maximum(symbol: sp.Symbol) -> int | None:
    return int(quantity(symbol).maximum) if is_declared(symbol.name) and quantity(symbol).maximum is not None else None


def find_counterexample(difference: sp.Basic, tries: int = 24, seed: int = 2024):
    """A point where ``difference`` is exactly nonzero, if one turns up."""
    rng = random.Random(seed)
    for _ in range(tries):
        point = random_point(difference.free_symbols, rng)
        value = difference.subs(point)
        if value.is_number and value != 0:
            return point, value
    return None


def prove_vanishes(error: sp.Basic, limits: tuple[tuple[sp.Symbol, sp.Basic], ...]) -> Verdict:
    """Prove that ``error`` tends to 0 when the limits are taken in order."""
    expr = valued(error)
    for symbol, point in limits:
        expr = sp.limit(expr, symbol, point)
    if expr == 0:
        described = ", then ".join(f"{s} → {p}" for s, p in limits)
        return Verdict(True, "limit", f"error → 0 as {described}")
    return Verdict(False, "limit", f"error tends to {expr}, not 0")


def prove_nonnegative(expr: sp.Basic) -> Verdict:
    """Prove expr ≥ 0 for positive symbols: by assumptions, or as a ratio of
    polynomials whose coefficients are all non-negative."""
    expr = valued(expr)
    if sp.simplify(expr) == 0 or expr.is_nonnegative:
        return Verdict(True, "assumptions")
    numerator, denominator = sp.fraction(sp.cancel(sp.together(expr)))
    if _all_coefficients_nonnegative(numerator) and _all_coefficients_nonnegative(denominator):
        return Verdict(True, "positive coefficients")
    if _all_coefficients_nonnegative(-numerator) and _all_coefficients_nonnegative(-denominator):
        return Verdict(True, "positive coefficients")
    counterexample = find_counterexample(sp.Min(expr, 0))
    if counterexample is not None:
        point, value = counterexample
        return Verdict(False, "counterexample", f"at {point} it is {expr.subs(point)}")
    return Verdict(False, "unproved", "could not show the difference is non-negative")


def _all_coefficients_nonnegative(polynomial: sp.Basic) -> bool:
    polynomial = sp.expand(polynomial)
    if polynomial.is_number:
        return bool(polynomial >= 0)
    if not all(symbol.is_positive for symbol in polynomial.free_symbols):
        return False
    try:
        coefficients = sp.Poly(polynomial, *sorted(polynomial.free_symbols, key=lambda x: x.name)).coeffs()
    except sp.PolynomialError:
        return False
    return all(c >= 0 for c in coefficients)
