"""What the library's ``evaluate`` returns: Python numbers that keep their exact SymPy value one attribute away.

A result is a ``Whole`` (an ``int``: every digit, exact) when the value is a whole number, else a ``Real`` (a
``float``, the nearest double). Both format (``f"{v:,}"``, ``format(v, ".3e")``), compare, hash, serialize
(``json.dumps``) and compute like the built-in numbers they are, and both carry ``.exact``: the exact SymPy value
(an Integer, a Rational, or a closed form such as ``log(3)/log(2)``), for every digit or further algebra.
"""

from __future__ import annotations

from typing import TypeAlias

import sympy as sp

from llm_formulas.formulas.vocabulary.errors import InputError

__all__ = ["Number", "Real", "Whole", "as_number"]


class Whole(int):
    """A whole result: an ``int`` with ``.exact``, its SymPy Integer."""

    __slots__ = ()

    @property
    def exact(self) -> sp.Integer:
        return sp.Integer(int(self))


class Real(float):
    """A result that is not whole: a ``float`` (the nearest double) with ``.exact``, its exact SymPy value."""

    __slots__ = ("exact",)
    exact: sp.Expr

    def __new__(cls, exact: sp.Expr) -> Real:
        number = super().__new__(cls, float(exact))
        number.exact = exact
        return number


Number: TypeAlias = Whole | Real


def as_number(value: sp.Expr, what: str, *, numeric: bool = False) -> Number:
    """``value`` as a result: a Whole when it is a whole number (a Real with ``numeric=True``), else a Real; a value
    that is not a finite real number (a division by zero, a complex root) raises InputError naming ``what``."""
    if not (value.is_real and value.is_finite):
        raise InputError(f"{what} is not a finite real number at these inputs (got {value})")
    if value.is_integer and not numeric:
        return Whole(int(value))
    return Real(value)
