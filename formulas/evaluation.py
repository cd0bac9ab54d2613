"""Evaluating a formula: names resolved, numbers made exact, switches at their classic values unless given.

``bind(formula, values)`` turns what a caller gives (names as strings or symbols, numbers as ints, Fractions,
SymPy numbers, decimal strings or floats) into exact values by the catalogue's own symbols; a name no catalogue
declares raises ``UnknownSymbol`` with the nearest names. Each value is held to its symbol's assumptions
(``check_value``: positive, whole, within its minimum and maximum), the one check the command line's ``eval`` and the
library share, with the same words. Every structural switch the caller leaves out takes its classic value
(``formulas.symbols.switch_defaults``), so a plain GPT block needs no MLA inputs; an input that is still missing is
named; a violated condition says which. Values that break what a classic formula assumes of the model (params.total
at a gated, untied model) are refused naming the general formula that describes them (formulas/classic.py). ``evaluate`` returns the exact value (or a float with ``numeric=True``).
"""

from __future__ import annotations

import numbers
from fractions import Fraction
from typing import Mapping

import sympy as sp

from llm_formulas.formulas.catalogue import Formula, within
from llm_formulas.formulas.classic import GENERAL, violated
from llm_formulas.formulas.errors import InputError
from llm_formulas.formulas.rounding import rounded
from llm_formulas.formulas.symbols import Quantity, quantity, resolve, table_order
from llm_formulas.formulas.value_rules import shown, violation

__all__ = ["MissingInput", "bind", "check_value", "evaluate", "exact_number", "shown", "value_at"]


class MissingInput(InputError):
    """A formula was evaluated without a value it needs (its name and the missing inputs are in the message)."""


def check_value(entry: Quantity, value: sp.Rational) -> sp.Rational:
    """``value`` if it keeps the symbol's assumptions (positive or not negative, whole, within its minimum and
    maximum: formulas.value_rules.violation); else InputError, in the words the command line prints."""
    message = violation(entry.rule, value)
    if message is not None:
        raise InputError(message)
    return value


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


def bind(formula: Formula, values: Mapping[str | sp.Symbol, object]) -> dict[sp.Symbol, sp.Rational]:
    """Exact values by symbol for every input ``formula`` needs: given ones resolved and checked (``check_value``),
    left-out switches at their classic values; an unknown name raises UnknownSymbol, a value that breaks its
    symbol's assumptions or the model a classic formula assumes (formulas.classic.violated) InputError, a missing input MissingInput, a violated condition InputError. Names the
    formula does not use are accepted (a whole model's values may be passed)."""
    with within(formula.catalogue):
        given = {resolve(name): exact_number(value) for name, value in values.items()}
        for symbol, value in given.items():
            check_value(quantity(symbol), value)
    broken = violated(formula.id, given) if formula.catalogue is None else []
    if broken:
        general = GENERAL[formula.id][0]
        raise InputError(f"{formula.id} counts the classic GPT block, and these values are not one: {'; '.join(broken[:3])}"
                         f"{' and more' if len(broken) > 3 else ''}; {general} describes them")
    bound = {**{symbol: default for symbol, default in formula.defaults.items() if symbol not in given}, **given}
    missing = formula.expr.xreplace(bound).free_symbols
    if missing:
        with within(formula.catalogue):
            names = ", ".join(symbol.name for symbol in sorted(missing, key=table_order))
        raise MissingInput(f"{formula.id} needs {names} (missing)")
    for condition in formula.conditions:
        if condition.holds(bound) is False:
            raise InputError(f"{formula.id} requires {condition.text}")
    return {symbol: value for symbol, value in bound.items() if symbol in formula.expr.free_symbols}


def value_at(formula: Formula, bound: Mapping[sp.Symbol, sp.Rational]) -> sp.Expr:
    """The formula's exact value at values ``bind`` gave, simplified where not a number; a discrete result rounded
    as its meaning says (formulas.rounding: the most sequences that fit, rounded down)."""
    value = formula.expr.xreplace(bound)
    if not value.is_Rational:  # logarithms and the like: 2·log(4)/log(2) is 4
        value = sp.simplify(value)
    return rounded(formula.id, value) if formula.catalogue is None else value


def evaluate(formula: Formula, values: Mapping[str | sp.Symbol, object], *, numeric: bool = False) -> sp.Expr | float:
    """The formula's exact value at ``values`` (``bind``); ``numeric=True`` gives a float."""
    value = value_at(formula, bind(formula, values))
    return float(value) if numeric else value
