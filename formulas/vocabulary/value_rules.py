"""What a value of one symbol must be (positive or not negative, whole, within its bounds), and the words that say
it is not: the one check the command line, the library and the numeric commands share, without SymPy.

formulas/vocabulary/symbols.py gives each declared quantity its ``Rule`` (``Quantity.rule``); formulas/vocabulary/workload_symbols.py the
layout and workload symbols' rules without the symbol table, for ``plan`` and ``sweep``.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Rational

from llm_formulas.formulas.vocabulary.units import Unit


@dataclass(frozen=True)
class Rule:
    """A symbol's assumptions as plain data: positive (else not negative), whole, at most ``maximum``, at least
    ``minimum``; its name, meaning and unit for the messages."""

    name: str
    meaning: str
    unit: Unit
    is_integer: bool
    positive: bool = True
    maximum: Rational | None = None
    minimum: Rational | None = None


def shown(value: Rational) -> str:
    """A value as an error line quotes it: exact (``7/20``) unless longer than 40 characters (``1e+100``)."""
    text = str(value)
    return text if len(text) <= 40 else f"{float(value):.3g}"


def violation(rule: Rule, value: Rational) -> str | None:
    """Why the exact ``value`` (a Fraction or a SymPy Rational) breaks the rule, in the words the command line prints;
    None when it keeps it."""
    what = f"{rule.name} ({rule.meaning})"
    if rule.positive and value <= 0:
        return f"{what} must be positive, got {shown(value)}"
    if value < 0:
        return f"{what} must not be negative, got {shown(value)}"
    if rule.is_integer and value.denominator != 1:
        return f"{what} must be a whole number, got {shown(value)}"
    if rule.maximum is not None and value > rule.maximum:
        return f"{what} must be at most {rule.maximum}, got {shown(value)}"
    if rule.minimum is not None and value < rule.minimum:
        return f"{what} must be at least {rule.minimum}, got {shown(value)}"
    return None
