"""Reading what a user types: numbers and ``name=value`` assignments.

Numbers are parsed exactly (``1e9``, ``0.35``, ``3/4``, ``124439808``) with the
decimal module and fractions, never with eval or sympify. NaN, infinities,
absurd exponents, unknown names and values that break a symbol's assumptions
(integer, positive, at most 1) are refused with a one-line message.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction

import sympy as sp

from formulas.symbols import Quantity, is_declared, quantity


class InputError(ValueError):
    """Bad input: the CLI prints the message on one line and exits 2."""


_NUMBER = re.compile(r"^[+-]?(\d[\d_]*)?(\.\d*)?([eE][+-]?\d+)?$")
MAX_EXPONENT = 100  # 1e100 is far beyond any size, rate or count of this field


def parse_number(text: str, what: str = "value") -> sp.Rational:
    """An exact Rational from a decimal, scientific or fraction literal."""
    raw = text.strip()
    if "/" in raw:
        top, _, bottom = raw.partition("/")
        numerator, denominator = parse_number(top, what), parse_number(bottom, what)
        if denominator == 0:
            raise InputError(f"{what}: division by zero in {text!r}")
        return numerator / denominator
    if not raw or len(raw) > 100 or not _NUMBER.match(raw) or raw in "+-.":
        raise InputError(f"{what}: {text!r} is not a number")
    try:
        decimal = Decimal(raw.replace("_", ""))
    except InvalidOperation:
        raise InputError(f"{what}: {text!r} is not a number") from None
    if not decimal.is_finite():
        raise InputError(f"{what}: {text!r} is not a finite number")
    if abs(decimal.adjusted()) > MAX_EXPONENT:
        raise InputError(f"{what}: {text!r} is out of range")
    fraction = Fraction(decimal)
    return sp.Rational(fraction.numerator, fraction.denominator)


def check_value(entry: Quantity, value: sp.Rational) -> sp.Rational:
    """Refuse a value that breaks the symbol's assumptions."""
    if entry.symbol.is_positive and value <= 0:
        raise InputError(f"{entry.name} ({entry.meaning}) must be positive, got {value}")
    if value < 0:
        raise InputError(f"{entry.name} ({entry.meaning}) must not be negative, got {value}")
    if entry.is_integer and not value.is_integer:
        raise InputError(f"{entry.name} ({entry.meaning}) must be a whole number, got {value}")
    if entry.maximum is not None and value > entry.maximum:
        raise InputError(f"{entry.name} ({entry.meaning}) must be at most {entry.maximum}, got {value}")
    if entry.minimum is not None and value < entry.minimum:
        raise InputError(f"{entry.name} ({entry.meaning}) must be at least {entry.minimum}, got {value}")
    return value


def parse_count(text: str, name: str, option: str | None = None) -> int:
    """A count typed for the symbol ``name`` (an option's value, or name=value), checked like any input."""
    return int(check_value(quantity(name), parse_number(text, option or name)))


def parse_assignments(items: list[str]) -> dict[sp.Symbol, sp.Rational]:
    """``["l=12", "h=768"]`` → {l: 12, h: 768}, each checked against the symbol table."""
    values: dict[sp.Symbol, sp.Rational] = {}
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise InputError(f"expected name=value, got {item!r}")
        if not is_declared(name) or quantity(name).is_constant:
            raise InputError(f"unknown symbol {name!r} (see 'llm-formulas show ID' for a formula's inputs)")
        entry = quantity(name)
        if entry.symbol in values:
            raise InputError(f"symbol {name!r} given twice")
        values[entry.symbol] = check_value(entry, parse_number(text, name))
    return values
