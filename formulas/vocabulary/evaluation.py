"""Evaluating a formula: names resolved, numbers made exact, switches at their classic values unless given.

``bind(formula, values)`` turns what a caller gives (names as strings or symbols, numbers as ints, Fractions,
SymPy numbers, decimal strings or floats) into exact values by the catalogue's own symbols; a name no catalogue
declares raises ``UnknownSymbol`` with the nearest names. Each value is held to its symbol's assumptions
(``check_value``: positive, whole, within its minimum and maximum), the one check the command line's ``eval`` and the
library share, with the same words. Every structural switch the caller leaves out takes its classic value
(``formulas.vocabulary.symbols.switch_defaults``), so a plain GPT block needs no MLA inputs; an input that is still missing is
named; a violated condition says which. Values that break what a classic formula assumes of the model (params.total
at a gated, untied model) are refused naming the general formula that describes them (formulas/vocabulary/classic.py). ``evaluate`` returns the exact value (or a float with ``numeric=True``).
"""

from __future__ import annotations

from typing import Mapping

import sympy as sp

from llm_formulas.formulas.vocabulary.catalogue import Formula, within
from llm_formulas.formulas.vocabulary.classic import GENERAL, violated
from llm_formulas.formulas.vocabulary.errors import InputError
from llm_formulas.formulas.vocabulary.numbers import exact_number
from llm_formulas.formulas.vocabulary.rounding import rounded
from llm_formulas.formulas.vocabulary.symbols import Quantity, quantity, resolve, table_order
from llm_formulas.formulas.vocabulary.value_rules import shown, violation

__all__ = ["MissingInput", "bind", "check_value", "evaluate", "shown", "value_at"]


class MissingInput(InputError):
    """A formula was evaluated without a value it needs (its name and the missing inputs are in the message)."""


def check_value(entry: Quantity, value: sp.Rational) -> sp.Rational:
    """``value`` if it keeps the symbol's assumptions (positive or not negative, whole, within its minimum and
    maximum: formulas.vocabulary.value_rules.violation); else InputError, in the words the command line prints."""
    message = violation(entry.rule, value)
    if message is not None:
        raise InputError(message)
    return value


def bind(formula: Formula, values: Mapping[str | sp.Symbol, object]) -> dict[sp.Symbol, sp.Rational]:
    """Exact values by symbol for every input ``formula`` needs: given ones resolved and checked (``check_value``),
    left-out switches at their classic values; an unknown name raises UnknownSymbol, a value that breaks its
    symbol's assumptions or the model a classic formula assumes (formulas.vocabulary.classic.violated) InputError, a missing input MissingInput, a violated condition InputError. Names the
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
    as its meaning says (formulas.vocabulary.rounding: the most sequences that fit, rounded down)."""
    value = formula.expr.xreplace(bound)
    if not value.is_Rational:  # logarithms and the like: 2·log(4)/log(2) is 4
        value = sp.simplify(value)
    return rounded(formula.id, value) if formula.catalogue is None else value


def evaluate(formula: Formula, values: Mapping[str | sp.Symbol, object], *, numeric: bool = False) -> sp.Expr | float:
    """The formula's exact value at ``values`` (``bind``); ``numeric=True`` gives a float."""
    value = value_at(formula, bind(formula, values))
    return float(value) if numeric else value
