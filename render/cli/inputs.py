"""Reading what a user types: numbers and ``name=value`` assignments.

Numbers follow the one grammar of render.cli.numbers (``1e9``, ``0.35``, ``3/4``,
``7B``), exact, never through eval or sympify. Unknown names and values that break
a symbol's assumptions (integer, positive, at most 1: formulas.vocabulary.value_rules.violation,
which the library's check_value applies too) are refused with a one-line message; a k/M/B/T suffix is accepted only for a quantity that counts things. A count
typed for a layout or a workload (GPUs, degrees, batches, tokens per sequence, layers)
is also held to the shared bounds of formulas/vocabulary/bounds.py.

The layout and workload symbols' rules come from formulas/vocabulary/workload_symbols.py, so that ``plan`` and ``sweep`` read
their inputs as exact Fractions without SymPy; any other symbol's from the symbol table (SymPy), as do
``parse_number`` and ``parse_assignments`` (exact SymPy Rationals for ``eval``, ``estimate`` and ``serve``).
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from llm_formulas.formulas.vocabulary.bounds import bound_violation
from llm_formulas.formulas.vocabulary.value_rules import Rule, violation
from llm_formulas.formulas.vocabulary.workload_symbols import DECLARATIONS
from llm_formulas.render.cli.numbers import InputError, parse_fraction, quote

if TYPE_CHECKING:
    import sympy as sp

    from llm_formulas.formulas.vocabulary.symbols import Quantity


COUNT_UNITS = ("parameter", "token", "sequence", "layer", "byte", "FLOP", "GPU")


def counts(entry: Quantity | Rule) -> bool:
    """True for a quantity that counts things (``h``, ``P``, ``D``): it may carry a k/M/B/T suffix."""
    return entry.is_integer or (entry.unit.is_single_base and entry.unit.exponents[0][0] in COUNT_UNITS)


def input_rule(name: str) -> Rule:
    """What a value typed for the symbol ``name`` must be: a layout or workload symbol's rule without SymPy, any
    other's from the symbol table."""
    if name in DECLARATIONS:
        return DECLARATIONS[name].rule
    from llm_formulas.formulas.vocabulary.symbols import quantity

    return quantity(name).rule


def checked(name: str, value: Fraction) -> Fraction:
    """``value`` if it keeps the rule of the symbol ``name``, else InputError in the words the library uses."""
    message = violation(input_rule(name), value)
    if message is not None:
        raise InputError(message)
    return value


def parse_exact(text: str, name: str, what: str | None = None) -> Fraction:
    """A value typed for the symbol ``name`` (``what`` names it in messages: an option), an exact Fraction checked
    against the symbol's rule; no SymPy."""
    return checked(name, parse_fraction(text, what or name, suffix_allowed=counts(input_rule(name))))


def parse_number(text: str, what: str = "value", *, suffix_allowed: bool = False) -> sp.Rational:
    """An exact Rational from a literal of the grammar in render.cli.numbers."""
    import sympy as sp

    value = parse_fraction(text, what, suffix_allowed=suffix_allowed)
    return sp.Rational(value.numerator, value.denominator)


def parse_count(text: str, name: str, option: str | None = None) -> int:
    """A count typed for the symbol ``name`` (an option's value, or name=value), checked like any input and held to
    its bound (formulas.vocabulary.bounds.COUNT_BOUNDS)."""
    value = int(parse_exact(text, name, option))
    beyond = bound_violation(name, value)
    if beyond is not None:
        raise InputError(beyond if option is None else f"{option}: {beyond}")
    return value


def __getattr__(name: str) -> object:
    """``check_value`` (formulas.vocabulary.evaluation's, the library's check) on first use (PEP 562): importing this module
    imports no SymPy."""
    if name == "check_value":
        from llm_formulas.formulas.vocabulary.evaluation import check_value

        return check_value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def parse_assignments(items: list[str]) -> dict[sp.Symbol, sp.Rational]:
    """``["l=12", "h=768"]`` → {l: 12, h: 768}, each checked against the symbol table."""
    from llm_formulas.formulas.vocabulary.evaluation import check_value
    from llm_formulas.formulas.vocabulary.symbols import is_declared, quantity

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
