"""Reading what a user types: numbers and ``name=value`` assignments.

Numbers follow the one grammar of render.cli.numbers (``1e9``, ``0.35``, ``3/4``,
``7B``), exact, never through eval or sympify. Unknown names and values that break
a symbol's assumptions (integer, positive, at most 1: formulas.evaluation.check_value,
which the library applies too) are refused with a one-line message; a k/M/B/T suffix is accepted only for a quantity that counts things. A count
typed for a layout or a workload (GPUs, degrees, batches, tokens per sequence, layers)
is also held to the shared bounds of formulas/bounds.py.
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.formulas.bounds import bound_violation
from llm_formulas.formulas.evaluation import check_value
from llm_formulas.formulas.symbols import Quantity, is_declared, quantity
from llm_formulas.render.cli.numbers import InputError, parse_fraction, quote


COUNT_UNITS = ("parameter", "token", "sequence", "layer", "byte", "FLOP", "GPU")


def counts(entry: Quantity) -> bool:
    """True for a quantity that counts things (``h``, ``P``, ``D``): it may carry a k/M/B/T suffix."""
    return entry.is_integer or (entry.unit.is_single_base and entry.unit.exponents[0][0] in COUNT_UNITS)


def parse_number(text: str, what: str = "value", *, suffix_allowed: bool = False) -> sp.Rational:
    """An exact Rational from a literal of the grammar in render.cli.numbers."""
    value = parse_fraction(text, what, suffix_allowed=suffix_allowed)
    return sp.Rational(value.numerator, value.denominator)


def parse_count(text: str, name: str, option: str | None = None) -> int:
    """A count typed for the symbol ``name`` (an option's value, or name=value), checked like any input and held to
    its bound (formulas.bounds.COUNT_BOUNDS)."""
    entry = quantity(name)
    value = int(check_value(entry, parse_number(text, option or name, suffix_allowed=counts(entry))))
    beyond = bound_violation(name, value)
    if beyond is not None:
        raise InputError(beyond if option is None else f"{option}: {beyond}")
    return value


def parse_assignments(items: list[str]) -> dict[sp.Symbol, sp.Rational]:
    """``["l=12", "h=768"]`` → {l: 12, h: 768}, each checked against the symbol table."""
    values: dict[sp.Symbol, sp.Rational] = {}
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise InputError(f"expected name=value, got {quote(item)}")
        if not is_declared(name) or quantity(name).is_constant:
            raise InputError(f"unknown symbol {quote(name)} (see 'llm-formulas show ID' for a formula's inputs)")
        entry = quantity(name)
        if entry.symbol in values:
            raise InputError(f"symbol {quote(name)} given twice")
        values[entry.symbol] = check_value(entry, parse_number(text, name, suffix_allowed=counts(entry)))
    return values
