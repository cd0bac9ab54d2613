"""Exact numbers from what a caller gives: an int, a Fraction, a SymPy number, a decimal string or a float.

Python's own exact readers do the work (``Fraction`` for text, the float's shortest decimal form), so nothing a
caller types is evaluated.
"""

from __future__ import annotations

import numbers
from fractions import Fraction

import sympy as sp

__all__ = ["exact_number"]


def exact_number(value: object) -> sp.Rational:
    """An exact number from an int (NumPy's integers too), a Fraction, a SymPy number, a decimal string ("7e9",
    "0.35", "3/4") or a float (NumPy's too; taken at its shortest decimal form, 0.4 as 2/5). Anything else raises TypeError; nothing is evaluated."""
    if isinstance(value, bool):
        raise TypeError("a number is expected, not a boolean")
    if isinstance(value, (int, Fraction)):
        return sp.Rational(value)
    if isinstance(value, numbers.Integral):  # numpy.int64 and the like
        return sp.Integer(int(value))
    if isinstance(value, numbers.Real) and not isinstance(value, (float, sp.Basic)):  # numpy.float32 and the like
        value = float(value)
    if isinstance(value, sp.Basic) and value.is_Rational:
        return sp.Rational(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"{value} is not a finite number")
        return sp.Rational(repr(value))
    if isinstance(value, str):
        try:
            return sp.Rational(Fraction(value.strip()))  # Python's own exact decimal and fraction reader
        except (ValueError, ZeroDivisionError):
            raise ValueError(f"{value[:80]!r} is not a number (a decimal such as 7e9 or 0.35, or a fraction 3/4)") from None
    raise TypeError(f"{value!r} is not a number (give an int, a Fraction, a decimal string or a float)")
